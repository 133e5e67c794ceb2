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
//! - tasks (skynet, spawn_*, async_trivial, spawn_nursery, block_all,
//!   spawn_sequential, pipelines): `monoio::spawn` and awaiting its
//!   `JoinHandle`, the only join monoio has. skynet gives the root's ten
//!   subtrees to the cores in turn; below the root every node spawns its
//!   children on its own core. The spawn rows give core `c` the tasks `c,
//!   c + W, …`; the pipeline rows give it the chains `c, c + W, …`.
//! - channels (chan_single, chan_buffered, pingpong): `local-sync`'s bounded
//!   `mpsc`, the single-thread channel of monoio's authors, between tasks on
//!   one core: thread-per-core code keeps a channel's two ends on one core.
//!   So these rows measure no cross-core hand-off, unlike the work-stealing
//!   peers' (the catalogue says so).
//! - timers (sleep_1m): `monoio::time::sleep`, each core sleeping its share.
//! - compute rows (fib, sum_squares, primes): the kernel in a task on one
//!   core.
//!
//! The other rows are not written for this peer (`support` says why for
//! each).

use monoio::{FusionDriver, RuntimeBuilder};
use spindle_peer_common::catalogue::{
    chain_share, pipeline_shape, sleep_duration, strided, BLOCK_ALL_BATCH, CHAN_CAPACITY,
    NURSERY_BATCH, PINGPONG_CAPACITY, SKYNET_FANOUT,
};
use spindle_peer_common::kernels;
use spindle_peer_common::witness::Lateness;
use spindle_peer_common::{run_main, Measured, Request, Support};
use std::future::Future;
use std::sync::{mpsc, Barrier};
use std::time::Instant;

/// sleep_1m's witness: the earliest wake relative to its deadline, over
/// every core.
static LATENESS: Lateness = Lateness::new();

fn main() {
    run_main("monoio", support, run);
}

/// The rows this peer runs, and why it leaves the others.
fn support(workload: &str) -> Support {
    match workload {
        "skynet" | "spawn_10k" | "spawn_100k" | "spawn_1m" | "async_trivial" | "spawn_nursery"
        | "block_all" | "spawn_sequential" | "chan_single" | "chan_buffered" | "pingpong"
        | "sleep_1m" | "fib" | "sum_squares" | "primes" => Ok(()),
        w if pipeline_shape(w).is_some() => Ok(()),
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
        _ => Err(
            "not written for the monoio peer: it covers the spawn, skynet, pipeline, \
             timer, one-core channel and compute rows",
        ),
    }
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    match req.workload.as_str() {
        "skynet" => on_cores(w, |core| skynet_share(core, w, n)),
        "spawn_10k" | "spawn_100k" | "spawn_1m" | "async_trivial" => on_cores(w, |core| {
            spawn_all(strided(core as u64, w as u64, n).collect())
        }),
        "spawn_nursery" => on_cores(w, |core| batches(core, w, n, NURSERY_BATCH)),
        "block_all" => on_cores(w, |core| batches(core, w, n, BLOCK_ALL_BATCH)),
        "spawn_sequential" => on_cores(1, |_| spawn_sequential(n)),
        "chan_single" => on_cores(1, |_| chan_single(n)),
        "chan_buffered" => on_cores(1, |_| producer_consumer(n, CHAN_CAPACITY)),
        "pingpong" => on_cores(1, |_| pingpong(n)),
        "sleep_1m" => on_cores(w, |core| {
            sleep_share(strided(core as u64, w as u64, n).collect())
        })
        .with("min_lateness_ns", LATENESS.min_ns()),
        "fib" => on_cores(1, |_| in_task(move || kernels::fib(n))),
        "sum_squares" => on_cores(1, |_| in_task(move || kernels::sum_squares(n))),
        "primes" => on_cores(1, |_| in_task(move || kernels::count_primes(n))),
        row if pipeline_shape(row).is_some() => {
            let (chains, depth) = pipeline_shape(row).expect("a pipeline row");
            on_cores(w, |core| pipelines(core as u64, w as u64, n, chains, depth))
        }
        other => unreachable!("`{other}` is listed unsupported"),
    }
}

/// Runs `share(c)` on core `c` for `c in 0..cores`, each core a thread with
/// its own runtime, and sums the shares. Each core notes when it left the
/// barrier that waits for every runtime to be built, and when its share
/// was done; the timed region runs from the first start to the last end.
/// (Taken on the main thread, the start could come after a share had
/// already run: the main thread may wait for a CPU once the barrier opens.)
fn on_cores<F, Fut>(cores: usize, share: F) -> Measured
where
    F: Fn(usize) -> Fut + Sync,
    Fut: Future<Output = u64>,
{
    let start_line = Barrier::new(cores);
    let (done, shares) = mpsc::channel::<Share>();
    std::thread::scope(|s| {
        for core in 0..cores {
            let (share, start_line, done) = (&share, &start_line, done.clone());
            s.spawn(move || {
                let mut rt = RuntimeBuilder::<FusionDriver>::new()
                    .enable_timer()
                    .build()
                    .expect("a monoio runtime");
                start_line.wait();
                let start = Instant::now();
                let sum = rt.block_on(share(core));
                let end = Instant::now();
                done.send(Share { sum, start, end })
                    .expect("the main thread waits for every share");
            });
        }
        drop(done);
        let shares: Vec<Share> = shares.iter().collect();
        assert_eq!(shares.len(), cores, "every core sends its share");
        let start = shares.iter().map(|s| s.start).min().expect("a core");
        let end = shares.iter().map(|s| s.end).max().expect("a core");
        Measured::new(shares.iter().map(|s| s.sum).sum::<u64>(), end - start)
    })
}

/// What one core reports: its share's result and when it ran.
struct Share {
    sum: u64,
    start: Instant,
    end: Instant,
}

/// A compute kernel in a task of its own.
async fn in_task(f: impl FnOnce() -> u64 + 'static) -> u64 {
    monoio::spawn(async move { f() }).await
}

/// skynet on core `core` of `cores`: the root's subtrees `core, core +
/// cores, …` (all of the tree on core 0 when it is a single leaf).
async fn skynet_share(core: usize, cores: usize, n: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let child = n / SKYNET_FANOUT;
    let subtrees: Vec<_> = (core as u64..SKYNET_FANOUT)
        .step_by(cores)
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
async fn spawn_all(share: Vec<u64>) -> u64 {
    let tasks: Vec<_> = share
        .into_iter()
        .map(|i| monoio::spawn(async move { i }))
        .collect();
    let mut sum = 0;
    for t in tasks {
        sum += t.await;
    }
    sum
}

/// block_all (batches of 10) and spawn_nursery (batches of 1000): the
/// core's share in batches, each spawned and awaited before the next.
async fn batches(core: usize, cores: usize, n: u64, size: u64) -> u64 {
    let share: Vec<u64> = strided(core as u64, cores as u64, n).collect();
    let mut sum = 0;
    for batch in share.chunks(size as usize) {
        sum += spawn_all(batch.to_vec()).await;
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

/// chan_single: one task sends a capacity's worth into its own channel,
/// then receives it, until n values have gone through.
async fn chan_single(n: u64) -> u64 {
    monoio::spawn(async move {
        let (tx, mut rx) = local_sync::mpsc::bounded::channel::<u64>(CHAN_CAPACITY);
        let (mut sum, mut next) = (0, 0);
        while next < n {
            let end = (next + CHAN_CAPACITY as u64).min(n);
            for v in next..end {
                tx.send(v).await.expect("the receiver is alive");
            }
            for _ in next..end {
                sum += rx.recv().await.expect("a value was sent");
            }
            next = end;
        }
        sum
    })
    .await
}

/// chan_buffered: a producer task sends `0..n` into a bounded channel, a
/// consumer task sums what it receives until the channel closes.
async fn producer_consumer(n: u64, cap: usize) -> u64 {
    let (tx, mut rx) = local_sync::mpsc::bounded::channel::<u64>(cap);
    let consumer = monoio::spawn(async move {
        let mut sum = 0;
        while let Some(v) = rx.recv().await {
            sum += v;
        }
        sum
    });
    let producer = monoio::spawn(async move {
        for i in 0..n {
            tx.send(i).await.expect("the consumer is alive");
        }
    });
    producer.await;
    consumer.await
}

/// pingpong: two tasks bounce `k` over two capacity-1 channels, n times.
async fn pingpong(n: u64) -> u64 {
    let (ping_tx, mut ping_rx) = local_sync::mpsc::bounded::channel::<u64>(PINGPONG_CAPACITY);
    let (pong_tx, mut pong_rx) = local_sync::mpsc::bounded::channel::<u64>(PINGPONG_CAPACITY);
    let ponger = monoio::spawn(async move {
        while let Some(k) = ping_rx.recv().await {
            pong_tx.send(k).await.expect("the pinger is alive");
        }
    });
    let pinger = monoio::spawn(async move {
        let mut sum = 0;
        for k in 0..n {
            ping_tx.send(k).await.expect("the ponger is alive");
            sum += pong_rx.recv().await.expect("the ponger answers");
        }
        sum
    });
    let sum = pinger.await;
    ponger.await;
    sum
}

/// sleep_1m on one core: a task per `i` of the share, sleeping `1 + (i mod
/// 100)` ms and returning `i`; each records how late it woke against the
/// instant it started sleeping plus its duration.
async fn sleep_share(share: Vec<u64>) -> u64 {
    let tasks: Vec<_> = share
        .into_iter()
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
