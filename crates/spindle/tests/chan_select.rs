//! `select!`: fairness (statistical), `biased;`, `else`, send arms, mixed
//! channel types, and cancel safety with drop-counted messages.
//!
//! `forbid(unsafe_code)`: the macro's expansion needs no `unsafe`.

#![forbid(unsafe_code)]

mod chan_common;

use chan_common::{block_on, scale, spawn, Counter, Tracked};
use spindle::chan::{self, RecvError, TryRecvError};
use std::thread;
use std::time::Duration;

/// Least wins an arm must get out of `n` rounds over `k` equally ready arms:
/// 70% of its share (a wide bound: many sigmas at these sizes). Under miri
/// the samples are too small for statistics; each arm must just win once.
fn fair_floor(n: usize, k: usize) -> usize {
    if cfg!(miri) {
        1
    } else {
        n / k * 70 / 100
    }
}

#[test]
fn random_choice_is_fair() {
    // Go's TestSelectFairness: both channels always ready; each arm should
    // win about half the time. The bound is wide (5 sigma is ~2.5%).
    let (tx1, rx1) = chan::bounded::<u8>(1);
    let (tx2, rx2) = chan::bounded::<u8>(1);
    let n = scale(10_000);
    let mut wins = [0usize; 2];
    block_on(async {
        for _ in 0..n {
            let _ = tx1.try_send(1);
            let _ = tx2.try_send(2);
            let w = spindle::select! {
                a = rx1.recv() => { a.unwrap(); 0 },
                b = rx2.recv() => { b.unwrap(); 1 },
            };
            wins[w] += 1;
        }
    });
    let lo = fair_floor(n, 2);
    assert!(wins[0] >= lo && wins[1] >= lo, "unfair select: {wins:?}");
}

#[test]
fn fair_over_many_arms() {
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..4).map(|_| chan::bounded::<usize>(1)).unzip();
    let n = scale(8000);
    let mut wins = [0usize; 4];
    block_on(async {
        for _ in 0..n {
            for (i, tx) in txs.iter().enumerate() {
                let _ = tx.try_send(i);
            }
            let w = spindle::select! {
                a = rxs[0].recv() => a.unwrap(),
                b = rxs[1].recv() => b.unwrap(),
                c = rxs[2].recv() => c.unwrap(),
                d = rxs[3].recv() => d.unwrap(),
            };
            wins[w] += 1;
        }
    });
    for w in wins {
        assert!(w >= fair_floor(n, 4), "unfair: {wins:?}");
    }
}

#[test]
fn biased_prefers_first() {
    let (tx1, rx1) = chan::bounded::<u8>(1);
    let (tx2, rx2) = chan::bounded::<u8>(1);
    block_on(async {
        for _ in 0..100 {
            let _ = tx1.try_send(1);
            let _ = tx2.try_send(2);
            let v = spindle::select! {
                biased;
                a = rx1.recv() => a.unwrap(),
                b = rx2.recv() => b.unwrap(),
            };
            assert_eq!(v, 1);
        }
    });
    assert_eq!(rx2.try_recv(), Ok(2));
}

#[test]
fn else_arm_is_non_blocking() {
    let (tx, rx) = chan::bounded::<u8>(1);
    let r = block_on(async {
        spindle::select! {
            v = rx.recv() => Some(v),
            else => None,
        }
    });
    assert_eq!(r, None);
    tx.try_send(3).unwrap();
    let r = block_on(async {
        spindle::select! {
            v = rx.recv() => Some(v.unwrap()),
            else => None,
        }
    });
    assert_eq!(r, Some(3));
    // A non-blocking send to a full channel falls to else and keeps nothing.
    tx.try_send(4).unwrap();
    let r = block_on(async {
        spindle::select! {
            r = tx.send(5) => r.is_ok(),
            else => false,
        }
    });
    assert!(!r);
    assert_eq!(rx.try_recv(), Ok(4));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn send_and_recv_arms_of_different_types() {
    let (tx_s, rx_s) = chan::unbounded::<String>();
    let (tx_n, rx_n) = chan::bounded::<u64>(1);
    let h = thread::spawn(move || rx_s.recv_blocking().unwrap());
    let got = block_on(async {
        spindle::select! {
            r = tx_s.send("hello".to_string()) => { r.unwrap(); "sent" },
            n = rx_n.recv() => { let _ = n; "recv" },
        }
    });
    assert_eq!(got, "sent");
    assert_eq!(h.join().unwrap(), "hello");
    drop(tx_n);
}

#[test]
fn select_wakes_when_any_arm_ready() {
    let (tx1, rx1) = chan::bounded::<u32>(1);
    let (tx2, rx2) = chan::rendezvous::<u32>();
    let h = spawn(async move {
        let mut got = Vec::new();
        for _ in 0..2 {
            let v = spindle::select! {
                a = rx1.recv() => a.unwrap(),
                b = rx2.recv() => b.unwrap() + 100,
            };
            got.push(v);
        }
        got.sort();
        got
    });
    thread::sleep(Duration::from_millis(10));
    tx2.send_blocking(1).unwrap();
    thread::sleep(Duration::from_millis(10));
    tx1.send_blocking(2).unwrap();
    assert_eq!(h.join().unwrap(), vec![2, 101]);
}

#[test]
fn closed_arm_wins_with_error() {
    let (tx, rx) = chan::bounded::<u32>(1);
    let (_tx2, rx2) = chan::bounded::<u32>(1);
    drop(tx);
    let r = block_on(async {
        spindle::select! {
            a = rx.recv() => a,
            b = rx2.recv() => b,
        }
    });
    assert_eq!(r, Err(RecvError));
}

#[test]
fn losing_arms_lose_no_message() {
    // Many rounds where two or three arms are ready at once: every message
    // sent is received exactly once over the rounds, none dropped early.
    let c = Counter::new();
    let (tx1, rx1) = chan::bounded::<Tracked>(4);
    let (tx2, rx2) = chan::unbounded::<Tracked>();
    let (tx3, rx3) = chan::bounded::<Tracked>(1);
    let n = scale(2000) as u64;
    let mut seen = Vec::new();
    block_on(async {
        let mut next = 0;
        for _ in 0..n {
            let _ = tx1.try_send(c.make(next));
            next += 1;
            let _ = tx2.try_send(c.make(next));
            next += 1;
            if let Err(e) = tx3.try_send(c.make(next)) {
                drop(e.into_inner());
            }
            next += 1;
            let m = spindle::select! {
                a = rx1.recv() => a.unwrap(),
                b = rx2.recv() => b.unwrap(),
                d = rx3.recv() => d.unwrap(),
            };
            seen.push(m.id);
        }
    });
    let mut rest = Vec::new();
    for rx in [&rx1, &rx2, &rx3] {
        while let Ok(m) = rx.try_recv() {
            rest.push(m.id);
        }
    }
    let received = seen.len() + rest.len();
    // Every created message is either received or was refused by a full
    // try_send (and dropped there): created == received + refused, and all
    // are dropped exactly once.
    assert_eq!(c.live(), 0);
    assert_eq!(c.dropped(), c.created());
    assert!(received as u64 <= 3 * n);
    let mut all: Vec<_> = seen.into_iter().chain(rest).collect();
    let len = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), len, "a message was received twice");
}

#[test]
fn cancelled_send_arm_drops_its_value_once() {
    let c = Counter::new();
    let (tx, rx) = chan::bounded::<Tracked>(1);
    let (tx_ready, rx_ready) = chan::bounded::<u8>(1);
    tx.try_send(c.make(0)).unwrap(); // full
    tx_ready.try_send(1).unwrap();
    block_on(async {
        spindle::select! {
            biased;
            r = tx.send(c.make(1)) => r.unwrap(),
            _v = rx_ready.recv() => {},
        }
    });
    // The losing send's value was dropped with its future; the buffered one
    // is still there.
    assert_eq!(c.dropped(), 1);
    assert_eq!(rx.try_recv().unwrap().id, 0);
    assert_eq!(c.live(), 0);
}

#[test]
fn select_across_threads_stress() {
    // Go's TestSelectStress in miniature: a selecting consumer and producers
    // on two channels; counts match.
    let (tx1, rx1) = chan::bounded::<u32>(2);
    let (tx2, rx2) = chan::rendezvous::<u32>();
    let n = scale(2000) as u32;
    let p1 = thread::spawn(move || {
        for i in 0..n {
            tx1.send_blocking(i).unwrap();
        }
    });
    let p2 = spawn(async move {
        for i in 0..n {
            tx2.send(i).await.unwrap();
        }
    });
    let (mut c1, mut c2) = (0, 0);
    block_on(async {
        loop {
            spindle::select! {
                a = rx1.recv() => match a { Ok(_) => c1 += 1, Err(_) => { if c2 == n { break } } },
                b = rx2.recv() => match b { Ok(_) => c2 += 1, Err(_) => { if c1 == n { break } } },
            }
            if c1 == n && c2 == n {
                break;
            }
        }
    });
    p1.join().unwrap();
    p2.join().unwrap();
    assert_eq!((c1, c2), (n, n));
}

#[test]
fn arms_can_be_any_future() {
    // Non-`Unpin` arms (async blocks) are pinned by the macro.
    let (tx, rx) = chan::bounded::<u8>(1);
    let (_tx2, rx2) = chan::bounded::<u8>(1);
    tx.try_send(4).unwrap();
    let r = block_on(async {
        spindle::select! {
            v = async { rx.recv().await.unwrap() + 1 } => v,
            w = async {
                let x = rx2.recv().await;
                x.unwrap_or(0)
            } => w,
        }
    });
    assert_eq!(r, 5);
}

#[test]
fn body_may_reuse_what_the_arms_borrowed() {
    // Losing arms are dropped before the body runs: a broadcast `recv`
    // borrows its receiver mutably, and the body may use it again.
    let (tx, mut brx) = chan::broadcast::<u8>(4);
    let (_tx2, rx2) = chan::bounded::<u8>(1);
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    let (a, b) = block_on(async {
        spindle::select! {
            biased;
            v = brx.recv() => (v.unwrap(), brx.try_recv().unwrap()),
            _w = rx2.recv() => (0, 0),
        }
    });
    assert_eq!((a, b), (1, 2));
}

#[test]
fn pseudo_random_send() {
    // Go's TestPseudoRandomSend: two send arms on the same channel, both
    // always ready; both values must show up in roughly equal numbers.
    let (tx, rx) = chan::bounded::<u8>(1);
    let n = scale(4000);
    let mut counts = [0usize; 2];
    block_on(async {
        for _ in 0..n {
            spindle::select! {
                r = tx.send(0) => r.unwrap(),
                r = tx.send(1) => r.unwrap(),
            }
            counts[rx.try_recv().unwrap() as usize] += 1;
        }
    });
    let lo = fair_floor(n, 2);
    assert!(counts[0] >= lo && counts[1] >= lo, "{counts:?}");
}
