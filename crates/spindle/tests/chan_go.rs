//! Behaviour tests ported from Go's runtime/chan_test.go (rewritten, not
//! copied): blocking, close, drain after close, FIFO order, hand-off order,
//! len/cap, multi-consumer sums — for every MPMC flavor.

mod chan_common;

use chan_common::{block_on, scale, spawn};
use spindle::chan::{self, Receiver, RecvError, Sender, TryRecvError, TrySendError};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// Capacities exercised: rendezvous, 1, a few, and unbounded (`None`).
const CAPS: [Option<usize>; 4] = [Some(0), Some(1), Some(10), None];

fn make<T>(cap: Option<usize>) -> (Sender<T>, Receiver<T>) {
    match cap {
        Some(n) => chan::bounded(n),
        None => chan::unbounded(),
    }
}

#[test]
fn recv_from_empty_blocks() {
    for cap in CAPS {
        let (tx, rx) = make::<u32>(cap);
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let h = spawn(async move {
            let v = rx.recv().await;
            d.store(true, Ordering::SeqCst);
            v
        });
        thread::sleep(Duration::from_millis(20));
        assert!(
            !done.load(Ordering::SeqCst),
            "recv from empty chan did not block (cap {cap:?})"
        );
        block_on(tx.send(7)).unwrap();
        assert_eq!(h.join().unwrap(), Ok(7));
    }
}

#[test]
fn nonblocking_recv_does_not_block() {
    for cap in CAPS {
        let (_tx, rx) = make::<u32>(cap);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    }
}

#[test]
fn send_to_full_blocks() {
    for cap in CAPS {
        let Some(n) = cap else { continue };
        let (tx, rx) = make::<usize>(cap);
        for i in 0..n {
            tx.try_send(i).unwrap();
        }
        assert!(matches!(tx.try_send(99), Err(TrySendError::Full(99))));
        let sent = Arc::new(AtomicBool::new(false));
        let s = sent.clone();
        let h = spawn(async move {
            tx.send(100).await.unwrap();
            s.store(true, Ordering::SeqCst);
        });
        thread::sleep(Duration::from_millis(20));
        assert!(
            !sent.load(Ordering::SeqCst),
            "send to full chan did not block (cap {n})"
        );
        for i in 0..n {
            assert_eq!(rx.recv_blocking(), Ok(i));
        }
        assert_eq!(rx.recv_blocking(), Ok(100));
        h.join().unwrap();
        assert!(sent.load(Ordering::SeqCst));
    }
}

#[test]
fn recv_from_closed_reports_closed() {
    for cap in CAPS {
        let (tx, rx) = make::<u32>(cap);
        assert!(tx.close());
        assert!(!tx.close(), "second close must report it did nothing");
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
        assert_eq!(block_on(rx.recv()), Err(RecvError));
        assert_eq!(rx.recv_blocking(), Err(RecvError));
        assert!(matches!(tx.try_send(1), Err(TrySendError::Closed(1))));
        assert_eq!(block_on(tx.send(2)).unwrap_err().0, 2);
    }
}

#[test]
fn close_unblocks_receivers_and_senders() {
    for cap in CAPS {
        let (tx, rx) = make::<u32>(cap);
        let rs: Vec<_> = (0..3)
            .map(|_| {
                let rx = rx.clone();
                spawn(async move { rx.recv().await })
            })
            .collect();
        thread::sleep(Duration::from_millis(20));
        rx.close();
        for r in rs {
            assert_eq!(r.join().unwrap(), Err(RecvError));
        }
        drop(tx);
    }
    // Blocked senders on a full channel get their value back.
    for cap in [Some(0), Some(1)] {
        let (tx, rx) = make::<u32>(cap);
        if cap == Some(1) {
            tx.try_send(0).unwrap();
        }
        let ss: Vec<_> = (1..4)
            .map(|i| {
                let tx = tx.clone();
                thread::spawn(move || tx.send_blocking(i))
            })
            .collect();
        thread::sleep(Duration::from_millis(20));
        tx.close();
        let mut back: Vec<u32> = ss
            .into_iter()
            .map(|s| s.join().unwrap().unwrap_err().0)
            .collect();
        back.sort();
        assert_eq!(back, vec![1, 2, 3]);
        if cap == Some(1) {
            assert_eq!(rx.try_recv(), Ok(0), "buffered message survives close");
        }
        assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    }
}

#[test]
fn drain_after_close_then_closed() {
    for cap in [Some(10), None] {
        let (tx, rx) = make::<u32>(cap);
        for i in 0..10 {
            tx.try_send(i).unwrap();
        }
        drop(tx); // last sender gone: closes
        assert!(rx.is_closed());
        for i in 0..10 {
            assert_eq!(block_on(rx.recv()), Ok(i));
        }
        assert_eq!(block_on(rx.recv()), Err(RecvError));
    }
}

#[test]
fn last_receiver_dropped_fails_send_with_value() {
    for cap in CAPS {
        let (tx, rx) = make::<String>(cap);
        let rx2 = rx.clone();
        drop(rx);
        if cap != Some(0) {
            tx.try_send("a".into()).unwrap();
        }
        drop(rx2);
        let e = block_on(tx.send("b".to_string())).unwrap_err();
        assert_eq!(e.0, "b");
        assert_eq!(tx.try_send("c".into()).unwrap_err().into_inner(), "c");
    }
}

#[test]
fn fifo_order_single_pair() {
    for cap in CAPS {
        let (tx, rx) = make::<u32>(cap);
        let n = scale(1000) as u32;
        let h = spawn(async move {
            for i in 0..n {
                tx.send(i).await.unwrap();
            }
        });
        for i in 0..n {
            assert_eq!(rx.recv_blocking(), Ok(i), "cap {cap:?}");
        }
        h.join().unwrap();
        assert_eq!(rx.recv_blocking(), Err(RecvError));
    }
}

#[test]
fn unbuffered_handoff_order() {
    // Senders parked on a rendezvous channel are served first come, first
    // served: each send completes only when a receiver took its value.
    let (tx, rx) = chan::rendezvous::<u32>();
    let mut hs = Vec::new();
    for i in 0..4 {
        let tx = tx.clone();
        hs.push(thread::spawn(move || tx.send_blocking(i).unwrap()));
        // Wait until the sender is parked before starting the next.
        while rx.len() < (i + 1) as usize {
            thread::yield_now();
        }
    }
    for i in 0..4 {
        assert_eq!(rx.recv_blocking(), Ok(i));
    }
    for h in hs {
        h.join().unwrap();
    }
    // A send completes only once taken.
    let (tx, rx) = chan::rendezvous::<u32>();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let h = thread::spawn(move || {
        tx.send_blocking(5).unwrap();
        d.store(true, Ordering::SeqCst);
    });
    thread::sleep(Duration::from_millis(20));
    assert!(!done.load(Ordering::SeqCst));
    assert_eq!(rx.recv_blocking(), Ok(5));
    h.join().unwrap();
    assert!(done.load(Ordering::SeqCst));
}

#[test]
fn rendezvous_try_send_needs_waiting_receiver() {
    let (tx, rx) = chan::rendezvous::<u32>();
    assert!(matches!(tx.try_send(1), Err(TrySendError::Full(1))));
    let h = thread::spawn(move || rx.recv_blocking());
    loop {
        match tx.try_send(2) {
            Ok(()) => break,
            Err(TrySendError::Full(_)) => thread::yield_now(),
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(h.join().unwrap(), Ok(2));
}

#[test]
fn len_and_cap() {
    let (tx, rx) = chan::bounded::<u32>(5);
    assert_eq!(tx.capacity(), Some(5));
    assert_eq!(rx.len(), 0);
    tx.try_send(1).unwrap();
    tx.try_send(2).unwrap();
    assert_eq!(rx.len(), 2);
    assert_eq!(chan::unbounded::<u8>().0.capacity(), None);
    assert_eq!(chan::rendezvous::<u8>().0.capacity(), Some(0));
    assert_eq!(chan::bounded::<u8>(0).0.capacity(), Some(0));
    let (tx, _rx) = chan::unbounded::<u32>();
    for i in 0..100 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(tx.len(), 100);
}

#[test]
fn multi_consumer_sum() {
    // Go's TestMultiConsumer: several producers, several consumers, every
    // value received exactly once.
    for cap in CAPS {
        let (tx, rx) = make::<u64>(cap);
        let n = scale(2000) as u64;
        let sum = Arc::new(AtomicU64::new(0));
        let count = Arc::new(AtomicU64::new(0));
        let cons: Vec<_> = (0..4)
            .map(|_| {
                let rx = rx.clone();
                let (sum, count) = (sum.clone(), count.clone());
                thread::spawn(move || {
                    while let Ok(v) = rx.recv_blocking() {
                        sum.fetch_add(v, Ordering::Relaxed);
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        drop(rx);
        let prods: Vec<_> = (0..4)
            .map(|p| {
                let tx = tx.clone();
                spawn(async move {
                    for i in 0..n {
                        tx.send(p * n + i).await.unwrap();
                    }
                })
            })
            .collect();
        drop(tx);
        for p in prods {
            p.join().unwrap();
        }
        for c in cons {
            c.join().unwrap();
        }
        let total = 4 * n;
        assert_eq!(count.load(Ordering::Relaxed), total, "cap {cap:?}");
        assert_eq!(
            sum.load(Ordering::Relaxed),
            total * (total - 1) / 2,
            "cap {cap:?}"
        );
    }
}

#[test]
fn nonblock_recv_race() {
    // Go's TestNonblockRecvRace: a value sent into a buffered channel must be
    // seen by a non-blocking receive racing with close... here: after close,
    // the buffered value is still received.
    for _ in 0..scale(500) {
        let (tx, rx) = chan::bounded::<u32>(1);
        tx.try_send(1).unwrap();
        let h = thread::spawn(move || match rx.try_recv() {
            Ok(1) => {}
            other => panic!("lost buffered value: {other:?}"),
        });
        tx.close();
        h.join().unwrap();
    }
}

#[test]
fn timeouts() {
    let (tx, rx) = chan::bounded::<u32>(1);
    let t = std::time::Instant::now();
    assert_eq!(
        rx.recv_timeout_blocking(Duration::from_millis(30)),
        Err(chan::RecvTimeoutError::Timeout)
    );
    assert!(t.elapsed() >= Duration::from_millis(30));
    tx.try_send(1).unwrap();
    match tx.send_timeout_blocking(2, Duration::from_millis(20)) {
        Err(chan::SendTimeoutError::Timeout(2)) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(rx.recv_timeout_blocking(Duration::from_millis(20)), Ok(1));
    tx.close();
    assert_eq!(
        rx.recv_timeout_blocking(Duration::from_millis(20)),
        Err(chan::RecvTimeoutError::Closed)
    );
    // Rendezvous: a timed-out send takes its value back.
    let (tx, rx) = chan::rendezvous::<u32>();
    match tx.send_timeout_blocking(3, Duration::from_millis(20)) {
        Err(chan::SendTimeoutError::Timeout(3)) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    // A receive with a timeout gets a value sent in time.
    let h = thread::spawn(move || tx.send_blocking(4));
    assert_eq!(rx.recv_timeout_blocking(Duration::from_secs(60)), Ok(4));
    h.join().unwrap().unwrap();
}

#[test]
fn threads_and_tasks_both_ways() {
    let (tx, rx) = chan::bounded::<u32>(2);
    let (tx2, rx2) = chan::unbounded::<u32>();
    let task = spawn(async move {
        while let Ok(v) = rx.recv().await {
            tx2.send(v * 2).await.unwrap();
        }
    });
    let thread_side = thread::spawn(move || {
        for i in 0..100 {
            tx.send_blocking(i).unwrap();
        }
    });
    let mut got = Vec::new();
    while let Ok(v) = rx2.recv_blocking() {
        got.push(v);
    }
    thread_side.join().unwrap();
    task.join().unwrap();
    assert_eq!(got, (0..100).map(|i| i * 2).collect::<Vec<_>>());
}

#[test]
fn rendezvous_last_receiver_dropped_returns_parked_value() {
    let (tx, rx) = chan::rendezvous::<String>();
    let h = thread::spawn(move || tx.send_blocking("parked".to_string()));
    while rx.is_empty() {
        thread::yield_now();
    }
    drop(rx);
    assert_eq!(h.join().unwrap().unwrap_err().0, "parked");
}

#[test]
fn handles_are_send_and_sync_for_send_payloads() {
    // `Cell` is `Send` but not `Sync`: handles must still be shareable.
    fn send_sync<X: Send + Sync>() {}
    fn send<X: Send>() {}
    type C = std::cell::Cell<u8>;
    send_sync::<Sender<C>>();
    send_sync::<Receiver<C>>();
    send::<chan::Send<'static, C>>();
    send::<chan::Recv<'static, C>>();
    send_sync::<chan::oneshot::Sender<C>>();
    send_sync::<chan::oneshot::Receiver<C>>();
    send::<chan::spsc::Producer<C>>();
    send::<chan::spsc::Consumer<C>>();
    send_sync::<chan::broadcast::Sender<u8>>();
}
