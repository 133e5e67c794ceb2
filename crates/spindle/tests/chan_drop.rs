//! Every message is dropped exactly once: when received, on close, with
//! the channel while buffered, in a failed send's error, on a cancelled recv
//! or send, and under the drop policies.

mod chan_common;

use chan_common::{block_on, poll_once, Counter, Tracked};
use spindle::chan::{self, Policy, TrySendError};
use std::thread;

fn flavors() -> Vec<(&'static str, chan::Sender<Tracked>, chan::Receiver<Tracked>)> {
    let mut v = Vec::new();
    let (t, r) = chan::bounded(4);
    v.push(("bounded", t, r));
    let (t, r) = chan::unbounded();
    v.push(("unbounded", t, r));
    v
}

#[test]
fn channel_dropped_with_buffered_messages() {
    for (name, tx, rx) in flavors() {
        let c = Counter::new();
        for i in 0..4 {
            tx.try_send(c.make(i)).unwrap();
        }
        let got = rx.try_recv().unwrap();
        drop(got);
        drop(tx);
        assert_eq!(c.dropped(), 1, "{name}");
        drop(rx);
        assert_eq!(c.live(), 0, "{name}");
    }
    // Unbounded across several blocks.
    let c = Counter::new();
    let (tx, rx) = chan::unbounded();
    for i in 0..100 {
        tx.try_send(c.make(i)).unwrap();
    }
    for _ in 0..40 {
        drop(rx.try_recv().unwrap());
    }
    drop(rx);
    assert_eq!(c.live(), 0, "last receiver drop discards the buffer");
    drop(tx);
}

#[test]
fn close_keeps_buffer_until_drained_or_dropped() {
    for (name, tx, rx) in flavors() {
        let c = Counter::new();
        tx.try_send(c.make(0)).unwrap();
        tx.try_send(c.make(1)).unwrap();
        tx.close();
        assert_eq!(
            c.dropped(),
            0,
            "{name}: close must not drop buffered messages"
        );
        // A send after close hands the value back, which we drop.
        let e = tx.try_send(c.make(2)).unwrap_err();
        assert!(e.is_closed());
        drop(e);
        assert_eq!(c.dropped(), 1);
        drop(rx.try_recv().unwrap());
        drop((tx, rx));
        assert_eq!(c.live(), 0, "{name}");
    }
}

#[test]
fn failed_sends_return_the_value() {
    let c = Counter::new();
    let (tx, rx) = chan::bounded::<Tracked>(1);
    tx.try_send(c.make(0)).unwrap();
    match tx.try_send(c.make(1)) {
        Err(TrySendError::Full(m)) => assert_eq!(m.id, 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.dropped(), 1);
    drop(rx);
    assert_eq!(
        c.dropped(),
        2,
        "buffered message dropped with the last receiver"
    );
    let e = block_on(tx.send(c.make(2))).unwrap_err();
    assert_eq!(e.0.id, 2);
    drop(e);
    assert_eq!(c.live(), 0);
}

#[test]
fn cancelled_futures_drop_nothing_of_the_channel() {
    let c = Counter::new();
    let (tx, rx) = chan::bounded::<Tracked>(1);
    // A pending recv cancelled.
    let mut f = rx.recv();
    assert!(poll_once(&mut f).is_pending());
    drop(f);
    // A pending send cancelled: its own value is dropped, once.
    tx.try_send(c.make(0)).unwrap();
    let mut s = tx.send(c.make(1));
    assert!(poll_once(&mut s).is_pending());
    drop(s);
    assert_eq!(c.dropped(), 1);
    assert_eq!(rx.try_recv().unwrap().id, 0);
    assert_eq!(c.live(), 0);

    // Rendezvous: a pending offer withdrawn on drop.
    let (tx, rx) = chan::rendezvous::<Tracked>();
    let mut s = tx.send(c.make(2));
    assert!(poll_once(&mut s).is_pending());
    assert_eq!(rx.len(), 1);
    drop(s);
    assert_eq!(rx.len(), 0);
    assert_eq!(c.live(), 0);
    // Rendezvous: a parked sender whose value is taken, then the future is
    // dropped before it sees it: delivered, not dropped twice.
    let mut s = tx.send(c.make(3));
    assert!(poll_once(&mut s).is_pending());
    let got = rx.try_recv().unwrap();
    drop(s);
    assert_eq!(got.id, 3);
    drop(got);
    assert_eq!(c.live(), 0);
}

#[test]
fn drop_policies_drop_exactly_once() {
    let c = Counter::new();
    let (tx, rx) = chan::bounded_with_policy::<Tracked>(2, Policy::DropOldest);
    for i in 0..5 {
        block_on(tx.send(c.make(i))).unwrap();
    }
    assert_eq!(c.dropped(), 3);
    assert_eq!(rx.try_recv().unwrap().id, 3);
    assert_eq!(rx.try_recv().unwrap().id, 4);
    assert_eq!(c.live(), 0);

    let (tx, rx) = chan::bounded_with_policy::<Tracked>(2, Policy::DropNewest);
    for i in 0..5 {
        tx.try_send(c.make(i)).unwrap();
    }
    assert_eq!(rx.try_recv().unwrap().id, 0);
    assert_eq!(rx.try_recv().unwrap().id, 1);
    assert!(rx.try_recv().is_err());
    drop((tx, rx));
    assert_eq!(c.live(), 0);
}

#[test]
fn concurrent_close_loses_nothing() {
    // Senders race a close: each message is either received, or handed back
    // in an error; all dropped exactly once.
    for _ in 0..chan_common::scale(50) {
        let c = Counter::new();
        let (tx, rx) = chan::bounded::<Tracked>(2);
        let senders: Vec<_> = (0..3)
            .map(|s| {
                let tx = tx.clone();
                let c = c.clone();
                thread::spawn(move || {
                    let mut back = 0;
                    for i in 0..20 {
                        if let Err(e) = tx.send_blocking(c.make(s * 100 + i)) {
                            drop(e.0);
                            back += 1;
                        }
                    }
                    back
                })
            })
            .collect();
        let mut got = 0;
        for _ in 0..10 {
            if rx.recv_blocking().is_ok() {
                got += 1;
            }
        }
        rx.close();
        while rx.recv_blocking().is_ok() {
            got += 1;
        }
        let back: usize = senders.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(got + back, 60);
        drop((tx, rx));
        assert_eq!(c.live(), 0);
    }
}
