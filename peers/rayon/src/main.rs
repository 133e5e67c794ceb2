//! Benchmark peer: rayon, the fork-join rows.
//!
//! A `ThreadPool` of W threads is built before the clock and dropped after
//! it; each row runs inside `pool.install`. Fork-join is `rayon::join` and
//! parallel iterators; "spawn n tasks and join them" is a `rayon::scope`
//! whose spawned jobs each write their return value into their own slot, the
//! scope's end being the join. Rows that need channels, timers, or a job that
//! waits on another without blocking a pool thread are unsupported.

use rayon::prelude::*;
use rayon::{Scope, ThreadPool, ThreadPoolBuilder};
use spindle_peer_common::catalogue::{
    BLOCK_ALL_BATCH, FIB_PAR_CUTOFF, NURSERY_BATCH, SKYNET_FANOUT,
};
use spindle_peer_common::kernels;
use spindle_peer_common::{run_main, Measured, Request, Support};

fn support(workload: &str) -> Support {
    match workload {
        "skynet" | "skynet_fork" | "fib" | "fib_par" | "sum_squares" | "primes" | "block_all"
        | "spawn_nursery" | "spawn_sequential" | "spawn_10k" | "spawn_100k" | "spawn_1m"
        | "fork_inline" | "fork_pool" => Ok(()),
        "async_trivial" | "async_compute" => {
            Err("rayon jobs are not async tasks: no yield point, no join handle")
        }
        "blocking_pressure" => Err("rayon has no timer to drive the heartbeat"),
        "sleep_1m" => Err("rayon has no timer: a sleep would block a pool thread"),
        "live_1m" => Err("a rayon job cannot park without blocking a pool thread"),
        w if w.starts_with("pipeline_") => {
            Err("a rayon job cannot await another job's handle without blocking a pool thread")
        }
        "mutex_uncontended" | "mutex_contended" | "rwlock_read_heavy" | "semaphore_limit"
        | "notify_pingpong" | "watch_fanout" => Err(
            "a rayon job cannot wait for a lock, a permit or a notification without blocking a pool thread",
        ),
        "joinset_drain" => Err("rayon has no join handle to collect in finish order"),
        _ => Err("rayon is fork-join: no channels"),
    }
}

fn main() {
    run_main("rayon", support, run);
}

fn pool(threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    // fork_inline: a one-thread pool is rayon's nearest thing to a
    // current-thread executor; everything runs on that thread.
    let pool = pool(if req.workload == "fork_inline" { 1 } else { w });
    let m = match req.workload.as_str() {
        // rayon's skynet is already fork-join: the same tree for both rows.
        "skynet" | "skynet_fork" => Measured::time(|| pool.install(|| skynet(0, n))),
        "fib" => Measured::time(|| pool.install(|| kernels::fib(n))),
        "fib_par" => Measured::time(|| pool.install(|| fib_par(n))),
        "sum_squares" => Measured::time(|| pool.install(|| kernels::sum_squares(n))),
        "primes" => Measured::time(|| pool.install(|| kernels::count_primes(n))),
        "block_all" => Measured::time(|| pool.install(|| spawn_batches(n, BLOCK_ALL_BATCH))),
        "spawn_nursery" => Measured::time(|| pool.install(|| spawn_batches(n, NURSERY_BATCH))),
        "spawn_sequential" | "fork_inline" => {
            Measured::time(|| pool.install(|| (0..n).map(fork).sum::<u64>()))
        }
        "spawn_10k" | "spawn_100k" | "spawn_1m" => {
            Measured::time(|| pool.install(|| spawn_batches(n, n.max(1))))
        }
        "fork_pool" => Measured::time(|| pool.install(|| fork_pool(n, w))),
        other => unreachable!("`{other}` is listed unsupported"),
    };
    drop(pool);
    m
}

/// skynet: each node's 10 children as a parallel iterator (rayon splits it
/// into `join`s), summed; a leaf returns its id.
fn skynet(id: u64, size: u64) -> u64 {
    if size == 1 {
        return id;
    }
    let child = size / SKYNET_FANOUT;
    (0..SKYNET_FANOUT)
        .into_par_iter()
        .map(|c| skynet(id + c * child, child))
        .sum()
}

/// fib_par: `rayon::join` of both halves while n > 20, plain recursion below.
fn fib_par(n: u64) -> u64 {
    if n <= FIB_PAR_CUTOFF {
        return kernels::fib(n);
    }
    let (a, b) = rayon::join(|| fib_par(n - 1), || fib_par(n - 2));
    a + b
}

/// Spawns jobs `start..end` into `scope`, job i writing i into its own slot.
fn spawn_into<'s>(scope: &Scope<'s>, slots: &'s mut [u64], start: u64) {
    for (i, slot) in (start..).zip(slots.iter_mut()) {
        scope.spawn(move |_| *slot = i);
    }
}

/// block_all, spawn_nursery and spawn_*: a scope per batch of jobs (job i
/// returns i into its slot), the scope's end joining the batch before the
/// next one starts; the driver sums the slots.
fn spawn_batches(n: u64, batch: u64) -> u64 {
    let mut slots = vec![0u64; batch.min(n) as usize];
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let len = (n - start).min(batch) as usize;
        let batch_slots = &mut slots[..len];
        rayon::scope(|s| spawn_into(s, batch_slots, start));
        sum += batch_slots.iter().sum::<u64>();
        start += len as u64;
    }
    sum
}

/// One fork: a scope spawning one job that returns i, joined at once.
fn fork(i: u64) -> u64 {
    let mut r = 0;
    rayon::scope(|s| s.spawn(|_| r = i));
    r
}

/// fork_pool: W driver jobs; driver d forks the children i ≡ d (mod W) one
/// at a time.
fn fork_pool(n: u64, workers: usize) -> u64 {
    let mut sums = vec![0u64; workers];
    rayon::scope(|s| {
        for (d, sum) in (0..n).zip(sums.iter_mut()) {
            s.spawn(move |_| *sum = (d..n).step_by(workers).map(fork).sum());
        }
    });
    sums.iter().sum()
}
