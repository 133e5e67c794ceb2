//! Benchmark peer: May (stackful coroutines).
//!
//! Runtime: `may::config().set_workers(W)` before the first coroutine, so
//! that May starts W scheduler threads (one for fork_inline, May's
//! single-threaded scheduler), with May's other defaults: 32 KiB stacks
//! (0x1000 words; no row recurses deeply enough to need more, and a
//! smaller one would not help the million-coroutine rows: see Limits), a
//! pool of 1000 recycled coroutines, workers pinned to cores. The
//! driver of every row is a coroutine (`go!`), joined from the main thread;
//! the timed region is inside it, so the scheduler's start-up (on the first
//! `go!`) is outside it. May never stops its threads: the process exits.
//!
//! Primitives by group of rows:
//! - coroutines (skynet, fib_par, spawn_*, async_*, block_all, fork_*,
//!   pipelines): `go!` and `JoinHandle::join`, May's spawn and join.
//!   spawn_nursery uses May's structured scope, `coroutine::scope` with
//!   `go!(scope, ..)`, each coroutine writing its value to its own slot of
//!   the batch, summed after the scope ends (the row's spindle and Go form).
//!   async_compute yields with `coroutine::yield_now`.
//! - channels (`chan_rows.rs`): `may::sync::mpsc` (`mpmc` for fanout). May's channels are
//!   unbounded: a row whose bound can be reached (chan_buffered,
//!   chan_unbuffered, payload_B, select_k, fanout, the fizzbuzz links) uses
//!   `bounded`, May's channel plus a May `Semphore` of free slots (a send
//!   takes one, parking the coroutine while there is none; a receive gives
//!   one back), May's own primitives composed as its channels compose them.
//!   chan_unbuffered has capacity 1 (no rendezvous), as on Tokio. pingpong
//!   and chan_single use plain channels: by construction they never hold more
//!   than the row's bound (one message in flight; 1000 sent, then received).
//! - select_k: a `cqueue` (what `may::select!` is built on) with one
//!   long-lived select coroutine per channel, each receiving in a loop and
//!   reporting the value to the consumer's `cqueue.poll` (`EventSender::send`
//!   carries it as the event's `extra`); a closed channel ends its select
//!   coroutine and `poll` reports `Finished` once all have ended. This is
//!   the pattern of May's `cqueue` example; `select!` itself spawns and
//!   cancels k coroutines per message and is meant for one-shot selects.
//! - timers: `coroutine::sleep`. May has no ticker: the blocking_pressure
//!   heartbeat sleeps to the next 1 ms grid point (missed ticks dropped).
//!   May wakes a sleeping coroutine by running it on its timer thread until
//!   it next blocks, so the heartbeat (and the tail of each sleep_1m
//!   coroutine) runs there, not on a worker.
//! - blocking_pressure blocks inside the coroutines (`std::thread::sleep`) on
//!   purpose: the row measures how the scheduler copes with coroutines that
//!   block its threads (May's caveats say not to; that is the point).
//!
//! Limits: May maps every coroutine stack separately (`mmap`, then a guard
//! page by `mprotect`): two memory mappings per live coroutine, whatever
//! its stack size. With Linux's default `vm.max_map_count` of 65530 at most
//! about 32,000 coroutines can be alive at once. A row that can hold more
//! (live_1m; skynet's tree and the spawn-all rows, whose coroutines pile up
//! faster than two workers finish them) declines at a size whose bound
//! passes the limit (exit 3, naming it) instead of failing midway with
//! May's "failed to alloc sys stack" (to which the peer adds the cause).
//! Raising `vm.max_map_count` lifts the limit; a smaller stack would not,
//! and would save little memory: a live coroutine touches the bottom page
//! of its stack (May's overflow sentinel) and its top page whatever the
//! size (live_1m measured about 11 KiB of RSS per coroutine at 32 KiB).
//!
//! - the lock rows: May's `Mutex`, `RwLock` and `Semphore` (`sync_rows.rs`).
//!
//! Unsupported: skynet_fork (no fork-join API whose join runs the child
//! inline: a spawned coroutine always runs concurrently, the skynet row);
//! notify_pingpong (no notification primitive) and joinset_drain (no
//! JoinSet; n live coroutines pass the map limit below).

mod chan_rows;
mod sync_rows;

use chan_rows::{chan_single, fanout, fizzbuzz, payload_row, pingpong, producer_consumer, select};

use may::coroutine::{self, JoinHandle};
use may::go;
use may::sync::mpsc;
use spindle_peer_common::catalogue::{
    blockers, chain_share, payload_bytes, pipeline_shape, select_arity, sleep_duration,
    ASYNC_COMPUTE_STEPS, ASYNC_COMPUTE_YIELD_AT, BLOCKING_SLEEP, BLOCK_ALL_BATCH, CHAN_CAPACITY,
    FIB_PAR_CUTOFF, NURSERY_BATCH, SKYNET_FANOUT,
};
use spindle_peer_common::kernels;
use spindle_peer_common::witness::{Alive, Lateness};
use spindle_peer_common::{run_main, unsupported, Measured, Request, Support};
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// live_1m's witness: the tasks alive now and at most (a `static`, so
/// that the tasks share it without a reference count each).
static ALIVE: Alive = Alive::new();
/// sleep_1m's witness: the earliest wake relative to its deadline.
static LATENESS: Lateness = Lateness::new();

fn main() {
    // A stack May cannot map panics in `generator`; name the usual cause.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        if info
            .payload_as_str()
            .is_some_and(|m| m.contains("failed to alloc sys stack"))
        {
            eprintln!(
                "may: every live coroutine holds two memory mappings (stack and guard page); \
                 more than vm.max_map_count/2 coroutines were alive at once"
            );
        }
    }));
    run_main("may", support, run);
}

/// May expresses every row of the catalogue but the fork–join API's.
fn support(workload: &str) -> Support {
    match workload {
        "skynet_fork" => Err(
            "May has no fork-join API whose join runs the child inline: a spawned coroutine \
             always runs concurrently (the skynet row)",
        ),
        "watch_fanout" => Err("May has no latest-value channel (its channels deliver every value)"),
        "notify_pingpong" => Err(
            "May has no notification primitive: a coroutine parks on a channel (the pingpong \
             row) or a Blocker",
        ),
        "joinset_drain" => Err(
            "May has no JoinSet, and n coroutines alive at once pass vm.max_map_count at the \
             row's sizes (see Limits)",
        ),
        _ => Ok(()),
    }
}

fn run(req: &Request) -> Measured {
    let (n, w) = (req.size, req.workers);
    if let Some(live) = coroutines_alive_at_most(&req.workload, n) {
        check_map_count(&req.workload, live);
    }
    // fork_inline: one scheduler thread, May's single-threaded runtime.
    let threads = if req.workload == "fork_inline" { 1 } else { w };
    may::config().set_workers(threads);
    if payload_bytes(&req.workload).is_some() {
        // Messages of up to 1 KiB by value: an unoptimised build keeps
        // several copies of one in a coroutine's frame, past the default
        // 32 KiB stack. A few coroutines run these rows, so the size costs
        // nothing measurable.
        may::config().set_stack_size(PAYLOAD_STACK_WORDS);
    }
    let name = req.workload.clone();
    let driver = go!(move || match name.as_str() {
        "skynet" => timed(|| join(skynet(0, n))),
        "pingpong" => timed(|| pingpong(n)),
        "fanout" => timed(|| fanout(n)),
        "fib" => timed(|| join(go!(move || kernels::fib(n)))),
        "fib_par" => timed(|| join(fib_par(n))),
        "sum_squares" => timed(|| join(go!(move || kernels::sum_squares(n)))),
        "primes" => timed(|| join(go!(move || kernels::count_primes(n)))),
        "chan_single" => timed(|| chan_single(n)),
        "chan_buffered" => timed(|| producer_consumer(n, CHAN_CAPACITY, |i| i, |&v| v)),
        // No rendezvous channel in May: capacity 1 is the nearest.
        "chan_unbuffered" => timed(|| producer_consumer(n, 1, |i| i, |&v| v)),
        "async_trivial" | "spawn_10k" | "spawn_100k" | "spawn_1m" => timed(|| spawn_all(n)),
        "async_compute" => timed(|| async_compute(n)),
        "block_all" => timed(|| block_all(n)),
        "blocking_pressure" => blocking_pressure(n, w),
        "spawn_nursery" => timed(|| spawn_nursery(n)),
        // fork_inline: the same spawn-and-join loop, on the one-thread scheduler.
        "spawn_sequential" | "fork_inline" => timed(|| spawn_sequential(n)),
        "live_1m" => live(n),
        "sleep_1m" => sleep_all(n),
        "fizzbuzz_pipeline" => timed(|| fizzbuzz(n, false)),
        "fizzbuzz_pipeline_zc" => timed(|| fizzbuzz(n, true)),
        "fork_pool" => timed(|| fork_pool(n, w)),
        "mutex_uncontended" => timed(|| sync_rows::mutex_uncontended(n)),
        "mutex_contended" => timed(|| sync_rows::mutex_contended(n, w)),
        "rwlock_read_heavy" => timed(|| sync_rows::rwlock_read_heavy(n, w)),
        "semaphore_limit" => {
            timed(|| sync_rows::semaphore_limit(n)).with("peak_holders", sync_rows::HOLDERS.peak())
        }
        w if payload_bytes(w).is_some() => payload_row(payload_bytes(w).unwrap(), n),
        w if select_arity(w).is_some() => select(n, select_arity(w).unwrap()),
        w => {
            let (c, d) = pipeline_shape(w).expect("a catalogue row");
            timed(|| pipeline(n, c, d))
        }
    });
    driver
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The payload rows' coroutine stack, in words (256 KiB).
const PAYLOAD_STACK_WORDS: usize = 0x8000;

/// How many coroutines a row may hold alive at once, where that can pass
/// the memory-map limit: every task of the spawn-all rows (the driver
/// spawns faster than two workers finish them), every node of skynet's
/// tree.
fn coroutines_alive_at_most(workload: &str, n: u64) -> Option<u64> {
    match workload {
        "live_1m" | "async_trivial" | "async_compute" | "spawn_10k" | "spawn_100k" | "spawn_1m"
        | "sleep_1m" => Some(n),
        "skynet" => Some(n + n / 9),
        _ => None,
    }
}

/// May maps each coroutine's stack as two memory mappings (the stack and
/// its guard page), so the kernel's `vm.max_map_count` bounds the
/// coroutines alive at once. A row that could pass it says so (exit 3)
/// instead of failing midway.
fn check_map_count(workload: &str, n: u64) {
    const SPARE: u64 = 8_192; // May's pool of 1000 stacks, libraries, heap
    let Some(limit) = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    else {
        return;
    };
    if 2 * n + SPARE > limit {
        unsupported(
            workload,
            &format!(
                "up to {n} live May coroutines need {} memory mappings (stack and guard page \
                 each), vm.max_map_count is {limit} (raise it: sysctl vm.max_map_count=...)",
                2 * n + SPARE
            ),
        );
    }
}

/// Runs `f` on the monotonic clock: the timed region of every row.
fn timed<R: Display>(f: impl FnOnce() -> R) -> Measured {
    let start = Instant::now();
    let r = f();
    Measured::new(r, start.elapsed())
}

/// Joins a coroutine, re-raising its panic.
fn join<T>(h: JoinHandle<T>) -> T {
    h.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// skynet: a coroutine per node; a parent spawns its 10 children and sums
/// their joins.
fn skynet(id: u64, size: u64) -> JoinHandle<u64> {
    go!(move || {
        if size == 1 {
            return id;
        }
        let child = size / SKYNET_FANOUT;
        let children: Vec<_> = (0..SKYNET_FANOUT)
            .map(|c| skynet(id + c * child, child))
            .collect();
        children.into_iter().map(join).sum()
    })
}

/// fib_par: both halves spawned while n > 20, plain recursion below.
fn fib_par(n: u64) -> JoinHandle<u64> {
    go!(move || {
        if n <= FIB_PAR_CUTOFF {
            return kernels::fib(n);
        }
        let (a, b) = (fib_par(n - 1), fib_par(n - 2));
        join(a) + join(b)
    })
}

/// async_trivial and spawn_*: spawn n coroutines returning i, then join all.
fn spawn_all(n: u64) -> u64 {
    let handles: Vec<_> = (0..n).map(|i| go!(move || i)).collect();
    handles.into_iter().map(join).sum()
}

/// async_compute: coroutine i sums i + j for j < 100, yielding once at 50.
fn async_compute(n: u64) -> u64 {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            go!(move || {
                let mut sum = kernels::compute_steps(i, 0..ASYNC_COMPUTE_YIELD_AT);
                coroutine::yield_now();
                sum += kernels::compute_steps(i, ASYNC_COMPUTE_YIELD_AT..ASYNC_COMPUTE_STEPS);
                sum
            })
        })
        .collect();
    handles.into_iter().map(join).sum()
}

/// block_all: batches of 10 coroutines, each batch joined before the next.
fn block_all(n: u64) -> u64 {
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK_ALL_BATCH).min(n);
        let batch: Vec<_> = (start..end).map(|i| go!(move || i)).collect();
        sum += batch.into_iter().map(join).sum::<u64>();
        start = end;
    }
    sum
}

/// spawn_nursery: a `coroutine::scope` per batch of 1000, coroutine i
/// writing i to its own slot; the slots are summed once the scope has ended.
fn spawn_nursery(n: u64) -> u64 {
    let mut slots = vec![0u64; NURSERY_BATCH as usize];
    let mut sum = 0;
    let mut start = 0;
    while start < n {
        let end = (start + NURSERY_BATCH).min(n);
        let batch = &mut slots[..(end - start) as usize];
        coroutine::scope(|s| {
            for (slot, i) in batch.iter_mut().zip(start..end) {
                go!(s, move || *slot = i);
            }
        });
        sum += batch.iter().sum::<u64>();
        start = end;
    }
    sum
}

/// spawn_sequential (and fork_inline, on one scheduler thread): spawn one
/// coroutine, join it, repeat.
fn spawn_sequential(n: u64) -> u64 {
    (0..n).map(|i| join(go!(move || i))).sum()
}

/// live_1m: n coroutines each parked on its own channel. Each counts itself
/// alive and started; the last to start signals the driver, which then
/// sends i to coroutine i and sums what the coroutines return.
fn live(n: u64) -> Measured {
    let started = Arc::new(AtomicU64::new(0));
    let (all_started, all_started_rx) = mpsc::channel::<()>();
    let start = Instant::now();
    let mut senders = Vec::with_capacity(n as usize);
    let mut handles = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (tx, rx) = mpsc::channel::<u64>();
        let (started, all_started) = (started.clone(), all_started.clone());
        senders.push(tx);
        handles.push(go!(move || {
            ALIVE.enter();
            if started.fetch_add(1, Ordering::AcqRel) + 1 == n {
                all_started.send(()).unwrap();
            }
            let v = rx.recv().unwrap();
            ALIVE.leave();
            v
        }));
    }
    drop(all_started);
    if n > 0 {
        all_started_rx.recv().unwrap();
    }
    for (i, tx) in senders.into_iter().enumerate() {
        tx.send(i as u64).unwrap();
    }
    let sum: u64 = handles.into_iter().map(join).sum();
    Measured::new(sum, start.elapsed()).with("peak_alive", ALIVE.peak())
}

/// sleep_1m: n coroutines, coroutine i sleeping `1 + (i mod 100)` ms with
/// `coroutine::sleep` and returning i; each records how late it woke against
/// the instant it started sleeping plus its duration.
fn sleep_all(n: u64) -> Measured {
    let start = Instant::now();
    let handles: Vec<_> = (0..n)
        .map(|i| {
            go!(move || {
                let d = sleep_duration(i);
                let slept_at = Instant::now();
                coroutine::sleep(d);
                LATENESS.observe(slept_at + d, Instant::now());
                i
            })
        })
        .collect();
    let sum: u64 = handles.into_iter().map(join).sum();
    Measured::new(sum, start.elapsed()).with("min_lateness_ns", LATENESS.min_ns())
}

/// blocking_pressure: 4·W coroutines each call `std::thread::sleep(1 ms)` n
/// times inside the coroutine (see the module docs). A heartbeat coroutine
/// sleeps to each next point of the 1 ms grid (missed ticks dropped) and
/// counts its ticks until the blockers are done.
fn blocking_pressure(n: u64, workers: usize) -> Measured {
    let start = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let heartbeat = {
        let done = done.clone();
        go!(move || {
            let mut beats = 0u64;
            let mut next = start + BLOCKING_SLEEP;
            while !done.load(Ordering::Acquire) {
                coroutine::sleep(next.saturating_duration_since(Instant::now()));
                beats += 1;
                let passed = start.elapsed().as_nanos() / BLOCKING_SLEEP.as_nanos();
                next = start + BLOCKING_SLEEP * (passed as u32 + 1);
            }
            beats
        })
    };
    let blockers: Vec<_> = (0..blockers(workers))
        .map(|_| {
            go!(move || {
                let mut calls = 0u64;
                for _ in 0..n {
                    std::thread::sleep(BLOCKING_SLEEP);
                    calls += 1;
                }
                calls
            })
        })
        .collect();
    let calls: u64 = blockers.into_iter().map(join).sum();
    done.store(true, Ordering::Release);
    let beats = join(heartbeat);
    let elapsed = start.elapsed();
    Measured::new(calls, elapsed)
        .with("beats", beats)
        .with("due", elapsed.as_millis())
}

/// fork_pool: W driver coroutines; driver d spawns the children i ≡ d (mod W) one at a time,
/// joining each.
fn fork_pool(n: u64, drivers: usize) -> u64 {
    let handles: Vec<_> = (0..drivers as u64)
        .map(|d| {
            go!(move || {
                (d..n)
                    .step_by(drivers)
                    .map(|i| join(go!(move || i)))
                    .sum::<u64>()
            })
        })
        .collect();
    handles.into_iter().map(join).sum()
}

/// pipeline_CxD: C chain coroutines run their share of the n executions one
/// after another; an execution spawns D stage coroutines, stage k holding
/// stage k−1's handle, joining it and returning its value + 1.
fn pipeline(n: u64, chains: u64, depth: u64) -> u64 {
    let handles: Vec<_> = (0..chains)
        .map(|c| {
            let runs = chain_share(n, chains, c);
            go!(move || {
                let mut sum = 0;
                for _ in 0..runs {
                    let mut stage = go!(|| 1u64);
                    for _ in 1..depth {
                        let prev = stage;
                        stage = go!(move || join(prev) + 1);
                    }
                    sum += join(stage);
                }
                sum
            })
        })
        .collect();
    handles.into_iter().map(join).sum()
}
