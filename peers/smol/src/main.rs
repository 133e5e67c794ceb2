//! Benchmark peer: smol (the smol-rs crates it re-exports, used directly).
//!
//! Runtime: one `async_executor::StaticExecutor` in a `static`, run by W
//! executor threads started with `easy-parallel`, each
//! `async_io::block_on(EX.run(shutdown.recv()))`: the multi-threaded setup
//! of async-executor's docs and smol-macros, with `async_io::block_on`
//! (`smol::block_on`) as smol's own global executor threads use it, so an
//! idle executor thread drives the async-io reactor and its timers.
//! `StaticExecutor` rather than `Executor` because the executor lives as long
//! as the process: it is async-executor's type for exactly that case (no
//! registry of live tasks, so no lock taken per spawn and per completion).
//! The driver of every row is a task on that executor (the main thread only
//! waits for it with `future::block_on`), its timed region inside the task:
//! starting the threads and stopping them (dropping the shutdown signal)
//! are outside it. fork_inline runs on one thread: a leaked `LocalExecutor`
//! (`StaticLocalExecutor`) run by `block_on(ex.run(driver_task))`, the
//! driver again a task (as `run`'s own future the driver went through
//! `block_on`'s wake-up at every child: slower here, and bimodal).
//!
//! Primitives by group of rows:
//! - tasks (skynet, fib_par, spawn_*, async_*, block_all, fork_pool,
//!   pipelines): `EX.spawn` and awaiting the `Task`, the join idiom of smol
//!   (a `Task` is its own join handle; dropping it cancels the task).
//!   spawn_nursery: smol has no `JoinSet`; each batch of 1000 is a
//!   `Vec<Task>` awaited in turn, the structured scope smol users write
//!   (the tasks cannot outlive the vector: dropping a `Task` cancels it).
//! - channels (`chan_rows.rs`): `async-channel` (`bounded`), MPMC, smol's
//!   channel. It has no rendezvous mode (`bounded(0)` panics): chan_unbuffered uses capacity 1,
//!   as the Tokio peer does.
//! - select_k: `futures::select!` over `select_next_some()` of each
//!   receiver (an `async_channel::Receiver` is a `FusedStream`), ending on
//!   `complete` once every channel is closed and drained: the k-way select
//!   loop of the futures ecosystem smol builds on (futures-lite's `or`/`race`
//!   take two futures and cannot drop a closed arm), randomly fair as
//!   `tokio::select!` is.
//! - timers (sleep_1m, the blocking_pressure heartbeat): `async_io::Timer`.
//!   async-io's periodic timer catches up missed ticks; the row drops them,
//!   so the heartbeat re-arms `Timer::at` the next 1 ms grid point.
//! - yields: `futures_lite::future::yield_now`.
//! - blocking_pressure blocks inside the tasks (`std::thread::sleep`) on
//!   purpose: the row measures how the executor copes with tasks that block
//!   its threads. `blocking::unblock` is smol's answer to blocking calls and
//!   would remove what the row measures, so no row uses it.
//!
//! - the sync rows: `async-lock` (smol's `smol::lock`), `event-listener`
//!   and a `FuturesUnordered` of `Task`s (`sync_rows.rs` says why each).
//!
//! Unsupported: skynet_fork (no fork-join API whose join runs the child
//! inline; a spawned task always runs concurrently).

mod chan_rows;
mod sync_rows;

use chan_rows::{chan_single, fanout, fizzbuzz, payload_row, pingpong, producer_consumer, select};

use async_executor::{LocalExecutor, StaticExecutor, StaticLocalExecutor, Task};
use async_io::Timer;
use easy_parallel::Parallel;
use futures_lite::future;
use spindle_peer_common::catalogue::{
    blockers, chain_share, payload_bytes, pipeline_shape, select_arity, sleep_duration,
    ASYNC_COMPUTE_STEPS, ASYNC_COMPUTE_YIELD_AT, BLOCKING_SLEEP, BLOCK_ALL_BATCH, CHAN_CAPACITY,
    FIB_PAR_CUTOFF, NURSERY_BATCH, SKYNET_FANOUT, SYNC_ROWS,
};
use spindle_peer_common::kernels::{self};
use spindle_peer_common::witness::{Alive, Lateness};
use spindle_peer_common::{run_main, Measured, Request, Support};
use std::fmt::Display;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The executor every multi-threaded row runs on.
static EX: StaticExecutor = StaticExecutor::new();

/// live_1m's witness: the tasks alive now and at most (a `static`, so
/// that the tasks share it without a reference count each).
static ALIVE: Alive = Alive::new();
/// sleep_1m's witness: the earliest wake relative to its deadline.
static LATENESS: Lateness = Lateness::new();

fn main() {
    run_main("smol", support, run);
}

/// smol expresses every row of the catalogue but the fork–join API's.
fn support(workload: &str) -> Support {
    match workload {
        "skynet_fork" => Err(
            "smol has no fork-join API whose join runs the child inline: a spawned task \
             always runs concurrently (the skynet row)",
        ),
        "watch_fanout" => Err(
            "smol has no latest-value channel: async-broadcast delivers every value to every \
             receiver, which is the broadcast shape, not watch's",
        ),
        _ => Ok(()),
    }
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    if req.workload == "fork_inline" {
        let ex: &'static StaticLocalExecutor = LocalExecutor::new().leak();
        return async_io::block_on(ex.run(ex.spawn(timed(fork_inline(ex, n)))));
    }
    let name = req.workload.clone();
    let driver = async move {
        match name.as_str() {
            "skynet" => timed(skynet(0, n)).await,
            "pingpong" => timed(pingpong(n)).await,
            "fanout" => timed(fanout(n)).await,
            "fib" => timed(EX.spawn(async move { kernels::fib(n) })).await,
            "fib_par" => timed(fib_par(n)).await,
            "sum_squares" => timed(EX.spawn(async move { kernels::sum_squares(n) })).await,
            "primes" => timed(EX.spawn(async move { kernels::count_primes(n) })).await,
            "chan_single" => timed(chan_single(n)).await,
            "chan_buffered" => timed(producer_consumer(n, CHAN_CAPACITY, |i| i, |&v| v)).await,
            // async-channel has no rendezvous mode (capacity 0 panics): 1 is the nearest.
            "chan_unbuffered" => timed(producer_consumer(n, 1, |i| i, |&v| v)).await,
            "async_trivial" | "spawn_10k" | "spawn_100k" | "spawn_1m" => timed(spawn_all(n)).await,
            "async_compute" => timed(async_compute(n)).await,
            "block_all" => timed(batches(n, BLOCK_ALL_BATCH)).await,
            "blocking_pressure" => blocking_pressure(n, w).await,
            "spawn_nursery" => timed(batches(n, NURSERY_BATCH)).await,
            "spawn_sequential" => timed(spawn_sequential(n)).await,
            "live_1m" => live(n).await,
            "sleep_1m" => sleep_all(n).await,
            "fizzbuzz_pipeline" => timed(fizzbuzz(n, false)).await,
            "fizzbuzz_pipeline_zc" => timed(fizzbuzz(n, true)).await,
            "fork_pool" => timed(fork_pool(n, w)).await,
            row if SYNC_ROWS.contains(&row) => sync_rows::run(row, n, w).await,
            w if payload_bytes(w).is_some() => payload_row(payload_bytes(w).unwrap(), n).await,
            w if select_arity(w).is_some() => select(n, select_arity(w).unwrap()).await,
            w => {
                let (c, d) = pipeline_shape(w).expect("a catalogue row");
                timed(pipeline(n, c, d)).await
            }
        }
    };
    // W executor threads; the main thread waits for the driver task and then
    // drops the signal (also when unwinding), which stops the threads.
    let (signal, shutdown) = async_channel::unbounded::<()>();
    let (_, measured) = Parallel::new()
        .each(0..w, |_| async_io::block_on(EX.run(shutdown.recv())))
        .finish(move || {
            let _signal = signal;
            future::block_on(EX.spawn(driver))
        });
    measured
}

/// Awaits `fut` on the monotonic clock: the timed region of every row.
async fn timed<R: Display>(fut: impl Future<Output = R>) -> Measured {
    let start = Instant::now();
    let r = fut.await;
    Measured::new(r, start.elapsed())
}

/// skynet: a task per node; a parent spawns its 10 children and sums their
/// `Task`s. Returning the `Task` keeps the recursion unboxed.
fn skynet(id: u64, size: u64) -> Task<u64> {
    EX.spawn(async move {
        if size == 1 {
            return id;
        }
        let child = size / SKYNET_FANOUT;
        let children: Vec<_> = (0..SKYNET_FANOUT)
            .map(|c| skynet(id + c * child, child))
            .collect();
        let mut sum = 0;
        for c in children {
            sum += c.await;
        }
        sum
    })
}

/// fib_par: both halves spawned while n > 20, plain recursion below.
fn fib_par(n: u64) -> Task<u64> {
    EX.spawn(async move {
        if n <= FIB_PAR_CUTOFF {
            return kernels::fib(n);
        }
        let (a, b) = (fib_par(n - 1), fib_par(n - 2));
        a.await + b.await
    })
}

/// async_trivial and spawn_*: spawn n tasks returning i, then await them all.
async fn spawn_all(n: u64) -> u64 {
    let tasks: Vec<_> = (0..n).map(|i| EX.spawn(async move { i })).collect();
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    sum
}

/// async_compute: task i sums i + j for j < 100, yielding once at j = 50.
async fn async_compute(n: u64) -> u64 {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            EX.spawn(async move {
                let mut sum = kernels::compute_steps(i, 0..ASYNC_COMPUTE_YIELD_AT);
                future::yield_now().await;
                sum += kernels::compute_steps(i, ASYNC_COMPUTE_YIELD_AT..ASYNC_COMPUTE_STEPS);
                sum
            })
        })
        .collect();
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    sum
}

/// Spawns the tasks `start..end` (each returning its index) and awaits them
/// all: one batch of block_all and of spawn_nursery.
async fn batch(start: u64, end: u64) -> u64 {
    let tasks: Vec<_> = (start..end).map(|i| EX.spawn(async move { i })).collect();
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    sum
}

/// block_all (batches of 10) and spawn_nursery (batches of 1000): each
/// batch a `Vec<Task>` drained before the next (see the module docs).
async fn batches(n: u64, size: u64) -> u64 {
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let end = (start + size).min(n);
        sum += batch(start, end).await;
        start = end;
    }
    sum
}

/// spawn_sequential: spawn one task, await it, repeat.
async fn spawn_sequential(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += EX.spawn(async move { i }).await;
    }
    sum
}

/// live_1m: n tasks each parked on its own capacity-1 channel (smol has no
/// oneshot; a bounded(1) `async-channel` is what stands in for one). Each
/// task counts itself alive and started; the last to start signals the
/// driver, which then sends i to task i and sums what the tasks return.
async fn live(n: u64) -> Measured {
    let started = Arc::new(AtomicU64::new(0));
    let (all_started, all_started_rx) = async_channel::bounded::<()>(1);
    let start = Instant::now();
    let mut senders = Vec::with_capacity(n as usize);
    let mut tasks = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (tx, rx) = async_channel::bounded::<u64>(1);
        let (started, all_started) = (started.clone(), all_started.clone());
        senders.push(tx);
        tasks.push(EX.spawn(async move {
            ALIVE.enter();
            if started.fetch_add(1, Ordering::AcqRel) + 1 == n {
                all_started.try_send(()).unwrap();
            }
            let v = rx.recv().await.unwrap();
            ALIVE.leave();
            v
        }));
    }
    if n > 0 {
        all_started_rx.recv().await.unwrap();
    }
    for (i, tx) in senders.into_iter().enumerate() {
        tx.try_send(i as u64).unwrap();
    }
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    Measured::new(sum, start.elapsed()).with("peak_alive", ALIVE.peak())
}

/// sleep_1m: n tasks, task i sleeping `1 + (i mod 100)` ms on an
/// `async_io::Timer` and returning i; each records how late it woke against
/// the instant it started sleeping plus its duration.
async fn sleep_all(n: u64) -> Measured {
    let start = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            EX.spawn(async move {
                let d = sleep_duration(i);
                let slept_at = Instant::now();
                Timer::after(d).await;
                LATENESS.observe(slept_at + d, Instant::now());
                i
            })
        })
        .collect();
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    Measured::new(sum, start.elapsed()).with("min_lateness_ns", LATENESS.min_ns())
}

/// blocking_pressure: 4·W tasks each call `std::thread::sleep(1 ms)` n times
/// inside the task (see the module docs). A heartbeat task ticks on the 1 ms
/// grid with `async_io::Timer::at`, re-armed at the first grid point after
/// each wake (missed ticks dropped), and counts its ticks until the blockers
/// are done.
async fn blocking_pressure(n: u64, workers: usize) -> Measured {
    let start = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let heartbeat = {
        let done = done.clone();
        EX.spawn(async move {
            let mut beats = 0u64;
            let mut next = start + BLOCKING_SLEEP;
            while !done.load(Ordering::Acquire) {
                Timer::at(next).await;
                beats += 1;
                let passed = start.elapsed().as_nanos() / BLOCKING_SLEEP.as_nanos();
                next = start + BLOCKING_SLEEP * (passed as u32 + 1);
            }
            beats
        })
    };
    let blockers: Vec<_> = (0..blockers(workers))
        .map(|_| {
            EX.spawn(async move {
                let mut calls = 0u64;
                for _ in 0..n {
                    std::thread::sleep(BLOCKING_SLEEP);
                    calls += 1;
                }
                calls
            })
        })
        .collect();
    let mut calls = 0;
    for b in blockers {
        calls += b.await;
    }
    done.store(true, Ordering::Release);
    let beats = heartbeat.await;
    let elapsed = start.elapsed();
    Measured::new(calls, elapsed)
        .with("beats", beats)
        .with("due", elapsed.as_millis())
}

/// fork_inline (one thread, a local executor): spawn a child returning i,
/// await it at once, drop its `Task`; repeat.
async fn fork_inline(ex: &'static StaticLocalExecutor, n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += ex.spawn(async move { i }).await;
    }
    sum
}

/// fork_pool: W driver tasks; driver d spawns the children i ≡ d (mod W)
/// one at a time, awaiting each.
async fn fork_pool(n: u64, workers: usize) -> u64 {
    let drivers: Vec<_> = (0..workers as u64)
        .map(|d| {
            EX.spawn(async move {
                let mut sum = 0;
                for i in (d..n).step_by(workers) {
                    sum += EX.spawn(async move { i }).await;
                }
                sum
            })
        })
        .collect();
    let mut sum = 0;
    for d in drivers {
        sum += d.await;
    }
    sum
}

/// pipeline_CxD: C chain tasks run their share of the n executions one after
/// another; an execution spawns D stage tasks, stage k holding stage k−1's
/// `Task`, awaiting it and returning its value + 1.
async fn pipeline(n: u64, chains: u64, depth: u64) -> u64 {
    let chains: Vec<_> = (0..chains)
        .map(|c| {
            let runs = chain_share(n, chains, c);
            EX.spawn(async move {
                let mut sum = 0;
                for _ in 0..runs {
                    let mut stage = EX.spawn(async { 1u64 });
                    for _ in 1..depth {
                        let prev = stage;
                        stage = EX.spawn(async move { prev.await + 1 });
                    }
                    sum += stage.await;
                }
                sum
            })
        })
        .collect();
    let mut sum = 0;
    for c in chains {
        sum += c.await;
    }
    sum
}
