//! Benchmark peer: Rust std threads, `std::sync::mpsc` channels.
//!
//! Every task is an OS thread. Where the catalogue's task count is far beyond
//! what OS threads allow (skynet's million leaves, fib_par's thousands of
//! nodes), the peer is threshold-based, as the Seq suite's Rust peer is:
//! threads at the top levels of the tree, plain recursion below (the
//! thresholds are documented at [`skynet`] and [`fib_par`]). Rows that need
//! something std does not have (select, async tasks, a current-thread
//! executor, a million live threads) are listed as unsupported.

use spindle_peer_common::catalogue::{
    blockers, chain_share, contenders, fizzbuzz_batch, payload_bytes, pipeline_shape, strided,
    BLOCKING_SLEEP, BLOCK_ALL_BATCH, FIB_PAR_CUTOFF, NURSERY_BATCH, RW_WRITE_EVERY, SKYNET_FANOUT,
};
use spindle_peer_common::kernels::{self, FizzCounts};
use spindle_peer_common::threads::{self, Channel};
use spindle_peer_common::{run_main, Measured, Request, Support};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, RwLock};
use std::thread;
use std::time::Instant;

/// `std::sync::mpsc` as the shared threads rows' channel: `sync_channel` is
/// bounded (0 = rendezvous); the receiver is single-consumer, so the MPMC
/// fanout shares it behind a mutex, the usual std thread-pool pattern.
struct Std;

impl Channel for Std {
    type Sender<T: Send + 'static> = SyncSender<T>;
    type Receiver<T: Send + 'static> = Receiver<T>;
    type Shared<T: Send + 'static> = Arc<Mutex<Receiver<T>>>;

    fn bounded<T: Send + 'static>(cap: usize) -> (SyncSender<T>, Receiver<T>) {
        sync_channel(cap)
    }
    fn send<T: Send + 'static>(tx: &SyncSender<T>, v: T) {
        tx.send(v).expect("receiver hung up");
    }
    fn recv<T: Send + 'static>(rx: &Receiver<T>) -> Option<T> {
        rx.recv().ok()
    }
    fn share<T: Send + 'static>(rx: Receiver<T>) -> Arc<Mutex<Receiver<T>>> {
        Arc::new(Mutex::new(rx))
    }
    fn recv_shared<T: Send + 'static>(rx: &Arc<Mutex<Receiver<T>>>) -> Option<T> {
        rx.lock().unwrap().recv().ok()
    }
}

fn support(workload: &str) -> Support {
    match workload {
        "async_trivial" | "async_compute" => {
            Err("no async tasks in std: a thread cannot yield to a scheduler, and one thread per task at this count is impossible")
        }
        "select_1" | "select_2" | "select_4" => Err("std::sync::mpsc has no select"),
        "spawn_100k" | "spawn_1m" | "live_1m" => {
            Err("one OS thread per live task: 100k/1M live threads exceed the kernel's thread and memory-map limits")
        }
        "fork_inline" => Err("no current-thread executor: a child is an OS thread, scheduled by the kernel"),
        "skynet_fork" => Err("no fork-join API: a child is an OS thread (the skynet row)"),
        "sleep_1m" => Err("no runtime timer: each sleep would block its own OS thread, a million threads"),
        "semaphore_limit" => Err("std has no semaphore (a Mutex and Condvar would be this peer's own)"),
        "notify_pingpong" => Err("std has no Notify: a thread parks on a Condvar or a channel (the pingpong row)"),
        "watch_fanout" => Err("std has no latest-value channel (a Mutex and Condvar would be this peer's own)"),
        "joinset_drain" => Err("no JoinSet: one OS thread per task, and a million threads is past the kernel's limits"),
        _ => Ok(()),
    }
}

fn main() {
    run_main("std", support, run);
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    let name = req.workload.as_str();
    match name {
        "skynet" => Measured::time(|| skynet(0, n, parallel_levels(SKYNET_FANOUT, w))),
        "pingpong" => threads::pingpong::<Std>(n),
        "fanout" => threads::fanout::<Std>(n),
        "fib" => in_thread(move || kernels::fib(n)),
        "fib_par" => Measured::time(|| fib_par(n, parallel_levels(2, w) + 2)),
        "sum_squares" => in_thread(move || kernels::sum_squares(n)),
        "primes" => in_thread(move || kernels::count_primes(n)),
        "chan_single" => threads::chan_single::<Std>(n),
        "chan_buffered" => threads::chan_buffered::<Std>(n),
        "chan_unbuffered" => threads::chan_unbuffered::<Std>(n),
        "block_all" => Measured::time(|| spawn_batches(n, BLOCK_ALL_BATCH)),
        "spawn_nursery" => Measured::time(|| spawn_batches(n, NURSERY_BATCH)),
        "blocking_pressure" => blocking_pressure(n, w),
        "spawn_sequential" => Measured::time(|| {
            (0..n)
                .map(|i| thread::spawn(move || i).join().unwrap())
                .sum::<u64>()
        }),
        "spawn_10k" => Measured::time(|| {
            let handles: Vec<_> = (0..n).map(|i| thread::spawn(move || i)).collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
        }),
        "fizzbuzz_pipeline" => fizzbuzz(n, false),
        "fizzbuzz_pipeline_zc" => fizzbuzz(n, true),
        "fork_pool" => fork_pool(n, w),
        "mutex_uncontended" => Measured::time(|| mutex_uncontended(n)),
        "mutex_contended" => Measured::time(|| mutex_contended(n, contenders(w))),
        "rwlock_read_heavy" => Measured::time(|| rwlock_read_heavy(n, contenders(w))),
        w if payload_bytes(w).is_some() => {
            threads::payload_rows::<Std>(payload_bytes(w).unwrap(), n)
        }
        w if pipeline_shape(w).is_some() => {
            let (c, d) = pipeline_shape(w).unwrap();
            pipeline(n, c, d)
        }
        other => unreachable!("`{other}` is listed unsupported"),
    }
}

/// Runs `f` on one spawned thread and joins it: the compute rows.
fn in_thread(f: impl FnOnce() -> u64 + Send + 'static) -> Measured {
    Measured::time(|| thread::spawn(f).join().unwrap())
}

/// The tree levels that get threads: the fewest levels whose node count
/// (`fanout^levels`) reaches the worker count, at least one.
fn parallel_levels(fanout: u64, workers: usize) -> u32 {
    let mut levels = 1;
    while fanout.pow(levels) < workers as u64 {
        levels += 1;
    }
    levels
}

/// skynet, threshold-based: a node in the top `levels` levels runs each of
/// its 10 children on its own scoped thread (10 threads for W ≤ 10, 100 for
/// W ≤ 100, ...); below that the subtree is summed by plain recursion.
fn skynet(id: u64, size: u64, levels: u32) -> u64 {
    if levels == 0 || size < SKYNET_FANOUT {
        return kernels::skynet_seq(id, size);
    }
    let child = size / SKYNET_FANOUT;
    thread::scope(|s| {
        let handles: Vec<_> = (0..SKYNET_FANOUT)
            .map(|c| s.spawn(move || skynet(id + c * child, child, levels - 1)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// fib_par, threshold-based: in the top `levels` levels of the call tree
/// (`⌈log2 W⌉ + 2`, so about 4·W subtrees to even out fib's lopsided halves)
/// and while `n > 20`, fib(n-1) runs on a new scoped thread while this thread
/// computes fib(n-2); below, plain recursion.
fn fib_par(n: u64, levels: u32) -> u64 {
    if levels == 0 || n <= FIB_PAR_CUTOFF {
        return kernels::fib(n);
    }
    thread::scope(|s| {
        let a = s.spawn(|| fib_par(n - 1, levels - 1));
        let b = fib_par(n - 2, levels - 1);
        a.join().unwrap() + b
    })
}

/// block_all and spawn_nursery: a scope per batch of threads (task i returns
/// i), every thread of the batch joined before the next batch.
fn spawn_batches(n: u64, batch: u64) -> u64 {
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let end = (start + batch).min(n);
        sum += thread::scope(|s| {
            let handles: Vec<_> = (start..end).map(|i| s.spawn(move || i)).collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
        });
        start = end;
    }
    sum
}

/// blocking_pressure: 4·W threads each sleep 1 ms `n` times, while a
/// heartbeat thread ticks on a 1 ms grid (sleeping until the next grid
/// point, skipping points already past) and counts its ticks until the
/// blockers are done. Threads never starve each other here.
fn blocking_pressure(n: u64, workers: usize) -> Measured {
    let start = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let heartbeat = {
        let done = done.clone();
        thread::spawn(move || {
            let mut beats = 0u64;
            let mut next = start + BLOCKING_SLEEP;
            while !done.load(Ordering::Acquire) {
                thread::sleep(next.saturating_duration_since(Instant::now()));
                beats += 1;
                let now = Instant::now();
                while next <= now {
                    next += BLOCKING_SLEEP; // missed grid points are skipped
                }
            }
            beats
        })
    };
    let blockers: Vec<_> = (0..blockers(workers))
        .map(|_| {
            thread::spawn(move || {
                let mut calls = 0u64;
                for _ in 0..n {
                    thread::sleep(BLOCKING_SLEEP);
                    calls += 1;
                }
                calls
            })
        })
        .collect();
    let calls: u64 = blockers.into_iter().map(|b| b.join().unwrap()).sum();
    done.store(true, Ordering::Release);
    let beats = heartbeat.join().unwrap();
    let elapsed = start.elapsed();
    Measured::new(calls, elapsed)
        .with("beats", beats)
        .with("due", elapsed.as_millis())
}

/// fork_pool: W driver threads; driver d spawns, joins and drops the child
/// threads i ≡ d (mod W) one at a time.
fn fork_pool(n: u64, workers: usize) -> Measured {
    Measured::time(|| {
        let w = workers as u64;
        let drivers: Vec<_> = (0..w)
            .map(|d| {
                thread::spawn(move || {
                    (d..n)
                        .step_by(workers)
                        .map(|i| thread::spawn(move || i).join().unwrap())
                        .sum::<u64>()
                })
            })
            .collect();
        drivers.into_iter().map(|d| d.join().unwrap()).sum::<u64>()
    })
}

/// pipeline_CxD: C chain threads run their share of the n executions one
/// after another; an execution is D stage threads, stage k spawned with stage
/// k−1's join handle, joining it and returning its value + 1.
fn pipeline(n: u64, chains: u64, depth: u64) -> Measured {
    Measured::time(|| {
        let handles: Vec<_> = (0..chains)
            .map(|c| {
                let runs = chain_share(n, chains, c);
                thread::spawn(move || {
                    let mut sum = 0;
                    for _ in 0..runs {
                        let mut stage = thread::spawn(|| 1u64);
                        for _ in 1..depth {
                            let prev = stage;
                            stage = thread::spawn(move || prev.join().unwrap() + 1);
                        }
                        sum += stage.join().unwrap();
                    }
                    sum
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
    })
}

/// fizzbuzz_pipeline(_zc): generator → worker → logger threads. Messages
/// travel in batches of half a channel; each link is a `sync_channel` of two
/// batches (a full channel's worth), and buffers go back upstream on return
/// channels, so the hot path allocates nothing.
/// - copy (double buffer): the worker reads a value batch and writes the
///   classes into a separate class buffer, returning the value buffer;
/// - zero-copy: the worker classifies in place, overwriting each value with
///   its class, and forwards the same buffer to the logger.
fn fizzbuzz(n: u64, zero_copy: bool) -> Measured {
    let batch = fizzbuzz_batch(n);
    const LINK: usize = 2; // batches per link: the whole channel
    const POOL: usize = 4; // buffers per pool: two in the link, one each end
                           // Timed from the pools on, as every other peer times its channels' setup.
    Measured::time(move || {
        let (free_tx, free_rx) = sync_channel::<Vec<u64>>(POOL);
        let (class_free_tx, class_free_rx) = sync_channel::<Vec<u8>>(POOL);
        for _ in 0..POOL {
            free_tx.send(Vec::with_capacity(batch)).unwrap();
            if !zero_copy {
                class_free_tx.send(Vec::with_capacity(batch)).unwrap();
            }
        }
        let (values_tx, values_rx) = sync_channel::<Vec<u64>>(LINK);
        let generator = thread::spawn(move || {
            let mut next = 1;
            while next <= n {
                let mut buf = free_rx.recv().unwrap();
                next = kernels::fill_batch(&mut buf, next, batch, n);
                values_tx.send(buf).unwrap();
            }
        });
        let counts = if zero_copy {
            let (out_tx, out_rx) = sync_channel::<Vec<u64>>(LINK);
            let worker = thread::spawn(move || {
                for mut buf in values_rx {
                    kernels::classify_in_place(&mut buf);
                    out_tx.send(buf).unwrap();
                }
            });
            let logger = thread::spawn(move || {
                let mut counts = FizzCounts::default();
                for buf in out_rx {
                    counts.add_all(&buf);
                    let _ = free_tx.send(buf); // the generator may be done
                }
                counts
            });
            worker.join().unwrap();
            logger.join().unwrap()
        } else {
            let (out_tx, out_rx) = sync_channel::<Vec<u8>>(LINK);
            let worker = thread::spawn(move || {
                for values in values_rx {
                    let mut classes = class_free_rx.recv().unwrap();
                    kernels::classify_into(&values, &mut classes);
                    let _ = free_tx.send(values);
                    out_tx.send(classes).unwrap();
                }
            });
            let logger = thread::spawn(move || {
                let mut counts = FizzCounts::default();
                for classes in out_rx {
                    counts.add_all(&classes);
                    let _ = class_free_tx.send(classes);
                }
                counts
            });
            worker.join().unwrap();
            logger.join().unwrap()
        };
        generator.join().unwrap();
        counts
    })
}

/// mutex_uncontended: one thread, `n` rounds of `std::sync::Mutex`.
fn mutex_uncontended(n: u64) -> u64 {
    let m = Mutex::new(0u64);
    for i in 0..n {
        *m.lock().unwrap() += i;
    }
    m.into_inner().unwrap()
}

/// Runs `body(t)` on `tasks` scoped threads and sums what they return.
fn sum_threads(tasks: u64, body: impl Fn(u64) -> u64 + Sync) -> u64 {
    let body = &body;
    thread::scope(|s| {
        let handles: Vec<_> = (0..tasks).map(|t| s.spawn(move || body(t))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// mutex_contended: `4·W` threads add their indices under one
/// `std::sync::Mutex`, yielding (`thread::yield_now`) after each unlock.
fn mutex_contended(n: u64, tasks: u64) -> u64 {
    let m = Mutex::new(0u64);
    sum_threads(tasks, |t| {
        for i in strided(t, tasks, n) {
            *m.lock().unwrap() += i;
            thread::yield_now();
        }
        0
    });
    m.into_inner().unwrap()
}

/// rwlock_read_heavy on `std::sync::RwLock`: index `i` writes both halves
/// when `i % 20 == 0`, else reads, checks them and adds `i` to its sum.
fn rwlock_read_heavy(n: u64, tasks: u64) -> u64 {
    let lock = RwLock::new((0u64, 0u64));
    let reads = sum_threads(tasks, |t| {
        let mut seen = 0;
        for i in strided(t, tasks, n) {
            if i % RW_WRITE_EVERY == 0 {
                let mut g = lock.write().unwrap();
                g.0 += i;
                g.1 += i;
            } else {
                let g = lock.read().unwrap();
                assert_eq!(g.0, g.1, "a reader saw half a write");
                seen += i;
            }
            thread::yield_now();
        }
        seen
    });
    reads + lock.into_inner().unwrap().0
}
