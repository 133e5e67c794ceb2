//! Benchmark peer: [steady_state] 0.3.1, the actor framework of the
//! `steady-state-performant` lesson (seed `003`), on the two FizzBuzz rows.
//!
//! # The graph
//!
//! One steady_state `Graph` of three actors, generator → worker → logger,
//! over two channels of `fizzbuzz_capacity(n)` slots (1<<20 at the full
//! size, 1<<16 at the quick one): `values` (`u64`) and `classes` (`u8`, the
//! shared kernels' class byte). Every actor moves `fizzbuzz_batch(n)`
//! messages, half a channel, per operation. The kernels (`fill_batch`,
//! `classify`, `FizzCounts`) are the ones every peer runs.
//!
//! # Why these primitives (the lesson's three optimisations)
//!
//! The performant lesson names three things as the framework's way to
//! throughput, and this peer uses each of them as the lesson does:
//!
//! 1. **Very large channels** (`channel_builder().with_capacity(..)`): the
//!    lesson sizes its channels at `1 << 20` "to reduce backpressure and
//!    synchronization overhead to near zero"; the catalogue fixes the same.
//! 2. **Double-buffer batching** (`fizzbuzz_pipeline`): "each actor processes
//!    *half* of a channel's capacity in a single batch while the other half
//!    is being filled", waking on `await_for_all!(wait_avail(rx, half),
//!    wait_vacant(tx, half))` and then, as the lesson's worker does
//!    (`SLICES = 2`), working both halves before it yields. Values move with
//!    the framework's batch copies, `take_slice` into a pre-allocated buffer
//!    and `send_slice` out of one ("zero heap allocations on the hot path").
//! 3. **Zero-copy** (`fizzbuzz_pipeline_zc`): "actors operate directly on
//!    channel memory using paired `peek_slice`/`poke_slice` APIs". The
//!    generator writes values into the ring's vacant slices (`poke_slice`,
//!    `advance_send_index`); the worker reads them in place (`peek_slice`) and
//!    writes each class in place into the next ring (`poke_slice`), walking
//!    the two wrap points of both rings as the lesson's four loops do, then
//!    commits both (`advance_send_index`, `advance_take_index`); the logger
//!    counts in place and releases (`advance_take_index`). As in the copy
//!    row, a wake works up to both halves, the lesson's "full-channel
//!    consumption", but commits each half as soon as it is done, so that the
//!    producer refills one half while the other is worked on (faster than
//!    committing everything available at once: the figures are in the
//!    catalogue, `docs/bench-catalogue.md`).
//!
//! Each actor is the lesson's shape: `into_spotlight` over its channels, the
//! channels `lock()`ed for the actor's life, its state in a `SteadyState`
//! (the framework's restart-surviving state, read by `main` after the stop
//! with `try_lock_sync`, as its docs suggest), and a
//! `while actor.is_running(|| ..)` loop whose closure is the actor's vote in
//! steady_state's veto shutdown.
//!
//! The lesson's heartbeat actor is left out: it paces a run of a minute,
//! and the catalogue's graph is the three actors that move the data.
//!
//! # Shutdown
//!
//! The generator sends `1..=n`, then calls `request_shutdown()`. Each actor
//! votes for the stop only when its work is done — the generator by closing
//! `values` (`mark_closed`), the worker once `values` is closed and empty
//! (then it closes `classes`), the logger once `classes` is closed and
//! empty — so the stop follows the last message down the pipeline; waits
//! interrupted by the shutdown ("dirty wakes") drain what is there.
//! "Closed and empty" is checked as `is_closed() && is_empty()`, in that
//! order, not with the crate's `is_closed_and_empty` (see
//! [`closed_and_drained`]: it can lose the last batch).
//! `block_until_stopped` then checks that the stop was clean (every actor
//! voted yes).
//!
//! # Workers and threads
//!
//! steady_state has no worker pool: each actor runs on an OS thread of its
//! own (`SoloAct`) or shares one cooperatively with a troupe. Its own way of
//! fitting a fixed graph onto a given number of threads is a *dynamic
//! troupe*: every actor is a `MemberOf` one, and `Graph::start` packs them
//! onto `with_pack_slots(W)` threads, merging along the smallest channels
//! (Kruskal, from the ports declared with `with_pack_ports_from`). So `W` is
//! the thread budget: W = 1 runs all three actors on one thread, W = 2 puts
//! the generator on one and worker + logger (joined by the smaller, `u8`
//! channel) on the other, W ≥ 3 gives each actor its own thread (pinned,
//! see Features, to core `troupe id mod cores`, so on 2 cores two of the
//! three share one).
//!
//! # Timing
//!
//! The timed region runs from building the channels and actors (the graph
//! itself, a runtime handle, is made before) through `Graph::start` to the
//! return of `block_until_stopped`, the framework's own "every actor has
//! voted for the stop". Without telemetry its poll between looks is a
//! zero-length sleep, so it sees the last vote at once.
//!
//! # Features
//!
//! `default-features = false, features = ["core_affinity"]`: the crate's
//! defaults less its telemetry. The default `telemetry_server_builtin`
//! downloads `viz-lite.js` from unpkg.com in the build script, which fails
//! without the internet (the build panics); the telemetry server, in either
//! flavour (`_builtin` or `_cdn`), adds its collector and server actors to
//! every graph, which no other peer pays for; `prometheus_metrics` and
//! `core_display` only feed that telemetry. `core_affinity`, a default
//! feature, is kept: it pins each actor thread (here each packed troupe's
//! thread) to a core; the lesson's `main.rs` counts on it ("This ensures
//! the actors remain on the core where they are placed to allow for optimal
//! core cache usage"). Without it the crate builds too (no features at all
//! is the smallest set that builds), and runs both rows slower.
//! (The build script's `isahc` build-dependency, and so curl-sys and
//! openssl-sys, is compiled whatever the features.)
//!
//! Every other catalogue row is unsupported (see [`support`]).
//!
//! [steady_state]: https://crates.io/crates/steady_state

use spindle_peer_common::catalogue::{fizzbuzz_batch, fizzbuzz_capacity};
use spindle_peer_common::kernels::{self, FizzCounts};
use spindle_peer_common::{run_main, Measured, Request, Support};
use std::error::Error;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};
use steady_state::{
    await_for_all, new_state, GraphBuilder, Rx, ScheduleAs, SteadyActor, SteadyActorShadow,
    SteadyRx, SteadyState, SteadyTx,
};

type Res = Result<(), Box<dyn Error>>;

fn main() {
    run_main("steady_state", support, run);
}

/// The two FizzBuzz rows; every other row says why not.
fn support(workload: &str) -> Support {
    match workload {
        "fizzbuzz_pipeline" | "fizzbuzz_pipeline_zc" => Ok(()),
        "skynet" | "fib" | "fib_par" | "sum_squares" | "primes" | "async_trivial"
        | "async_compute" | "block_all" | "blocking_pressure" | "spawn_nursery"
        | "spawn_sequential" | "spawn_10k" | "spawn_100k" | "spawn_1m" | "live_1m" | "sleep_1m"
        | "fork_inline" | "fork_pool" | "skynet_fork" | "joinset_drain" => Err(
            "steady_state runs a fixed graph of actors built before Graph::start: it has no \
             API to spawn a task at run time and join it",
        ),
        "mutex_uncontended" | "mutex_contended" | "rwlock_read_heavy" | "semaphore_limit"
        | "notify_pingpong" | "watch_fanout" => Err(
            "actors in steady_state share state through channels, not locks: it has no async \
             mutex, semaphore or notification of its own",
        ),
        w if w.starts_with("pipeline_") => Err(
            "each execution spawns D stage tasks that join their predecessor: steady_state \
             cannot spawn or join actors at run time (its graph is fixed at start)",
        ),
        _ => Err(
            "a channel row between tasks: this peer covers steady_state's actor-pipeline rows \
             (the FizzBuzz graph of its performant lesson) only",
        ),
    }
}

fn run(req: &Request) -> Measured {
    let zero_copy = match req.workload.as_str() {
        "fizzbuzz_pipeline" => false,
        "fizzbuzz_pipeline_zc" => true,
        w => unreachable!("support() lets only the FizzBuzz rows through, not {w}"),
    };
    fizzbuzz(req.size, req.workers, zero_copy)
}

/// The generator's state: the next value to send.
struct GeneratorState {
    next: u64,
}

/// The logger's state: the counts so far.
#[derive(Default)]
struct LoggerState {
    counts: FizzCounts,
}

/// Builds and runs the graph; see the module docs.
fn fizzbuzz(n: u64, workers: usize, zero_copy: bool) -> Measured {
    let mut graph = GraphBuilder::for_production()
        .with_pack_slots(workers)
        .build(());

    let start = Instant::now();
    let (cap, batch) = (fizzbuzz_capacity(n), fizzbuzz_batch(n));
    let (values_tx, values_rx) = graph.channel_builder().with_capacity(cap).build::<u64>();
    let (classes_tx, classes_rx) = graph.channel_builder().with_capacity(cap).build::<u8>();

    // All three actors go into one dynamic troupe, packed onto W threads at start.
    let mut troupe = graph.dynamic_troupe();
    let generator_state = new_state::<GeneratorState>();
    let logger_state = new_state::<LoggerState>();

    let state = generator_state.clone();
    graph
        .actor_builder()
        .with_name("generator")
        .with_pack_ports_from::<u64, u64>(&[], &[&values_tx])
        .build(
            move |actor| generator(actor, values_tx.clone(), state.clone(), n, batch, zero_copy),
            ScheduleAs::MemberOf(&mut troupe),
        );
    graph
        .actor_builder()
        .with_name("worker")
        .with_pack_ports_from(&[&values_rx], &[&classes_tx])
        .build(
            move |actor| {
                let (rx, tx) = (values_rx.clone(), classes_tx.clone());
                worker(actor, rx, tx, batch, zero_copy)
            },
            ScheduleAs::MemberOf(&mut troupe),
        );
    let state = logger_state.clone();
    graph
        .actor_builder()
        .with_name("logger")
        .with_pack_ports_from::<u8, u8>(&[&classes_rx], &[])
        .build(
            move |actor| logger(actor, classes_rx.clone(), state.clone(), batch, zero_copy),
            ScheduleAs::MemberOf(&mut troupe),
        );
    drop(troupe);

    graph.start();
    graph
        .block_until_stopped(Duration::from_secs(30))
        .expect("the graph stops cleanly");
    let elapsed = start.elapsed();
    Measured::new(final_state(&logger_state, |s| s.counts), elapsed)
}

/// Reads an actor's state after the stop (the actor may still be returning
/// from its function for a moment, holding its guard).
fn final_state<S: Send, R>(state: &SteadyState<S>, read: impl Fn(&S) -> R) -> R {
    for _ in 0..1000 {
        if let Some(guard) = state.try_lock_sync() {
            return read(&guard);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("an actor's state stayed locked after the graph stopped");
}

/// Sends `1..=n` in half-channel batches, then asks the graph to stop.
async fn generator(
    actor: SteadyActorShadow,
    values: SteadyTx<u64>,
    state: SteadyState<GeneratorState>,
    n: u64,
    batch: usize,
    zero_copy: bool,
) -> Res {
    let mut actor = actor.into_spotlight([], [&values]);
    let mut tx = values.lock().await;
    let mut state = state.lock(|| GeneratorState { next: 1 }).await;
    let mut buf = Vec::with_capacity(if zero_copy { 0 } else { batch });

    while actor.is_running(|| tx.mark_closed()) {
        if state.next > n {
            actor.request_shutdown().await;
            continue;
        }
        let want = batch.min((n - state.next + 1) as usize);
        let _clean = await_for_all!(actor.wait_vacant(&mut tx, want));
        if zero_copy {
            // Write the values straight into the ring's vacant slots.
            let (a, b) = actor.poke_slice(&mut tx);
            let k = want.min(a.len() + b.len());
            let ka = k.min(a.len());
            let v = count_up(&mut b[..k - ka], count_up(&mut a[..ka], state.next));
            let sent = actor.advance_send_index(&mut tx, k).item_count();
            debug_assert_eq!(sent, k);
            state.next = v;
        } else {
            let room = want.min(actor.vacant_units(&mut tx));
            if room > 0 {
                let next = kernels::fill_batch(&mut buf, state.next, room, n);
                let sent = actor.send_slice(&mut tx, &buf).item_count();
                debug_assert_eq!(sent, buf.len());
                state.next = next;
            }
        }
    }
    Ok(())
}

/// Classifies every value into the `classes` channel.
async fn worker(
    actor: SteadyActorShadow,
    values: SteadyRx<u64>,
    classes: SteadyTx<u8>,
    batch: usize,
    zero_copy: bool,
) -> Res {
    let mut actor = actor.into_spotlight([&values], [&classes]);
    let mut rx = values.lock().await;
    let mut tx = classes.lock().await;
    let mut value_buf = vec![0u64; if zero_copy { 0 } else { batch }];
    let mut class_buf = Vec::with_capacity(if zero_copy { 0 } else { batch });

    while actor.is_running(|| closed_and_drained(&mut rx) && tx.mark_closed()) {
        let _clean = await_for_all!(
            actor.wait_avail(&mut rx, batch),
            actor.wait_vacant(&mut tx, batch)
        );
        if zero_copy {
            // Read the values in place, write the classes in place, commit
            // both; a half at a time, so that each half goes back upstream
            // as soon as it is done.
            for _ in 0..2 {
                let done = {
                    let (ia, ib) = actor.peek_slice(&mut rx);
                    let (oa, ob) = actor.poke_slice(&mut tx);
                    classify_runs(ia, ib, oa, ob, batch)
                };
                if done == 0 {
                    break;
                }
                actor.advance_send_index(&mut tx, done);
                actor.advance_take_index(&mut rx, done);
            }
        } else {
            // Both halves of the channel before yielding (the lesson's SLICES = 2).
            for _ in 0..2 {
                let k = batch
                    .min(actor.avail_units(&mut rx))
                    .min(actor.vacant_units(&mut tx));
                if k == 0 {
                    break;
                }
                let taken = actor.take_slice(&mut rx, &mut value_buf[..k]).item_count();
                kernels::classify_into(&value_buf[..taken], &mut class_buf);
                let sent = actor.send_slice(&mut tx, &class_buf).item_count();
                debug_assert_eq!(sent, taken);
            }
        }
    }
    Ok(())
}

/// Counts the classes.
async fn logger(
    actor: SteadyActorShadow,
    classes: SteadyRx<u8>,
    state: SteadyState<LoggerState>,
    batch: usize,
    zero_copy: bool,
) -> Res {
    let mut actor = actor.into_spotlight([&classes], []);
    let mut rx = classes.lock().await;
    let mut state = state.lock(LoggerState::default).await;
    let mut buf = vec![0u8; if zero_copy { 0 } else { batch }];

    while actor.is_running(|| closed_and_drained(&mut rx)) {
        let _clean = await_for_all!(actor.wait_avail(&mut rx, batch));
        if zero_copy {
            // Count in place, releasing a half at a time.
            for _ in 0..2 {
                let k = {
                    let (a, b) = actor.peek_slice(&mut rx);
                    let ka = a.len().min(batch);
                    let kb = b.len().min(batch - ka);
                    state.counts.add_all(&a[..ka]);
                    state.counts.add_all(&b[..kb]);
                    ka + kb
                };
                if k == 0 {
                    break;
                }
                actor.advance_take_index(&mut rx, k);
            }
        } else {
            for _ in 0..2 {
                let k = actor.take_slice(&mut rx, &mut buf).item_count();
                if k == 0 {
                    break;
                }
                state.counts.add_all(&buf[..k]);
            }
        }
    }
    Ok(())
}

/// Whether `rx` is closed and empty, looked at in that order. steady_state
/// 0.3.1's `Rx::is_closed_and_empty` looks at emptiness first and then at
/// the close signal, so a sender that pushes its last messages and closes in
/// between makes it say "closed and empty" over a non-empty channel (seen
/// here: the last batch lost about once in a hundred runs with a thread per
/// actor). Once the close has been seen, every message sent before it is
/// visible, so an emptiness check after it is exact.
fn closed_and_drained<T>(rx: &mut Rx<T>) -> bool {
    rx.is_closed() && rx.is_empty()
}

/// Writes `from, from + 1, …` into `run`; returns the value after it.
fn count_up(run: &mut [MaybeUninit<u64>], from: u64) -> u64 {
    for (i, slot) in run.iter_mut().enumerate() {
        slot.write(from + i as u64);
    }
    from + run.len() as u64
}

/// The worker's kernel on one run: `kernels::classify` of each value,
/// written into the output ring's slots.
fn classify_uninit(values: &[u64], classes: &mut [MaybeUninit<u8>]) {
    for (c, &v) in classes.iter_mut().zip(values) {
        c.write(kernels::classify(v));
    }
}

/// Classifies the first `max` (at most) of `ia ++ ib` into `oa ++ ob` (the
/// two rings wrap at different points: the lesson's four loops, written as
/// runs); returns how many.
fn classify_runs(
    ia: &[u64],
    ib: &[u64],
    oa: &mut [MaybeUninit<u8>],
    ob: &mut [MaybeUninit<u8>],
    max: usize,
) -> usize {
    let n = (ia.len() + ib.len()).min(oa.len() + ob.len()).min(max);
    let mut i = 0;
    while i < n {
        let (src, s0) = if i < ia.len() {
            (ia, i)
        } else {
            (ib, i - ia.len())
        };
        let (dst, d0): (&mut [MaybeUninit<u8>], usize) = if i < oa.len() {
            (&mut *oa, i)
        } else {
            (&mut *ob, i - oa.len())
        };
        let run = (src.len() - s0).min(dst.len() - d0).min(n - i);
        classify_uninit(&src[s0..s0 + run], &mut dst[d0..d0 + run]);
        i += run;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split of the input and the output rings gives the kernel's classes.
    #[test]
    fn classify_runs_walks_both_wrap_points() {
        let values: Vec<u64> = (1..=40).collect();
        for split_in in 0..=values.len() {
            for split_out in [0, 1, 7, 20, 39, 40, 45] {
                let (ia, ib) = values.split_at(split_in);
                let mut out = [MaybeUninit::<u8>::uninit(); 45];
                let (oa, ob) = out.split_at_mut(split_out);
                let done = classify_runs(ia, ib, oa, ob, usize::MAX);
                assert_eq!(done, 40);
                for (i, &v) in values.iter().enumerate() {
                    // SAFETY: the first `done` slots were written.
                    let c = unsafe { out[i].assume_init() };
                    assert_eq!(c, kernels::classify(v), "in {split_in} out {split_out}");
                }
                let (oa, ob) = out.split_at_mut(split_out);
                assert_eq!(classify_runs(ia, ib, oa, ob, 13), 13);
            }
        }
    }

    #[test]
    fn count_up_fills_and_continues() {
        let mut slots = [MaybeUninit::<u64>::uninit(); 5];
        assert_eq!(count_up(&mut slots, 10), 15);
        // SAFETY: count_up wrote every slot.
        let got: Vec<u64> = slots.iter().map(|s| unsafe { s.assume_init() }).collect();
        assert_eq!(got, [10, 11, 12, 13, 14]);
    }
}
