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
//! - channels: `may::sync::mpsc` (`mpmc` for fanout). May's channels are
//!   unbounded: a row whose bound can be reached (chan_buffered,
//!   chan_unbuffered, payload_B, select_k, fanout, the fizzbuzz links) uses
//!   [`bounded`], May's channel plus a May `Semphore` of free slots (a send
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

mod sync_rows;

use may::coroutine::{self, JoinHandle};
use may::cqueue;
use may::go;
use may::sync::mpsc;
use spindle_peer_common::catalogue::{
    blockers, chain_share, fizzbuzz_batch, payload_bytes, pipeline_shape, select_arity,
    sleep_duration, ASYNC_COMPUTE_STEPS, ASYNC_COMPUTE_YIELD_AT, BLOCKING_SLEEP, BLOCK_ALL_BATCH,
    CHAN_CAPACITY, FANOUT_CAPACITY, FANOUT_WORKERS, FIB_PAR_CUTOFF, NURSERY_BATCH, SKYNET_FANOUT,
};
use spindle_peer_common::kernels::{self, payload, payload_value, FizzCounts};
use spindle_peer_common::witness::{Alive, Lateness, SelectTally};
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

/// May's channels are unbounded; a bounded channel is one of them plus a
/// May `Semphore` counting its free slots.
mod bounded {
    use may::sync::{mpmc, mpsc, Semphore};
    use std::sync::Arc;

    /// The sending half: `send` parks the coroutine while the channel is full.
    pub struct Sender<S> {
        tx: S,
        slots: Arc<Semphore>,
    }

    /// The receiving half: `recv` gives the message's slot back.
    pub struct Receiver<R> {
        rx: R,
        slots: Arc<Semphore>,
    }

    /// An SPSC/MPSC channel of `cap` messages.
    pub fn channel<T>(cap: usize) -> (Sender<mpsc::Sender<T>>, Receiver<mpsc::Receiver<T>>) {
        let (tx, rx) = mpsc::channel();
        let slots = Arc::new(Semphore::new(cap));
        (
            Sender {
                tx,
                slots: slots.clone(),
            },
            Receiver { rx, slots },
        )
    }

    /// An MPMC channel of `cap` messages.
    pub fn mpmc<T>(cap: usize) -> (Sender<mpmc::Sender<T>>, Receiver<mpmc::Receiver<T>>) {
        let (tx, rx) = mpmc::channel();
        let slots = Arc::new(Semphore::new(cap));
        (
            Sender {
                tx,
                slots: slots.clone(),
            },
            Receiver { rx, slots },
        )
    }

    impl<T> Sender<mpsc::Sender<T>> {
        pub fn send(&self, v: T) {
            self.slots.wait();
            self.tx.send(v).expect("receiver dropped");
        }
    }

    impl<T> Sender<mpmc::Sender<T>> {
        pub fn send(&self, v: T) {
            self.slots.wait();
            self.tx.send(v).expect("receivers dropped");
        }
    }

    impl<T> Receiver<mpsc::Receiver<T>> {
        /// The next message, or `None` once every sender is gone and the
        /// channel is drained.
        pub fn recv(&self) -> Option<T> {
            let v = self.rx.recv().ok()?;
            self.slots.post();
            Some(v)
        }
    }

    impl<T> Receiver<mpmc::Receiver<T>> {
        pub fn recv(&self) -> Option<T> {
            let v = self.rx.recv().ok()?;
            self.slots.post();
            Some(v)
        }
    }

    impl<T> Clone for Receiver<mpmc::Receiver<T>> {
        fn clone(&self) -> Self {
            Receiver {
                rx: self.rx.clone(),
                slots: self.slots.clone(),
            }
        }
    }
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

/// pingpong: pinger and ponger coroutines over two channels, each holding at
/// most the one message in flight.
fn pingpong(n: u64) -> u64 {
    let (ping_tx, ping_rx) = mpsc::channel::<u64>();
    let (pong_tx, pong_rx) = mpsc::channel::<u64>();
    let ponger = go!(move || {
        while let Ok(k) = ping_rx.recv() {
            pong_tx.send(k).unwrap();
        }
    });
    let pinger = go!(move || {
        let mut sum = 0;
        for k in 0..n {
            ping_tx.send(k).unwrap();
            sum += pong_rx.recv().unwrap();
        }
        sum
    });
    let sum = join(pinger);
    join(ponger);
    sum
}

/// fanout: a producer coroutine, 100 worker coroutines on one bounded(1024)
/// MPMC channel.
fn fanout(n: u64) -> u64 {
    let (tx, rx) = bounded::mpmc::<u64>(FANOUT_CAPACITY);
    let workers: Vec<_> = (0..FANOUT_WORKERS)
        .map(|_| {
            let rx = rx.clone();
            go!(move || {
                let mut sum = 0;
                while let Some(v) = rx.recv() {
                    sum += v;
                }
                sum
            })
        })
        .collect();
    drop(rx);
    go!(move || {
        for v in 1..=n {
            tx.send(v);
        }
    });
    workers.into_iter().map(join).sum()
}

/// chan_single: one coroutine sends 1000 then receives 1000, repeated; the
/// channel never holds more than 1000.
fn chan_single(n: u64) -> u64 {
    join(go!(move || {
        let (tx, rx) = mpsc::channel::<u64>();
        let (mut sum, mut next) = (0, 0);
        while next < n {
            let end = (next + CHAN_CAPACITY as u64).min(n);
            for v in next..end {
                tx.send(v).unwrap();
            }
            for _ in next..end {
                sum += rx.recv().unwrap();
            }
            next = end;
        }
        sum
    }))
}

/// Producer coroutine → consumer coroutine of `make(i)`, `i in 0..n`, on a
/// bounded(`cap`) channel, summing `value`.
fn producer_consumer<T: Send + 'static>(
    n: u64,
    cap: usize,
    make: fn(u64) -> T,
    value: fn(&T) -> u64,
) -> u64 {
    let (tx, rx) = bounded::channel::<T>(cap);
    let consumer = go!(move || {
        let mut sum = 0;
        while let Some(m) = rx.recv() {
            sum += value(&m);
        }
        sum
    });
    go!(move || {
        for i in 0..n {
            tx.send(make(i));
        }
    });
    join(consumer)
}

/// payload_B: chan_buffered with `[u8; B]` messages by value.
fn payload_row(bytes: usize, n: u64) -> Measured {
    fn row<const B: usize>(n: u64) -> Measured {
        timed(|| producer_consumer::<[u8; B]>(n, CHAN_CAPACITY, payload::<B>, payload_value::<B>))
    }
    match bytes {
        4 => row::<4>(n),
        16 => row::<16>(n),
        256 => row::<256>(n),
        1024 => row::<1024>(n),
        b => panic!("no payload row of {b} bytes"),
    }
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

/// select_k: k producer coroutines, producer p sending `p·(n/k) + j` on its
/// own bounded(1000) channel; the consumer polls a `cqueue` fed by one
/// select coroutine per channel (see the module docs).
fn select(n: u64, k: usize) -> Measured {
    let start = Instant::now();
    let per = n / k as u64;
    let mut rxs = Vec::with_capacity(k);
    for p in 0..k as u64 {
        let (tx, rx) = bounded::channel::<u64>(CHAN_CAPACITY);
        rxs.push(rx);
        go!(move || {
            for j in 0..per {
                tx.send(p * per + j);
            }
        });
    }
    let tally = join(go!(move || {
        cqueue::scope(|cqueue| {
            for (arm, rx) in rxs.into_iter().enumerate() {
                go!(cqueue, arm, move |es| {
                    while let Some(v) = rx.recv() {
                        es.send(v as usize);
                    }
                });
            }
            let mut tally = SelectTally::new(k);
            while let Ok(ev) = cqueue.poll(None) {
                tally.record(ev.token, ev.extra as u64);
            }
            tally
        })
    }));
    Measured::new(tally.sum, start.elapsed()).with("per_arm", tally.per_arm_value())
}

/// fizzbuzz_pipeline(_zc): generator → worker → logger coroutines. Messages
/// travel in batches of half a channel; each link is a bounded channel of
/// two batches (a full channel's worth) and buffers return upstream on
/// recycle channels (holding at most the pool's four), so the hot path
/// allocates nothing.
/// - copy (double buffer): the worker writes classes into a separate class
///   buffer and hands the value buffer back;
/// - zero-copy: the worker overwrites each value with its class in place and
///   forwards the same buffer.
fn fizzbuzz(n: u64, zero_copy: bool) -> FizzCounts {
    const LINK: usize = 2; // batches per link: the whole channel
    const POOL: usize = 4; // buffers per pool: two in the link, one each end
    let batch = fizzbuzz_batch(n);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u64>>();
    let (class_free_tx, class_free_rx) = mpsc::channel::<Vec<u8>>();
    for _ in 0..POOL {
        free_tx.send(Vec::with_capacity(batch)).unwrap();
        if !zero_copy {
            class_free_tx.send(Vec::with_capacity(batch)).unwrap();
        }
    }
    let (values_tx, values_rx) = bounded::channel::<Vec<u64>>(LINK);
    go!(move || {
        let mut next = 1;
        while next <= n {
            let mut buf = free_rx.recv().unwrap();
            next = kernels::fill_batch(&mut buf, next, batch, n);
            values_tx.send(buf);
        }
    });
    if zero_copy {
        let (out_tx, out_rx) = bounded::channel::<Vec<u64>>(LINK);
        go!(move || {
            while let Some(mut buf) = values_rx.recv() {
                kernels::classify_in_place(&mut buf);
                out_tx.send(buf);
            }
        });
        join(go!(move || {
            let mut counts = FizzCounts::default();
            while let Some(buf) = out_rx.recv() {
                counts.add_all(&buf);
                let _ = free_tx.send(buf); // the generator may be done
            }
            counts
        }))
    } else {
        let (out_tx, out_rx) = bounded::channel::<Vec<u8>>(LINK);
        go!(move || {
            while let Some(values) = values_rx.recv() {
                let mut classes = class_free_rx.recv().unwrap();
                kernels::classify_into(&values, &mut classes);
                let _ = free_tx.send(values);
                out_tx.send(classes);
            }
        });
        join(go!(move || {
            let mut counts = FizzCounts::default();
            while let Some(classes) = out_rx.recv() {
                counts.add_all(&classes);
                let _ = class_free_tx.send(classes);
            }
            counts
        }))
    }
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
