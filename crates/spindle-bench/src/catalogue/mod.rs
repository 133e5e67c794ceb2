//! The rows of the catalogue (`docs/bench-catalogue.md`) as data: each
//! [`Workload`]'s sizes, expected-result formula, extra keys, the figures
//! the seed documents publish for it, and the peers the quick profile
//! leaves out. The types and the rules they obey are in
//! [`crate::workloads`]; this file is only the table, the formulas are in
//! `expected.rs`, the published figures' sources in `published.rs`, the
//! shorthand rows are written in in `row.rs`, the pipeline rows in
//! `pipeline.rs` and the synchronisation rows in `sync.rs`.

#[macro_use]
mod row;
mod expected;
mod pipeline;
mod published;
mod sync;

pub use expected::tri;

use crate::workloads::{SeedFigure, Workload};
use expected::{
    e_async_compute, e_blocking, e_fib, e_fizzbuzz, e_primes, e_sum_1_to_n, e_sum_squares, e_tri,
};
use published::{cc, coflux, seq, ss, wyn};
use row::{concat, skip_parking_threads, skip_std};

pub(super) const NONE: &[SeedFigure] = &[];
pub(super) const NO_KEYS: &[&str] = &[];
/// The Aeron rows' heartbeat latency under the numbers' load.
const AERON_KEYS: &[&str] = &["hb_p50_us", "hb_p99_us"];

/// The whole catalogue, in the order of `docs/bench-catalogue.md`.
pub static CATALOGUE: &[Workload] = &concat::<
    { TASKS_AND_PIPELINES.len() },
    { sync::ROWS.len() },
    { TASKS_AND_PIPELINES.len() + sync::ROWS.len() },
>(TASKS_AND_PIPELINES, sync::ROWS);

/// [`CORE`] and then the pipeline rows.
const TASKS_AND_PIPELINES: [Workload; CORE.len() + pipeline::ROWS.len()] = concat::<
    { CORE.len() },
    { pipeline::ROWS.len() },
    { CORE.len() + pipeline::ROWS.len() },
>(CORE, pipeline::ROWS);

/// The rows before the pipelines: tasks, channels, timers, fork–join.
const CORE: [Workload; 35] = [
    w!(
        "skynet",
        "concurrency",
        "10-ary tree of tasks; leaves return their id, parents sum children",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "leaves",
        NO_KEYS,
        &[
            seq("Seq", 4779.0, 1_000_000, "4779 ms"),
            seq("Rust std (threshold)", 2.0, 1_000_000, "2 ms"),
            seq("Go", 170.0, 1_000_000, "170 ms")
        ]
    ),
    skip_parking_threads(w!(
        "pingpong",
        "concurrency",
        "two tasks exchange a message back and forth over capacity-1 channels",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "round trips",
        NO_KEYS,
        &[
            seq("Seq", 269.0, 1_000_000, "269 ms"),
            seq("Rust std", 3875.0, 1_000_000, "3875 ms"),
            seq("Go", 206.0, 1_000_000, "206 ms")
        ]
    )),
    w!(
        "fanout",
        "concurrency",
        "1 producer, 100 workers on one bounded(1024) MPMC channel",
        1_000_000,
        100_000,
        1_000,
        e_sum_1_to_n,
        "messages",
        NO_KEYS,
        &[
            seq("Seq", 551.0, 1_000_000, "551 ms"),
            seq("Rust std", 29.0, 1_000_000, "29 ms"),
            seq("Go", 249.0, 1_000_000, "249 ms")
        ]
    ),
    w!(
        "fib",
        "compute",
        "naive recursive fib(n) inside one spawned task",
        40,
        35,
        20,
        e_fib,
        "call",
        NO_KEYS,
        &[
            seq("Seq", 2500.0, 1, "fib(40) 2500 ms"),
            seq("Rust", 168.0, 1, "fib(40) 168 ms"),
            seq("Go", 224.0, 1, "fib(40) 224 ms")
        ]
    ),
    w!(
        "fib_par",
        "compute",
        "fork-join fib(n): spawn both halves while n > 20",
        35,
        30,
        22,
        e_fib,
        "call",
        NO_KEYS,
        NONE
    ),
    w!(
        "sum_squares",
        "compute",
        "1² + … + n² inside one spawned task",
        1_000_000,
        100_000,
        1_000,
        e_sum_squares,
        "terms",
        NO_KEYS,
        &[
            seq("Seq", 54.0, 1_000_000, "54 ms"),
            seq("Rust", 2.0, 1_000_000, "2 ms"),
            seq("Go", 2.0, 1_000_000, "2 ms")
        ]
    ),
    w!(
        "primes",
        "compute",
        "count primes ≤ n by trial division inside one spawned task",
        100_000,
        10_000,
        1_000,
        e_primes,
        "candidates",
        NO_KEYS,
        &[
            seq("Seq", 93.0, 100_000, "93 ms"),
            seq("Rust", 3.0, 100_000, "3 ms"),
            seq("Go", 3.0, 100_000, "3 ms")
        ]
    ),
    w!(
        "chan_single",
        "channels",
        "one task sends 1000 then receives 1000 on a bounded(1000) channel, repeated",
        10_000_000,
        1_000_000,
        10_000,
        e_tri,
        "messages",
        NO_KEYS,
        &[cc("Concurrent-C", 40e6, "40M+ ops/sec")]
    ),
    w!(
        "chan_buffered",
        "channels",
        "producer → consumer on two tasks, bounded(1000)",
        10_000_000,
        1_000_000,
        10_000,
        e_tri,
        "messages",
        NO_KEYS,
        &[
            cc("Concurrent-C", 20e6, "20M+ ops/sec"),
            cc(
                "Concurrent-C (vs Go run)",
                61_162_080.0,
                "channel_throughput 61162080 ops/sec"
            ),
            cc("Go", 57_836_769.0, "channel_throughput 57836769 ops/sec")
        ]
    ),
    skip_parking_threads(w!(
        "chan_unbuffered",
        "channels",
        "producer → consumer over a rendezvous channel",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        NO_KEYS,
        &[cc("Concurrent-C", 750e3, "750K+ ops/sec")]
    )),
    w!(
        "async_trivial",
        "async",
        "spawn n tasks that return i, then join all",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "tasks",
        NO_KEYS,
        &[cc("Concurrent-C", 15e6, "15M+ tasks/sec")]
    ),
    w!(
        "async_compute",
        "async",
        "n tasks each run a 100-iteration loop with one yield",
        100_000,
        10_000,
        1_000,
        e_async_compute,
        "tasks",
        NO_KEYS,
        &[cc("Concurrent-C", 300e3, "300K+ tasks/sec")]
    ),
    w!(
        "block_all",
        "async",
        "spawn batches of 10 tasks and wait for each batch",
        100_000,
        10_000,
        1_000,
        e_tri,
        "tasks",
        NO_KEYS,
        &[cc("Concurrent-C", 100e3, "cc_block_all 100K+ tasks/sec")]
    ),
    w!(
        "select_1",
        "select",
        "one consumer selects over 1 channel fed by 1 producer",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        NO_KEYS,
        &[cc("Concurrent-C", 10e6, "10M+ ops/sec")]
    ),
    w!(
        "select_2",
        "select",
        "one consumer selects over 2 channels fed by 2 producers",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        NO_KEYS,
        &[cc("Concurrent-C", 8e6, "8M+ ops/sec")]
    ),
    w!(
        "select_4",
        "select",
        "one consumer selects over 4 channels fed by 4 producers",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        NO_KEYS,
        &[cc("Concurrent-C", 6e6, "6M+ ops/sec")]
    ),
    w!(
        "payload_4",
        "payload",
        "chan_buffered with 4-byte messages",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        &["bytes"],
        &[cc("Concurrent-C", 18e6, "18M+ ops/sec")]
    ),
    w!(
        "payload_16",
        "payload",
        "chan_buffered with 16-byte messages",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        &["bytes"],
        &[cc("Concurrent-C", 19e6, "19M+ ops/sec, ~300 MB/sec")]
    ),
    w!(
        "payload_256",
        "payload",
        "chan_buffered with 256-byte messages",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        &["bytes"],
        &[cc("Concurrent-C", 18e6, "18M+ ops/sec, ~4 GB/sec")]
    ),
    w!(
        "payload_1024",
        "payload",
        "chan_buffered with 1024-byte messages",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "messages",
        &["bytes"],
        &[cc("Concurrent-C", 11e6, "11M+ ops/sec, ~11 GB/sec")]
    ),
    w!(
        "blocking_pressure",
        "blocking",
        "4·W tasks make n 1 ms blocking sleeps while a heartbeat ticks every 1 ms",
        200,
        20,
        3,
        e_blocking,
        "blocking calls",
        &["beats", "due"],
        NONE
    ),
    skip_std(w!(
        "spawn_nursery",
        "spawn",
        "spawn into a structured scope in batches of 1000, wait per batch",
        1_000_000,
        100_000,
        2_000,
        e_tri,
        "tasks",
        NO_KEYS,
        &[
            cc("Concurrent-C", 468_790.0, "468790 spawns/sec"),
            cc("Go", 4_347_042.0, "4347042 spawns/sec")
        ]
    )),
    w!(
        "spawn_sequential",
        "spawn",
        "spawn one task, join it, repeat",
        100_000,
        10_000,
        1_000,
        e_tri,
        "tasks",
        NO_KEYS,
        &[
            cc("Concurrent-C", 26_109_668.0, "26109668 spawns/sec"),
            cc("Go", 3_795_052.0, "3795052 spawns/sec"),
            cc(
                "Concurrent-C (baseline)",
                15e3,
                "spawn baseline 15K+ spawns/sec"
            )
        ]
    ),
    w!(
        "spawn_10k",
        "spawn",
        "spawn n empty tasks, then join all",
        10_000,
        1_000,
        100,
        e_tri,
        "tasks",
        NO_KEYS,
        &[
            wyn("Wyn", 1.17, 10_000, "1.17 ms"),
            wyn("Go", 1.67, 10_000, "1.67 ms")
        ]
    ),
    w!(
        "spawn_100k",
        "spawn",
        "spawn n empty tasks, then join all",
        100_000,
        10_000,
        1_000,
        e_tri,
        "tasks",
        NO_KEYS,
        &[
            wyn("Wyn", 7.96, 100_000, "7.96 ms"),
            wyn("Go", 14.76, 100_000, "14.76 ms")
        ]
    ),
    w!(
        "spawn_1m",
        "spawn",
        "spawn n empty tasks, then join all",
        1_000_000,
        100_000,
        10_000,
        e_tri,
        "tasks",
        NO_KEYS,
        &[
            wyn("Wyn", 101.15, 1_000_000, "101.15 ms"),
            wyn("Go", 161.49, 1_000_000, "161.49 ms")
        ]
    ),
    w!(
        "live_1m",
        "spawn",
        "n tasks alive at once, each parked on its own channel, then all released",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "tasks",
        NO_KEYS,
        NONE
    ),
    w!(
        "sleep_1m",
        "timer",
        "n concurrent sleeps on the runtime's timer, task i for 1 + (i mod 100) ms, then joined",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "tasks",
        NO_KEYS,
        NONE
    ),
    w!(
        "fizzbuzz_pipeline",
        "actor",
        "generator → FizzBuzz worker → logger over big channels, batches of half a channel (copy)",
        67_108_864,
        4_194_304,
        65_536,
        e_fizzbuzz,
        "messages",
        NO_KEYS,
        &[
            ss(
                "steady_state (double buffer)",
                50e6,
                "50–200M messages/sec (low end)"
            ),
            ss(
                "steady_state (telemetry)",
                128e6,
                "over 128 million messages per second"
            )
        ]
    ),
    w!(
        "fizzbuzz_pipeline_zc",
        "actor",
        "the FizzBuzz pipeline working in place on channel memory (zero-copy)",
        67_108_864,
        4_194_304,
        65_536,
        e_fizzbuzz,
        "messages",
        NO_KEYS,
        &[ss(
            "steady_state (zero copy)",
            150e6,
            "150–300M messages/sec (low end)"
        )]
    ),
    w!(
        "fizzbuzz_distributed_ipc",
        "actor",
        "the FizzBuzz pipeline split in two processes over Aeron IPC: generator → publish | subscribe → worker → logger",
        67_108_864,
        4_194_304,
        65_536,
        e_fizzbuzz,
        "messages",
        AERON_KEYS,
        NONE
    ),
    w!(
        "fizzbuzz_distributed_udp",
        "actor",
        "the FizzBuzz pipeline split in two processes over Aeron UDP on 127.0.0.1",
        67_108_864,
        4_194_304,
        65_536,
        e_fizzbuzz,
        "messages",
        AERON_KEYS,
        NONE
    ),
    w!(
        "fork_inline",
        "fork",
        "current-thread executor: create a child, await it at once, destroy it",
        100_000,
        10_000,
        1_000,
        e_tri,
        "forks",
        NO_KEYS,
        &[coflux(256.0, "~3.90 M/s, ~256 ns/fork (noop_executor)")]
    ),
    skip_std(w!(
        "fork_pool",
        "fork",
        "W drivers on the multi-thread scheduler each fork and await children one at a time",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "forks",
        NO_KEYS,
        &[coflux(
            513.0,
            "~1.95 M/s, ~513 ns/fork (thread_pool_executor)"
        )]
    )),
    w!(
        "skynet_fork",
        "fork",
        "skynet's 10-ary tree with the fork-join API for closures (spindle::join_context, \
         rayon's join under its parallel iterator): a half no worker stole runs on its \
         caller's stack",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "leaves",
        NO_KEYS,
        NONE
    ),
];
