//! Loom models of the channels: every interleaving (up to the preemption
//! bound) of the real code's atomics, cells and mutexes. The rendezvous
//! channel's models are in `loom_chan_zero.rs`.
//!
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p spindle --release --test loom_chan`

#![cfg(loom)]

use loom::thread;
use spindle::chan::{self, RecvError, TryRecvError};

mod loom_common;
use loom_common::{block_on, model, model_with_bound};

// ------------------------------------------------------------ bounded

/// Lost wake-up on recv vs send: the receiver parks on an empty ring while
/// the sender publishes; it must always get the value.
#[test]
fn array_send_recv_no_lost_wakeup() {
    model(|| {
        let (tx, rx) = chan::bounded::<u32>(1);
        let t = thread::spawn(move || tx.send_blocking(7).unwrap());
        assert_eq!(rx.recv_blocking(), Ok(7));
        t.join().unwrap();
    });
}

/// A sender parked on a full ring is woken by the receive that frees a slot.
#[test]
fn array_full_send_wakes() {
    model(|| {
        let (tx, rx) = chan::bounded::<u32>(1);
        tx.try_send(1).unwrap();
        let t = thread::spawn(move || tx.send_blocking(2).unwrap());
        assert_eq!(rx.recv_blocking(), Ok(1));
        assert_eq!(rx.recv_blocking(), Ok(2));
        t.join().unwrap();
    });
}

/// Close races a blocked receive: the receiver wakes with `Closed`.
#[test]
fn array_close_vs_blocked_recv() {
    model(|| {
        let (tx, rx) = chan::bounded::<u32>(1);
        let t = thread::spawn(move || drop(tx));
        assert_eq!(rx.recv_blocking(), Err(RecvError));
        t.join().unwrap();
    });
}

/// Close races a blocked send on a full ring: the sender gets its value back,
/// the buffered message stays receivable, nothing is lost.
#[test]
fn array_close_vs_blocked_send() {
    model(|| {
        let (tx, rx) = chan::bounded::<u32>(1);
        tx.try_send(1).unwrap();
        let t = thread::spawn(move || tx.send_blocking(2));
        rx.close();
        let r = t.join().unwrap();
        assert_eq!(r.unwrap_err().0, 2);
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    });
}

/// Two senders race for one slot, one receiver drains: both values arrive.
/// One preemption: both senders and the receiver spin (`Backoff`, a loom
/// yield at each step) on a claim another has not finished, and with two
/// the model explores for most of an hour.
#[test]
fn array_two_senders() {
    model_with_bound(1, || {
        let (tx, rx) = chan::bounded::<u32>(1);
        let tx2 = tx.clone();
        let a = thread::spawn(move || tx.send_blocking(1).unwrap());
        let b = thread::spawn(move || tx2.send_blocking(2).unwrap());
        let x = rx.recv_blocking().unwrap();
        let y = rx.recv_blocking().unwrap();
        assert_eq!(x + y, 3);
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(rx.recv_blocking(), Err(RecvError));
    });
}

/// Two receivers park while two sends land. The race this found (on every
/// flavor, with the fence protocol as with the flag): a receiver registered,
/// took a message in its own re-check, and was then handed the wake-up meant
/// for the other receiver (re-registered behind it), which slept beside the
/// second message. A wake-up not needed is now passed on while messages
/// remain. Modelled on the unbounded flavor, whose locks never spin: on the
/// bounded ring two receivers spinning on one preempted sender's claim make
/// loom's scheduler run without bound; the wait-list logic is the same.
#[test]
fn two_parked_receivers_pass_unneeded_wakeups_on() {
    model(|| {
        let (tx, rx) = chan::unbounded::<u32>();
        let rx2 = rx.clone();
        let a = thread::spawn(move || rx.recv_blocking().unwrap());
        let b = thread::spawn(move || rx2.recv_blocking().unwrap());
        tx.try_send(1).unwrap();
        tx.try_send(2).unwrap();
        assert_eq!(a.join().unwrap() + b.join().unwrap(), 3);
    });
}

/// Both sides park over and over on a one-slot ring: each wait raises the
/// `WAITING` flag of the word the other side moves, each emptied wait list
/// lowers it, and the next wait raises it again. Three messages, in order.
#[test]
fn array_flags_raised_and_lowered_in_turn() {
    model(|| {
        let (tx, rx) = chan::bounded::<u32>(1);
        let t = thread::spawn(move || {
            for v in 1..=3 {
                tx.send_blocking(v).unwrap();
            }
        });
        for v in 1..=3 {
            assert_eq!(rx.recv_blocking(), Ok(v));
        }
        t.join().unwrap();
        assert_eq!(rx.recv_blocking(), Err(RecvError));
    });
}

// ---------------------------------------------------------- unbounded

/// Receive vs send across a block boundary (blocks of 2 under loom).
#[test]
fn list_send_recv_across_blocks() {
    model(|| {
        let (tx, rx) = chan::unbounded::<u32>();
        let t = thread::spawn(move || {
            for i in 0..3 {
                tx.send_blocking(i).unwrap();
            }
        });
        for i in 0..3 {
            assert_eq!(rx.recv_blocking(), Ok(i));
        }
        assert_eq!(rx.recv_blocking(), Err(RecvError));
        t.join().unwrap();
    });
}

/// Close vs a receiver: it drains the buffered value, then sees closed.
#[test]
fn list_close_drain() {
    model(|| {
        let (tx, rx) = chan::unbounded::<u32>();
        let t = thread::spawn(move || {
            tx.send_blocking(1).unwrap();
            tx.close();
        });
        assert_eq!(rx.recv_blocking(), Ok(1));
        assert_eq!(rx.recv_blocking(), Err(RecvError));
        t.join().unwrap();
    });
}

// ------------------------------------------------------------ oneshot

#[test]
fn oneshot_send_vs_recv() {
    model(|| {
        let (tx, mut rx) = chan::oneshot::<u32>();
        let t = thread::spawn(move || tx.send(3).unwrap());
        assert_eq!(rx.recv_blocking(), Ok(3));
        t.join().unwrap();
    });
}

#[test]
fn oneshot_drop_sender_wakes() {
    model(|| {
        let (tx, mut rx) = chan::oneshot::<u32>();
        let t = thread::spawn(move || drop(tx));
        assert_eq!(rx.recv_blocking(), Err(RecvError));
        t.join().unwrap();
    });
}

// -------------------------------------------------------------- select

/// A select over two channels while both get a message: the select takes
/// exactly one, the losing arm leaves the other in its channel.
#[test]
fn select_cancel_keeps_message() {
    model(|| {
        let (tx1, rx1) = chan::bounded::<u32>(1);
        let (tx2, rx2) = chan::bounded::<u32>(1);
        let t = thread::spawn(move || {
            tx1.send_blocking(1).unwrap();
            tx2.send_blocking(2).unwrap();
        });
        let got = block_on(async {
            spindle::select! {
                biased;
                a = rx1.recv() => a.unwrap(),
                b = rx2.recv() => b.unwrap(),
            }
        });
        t.join().unwrap();
        let rest = if got == 1 {
            rx2.try_recv()
        } else {
            rx1.try_recv()
        };
        assert_eq!(got + rest.unwrap(), 3);
    });
}

/// A receiver woken for a message but cancelled (losing select arm) passes
/// the wake-up on: a second, blocked receiver of the same channel still gets
/// the message.
#[test]
fn select_cancel_passes_wakeup_on() {
    model(|| {
        let (tx, rx) = chan::bounded::<u32>(1);
        let (tx_other, rx_other) = chan::bounded::<u32>(1);
        tx_other.try_send(9).unwrap();
        let rx_b = rx.clone();
        let keep_open = tx.clone();
        let b = thread::spawn(move || rx_b.recv_blocking());
        let t = thread::spawn(move || tx.send_blocking(1).unwrap());
        // This select may register on `rx` and lose to `rx_other`.
        let got = block_on(async {
            spindle::select! {
                biased;
                a = rx.recv() => a.map(|v| v * 10),
                o = rx_other.recv() => o,
            }
        });
        t.join().unwrap();
        drop(keep_open);
        if got == Ok(10) {
            // The select took it; release the other receiver.
            rx.close();
            assert_eq!(b.join().unwrap(), Err(RecvError));
        } else {
            assert_eq!(got, Ok(9));
            assert_eq!(b.join().unwrap(), Ok(1));
        }
    });
}

// ---------------------------------------------------------- broadcast

/// A receiver parked on an empty broadcast ring is woken by a send, then by
/// the close: it sees the message, then `Closed`.
#[test]
fn broadcast_send_close_vs_recv() {
    model(|| {
        let (tx, mut rx) = chan::broadcast::<u32>(1);
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            drop(tx);
        });
        assert_eq!(rx.recv_blocking(), Ok(1));
        assert_eq!(rx.recv_blocking(), Err(chan::broadcast::RecvError::Closed));
        t.join().unwrap();
    });
}

// --------------------------------------------------------------- spsc

/// Lost wake-up on an SPSC ring of one slot, both directions, then close.
#[test]
fn spsc_send_recv_close() {
    model(|| {
        let (mut p, mut c) = chan::spsc::<u32>(1);
        let t = thread::spawn(move || {
            p.send_blocking(1).unwrap();
            p.send_blocking(2).unwrap();
        });
        assert_eq!(c.recv_blocking(), Ok(1));
        assert_eq!(c.recv_blocking(), Ok(2));
        assert_eq!(c.recv_blocking(), Err(RecvError));
        t.join().unwrap();
    });
}

// ------------------------------------------------- owned claim words

/// Runs `f` as a model with the bounded ring's claim words owned by a
/// thread after its first claim (`chan/flavors/bias.rs`), and checks that
/// plain claims were made.
fn owned_model(f: impl Fn() + Sync + Send + 'static) {
    spindle::__private::loom_own_words_after(1);
    let before = spindle::__private::loom_plain_claims();
    model(f);
    spindle::__private::loom_own_words_after(0xffff); // never, as by default
    assert!(
        spindle::__private::loom_plain_claims() > before,
        "no plain claim was modelled"
    );
}

/// The sender owns `tail` (its first send) and sends again with a plain
/// claim while the receiver, on another thread, takes the first message
/// and may park on the empty ring, raising `WAITING` on `tail`: which
/// takes the word back from the sender first. Both messages arrive, in
/// order, and nobody sleeps beside a message (a loom deadlock).
#[test]
fn owned_tail_vs_parking_receiver() {
    owned_model(|| {
        let (tx, rx) = chan::bounded::<u32>(2);
        tx.try_send(1).unwrap();
        let t = thread::spawn(move || (rx.recv_blocking(), rx.recv_blocking()));
        tx.send_blocking(2).unwrap();
        assert_eq!(t.join().unwrap(), (Ok(1), Ok(2)));
    });
}

/// The receiver owns `head` (and `tail`: one thread made the first claims
/// on both) and receives with plain claims while a sender on another
/// thread finds the ring full and parks, raising `WAITING` on `head`,
/// which takes the word back first: the slot freed by the receive must
/// wake it.
#[test]
fn owned_head_vs_parking_sender() {
    owned_model(|| {
        let (tx, rx) = chan::bounded::<u32>(1);
        tx.try_send(1).unwrap();
        assert_eq!(rx.try_recv(), Ok(1));
        tx.try_send(2).unwrap();
        let t = thread::spawn(move || tx.send_blocking(3).unwrap());
        assert_eq!(rx.recv_blocking(), Ok(2));
        assert_eq!(rx.recv_blocking(), Ok(3));
        t.join().unwrap();
    });
}

/// A second sender on another thread revokes the first sender's
/// ownership of `tail` while the owner may be inside a plain claim: no
/// claim is lost or made twice (both values arrive, the ring then empty).
#[test]
fn owned_tail_revoked_by_another_sender() {
    owned_model(|| {
        let (tx, rx) = chan::bounded::<u32>(3);
        let tx2 = tx.clone();
        tx.try_send(1).unwrap();
        let t = thread::spawn(move || tx2.try_send(2).unwrap());
        tx.try_send(3).unwrap();
        t.join().unwrap();
        let mut got = [
            rx.try_recv().unwrap(),
            rx.try_recv().unwrap(),
            rx.try_recv().unwrap(),
        ];
        got.sort();
        assert_eq!(got, [1, 2, 3]);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    });
}

/// Close from another thread (an RMW of `CLOSED` on the owned `tail`,
/// which takes the word back first) races the owner's plain claim: the
/// send lands before the close, and is drained, or fails; the ring is then
/// empty and closed.
#[test]
fn owned_tail_vs_close() {
    owned_model(|| {
        let (tx, rx) = chan::bounded::<u32>(2);
        tx.try_send(1).unwrap();
        let t = thread::spawn(move || {
            rx.close();
            let mut n = 0;
            while rx.try_recv().is_ok() {
                n += 1;
            }
            (n, rx)
        });
        let sent = tx.try_send(2).is_ok();
        let (drained, rx) = t.join().unwrap();
        assert_eq!(drained, 1 + u32::from(sent));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    });
}

// -------------------------------------------------------------- batch

/// A batch send claiming runs (one CAS) against a batch receive claiming
/// runs, over a ring smaller than the batch: order kept, nothing lost.
#[test]
fn array_batch_runs() {
    model(|| {
        let (tx, rx) = chan::bounded::<u32>(2);
        let t = thread::spawn(move || tx.send_batch_blocking(vec![1, 2, 3]).unwrap());
        let mut out = Vec::new();
        while out.len() < 3 {
            rx.recv_batch_blocking(&mut out, 2).unwrap();
        }
        assert_eq!(out, vec![1, 2, 3]);
        t.join().unwrap();
    });
}
