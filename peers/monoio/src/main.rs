//! Benchmark peer: monoio (thread-per-core, io_uring).
//!
//! Runtime: W threads, each running a monoio runtime of its own
//! (`RuntimeBuilder::<FusionDriver>`: io_uring, or epoll where the kernel
//! refuses io_uring; timers on), as monoio's docs start one per core. monoio
//! has no work stealing and no way to spawn onto another core: a task stays
//! on the core that spawned it. So each row is split over the cores the
//! way monoio's users split work (each core serves its own share, as each
//! serves its own connections), and the row's result is the sum of the
//! cores' results. A row whose work is one chain or one pair of tasks runs
//! on one core.
//!
//! Timing ([`on_cores`]): each core builds its runtime, then all wait at one
//! barrier; the timed region runs from the first core's start after the
//! barrier to the last core's end. Building and dropping the runtimes are
//! outside it.
//!
//! Primitives by group of rows:
//! - tasks (skynet, spawn_*, async_*, spawn_nursery, block_all,
//!   spawn_sequential, live_1m, pipelines): `monoio::spawn` and awaiting
//!   its `JoinHandle`, the only join monoio has. skynet gives the root's
//!   ten subtrees to the cores in turn; below the root every node spawns
//!   its children on its own core. The task rows give core `c` the tasks
//!   `c, c + W, …`; the pipeline rows give it the chains `c, c + W, …`.
//!   async_compute yields through a two-poll future (monoio has no
//!   `yield_now`); live_1m parks each task on a `local-sync` oneshot, and
//!   each core, once its tasks have all started, waits for the other cores
//!   at a `std` barrier before it answers them, so that all n are alive at
//!   once.
//! - channels (`chan_rows.rs`: chan_*, pingpong, select_k, payload_B):
//!   `local-sync`'s bounded `mpsc`, the single-thread channel of monoio's
//!   authors, between tasks on one core, and `monoio::select!`:
//!   thread-per-core code keeps a channel's two ends on one core. So these
//!   rows measure no cross-core hand-off, unlike the work-stealing peers'
//!   (the catalogue says so). chan_unbuffered uses capacity 1 (no
//!   rendezvous mode), as the Tokio and smol peers do.
//! - timers (sleep_1m): `monoio::time::sleep`, each core sleeping its share.
//! - compute rows (fib, sum_squares, primes): the kernel in a task on one
//!   core.
//!
//! The other rows are not written for this peer (`support` says why for
//! each).

mod chan_rows;

use chan_rows::{chan_single, payload_row, pingpong, producer_consumer, select};
use monoio::{FusionDriver, RuntimeBuilder};
use spindle_peer_common::catalogue::{
    chain_share, payload_bytes, pipeline_shape, select_arity, sleep_duration, strided,
    ASYNC_COMPUTE_STEPS, ASYNC_COMPUTE_YIELD_AT, BLOCK_ALL_BATCH, CHAN_CAPACITY, NURSERY_BATCH,
    SKYNET_FANOUT, SYNC_ROWS,
};
use spindle_peer_common::kernels;
use spindle_peer_common::witness::{Alive, Lateness};
use spindle_peer_common::{run_main, Measured, Request, Support};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{mpsc, Barrier};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// sleep_1m's witness: the earliest wake relative to its deadline, over
/// every core.
static LATENESS: Lateness = Lateness::new();
/// live_1m's witness: the tasks alive now and at most, over every core.
static ALIVE: Alive = Alive::new();

fn main() {
    run_main("monoio", support, run);
}

/// The rows this peer runs, and why it leaves the others.
fn support(workload: &str) -> Support {
    match workload {
        "skynet_fork" | "fork_inline" | "fork_pool" => {
            Err("monoio has no fork-join API whose join runs the child inline")
        }
        "fib_par" => Err(
            "fib_par's uneven tree is balanced by stealing; monoio cannot move a subtree to \
             another core",
        ),
        "blocking_pressure" => Err(
            "a task that blocks its core blocks every task of that core: monoio has no other \
             worker to take them, and the row measures exactly that hand-over",
        ),
        "fanout" => Err(
            "local-sync has no channel with many receivers, and one producer's messages reach \
             other cores only through a thread-safe channel, outside thread-per-core code",
        ),
        "joinset_drain" => Err("monoio has no set of tasks to join in finish order"),
        w if w.starts_with("fizzbuzz_") || SYNC_ROWS.contains(&w) => Err(
            "not written for the monoio peer yet: it covers the task, pipeline, timer, \
             one-core channel and compute rows",
        ),
        _ => Ok(()),
    }
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    let share = |core: usize| strided(core as u64, w as u64, n);
    match req.workload.as_str() {
        "skynet" => summed(w, |core| skynet_share(core, w, n)),
        "spawn_10k" | "spawn_100k" | "spawn_1m" | "async_trivial" => {
            summed(w, |core| spawn_all(share(core)))
        }
        "async_compute" => summed(w, |core| async_compute(share(core))),
        "spawn_nursery" => summed(w, |core| batches(share(core), NURSERY_BATCH)),
        "block_all" => summed(w, |core| batches(share(core), BLOCK_ALL_BATCH)),
        "spawn_sequential" => summed(1, |_| spawn_sequential(n)),
        "live_1m" => {
            let all_started = Barrier::new(w);
            summed(w, |core| live_share(share(core).collect(), &all_started))
                .with("peak_alive", ALIVE.peak())
        }
        "sleep_1m" => {
            summed(w, |core| sleep_share(share(core))).with("min_lateness_ns", LATENESS.min_ns())
        }
        "chan_single" => summed(1, |_| chan_single(n)),
        "chan_buffered" => summed(1, |_| producer_consumer(n, CHAN_CAPACITY, |i| i, |&v| v)),
        // local-sync has no rendezvous channel: capacity 1 is the nearest,
        // as Tokio's and smol's peers use.
        "chan_unbuffered" => summed(1, |_| producer_consumer(n, 1, |i| i, |&v| v)),
        "pingpong" => summed(1, |_| pingpong(n)),
        "fib" => summed(1, |_| in_task(move || kernels::fib(n))),
        "sum_squares" => summed(1, |_| in_task(move || kernels::sum_squares(n))),
        "primes" => summed(1, |_| in_task(move || kernels::count_primes(n))),
        row if payload_bytes(row).is_some() => {
            let bytes = payload_bytes(row).expect("a payload row");
            summed(1, |_| payload_row(bytes, n))
        }
        row if select_arity(row).is_some() => {
            let k = select_arity(row).expect("a select row");
            let (elapsed, mut tally) = on_cores(1, |_| select(n, k));
            tally.pop().expect("one core").measured(elapsed)
        }
        row => {
            let (chains, depth) = pipeline_shape(row).expect("a catalogue row");
            summed(w, |core| pipelines(core as u64, w as u64, n, chains, depth))
        }
    }
}

/// Runs `share(c)` on core `c` for `c in 0..cores`, each core a thread with
/// its own runtime, and sums the shares ([`on_cores`]).
fn summed<F, Fut>(cores: usize, share: F) -> Measured
where
    F: Fn(usize) -> Fut + Sync,
    Fut: Future<Output = u64>,
{
    let (elapsed, sums) = on_cores(cores, share);
    Measured::new(sums.iter().sum::<u64>(), elapsed)
}

/// Runs `share(c)` on core `c` for `c in 0..cores`, each core a thread with
/// its own runtime; returns the timed region and each core's result. Each
/// core notes when it left the barrier that waits for every runtime to be
/// built, and when its share was done; the timed region runs from the
/// first start to the last end. (Taken on the main thread, the start could
/// come after a share had already run: the main thread may wait for a CPU
/// once the barrier opens.)
fn on_cores<F, Fut, R>(cores: usize, share: F) -> (Duration, Vec<R>)
where
    F: Fn(usize) -> Fut + Sync,
    Fut: Future<Output = R>,
    R: Send,
{
    let start_line = Barrier::new(cores);
    let (done, shares) = mpsc::channel::<CoreRun<R>>();
    std::thread::scope(|s| {
        for core in 0..cores {
            let (share, start_line, done) = (&share, &start_line, done.clone());
            s.spawn(move || {
                let mut rt = RuntimeBuilder::<FusionDriver>::new()
                    .enable_timer()
                    .build()
                    .expect("a monoio runtime");
                // Built before the barrier: a share's own set-up (its list
                // of indices) is not the row's work.
                let share = share(core);
                start_line.wait();
                let start = Instant::now();
                let result = rt.block_on(share);
                let end = Instant::now();
                done.send(CoreRun { result, start, end })
                    .expect("the main thread waits for every share");
            });
        }
        drop(done);
        let shares: Vec<CoreRun<R>> = shares.iter().collect();
        assert_eq!(shares.len(), cores, "every core sends its share");
        let start = shares.iter().map(|s| s.start).min().expect("a core");
        let end = shares.iter().map(|s| s.end).max().expect("a core");
        (end - start, shares.into_iter().map(|s| s.result).collect())
    })
}

/// What one core reports: its share's result and when it ran.
struct CoreRun<R> {
    result: R,
    start: Instant,
    end: Instant,
}

/// A compute kernel in a task of its own.
async fn in_task(f: impl FnOnce() -> u64 + 'static) -> u64 {
    monoio::spawn(async move { f() }).await
}

/// skynet on core `core` of `cores`: the root's subtrees `core, core +
/// cores, …` (a tree of one leaf sums to its id, 0, on every core).
async fn skynet_share(core: usize, cores: usize, n: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let child = n / SKYNET_FANOUT;
    let subtrees: Vec<_> = strided(core as u64, cores as u64, SKYNET_FANOUT)
        .map(|c| skynet(c * child, child))
        .collect();
    let mut sum = 0;
    for t in subtrees {
        sum += t.await;
    }
    sum
}

/// skynet below the root: a task per node, spawning its ten children on
/// its own core and summing their `JoinHandle`s (returning the handle
/// keeps the recursion unboxed).
fn skynet(id: u64, size: u64) -> monoio::task::JoinHandle<u64> {
    monoio::spawn(async move {
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

/// async_trivial and spawn_*: spawns a task returning `i` for each `i` of
/// the core's share, then awaits them all.
async fn spawn_all(share: impl Iterator<Item = u64>) -> u64 {
    let tasks: Vec<_> = share.map(|i| monoio::spawn(async move { i })).collect();
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    sum
}

/// block_all (batches of 10) and spawn_nursery (batches of 1000): the
/// core's share in batches, each spawned and awaited before the next.
async fn batches(share: impl Iterator<Item = u64>, size: u64) -> u64 {
    let mut share = share.peekable();
    let mut sum = 0;
    while share.peek().is_some() {
        sum += spawn_all(share.by_ref().take(size as usize)).await;
    }
    sum
}

/// async_compute on one core: task i of the share sums i + j for j < 100,
/// yielding once at j = 50.
async fn async_compute(share: impl Iterator<Item = u64>) -> u64 {
    let tasks: Vec<_> = share
        .map(|i| {
            monoio::spawn(async move {
                let mut sum = kernels::compute_steps(i, 0..ASYNC_COMPUTE_YIELD_AT);
                YieldNow(false).await;
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

/// Gives the core to the other ready tasks once: wakes its own task and
/// returns `Pending` the first time, as every executor's `yield_now`
/// (monoio has none of its own).
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// live_1m on one core: a task per `i` of the share, each counting itself
/// alive and parking on its own `local-sync` oneshot. Once all of this
/// core's tasks have started, the core waits at `all_started` for the other
/// cores' (blocking its thread, where every task is parked), then sends
/// each task its `i` and sums what they return.
async fn live_share(share: Vec<u64>, all_started: &Barrier) -> u64 {
    let total = share.len();
    let started = Rc::new(Cell::new(0usize));
    let (ready_tx, ready_rx) = local_sync::oneshot::channel::<()>();
    let ready_tx = Rc::new(Cell::new(Some(ready_tx)));
    let mut senders = Vec::with_capacity(total);
    let mut tasks = Vec::with_capacity(total);
    for _ in 0..total {
        let (tx, rx) = local_sync::oneshot::channel::<u64>();
        let (started, ready_tx) = (started.clone(), ready_tx.clone());
        senders.push(tx);
        tasks.push(monoio::spawn(async move {
            ALIVE.enter();
            started.set(started.get() + 1);
            if started.get() == total {
                let _ = ready_tx.take().expect("sent once").send(());
            }
            let v = rx.await.expect("the driver sends");
            ALIVE.leave();
            v
        }));
    }
    if total > 0 {
        ready_rx.await.expect("the last task signals");
    }
    all_started.wait();
    for (tx, i) in senders.into_iter().zip(share) {
        tx.send(i).expect("the task waits");
    }
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    sum
}

/// spawn_sequential: spawn one task, await it, repeat.
async fn spawn_sequential(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += monoio::spawn(async move { i }).await;
    }
    sum
}

/// pipeline_CxD on core `core` of `cores`: the chains `core, core + cores,
/// …`, each a task running its share of the n executions one after
/// another; an execution is D stage tasks, each spawned with the previous
/// stage's handle, awaiting it and adding one (stage 0 returns 1).
async fn pipelines(core: u64, cores: u64, n: u64, chains: u64, depth: u64) -> u64 {
    let chains: Vec<_> = strided(core, cores, chains)
        .map(|c| {
            let runs = chain_share(n, chains, c);
            monoio::spawn(async move {
                let mut sum = 0;
                for _ in 0..runs {
                    let mut stage = monoio::spawn(async { 1u64 });
                    for _ in 1..depth {
                        let prev = stage;
                        stage = monoio::spawn(async move { prev.await + 1 });
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

/// sleep_1m on one core: a task per `i` of the share, sleeping `1 + (i mod
/// 100)` ms and returning `i`; each records how late it woke against the
/// instant it started sleeping plus its duration.
async fn sleep_share(share: impl Iterator<Item = u64>) -> u64 {
    let tasks: Vec<_> = share
        .map(|i| {
            monoio::spawn(async move {
                let d = sleep_duration(i);
                let slept_at = Instant::now();
                monoio::time::sleep(d).await;
                LATENESS.observe(slept_at + d, Instant::now());
                i
            })
        })
        .collect();
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    sum
}
