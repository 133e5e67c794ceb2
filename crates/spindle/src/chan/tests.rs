//! Unit tests of the bounded, unbounded and rendezvous channels that need
//! their internals: what a probing `select!` registers, woken receives set
//! aside, a rendezvous send to a parked receiver.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::*;

fn poll_once<F: Future>(f: F) -> Poll<F::Output> {
    pin!(f).poll(&mut Context::from_waker(Waker::noop()))
}

/// A select that finds no arm ready joins the wait lists only in its
/// second pass; with an `else` arm it never gets there, so it leaves no
/// waiter behind. Without `else`, it registers on every channel while
/// pending and unregisters when it completes or is dropped.
#[test]
fn probing_select_registers_nothing_until_its_second_pass() {
    let (tx, rx) = bounded::<u32>(1);
    let (_tx2, rx2) = bounded::<u32>(1);
    let r = poll_once(async {
        crate::select! {
            v = rx.recv() => v.ok(),
            v = rx2.recv() => v.ok(),
            else => None,
        }
    });
    assert_eq!(r, Poll::Ready(None));
    assert_eq!(rx.chan.recv_waiters.waiting(), 0);

    // Without `else`: the second pass registers on both channels while
    // the select is pending, and the select (dropped) unregisters.
    let mut pending = Box::pin(async {
        crate::select! {
            v = rx.recv() => v.ok(),
            v = rx2.recv() => v.ok(),
        }
    });
    assert!(pending
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending());
    assert_eq!(rx.chan.recv_waiters.waiting(), 1);
    assert_eq!(rx2.chan.recv_waiters.waiting(), 1);
    tx.try_send(5).unwrap();
    assert_eq!(
        pending
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop())),
        Poll::Ready(Some(5))
    );
    drop(pending);
    assert_eq!(rx.chan.recv_waiters.waiting(), 0);
    assert_eq!(rx2.chan.recv_waiters.waiting(), 0);
}

/// The ring caps its wake-ups in flight (`waiters/`). Receives that
/// were woken but are never polled again hold every slot: later sends
/// wake nobody, until a send that finds the ring full nudges the next
/// parked receiver past the cap. That receiver (a thread here) then
/// drains the ring; without the nudge it would sleep beside a full ring
/// and the sender beside it.
#[test]
fn woken_receives_set_aside_do_not_strand_a_full_ring() {
    let limit = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Room for more messages than the cap: the first `limit` sends
    // wake the set-aside receives, the next ones wake nobody.
    let cap = limit + 4;
    let (tx, rx) = bounded::<usize>(cap);
    let mut held: Vec<_> = (0..limit).map(|_| Box::pin(rx.recv())).collect();
    for r in &mut held {
        assert!(poll_once(r.as_mut()).is_pending());
    }
    let rx2 = rx.clone();
    let receiver = std::thread::spawn(move || {
        // No deadline here: a receive that times out takes what it
        // finds on the way out, which would hide a stranded ring.
        (0..cap)
            .map(|_| rx2.recv_blocking().unwrap())
            .sum::<usize>()
    });
    while rx.chan.recv_waiters.waiting() < limit + 1 {
        std::thread::yield_now();
    }
    // Registered is not yet parked: a registration re-checks the ring, and
    // a re-check after the sends below would take a message and leave the
    // list. Give the thread time to finish it and park (more under miri,
    // whose threads run many times slower).
    let settle = if cfg!(miri) { 1000 } else { 20 };
    std::thread::sleep(Duration::from_millis(settle));
    for v in 0..cap {
        tx.try_send(v).unwrap();
    }
    assert_eq!(
        rx.chan.recv_waiters.waiting(),
        1,
        "only the thread is still parked"
    );
    // The ring is full: this send parks, nudging the thread first.
    let sent = tx.send_timeout_blocking(cap, Duration::from_secs(60));
    assert!(sent.is_ok(), "the send stranded beside a full ring");
    assert_eq!(receiver.join().unwrap(), (0..cap).sum());
    assert_eq!(rx.try_recv(), Ok(cap));
    drop(held);
}

/// Rendezvous, as Go's: a send that finds a parked receiver hands the
/// value straight into it and completes in the same poll; one that finds
/// none parks an offer. `try_send` succeeds only in the first case.
#[test]
fn rendezvous_send_to_a_parked_receiver_completes_at_once() {
    let (tx, rx) = rendezvous::<u32>();
    assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
    let mut recv = Box::pin(rx.recv());
    assert!(poll_once(recv.as_mut()).is_pending());
    assert_eq!(poll_once(tx.send(2)), Poll::Ready(Ok(())));
    assert_eq!(poll_once(recv.as_mut()), Poll::Ready(Ok(2)));

    let mut recv = Box::pin(rx.recv());
    assert!(poll_once(recv.as_mut()).is_pending());
    assert_eq!(tx.try_send(3), Ok(()));
    assert_eq!(poll_once(recv.as_mut()), Poll::Ready(Ok(3)));

    // No receiver parked: the send parks its offer until one comes.
    let mut send = Box::pin(tx.send(4));
    assert!(poll_once(send.as_mut()).is_pending());
    assert_eq!(rx.try_recv(), Ok(4));
    assert_eq!(poll_once(send.as_mut()), Poll::Ready(Ok(())));
}
