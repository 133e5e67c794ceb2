//! Batch operations, oneshot, broadcast (lag policy), SPSC zero-copy
//! access, and the `Stream`/`Sink` implementations.

mod chan_common;

use chan_common::{block_on, poll_once, spawn, Counter};
use futures_util::{SinkExt, StreamExt};
use spindle::chan::{self, broadcast, RecvError, SendError, TryRecvError, TrySendError};
use std::thread;
use std::time::Duration;

#[test]
fn batch_send_and_recv() {
    for cap in [Some(0), Some(4), None] {
        let (tx, rx) = match cap {
            Some(n) => chan::bounded::<u32>(n),
            None => chan::unbounded(),
        };
        let h = spawn(async move {
            tx.send_batch((0..100).collect()).await.unwrap();
        });
        let mut out = Vec::new();
        while out.len() < 100 {
            let n = rx.recv_batch_blocking(&mut out, 16).unwrap();
            assert!((1..=16).contains(&n));
        }
        assert_eq!(out, (0..100).collect::<Vec<_>>(), "cap {cap:?}");
        h.join().unwrap();
        assert_eq!(block_on(rx.recv_batch(&mut out, 8)), Err(RecvError));
    }
}

#[test]
fn batch_takes_a_run_at_once() {
    let (tx, rx) = chan::bounded::<u32>(8);
    for i in 0..8 {
        tx.try_send(i).unwrap();
    }
    let mut out = Vec::new();
    assert_eq!(rx.try_recv_batch(&mut out, 5), Ok(5));
    assert_eq!(rx.try_recv_batch(&mut out, 5), Ok(3));
    assert_eq!(rx.try_recv_batch(&mut out, 5), Err(TryRecvError::Empty));
    assert_eq!(out, (0..8).collect::<Vec<_>>());
    // A batch send on a closed channel hands back the unsent rest.
    tx.try_send(0).unwrap();
    rx.close();
    let e = block_on(tx.send_batch(vec![1, 2])).unwrap_err();
    assert_eq!(e.0, vec![1, 2]);
}

#[test]
fn oneshot_basics() {
    let (tx, rx) = chan::oneshot::<String>();
    let h = thread::spawn(move || tx.send("hi".into()).unwrap());
    assert_eq!(block_on(rx).unwrap(), "hi");
    h.join().unwrap();

    let (tx, mut rx) = chan::oneshot::<u8>();
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    drop(tx);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    assert_eq!(block_on(rx), Err(RecvError));

    let (tx, rx) = chan::oneshot::<u8>();
    drop(rx);
    assert!(tx.is_closed());
    assert_eq!(tx.send(3), Err(SendError(3)));

    // A close keeps a value already sent; only the first close closes.
    let (tx, mut rx) = chan::oneshot::<u8>();
    tx.send(4).unwrap();
    assert!(rx.close());
    assert!(!rx.close());
    assert_eq!(rx.try_recv(), Ok(4));

    let (tx, mut rx) = chan::oneshot::<u8>();
    assert_eq!(
        rx.recv_timeout_blocking(Duration::from_millis(10)),
        Err(chan::RecvTimeoutError::Timeout)
    );
    tx.send(1).unwrap();
    assert_eq!(rx.recv_blocking(), Ok(1));

    // Cancel safety: polling and dropping the receiver future before the
    // value arrives takes nothing.
    let c = Counter::new();
    let (tx, mut rx) = chan::oneshot();
    assert!(poll_once(&mut rx).is_pending());
    tx.send(c.make(1)).unwrap();
    drop(rx);
    assert_eq!(c.live(), 0);
}

#[test]
fn broadcast_every_receiver_sees_every_message() {
    let (tx, rx1) = chan::broadcast::<u32>(16);
    let rx2 = tx.subscribe();
    let hs: Vec<_> = [rx1, rx2]
        .into_iter()
        .map(|mut rx| {
            thread::spawn(move || {
                let mut got = Vec::new();
                while let Ok(v) = rx.recv_blocking() {
                    got.push(v);
                }
                got
            })
        })
        .collect();
    for i in 0..10 {
        tx.send(i).unwrap();
    }
    drop(tx);
    for h in hs {
        assert_eq!(h.join().unwrap(), (0..10).collect::<Vec<_>>());
    }
}

#[test]
fn broadcast_lagging_receiver_skips_ahead() {
    let (tx, mut rx) = chan::broadcast::<u32>(4);
    for i in 0..10 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.try_recv(), Err(broadcast::TryRecvError::Lagged(6)));
    for i in 6..10 {
        assert_eq!(rx.try_recv(), Ok(i));
    }
    assert_eq!(rx.try_recv(), Err(broadcast::TryRecvError::Empty));
    tx.send(10).unwrap();
    assert_eq!(block_on(rx.recv()), Ok(10));
    tx.close();
    assert_eq!(block_on(rx.recv()), Err(broadcast::RecvError::Closed));
    // No receiver left: send hands the value back.
    let (tx, rx) = chan::broadcast::<u32>(2);
    drop(rx);
    assert_eq!(tx.send(5).unwrap_err().0, 5);
}

#[test]
fn broadcast_drops_each_message_once() {
    let c = Counter::new();
    let (tx, mut rx) = chan::broadcast::<std::sync::Arc<chan_common::Tracked>>(2);
    for i in 0..5 {
        tx.send(std::sync::Arc::new(c.make(i))).unwrap();
    }
    assert_eq!(c.dropped(), 3, "overwritten messages dropped once");
    let _ = rx.try_recv();
    let v = rx.try_recv().unwrap();
    drop((tx, rx));
    assert_eq!(c.live(), 1);
    drop(v);
    assert_eq!(c.live(), 0);
}

#[test]
fn spsc_send_recv_and_close() {
    let (mut p, mut c) = chan::spsc::<u64>(8);
    let n = chan_common::scale(10_000) as u64;
    let h = spawn(async move {
        for i in 0..n {
            p.send(i).await.unwrap();
        }
    });
    let mut sum = 0;
    let mut expect = 0;
    while let Ok(v) = c.recv_blocking() {
        assert_eq!(v, expect);
        expect += 1;
        sum += v;
    }
    h.join().unwrap();
    assert_eq!(sum, n * (n - 1) / 2);
}

#[test]
fn spsc_zero_copy_slices() {
    let (mut p, mut c) = chan::spsc::<u32>(8);
    {
        let mut w = p.write_slice(5);
        assert_eq!(w.len(), 5);
        assert_eq!(w.copy_from_slice(&[1, 2, 3]), 3);
        w.push(4).unwrap();
        assert_eq!(w.commit(), 4);
    }
    {
        let r = c.read_slice(10);
        assert_eq!(&*r, &[1, 2, 3, 4]);
        assert_eq!(r.release(3), 3);
    }
    // Wrap-around: the contiguous run stops at the end of the buffer.
    let mut w = p.write_slice(8);
    assert_eq!(w.len(), 4); // slots 4..8
    for i in 0..4 {
        w.push(10 + i).unwrap();
    }
    w.commit();
    let w = p.write_slice(8);
    assert_eq!(w.len(), 3); // slots 0..3 (slot 3 still holds 4)
    drop(w);
    let r = c.read_slice(10);
    assert_eq!(&*r, &[4, 10, 11, 12, 13]);
    let mut out = Vec::new();
    r.take_into(5, &mut out);
    assert_eq!(out, vec![4, 10, 11, 12, 13]);
    assert_eq!(c.try_recv(), Err(TryRecvError::Empty));
    drop(p);
    assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
}

/// Nothing is published after a close: a consumer that saw `Closed` sees
/// nothing more.
#[test]
fn spsc_reserves_nothing_after_close() {
    let (mut p, mut c) = chan::spsc::<u32>(8);
    p.try_send(1).unwrap();
    assert!(p.close(), "the first close closes the ring");
    assert!(!p.close(), "a second close finds it closed");
    let mut w = p.write_slice(4);
    assert!(w.is_empty(), "a run reserved after close");
    assert_eq!(w.push(2), Err(2));
    assert_eq!(w.commit(), 0);
    assert_eq!(c.try_recv(), Ok(1));
    assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
    assert!(p.write_slice(4).is_empty());
    assert_eq!(c.try_recv(), Err(TryRecvError::Closed));
    // The consumer gone: nothing to write for either.
    let (mut p, c) = chan::spsc::<u32>(8);
    drop(c);
    assert!(p.write_slice(4).is_empty());
}

#[test]
fn spsc_drops_exactly_once() {
    let k = Counter::new();
    let (mut p, mut c) = chan::spsc(4);
    for i in 0..3 {
        p.try_send(k.make(i)).unwrap();
    }
    {
        let mut w = p.write_slice(1);
        w.push(k.make(3)).unwrap();
        // dropped without commit: the written value is dropped
    }
    assert_eq!(k.dropped(), 1);
    let r = c.read_slice(2);
    assert_eq!(r.len(), 2);
    r.release(1);
    assert_eq!(k.dropped(), 2);
    drop(c);
    assert!(p.try_send(k.make(9)).is_err());
    drop(p);
    assert_eq!(k.live(), 0);
}

/// A sender released by `Sink::close` refuses every way of sending, the
/// batch included.
#[test]
fn a_sender_closed_as_a_sink_sends_nothing_more() {
    let (mut tx, rx) = chan::bounded::<u32>(8);
    let keep = tx.clone(); // the channel stays open for other senders
    block_on(SinkExt::close(&mut tx)).unwrap();
    assert_eq!(tx.try_send(1), Err(TrySendError::Closed(1)));
    assert_eq!(block_on(chan::Sender::send(&tx, 2)), Err(SendError(2)));
    assert_eq!(
        tx.send_batch_blocking(vec![3, 4]),
        Err(SendError(vec![3, 4]))
    );
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    keep.try_send(5).unwrap();
    assert_eq!(rx.try_recv(), Ok(5));
}

/// `Duration::MAX` as a timeout means no limit: the timed calls wait as
/// their plain forms do (adding it to `Instant::now()` would panic).
#[test]
fn a_timeout_of_duration_max_waits_without_limit() {
    let (tx, rx) = chan::bounded::<u32>(1);
    tx.send_timeout_blocking(1, Duration::MAX).unwrap();
    assert_eq!(rx.recv_timeout_blocking(Duration::MAX), Ok(1));
    let t = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        tx.send_blocking(2).unwrap();
    });
    assert_eq!(rx.recv_timeout_blocking(Duration::MAX), Ok(2));
    t.join().unwrap();
    let (otx, mut orx) = chan::oneshot::<u32>();
    otx.send(3).unwrap();
    assert_eq!(orx.recv_timeout_blocking(Duration::MAX), Ok(3));
}

#[test]
fn stream_and_sink() {
    let (tx, rx) = chan::bounded::<u32>(2);
    let h = spawn(async move {
        let mut tx = tx;
        for i in 0..10 {
            tx.send(i).await.unwrap(); // SinkExt::send
        }
        SinkExt::close(&mut tx).await.unwrap();
    });
    let got: Vec<u32> = block_on(rx.collect());
    h.join().unwrap();
    assert_eq!(got, (0..10).collect::<Vec<_>>());

    // Forward a stream into a rendezvous sink.
    let (tx, rx) = chan::rendezvous::<u32>();
    let h = thread::spawn(move || {
        let mut out = Vec::new();
        while let Ok(v) = rx.recv_blocking() {
            out.push(v);
        }
        out
    });
    block_on(async move {
        let mut tx = tx;
        let mut s = futures_util::stream::iter((0..5).map(Ok));
        tx.send_all(&mut s).await.unwrap();
    });
    assert_eq!(h.join().unwrap(), vec![0, 1, 2, 3, 4]);

    // Broadcast receivers are streams too.
    let (btx, brx) = chan::broadcast::<u8>(4);
    btx.send(1).unwrap();
    btx.send(2).unwrap();
    drop(btx);
    assert_eq!(block_on(brx.collect::<Vec<_>>()), vec![1, 2]);
}

#[test]
fn batch_send_under_drop_policies() {
    let (tx, rx) = chan::bounded_with_policy::<u32>(3, chan::Policy::DropOldest);
    block_on(tx.send_batch((0..10).collect())).unwrap();
    let mut out = Vec::new();
    rx.try_recv_batch(&mut out, 10).unwrap();
    assert_eq!(out, vec![7, 8, 9]);
    let (tx, rx) = chan::bounded_with_policy::<u32>(3, chan::Policy::DropNewest);
    block_on(tx.send_batch((0..10).collect())).unwrap();
    out.clear();
    rx.try_recv_batch(&mut out, 10).unwrap();
    assert_eq!(out, vec![0, 1, 2]);
}

#[test]
fn batch_send_on_closed_returns_every_item() {
    for cap in [Some(0), Some(2), None] {
        let (tx, rx) = match cap {
            Some(n) => chan::bounded::<u32>(n),
            None => chan::unbounded(),
        };
        rx.close();
        let e = block_on(tx.send_batch(vec![1, 2, 3])).unwrap_err();
        assert_eq!(e.0, vec![1, 2, 3], "cap {cap:?}");
    }
}
