//! Stress: a million spawns, spawn storms from many OS threads through
//! `Handle::spawn`, cross-worker wake storms, and runtimes started and
//! dropped in a loop. Sizes shrink in debug builds and under miri
//! (`common::scaled`); every sum is checked, every task accounted for.

mod common;

use common::{scaled, DropCounter, Gate};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

#[test]
fn a_million_spawns() {
    let n = scaled(1_000_000) as u64;
    for (flavour, rt) in common::flavours() {
        let sum = rt.block_on(async move {
            spindle::spawn(async move {
                let hs: Vec<_> = (0..n).map(|i| spindle::spawn(async move { i })).collect();
                let mut sum = 0;
                for h in hs {
                    sum += h.await.unwrap();
                }
                sum
            })
            .await
            .unwrap()
        });
        assert_eq!(sum, n * (n - 1) / 2, "{flavour}");
    }
}

#[test]
fn skynet_tree_of_tasks() {
    fn node(id: u64, size: u64) -> spindle::JoinHandle<u64> {
        spindle::spawn(async move {
            if size == 1 {
                return id;
            }
            let child = size / 10;
            let hs: Vec<_> = (0..10).map(|c| node(id + c * child, child)).collect();
            let mut sum = 0;
            for h in hs {
                sum += h.await.unwrap();
            }
            sum
        })
    }
    let n = if cfg!(miri) {
        100
    } else if cfg!(debug_assertions) {
        10_000
    } else {
        100_000
    };
    for (flavour, rt) in common::flavours() {
        let sum = rt.block_on(async move { node(0, n).await.unwrap() });
        assert_eq!(sum, n * (n - 1) / 2, "{flavour}");
    }
}

#[test]
fn spawn_storm_from_many_threads() {
    let threads = 8;
    let per = scaled(20_000) as u64;
    let rt = spindle::Builder::new_multi_thread()
        .workers(4)
        .build()
        .unwrap();
    let total = Arc::new(AtomicU64::new(0));
    let storm: Vec<_> = (0..threads)
        .map(|t| {
            let handle = rt.handle().clone();
            let total = total.clone();
            std::thread::spawn(move || {
                let hs: Vec<_> = (0..per)
                    .map(|i| {
                        let total = total.clone();
                        handle.spawn(async move {
                            total.fetch_add(t * per + i, SeqCst);
                            // Spawn a grandchild from the worker too.
                            spindle::spawn(async move { 1u64 }).await.unwrap()
                        })
                    })
                    .collect();
                hs
            })
        })
        .collect();
    let handles: Vec<_> = storm.into_iter().flat_map(|t| t.join().unwrap()).collect();
    let ones: u64 = rt.block_on(async move {
        let mut ones = 0;
        for h in handles {
            ones += h.await.unwrap();
        }
        ones
    });
    let n = threads * per;
    assert_eq!(ones, n);
    assert_eq!(total.load(SeqCst), n * (n - 1) / 2);
}

#[test]
fn wake_storm_across_workers() {
    // Many tasks parked on gates opened from other tasks and threads.
    let rt = spindle::Builder::new_multi_thread()
        .workers(4)
        .build()
        .unwrap();
    let n = scaled(20_000);
    let done = rt.block_on(async move {
        let gates: Vec<Gate> = (0..n).map(|_| Gate::new()).collect();
        let waiters: Vec<_> = gates
            .iter()
            .map(|g| {
                let g = g.clone();
                spindle::spawn(async move {
                    g.wait().await;
                    1usize
                })
            })
            .collect();
        let (left, right) = gates.split_at(n / 2);
        let right = right.to_vec();
        let opener = std::thread::spawn(move || right.iter().for_each(Gate::open));
        let left = left.to_vec();
        spindle::spawn(async move { left.iter().for_each(Gate::open) })
            .await
            .unwrap();
        opener.join().unwrap();
        let mut done = 0;
        for w in waiters {
            done += w.await.unwrap();
        }
        done
    });
    assert_eq!(done, n);
}

#[test]
fn runtimes_started_and_dropped_in_a_loop_free_every_task() {
    let drops = DropCounter::new();
    let rounds = if cfg!(miri) { 2 } else { 50 };
    for round in 0..rounds {
        let rt = if round % 2 == 0 {
            spindle::Builder::new_multi_thread()
                .workers(2)
                .build()
                .unwrap()
        } else {
            spindle::Builder::new_current_thread().build().unwrap()
        };
        let gate = Gate::new();
        rt.block_on(async {
            for _ in 0..100 {
                let t = drops.track();
                let g = gate.clone();
                drop(spindle::spawn(async move {
                    let _t = t;
                    g.wait().await;
                }));
            }
            spindle::yield_now().await;
        });
        drop(rt);
        assert_eq!(drops.drops(), (round + 1) * 100);
    }
}
