//! Benchmark peer: Tokio.
//!
//! The multi-thread runtime with `worker_threads(W)` (a current-thread one
//! for fork_inline), built before the clock starts and dropped after it
//! stops; each row's timed region is the future passed to `block_on`.
//! Channels (`chan_rows.rs`) are `tokio::sync::mpsc` (bounded; Tokio has
//! no rendezvous channel, so capacity 1 stands in for one),
//! `async-channel` where the row needs MPMC (fanout); joins go through
//! `JoinHandle`s and `JoinSet`, select through `tokio::select!`, timers
//! through `tokio::time`.

mod chan_rows;
mod echo;
mod http;
mod sync_rows;

use chan_rows::{chan_single, fanout, fizzbuzz, payload_row, pingpong, producer_consumer, select};

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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::runtime::{Builder, Runtime};
use tokio::sync::{oneshot, Notify};
use tokio::task::{self, JoinHandle, JoinSet};

/// live_1m's witness: the tasks alive now and at most.
static ALIVE: Alive = Alive::new();
/// sleep_1m's witness: the earliest wake relative to its deadline.
static LATENESS: Lateness = Lateness::new();

fn main() {
    if let Some(workers) = spindle_peer_common::echo::requested() {
        echo::serve(workers);
    }
    if let Some(workers) = spindle_peer_common::http::requested() {
        http::serve(workers);
    }
    run_main("tokio", support, run);
}

/// Tokio expresses every row of the catalogue but the fork–join API's.
fn support(workload: &str) -> Support {
    match workload {
        "skynet_fork" => Err(
            "Tokio has no fork-join API whose join runs the child inline: a spawned task \
             always runs concurrently (the skynet row)",
        ),
        _ => Ok(()),
    }
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    if req.workload == "fork_inline" {
        let rt = Builder::new_current_thread().build().expect("runtime");
        return rt.block_on(timed(fork_inline(n)));
    }
    let rt: Runtime = Builder::new_multi_thread()
        .worker_threads(w)
        .enable_all()
        .build()
        .expect("runtime");
    // The driver runs as a task, as Go's main goroutine does: spawns and
    // joins stay on the workers instead of crossing to the thread in
    // `block_on` and back at every step.
    let name = req.workload.clone();
    rt.block_on(async move {
        tokio::spawn(async move {
            match name.as_str() {
                "skynet" => timed(async { skynet(0, n).await.unwrap() }).await,
                "pingpong" => timed(pingpong(n)).await,
                "fanout" => timed(fanout(n)).await,
                "fib" => {
                    timed(async { tokio::spawn(async move { kernels::fib(n) }).await.unwrap() })
                        .await
                }
                "fib_par" => timed(async { fib_par(n).await.unwrap() }).await,
                "sum_squares" => {
                    timed(async {
                        tokio::spawn(async move { kernels::sum_squares(n) })
                            .await
                            .unwrap()
                    })
                    .await
                }
                "primes" => {
                    timed(async {
                        tokio::spawn(async move { kernels::count_primes(n) })
                            .await
                            .unwrap()
                    })
                    .await
                }
                "chan_single" => timed(chan_single(n)).await,
                "chan_buffered" => timed(producer_consumer(n, CHAN_CAPACITY, |i| i, |&v| v)).await,
                // Tokio's mpsc has no rendezvous mode (capacity 0 panics): 1 is the nearest.
                "chan_unbuffered" => timed(producer_consumer(n, 1, |i| i, |&v| v)).await,
                "async_trivial" | "spawn_10k" | "spawn_100k" | "spawn_1m" => {
                    timed(spawn_all(n)).await
                }
                "async_compute" => timed(async_compute(n)).await,
                "block_all" => timed(block_all(n)).await,
                "blocking_pressure" => blocking_pressure(n, w).await,
                "spawn_nursery" => timed(spawn_nursery(n)).await,
                "spawn_sequential" => timed(spawn_sequential(n)).await,
                "live_1m" => timed(live(n)).await.with("peak_alive", ALIVE.peak()),
                "sleep_1m" => timed(sleep_all(n))
                    .await
                    .with("min_lateness_ns", LATENESS.min_ns()),
                "fizzbuzz_pipeline" => timed(fizzbuzz(n, false)).await,
                "fizzbuzz_pipeline_zc" => timed(fizzbuzz(n, true)).await,
                "fork_pool" => timed(fork_pool(n, w)).await,
                row if SYNC_ROWS.contains(&row) => sync_rows::run(row, n, w).await,
                w if payload_bytes(w).is_some() => payload_row(payload_bytes(w).unwrap(), n).await,
                w if select_arity(w).is_some() => {
                    let start = Instant::now();
                    let tally = select(n, select_arity(w).unwrap()).await;
                    tally.measured(start.elapsed())
                }
                w => {
                    let (c, d) = pipeline_shape(w).expect("a catalogue row");
                    timed(pipeline(n, c, d)).await
                }
            }
        })
        .await
        .unwrap()
    })
}

/// Awaits `fut` on the monotonic clock: the timed region of every row.
async fn timed<R: Display>(fut: impl Future<Output = R>) -> Measured {
    let start = Instant::now();
    let r = fut.await;
    Measured::new(r, start.elapsed())
}

/// skynet: a task per node; a parent spawns its 10 children and sums their
/// join handles. Returning the handle keeps the recursion unboxed.
fn skynet(id: u64, size: u64) -> JoinHandle<u64> {
    tokio::spawn(async move {
        if size == 1 {
            return id;
        }
        let child = size / SKYNET_FANOUT;
        let children: Vec<_> = (0..SKYNET_FANOUT)
            .map(|c| skynet(id + c * child, child))
            .collect();
        let mut sum = 0;
        for c in children {
            sum += c.await.unwrap();
        }
        sum
    })
}

/// fib_par: both halves spawned while n > 20, plain recursion below.
fn fib_par(n: u64) -> JoinHandle<u64> {
    tokio::spawn(async move {
        if n <= FIB_PAR_CUTOFF {
            return kernels::fib(n);
        }
        let (a, b) = (fib_par(n - 1), fib_par(n - 2));
        a.await.unwrap() + b.await.unwrap()
    })
}

/// async_trivial and spawn_*: spawn n tasks returning i, then join all.
async fn spawn_all(n: u64) -> u64 {
    let handles: Vec<_> = (0..n).map(|i| tokio::spawn(async move { i })).collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await.unwrap();
    }
    sum
}

/// async_compute: task i sums i + j for j < 100, yielding once at j = 50.
async fn async_compute(n: u64) -> u64 {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            tokio::spawn(async move {
                let mut sum = kernels::compute_steps(i, 0..ASYNC_COMPUTE_YIELD_AT);
                task::yield_now().await;
                sum += kernels::compute_steps(i, ASYNC_COMPUTE_YIELD_AT..ASYNC_COMPUTE_STEPS);
                sum
            })
        })
        .collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await.unwrap();
    }
    sum
}

/// block_all: batches of 10 tasks, each batch joined before the next.
async fn block_all(n: u64) -> u64 {
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK_ALL_BATCH).min(n);
        let batch: Vec<_> = (start..end)
            .map(|i| tokio::spawn(async move { i }))
            .collect();
        for h in batch {
            sum += h.await.unwrap();
        }
        start = end;
    }
    sum
}

/// spawn_nursery: a `JoinSet` per batch of 1000, drained before the next.
async fn spawn_nursery(n: u64) -> u64 {
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let end = (start + NURSERY_BATCH).min(n);
        let mut set = JoinSet::new();
        for i in start..end {
            set.spawn(async move { i });
        }
        while let Some(r) = set.join_next().await {
            sum += r.unwrap();
        }
        start = end;
    }
    sum
}

/// spawn_sequential: spawn one task, join it, repeat.
async fn spawn_sequential(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += tokio::spawn(async move { i }).await.unwrap();
    }
    sum
}

/// live_1m: n tasks each parked on its own oneshot; once the last has
/// started (counted by [`ALIVE`], then signalled through a `Notify`), the driver sends i
/// to task i and sums what the tasks return.
async fn live(n: u64) -> u64 {
    let started = Arc::new(Notify::new());
    let mut senders = Vec::with_capacity(n as usize);
    let mut handles = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (tx, rx) = oneshot::channel::<u64>();
        let started = started.clone();
        senders.push(tx);
        handles.push(tokio::spawn(async move {
            if ALIVE.enter() == n {
                started.notify_one();
            }
            let i = rx.await.unwrap();
            ALIVE.leave();
            i
        }));
    }
    if n > 0 {
        started.notified().await;
    }
    for (i, tx) in senders.into_iter().enumerate() {
        tx.send(i as u64).unwrap();
    }
    let mut sum = 0;
    for h in handles {
        sum += h.await.unwrap();
    }
    sum
}

/// sleep_1m: n tasks, task i sleeping `1 + (i mod 100)` ms on Tokio's
/// timer (`tokio::time::sleep`), noting its wake in [`LATENESS`], and
/// returning i; the driver joins all.
async fn sleep_all(n: u64) -> u64 {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            tokio::spawn(async move {
                // The sleep's own deadline, read after it fired: a copy
                // held across the await would grow every task.
                let mut sleep = std::pin::pin!(tokio::time::sleep(sleep_duration(i)));
                sleep.as_mut().await;
                LATENESS.observe(sleep.deadline().into_std(), Instant::now());
                i
            })
        })
        .collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await.unwrap();
    }
    sum
}

/// blocking_pressure: 4·W tasks each call `std::thread::sleep(1 ms)` n times
/// *directly inside the async task*, not through `spawn_blocking`: that is
/// what the row measures, how the runtime copes with tasks that block its
/// workers. A heartbeat task ticks on a 1 ms Tokio interval (missed ticks
/// skipped) and counts its ticks until the blockers are done.
async fn blocking_pressure(n: u64, workers: usize) -> Measured {
    let start = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let heartbeat = {
        let done = done.clone();
        tokio::spawn(async move {
            let mut beats = 0u64;
            let mut ticks = tokio::time::interval_at(
                tokio::time::Instant::from_std(start + BLOCKING_SLEEP),
                BLOCKING_SLEEP,
            );
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            while !done.load(Ordering::Acquire) {
                ticks.tick().await;
                beats += 1;
            }
            beats
        })
    };
    let blockers: Vec<_> = (0..blockers(workers))
        .map(|_| {
            tokio::spawn(async move {
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
        calls += b.await.unwrap();
    }
    done.store(true, Ordering::Release);
    let beats = heartbeat.await.unwrap();
    let elapsed = start.elapsed();
    Measured::new(calls, elapsed)
        .with("beats", beats)
        .with("due", elapsed.as_millis())
}

/// fork_inline (current-thread runtime): spawn a child returning i, await it
/// at once, drop its handle; repeat.
async fn fork_inline(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += tokio::spawn(async move { i }).await.unwrap();
    }
    sum
}

/// fork_pool: W driver tasks; driver d forks the children i ≡ d (mod W) one
/// at a time, awaiting each.
async fn fork_pool(n: u64, workers: usize) -> u64 {
    let drivers: Vec<_> = (0..workers as u64)
        .map(|d| {
            tokio::spawn(async move {
                let mut sum = 0;
                for i in (d..n).step_by(workers) {
                    sum += tokio::spawn(async move { i }).await.unwrap();
                }
                sum
            })
        })
        .collect();
    let mut sum = 0;
    for d in drivers {
        sum += d.await.unwrap();
    }
    sum
}

/// pipeline_CxD: C chain tasks run their share of the n executions one after
/// another; an execution spawns D stage tasks, stage k holding stage k−1's
/// handle, awaiting it and returning its value + 1.
async fn pipeline(n: u64, chains: u64, depth: u64) -> u64 {
    let chains: Vec<_> = (0..chains)
        .map(|c| {
            let runs = chain_share(n, chains, c);
            tokio::spawn(async move {
                let mut sum = 0;
                for _ in 0..runs {
                    let mut stage = tokio::spawn(async { 1u64 });
                    for _ in 1..depth {
                        let prev = stage;
                        stage = tokio::spawn(async move { prev.await.unwrap() + 1 });
                    }
                    sum += stage.await.unwrap();
                }
                sum
            })
        })
        .collect();
    let mut sum = 0;
    for c in chains {
        sum += c.await.unwrap();
    }
    sum
}
