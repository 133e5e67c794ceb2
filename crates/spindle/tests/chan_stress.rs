//! Stress: many producers and consumers mixing async tasks and OS threads,
//! sums checked; senders outnumbering capacity 100:1 (the case that
//! livelocked another runtime); 100 receivers on one channel all progress.
//! Sizes are small enough for 2 cores and shrink further under miri.

mod chan_common;

use chan_common::{scale, spawn};
use spindle::chan::{self, Receiver, Sender};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

fn run_mixed(tx: Sender<u64>, rx: Receiver<u64>, producers: u64, per: u64, consumers: usize) {
    let sum = Arc::new(AtomicU64::new(0));
    let count = Arc::new(AtomicU64::new(0));
    let mut cons = Vec::new();
    for i in 0..consumers {
        let rx = rx.clone();
        let (sum, count) = (sum.clone(), count.clone());
        cons.push(if i % 2 == 0 {
            thread::spawn(move || {
                while let Ok(v) = rx.recv_blocking() {
                    sum.fetch_add(v, Ordering::Relaxed);
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        } else {
            spawn(async move {
                let mut buf = Vec::new();
                while let Ok(n) = rx.recv_batch(&mut buf, 8).await {
                    for v in buf.drain(..n) {
                        sum.fetch_add(v, Ordering::Relaxed);
                    }
                    count.fetch_add(n as u64, Ordering::Relaxed);
                }
            })
        });
    }
    drop(rx);
    let mut prods = Vec::new();
    for p in 0..producers {
        let tx = tx.clone();
        prods.push(if p % 2 == 0 {
            thread::spawn(move || {
                for i in 0..per {
                    tx.send_blocking(p * per + i + 1).unwrap();
                }
            })
        } else {
            spawn(async move {
                for i in 0..per {
                    tx.send(p * per + i + 1).await.unwrap();
                }
            })
        });
    }
    drop(tx);
    for h in prods {
        h.join().unwrap();
    }
    for h in cons {
        h.join().unwrap();
    }
    let total = producers * per;
    assert_eq!(count.load(Ordering::Relaxed), total);
    assert_eq!(sum.load(Ordering::Relaxed), total * (total + 1) / 2);
}

#[test]
fn mixed_mpmc_bounded() {
    let (tx, rx) = chan::bounded(4);
    run_mixed(tx, rx, 8, scale(2000) as u64, 4);
}

#[test]
fn mixed_mpmc_unbounded() {
    let (tx, rx) = chan::unbounded();
    run_mixed(tx, rx, 8, scale(2000) as u64, 4);
}

#[test]
fn mixed_mpmc_rendezvous() {
    let (tx, rx) = chan::rendezvous();
    run_mixed(tx, rx, 4, scale(500) as u64, 4);
}

#[test]
fn senders_outnumber_capacity_100_to_1() {
    // 100 blocked senders per slot: every wake-up must lead to progress.
    let (tx, rx) = chan::bounded(1);
    run_mixed(
        tx,
        rx,
        if cfg!(miri) { 10 } else { 100 },
        scale(100) as u64,
        2,
    );
}

#[test]
fn hundred_receivers_all_progress() {
    let receivers = if cfg!(miri) { 10 } else { 100 };
    let (tx, rx) = chan::bounded::<u64>(8);
    let per_rx = Arc::new(
        (0..receivers)
            .map(|_| AtomicU64::new(0))
            .collect::<Vec<_>>(),
    );
    let hs: Vec<_> = (0..receivers)
        .map(|i| {
            let rx = rx.clone();
            let per_rx = per_rx.clone();
            thread::spawn(move || {
                while rx.recv_blocking().is_ok() {
                    per_rx[i].fetch_add(1, Ordering::Relaxed);
                    // Give the others a chance: hold the "turn" briefly.
                    thread::yield_now();
                }
            })
        })
        .collect();
    drop(rx);
    // Keep sending until every receiver got something (bounded by a cap on
    // the messages, to fail rather than hang if one starves).
    let mut sent = 0u64;
    let limit = scale(200_000) as u64;
    while per_rx.iter().any(|c| c.load(Ordering::Relaxed) == 0) {
        tx.send_blocking(sent).unwrap();
        sent += 1;
        assert!(sent < limit, "a receiver starved");
    }
    drop(tx);
    for h in hs {
        h.join().unwrap();
    }
    let total: u64 = per_rx.iter().map(|c| c.load(Ordering::Relaxed)).sum();
    assert_eq!(total, sent);
}

/// Producers take turns in bursts long enough for one thread to own the
/// ring's claim words (more than 128 claims in a row, `flavors/bias.rs`),
/// and every other burst they race instead, so that the words are taken
/// back mid-burst: one consumer checks that every producer's messages
/// arrive once and in order.
#[test]
fn claim_words_change_owners_between_bursts() {
    let producers = 3u64;
    let bursts = scale(400) as u64 / 10; // 40, or 2 under miri
    let burst = if cfg!(miri) { 130 } else { 300 };
    let (tx, rx) = chan::bounded::<(u64, u64)>(512);
    let turn = Arc::new(AtomicU64::new(0));
    let prods: Vec<_> = (0..producers)
        .map(|p| {
            let (tx, turn) = (tx.clone(), turn.clone());
            thread::spawn(move || {
                for b in 0..bursts {
                    let alone = b % 2 == 0;
                    while alone && turn.load(Ordering::Acquire) % producers != p {
                        thread::yield_now();
                    }
                    for i in 0..burst {
                        tx.send_blocking((p, b * burst + i)).unwrap();
                    }
                    if alone {
                        turn.fetch_add(1, Ordering::Release);
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let mut next = vec![0u64; producers as usize];
    while let Ok((p, i)) = rx.recv_blocking() {
        assert_eq!(i, next[p as usize], "producer {p}: out of order or lost");
        next[p as usize] += 1;
    }
    for h in prods {
        h.join().unwrap();
    }
    assert_eq!(next, vec![bursts * burst; producers as usize]);
}
