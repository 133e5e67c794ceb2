//! Loom models of the rendezvous channel (`chan::rendezvous`): the
//! hand-off between a sender and a taker, cancels, closes and the reuse
//! of the slot, through the public API.
//!
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p spindle --release --test loom_chan_zero`

#![cfg(loom)]

#[allow(dead_code)] // `block_on`: the select models' helper
mod loom_common;
use loom_common::model;

use loom::thread;
use spindle::chan::{self, RecvError, TryRecvError};

// --------------------------------------------------------- rendezvous

/// Direct hand-off: the send completes exactly when the receiver takes it.
#[test]
fn zero_handoff() {
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let t = thread::spawn(move || tx.send_blocking(5).unwrap());
        assert_eq!(rx.recv_blocking(), Ok(5));
        t.join().unwrap();
    });
}

/// Close vs a parked sender: either the receiver took the value (send Ok)
/// or the sender got it back — never both, never neither.
#[test]
fn zero_close_vs_send() {
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let rx2 = rx.clone();
        let t = thread::spawn(move || tx.send_blocking(5));
        let r = thread::spawn(move || rx2.try_recv());
        rx.close();
        let sent = t.join().unwrap();
        let got = r.join().unwrap();
        match (sent, got) {
            (Ok(()), Ok(5)) => {}
            (Err(e), Err(_)) => assert_eq!(e.0, 5),
            (s, g) => panic!("inconsistent: {s:?} / {g:?}"),
        }
    });
}

/// A receive parks a taker and is dropped while a sender may be putting its
/// value straight into it: the value is re-queued (or taken), never lost,
/// and the send completes either way.
#[test]
fn zero_cancelled_filled_receive_loses_nothing() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let t = thread::spawn(move || tx.send_blocking(7).unwrap());
        let first = {
            let mut f = Box::pin(rx.recv());
            match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(v) => Some(v.unwrap()),
                Poll::Pending => None,
            }
        };
        let got = first.unwrap_or_else(|| rx.recv_blocking().unwrap());
        assert_eq!(got, 7);
        t.join().unwrap();
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    });
}

/// Two receives in a row on one thread, a sender giving to each: the second
/// parks in the taker the first drained without the lock (loom mirrors
/// taker 0 only) and must see only its own value.
#[test]
fn zero_drained_taker_is_reused() {
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let t = thread::spawn(move || {
            assert_eq!(rx.recv_blocking(), Ok(1));
            assert_eq!(rx.recv_blocking(), Ok(2));
            assert_eq!(rx.recv_blocking(), Err(RecvError));
        });
        tx.send_blocking(1).unwrap();
        tx.send_blocking(2).unwrap();
        drop(tx);
        t.join().unwrap();
    });
}

/// Two receivers, three values: taker 0 is drained without the lock,
/// taker 1 under it, and a receive parking again while the other drains
/// may reclaim only a drained taker. Every value arrives exactly once.
#[test]
fn zero_drain_with_and_without_the_lock() {
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let rx2 = rx.clone();
        let t = thread::spawn(move || rx2.recv_blocking().unwrap());
        let s = thread::spawn(move || {
            for v in [1, 2, 4] {
                tx.send_blocking(v).unwrap();
            }
        });
        let mine = rx.recv_blocking().unwrap() + rx.recv_blocking().unwrap();
        let theirs = t.join().unwrap();
        assert_eq!(mine + theirs, 7, "mine {mine}, theirs {theirs}");
        s.join().unwrap();
    });
}

/// A receive polled again without a wake-up (a `select!` woken by another
/// arm, a spurious poll) may find its taker filled without the lock: it must
/// then see the sender's write of the value.
#[test]
fn zero_filled_taker_seen_without_a_wakeup() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let t = thread::spawn(move || tx.send_blocking(3).unwrap());
        let mut f = Box::pin(rx.recv());
        let got = loop {
            match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(v) => break v,
                Poll::Pending => thread::yield_now(),
            }
        };
        assert_eq!(got, Ok(3));
        drop(f);
        t.join().unwrap();
    });
}

/// Two parked senders at once: one offer slot's generation is mirrored for
/// the lock-free "taken" check (loom mirrors slot 0 only), the other's is
/// read under the lock. Each send completes exactly when its value is taken.
#[test]
fn zero_taken_seen_with_and_without_the_lock() {
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let tx2 = tx.clone();
        let a = thread::spawn(move || tx.send_blocking(1).unwrap());
        let b = thread::spawn(move || tx2.send_blocking(2).unwrap());
        let got = rx.recv_blocking().unwrap() + rx.recv_blocking().unwrap();
        assert_eq!(got, 3);
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// One sender, two sends in a row: the second offer reuses the slot the
/// first was taken from, under a new generation; the first send must not
/// mistake the second offer for its own, nor the second the first's take.
#[test]
fn zero_reused_slot_is_a_new_offer() {
    model(|| {
        let (tx, rx) = chan::rendezvous::<u32>();
        let t = thread::spawn(move || {
            // A rendezvous send completes only once its value is taken: no
            // offer is left queued (this is the only sender).
            tx.send_blocking(1).unwrap();
            assert_eq!(tx.len(), 0, "send 1 completed before its take");
            tx.send_blocking(2).unwrap();
            assert_eq!(tx.len(), 0, "send 2 completed before its take");
        });
        assert_eq!(rx.recv_blocking(), Ok(1));
        assert_eq!(rx.recv_blocking(), Ok(2));
        t.join().unwrap();
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    });
}

/// A parked send given up (its future dropped) races a receive taking its
/// offer: the value is delivered or handed back to be dropped, exactly once.
#[test]
fn zero_withdraw_vs_take_drops_once() {
    use std::future::Future;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::{Context, Poll, Waker};
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, SeqCst);
        }
    }
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = chan::rendezvous::<Counted>();
        let rx2 = rx.clone(); // kept: the last receiver gone fails the send
        let r = thread::spawn(move || rx2.try_recv().is_ok());
        {
            let mut f = Box::pin(tx.send(Counted(drops.clone())));
            let first = f.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            assert!(matches!(first, Poll::Pending), "no receiver was parked");
        } // dropped: withdrawn, unless already taken
        let taken = r.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1, "taken: {taken}");
        drop(rx);
    });
}
