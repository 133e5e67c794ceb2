//! Benchmark peer: spindle.
//!
//! A multi-thread runtime with `workers(W)` (a current-thread one for
//! fork_inline), built before the clock starts and dropped after it stops;
//! each row's timed region is the future passed to `block_on`. Channels
//! (`chan_rows.rs`) are `spindle::chan` (bounded, rendezvous, oneshot; MPMC
//! receivers clone), select is `spindle::select!`, structured batches use
//! `spindle::scope`.
//!
//! blocking_pressure's blockers call `std::thread::sleep` inside their tasks
//! (no `spawn_blocking`): the monitor's hand-off of a stuck worker is what
//! keeps the heartbeat (a `spindle::time::interval`) ticking.

use spindle::chan;

mod chan_rows;
mod echo;
mod fizzbuzz;
mod sync_rows;

use chan_rows::{chan_single, fanout, fizzbuzz, payload_row, pingpong, producer_consumer, select};
use spindle::{JoinHandle, Runtime};
use spindle_peer_common::catalogue::{
    chain_share, payload_bytes, pipeline_shape, select_arity, sleep_duration, ASYNC_COMPUTE_STEPS,
    ASYNC_COMPUTE_YIELD_AT, BLOCK_ALL_BATCH, CHAN_CAPACITY, FIB_PAR_CUTOFF, NURSERY_BATCH,
    SKYNET_FANOUT, SYNC_ROWS,
};
use spindle_peer_common::kernels::{self};
use spindle_peer_common::witness::{Alive, Lateness};
use spindle_peer_common::{run_main, Measured, Request, Support};
use std::fmt::Display;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// live_1m's witness: the tasks alive now and at most.
static ALIVE: Alive = Alive::new();
/// sleep_1m's witness: the earliest wake relative to its deadline.
static LATENESS: Lateness = Lateness::new();

fn main() {
    if let Some(workers) = spindle_peer_common::echo::requested() {
        echo::serve(workers);
    }
    run_main("spindle", support, run);
}

fn support(_workload: &str) -> Support {
    Ok(())
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    if req.workload == "fork_inline" {
        let rt = spindle::Builder::new_current_thread()
            .build()
            .expect("runtime");
        return rt.block_on(timed(fork_inline(n)));
    }
    let rt: Runtime = spindle::Builder::new_multi_thread()
        .workers(w)
        .build()
        .expect("runtime");
    // The driver runs as a task, as Go's main goroutine does: spawns and
    // joins stay on the workers instead of crossing to the thread in
    // `block_on` and back at every step.
    let name = req.workload.clone();
    let measured = rt.block_on(async move {
        spindle::spawn(async move {
            match name.as_str() {
                "skynet" => timed(async { skynet(0, n).await.unwrap() }).await,
                "skynet_fork" => timed(in_task(move || skynet_join(0, n, w))).await,
                "blocking_pressure" => blocking_pressure(n, w).await,
                "pingpong" => timed(pingpong(n)).await,
                "fanout" => timed(fanout(n)).await,
                "fib" => timed(in_task(move || kernels::fib(n))).await,
                "fib_par" => timed(async { fib_par(n).await.unwrap() }).await,
                "sum_squares" => timed(in_task(move || kernels::sum_squares(n))).await,
                "primes" => timed(in_task(move || kernels::count_primes(n))).await,
                "chan_single" => timed(chan_single(n)).await,
                "chan_buffered" => {
                    timed(producer_consumer(
                        n,
                        chan::bounded(CHAN_CAPACITY),
                        |i| i,
                        |&v| v,
                    ))
                    .await
                }
                "chan_unbuffered" => {
                    timed(producer_consumer(n, chan::rendezvous(), |i| i, |&v| v)).await
                }
                "async_trivial" | "spawn_10k" | "spawn_100k" | "spawn_1m" => {
                    timed(spawn_batches(n, n)).await
                }
                "async_compute" => timed(async_compute(n)).await,
                "block_all" => timed(block_all(n)).await,
                "spawn_nursery" => timed(spawn_batches(n, NURSERY_BATCH)).await,
                "spawn_sequential" => timed(spawn_sequential(n)).await,
                "live_1m" => timed(live(n)).await.with("peak_alive", ALIVE.peak()),
                "sleep_1m" => timed(sleep_all(n))
                    .await
                    .with("min_lateness_ns", LATENESS.min_ns()),
                "fizzbuzz_pipeline" => fizzbuzz(n, false).await,
                "fizzbuzz_pipeline_zc" => fizzbuzz(n, true).await,
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
    });
    // For profiling: the runtime's counters, on stderr (the result line
    // on stdout is unchanged).
    if std::env::var_os("SPINDLE_PEER_METRICS").is_some() {
        eprintln!("{}", rt.metrics());
    }
    measured
}

/// Awaits `fut` on the monotonic clock: the timed region of every row.
async fn timed<R: Display>(fut: impl Future<Output = R>) -> Measured {
    let start = Instant::now();
    let r = fut.await;
    Measured::new(r, start.elapsed())
}

/// Compute rows run inside one spawned task.
async fn in_task(f: impl FnOnce() -> u64 + Send + 'static) -> u64 {
    spindle::spawn(async move { f() }).await.unwrap()
}

/// skynet: a task per node; a parent spawns its 10 children and sums
/// their join handles.
fn skynet(id: u64, size: u64) -> JoinHandle<u64> {
    spindle::spawn(async move {
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

/// skynet_fork: the same tree of plain calls, split with
/// `spindle::join_context` (the fork–join API for closures, against
/// rayon). A node's children are halved at each join while the split is
/// worth it, as rayon's parallel iterator (the rayon peer's) halves them:
/// `Splits`.
fn skynet_join(id: u64, size: u64, workers: usize) -> u64 {
    if size == 1 {
        return id;
    }
    let children = Children {
        first: id,
        leaves: size / SKYNET_FANOUT,
        lo: 0,
        hi: SKYNET_FANOUT,
    };
    children.sum(Splits::new(workers), false, workers)
}

/// Subtrees `lo..hi` of a node whose first leaf is `first`, each of
/// `leaves` leaves.
#[derive(Clone, Copy)]
struct Children {
    first: u64,
    leaves: u64,
    lo: u64,
    hi: u64,
}

impl Children {
    /// Their sum; `migrated`: a thief took this range.
    fn sum(self, mut splits: Splits, migrated: bool, workers: usize) -> u64 {
        if self.hi - self.lo == 1 || !splits.try_split(migrated, workers) {
            return (self.lo..self.hi)
                .map(|c| skynet_join(self.first + c * self.leaves, self.leaves, workers))
                .sum();
        }
        let mid = self.lo + (self.hi - self.lo) / 2;
        let (left, right) = (Children { hi: mid, ..self }, Children { lo: mid, ..self });
        let (a, b) = spindle::join_context(
            |ctx| left.sum(splits, ctx.migrated(), workers),
            |ctx| right.sum(splits, ctx.migrated(), workers),
        );
        a + b
    }
}

/// rayon's adaptive splitting (its `Splitter`, which its parallel
/// iterators use): a fresh range may split into about as many pieces as
/// there are workers; a range a thief took may split as much again.
#[derive(Clone, Copy)]
struct Splits {
    left: usize,
}

impl Splits {
    fn new(workers: usize) -> Splits {
        Splits { left: workers }
    }

    /// Whether to split a range (`stolen`: a thief took it), counting the
    /// split.
    fn try_split(&mut self, stolen: bool, workers: usize) -> bool {
        if stolen {
            self.left = workers.max(self.left / 2);
            true
        } else if self.left > 0 {
            self.left /= 2;
            true
        } else {
            false
        }
    }
}

/// fib_par: both halves spawned while n > 20, plain recursion below.
fn fib_par(n: u64) -> JoinHandle<u64> {
    spindle::spawn(async move {
        if n <= FIB_PAR_CUTOFF {
            return kernels::fib(n);
        }
        let (a, b) = (fib_par(n - 1), fib_par(n - 2));
        a.await.unwrap() + b.await.unwrap()
    })
}

/// The spawn_1m family (one batch of `n`) and spawn_nursery (batches of
/// 1000), as Go's `spawnBatches`: each batch is a scope whose children each
/// write their own slot, summed once the scope has returned (every child
/// joined).
async fn spawn_batches(n: u64, batch: u64) -> u64 {
    // 'static for 'static children without a reference count each (an `Arc`
    // clone per child would bounce its count between the workers, and the
    // row would time that); the process ends with the row.
    let slots: &'static [AtomicU64] =
        Box::leak((0..batch.min(n)).map(|_| AtomicU64::new(0)).collect());
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let part = &slots[..batch.min(n - start) as usize];
        spindle::scope(|s| async move {
            for (j, slot) in (start..).zip(part) {
                drop(s.spawn(async move { slot.store(j, Ordering::Relaxed) }));
            }
        })
        .await
        .unwrap();
        sum += part.iter().map(|v| v.load(Ordering::Relaxed)).sum::<u64>();
        start += batch;
    }
    sum
}

/// async_compute: task i sums i + j for j < 100, yielding once at j = 50.
async fn async_compute(n: u64) -> u64 {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            spindle::spawn(async move {
                let mut sum = kernels::compute_steps(i, 0..ASYNC_COMPUTE_YIELD_AT);
                spindle::yield_now().await;
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
            .map(|i| spindle::spawn(async move { i }))
            .collect();
        for r in spindle::join_all(batch).await {
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
        sum += spindle::spawn(async move { i }).await.unwrap();
    }
    sum
}

/// live_1m: n tasks each parked on its own oneshot; once the last has
/// started (counted by [`ALIVE`]; the last one signals on a oneshot), the
/// driver sends i to task i and sums what the tasks return.
async fn live(n: u64) -> u64 {
    let (all_tx, all_rx) = chan::oneshot::<()>();
    let all_tx = Arc::new(std::sync::Mutex::new(Some(all_tx)));
    let mut senders = Vec::with_capacity(n as usize);
    let mut handles = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (tx, rx) = chan::oneshot::<u64>();
        let all_tx = all_tx.clone();
        senders.push(tx);
        handles.push(spindle::spawn(async move {
            if ALIVE.enter() == n {
                if let Some(tx) = all_tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
            }
            let i = rx.await.unwrap();
            ALIVE.leave();
            i
        }));
    }
    if n > 0 {
        all_rx.await.unwrap();
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

/// sleep_1m: n tasks, task i sleeping `1 + (i mod 100)` ms on spindle's
/// timer wheel (`spindle::time::sleep`), noting its wake in [`LATENESS`],
/// and returning i; the driver joins all.
async fn sleep_all(n: u64) -> u64 {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            spindle::spawn(async move {
                // The sleep's own deadline, read after it fired: a copy
                // held across the await would grow every task's cell.
                let mut sleep = std::pin::pin!(spindle::time::sleep(sleep_duration(i)));
                sleep.as_mut().await;
                LATENESS.observe(
                    sleep.deadline().expect("a finite sleep").into_std(),
                    Instant::now(),
                );
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

/// fork_inline (current-thread runtime): fork a child returning i, await it
/// at once (`spindle::fork`: run inline, on this stack), drop its handle;
/// repeat.
async fn fork_inline(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += spindle::fork(async move { i }).await.unwrap();
    }
    sum
}

/// fork_pool: W driver tasks; driver d forks the children i ≡ d (mod W) one
/// at a time (`spindle::fork`), awaiting each.
async fn fork_pool(n: u64, workers: usize) -> u64 {
    let drivers: Vec<_> = (0..workers as u64)
        .map(|d| {
            spindle::spawn(async move {
                let mut sum = 0;
                for i in (d..n).step_by(workers) {
                    sum += spindle::fork(async move { i }).await.unwrap();
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
            spindle::spawn(async move {
                let mut sum = 0;
                for _ in 0..runs {
                    let mut stage = spindle::spawn(async { 1u64 });
                    for _ in 1..depth {
                        let prev = stage;
                        stage = spindle::spawn(async move { prev.await.unwrap() + 1 });
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

/// blocking_pressure: 4·W tasks each call `std::thread::sleep(1 ms)` n times
/// inside the task; a heartbeat task ticks on a 1 ms `spindle::time`
/// interval (missed ticks skipped) and counts its ticks until they finish.
async fn blocking_pressure(n: u64, workers: usize) -> Measured {
    use spindle_peer_common::catalogue::{blockers, BLOCKING_SLEEP};
    let start = Instant::now();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let heartbeat = {
        let done = done.clone();
        spindle::spawn(async move {
            let mut beats = 0u64;
            let mut ticks =
                spindle::time::interval_at((start + BLOCKING_SLEEP).into(), BLOCKING_SLEEP);
            while !done.load(Ordering::Acquire) {
                ticks.tick().await;
                beats += 1;
            }
            beats
        })
    };
    let handles: Vec<_> = (0..blockers(workers))
        .map(|_| {
            spindle::spawn(async move {
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
    for h in handles {
        calls += h.await.unwrap();
    }
    done.store(true, Ordering::Release);
    let beats = heartbeat.await.unwrap();
    let elapsed = start.elapsed();
    Measured::new(calls, elapsed)
        .with("beats", beats)
        .with("due", elapsed.as_millis())
}
