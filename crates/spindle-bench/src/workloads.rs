//! The workload catalogue, held in code.
//!
//! One [`Workload`] per row of `docs/bench-catalogue.md`: the name a peer is
//! asked for, a one-line description, its group, the full / quick / tiny
//! sizes, the expected result as a function of `size` (and `workers`, which
//! only `blocking_pressure` depends on), the extra `key=value` pairs that
//! matter, and the figures the seed documents publish for it.
//!
//! Invariants:
//! - names are unique and match the catalogue exactly (peers are asked by name);
//! - `expected` is computed here from the formula, independently of any peer,
//!   so a peer can never vouch for its own result;
//! - every size in every profile satisfies the workload's shape constraints
//!   (skynet, skynet_fork: a power of 10; select_k: divisible by 4; pipeline_CxD: divisible
//!   by 16, the catalogue's `n/C` per chain), checked by a unit test; a
//!   `--size` override is checked by [`Workload::check_size`];
//! - the formulas agree with the peers' own copy in `peers/common` (a test
//!   compares the two at several sizes): two independent writings of the
//!   catalogue, so a slip in either shows.
//!
//! The `tiny` column is not in the catalogue: it is the smoke-test profile
//! (`--profile tiny`) used by the integration test, small enough that every
//! peer runs every row in well under a second.

use std::fmt::Write as _;

/// Which profile picks the size of every workload.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The catalogue's full sizes (`docs/bench-catalogue.md`).
    Full,
    /// Counts divided by about 10; the default command.
    Quick,
    /// Smoke-test sizes: checks every result fast, times mean little.
    Tiny,
}

impl Profile {
    /// Counted runs per (workload, peer) unless `--runs` says otherwise.
    pub fn default_runs(self) -> u32 {
        match self {
            Profile::Full => 5,
            Profile::Quick => 3,
            Profile::Tiny => 1,
        }
    }

    /// Per-run time limit in seconds unless `--timeout` says otherwise.
    pub fn default_timeout_s(self) -> u64 {
        match self {
            Profile::Full => 300,
            Profile::Quick => 60,
            Profile::Tiny => 30,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Full => "full",
            Profile::Quick => "quick",
            Profile::Tiny => "tiny",
        }
    }
}

/// A figure a seed document publishes, in the unit it publishes it.
#[derive(Debug, Clone, Copy)]
pub enum Published {
    /// A total time in milliseconds for the run of `size` ops.
    TotalMs { ms: f64, ops: u64 },
    /// A throughput ("20M+ ops/sec").
    OpsPerSec(f64),
    /// A latency per op.
    NsPerOp(f64),
}

impl Published {
    /// The same figure as nanoseconds per op, the unit our rows are compared in.
    pub fn ns_per_op(self) -> f64 {
        match self {
            Published::TotalMs { ms, ops } => ms * 1e6 / ops as f64,
            Published::OpsPerSec(r) => 1e9 / r,
            Published::NsPerOp(ns) => ns,
        }
    }
}

/// One published reference figure, with where it comes from.
#[derive(Debug, Clone, Copy)]
pub struct SeedFigure {
    /// The seed document ("Seq", "Concurrent-C", ...).
    pub source: &'static str,
    /// The system the figure was measured on ("Go", "Rust std", "Wyn", ...).
    pub system: &'static str,
    /// The hardware the seed names.
    pub hardware: &'static str,
    pub value: Published,
    /// The figure as the seed writes it.
    pub quote: &'static str,
}

/// One row of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    pub name: &'static str,
    pub description: &'static str,
    pub group: &'static str,
    pub full: u64,
    pub quick: u64,
    pub tiny: u64,
    /// The checked result for `(size, workers)`.
    pub expected: fn(u64, usize) -> String,
    /// What `ops` counts.
    pub ops_unit: &'static str,
    /// Extra `key=value` pairs from the result line worth showing.
    pub extra_keys: &'static [&'static str],
    pub seeds: &'static [SeedFigure],
    /// Peers the quick profile does not run on this row (they would blow
    /// its 3-minute budget); the full profile runs them.
    pub quick_skip: &'static [&'static str],
    pub quick_skip_why: &'static str,
}

/// Which summary a row's ratio counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summarised {
    /// The runtime geomean: rows whose time is the runtime's work.
    Runtime,
    /// The compiler geomean: sequential kernels in one task (fib,
    /// sum_squares, primes), which compare code generators, not runtimes.
    Compiler,
    /// Neither: blocking_pressure's time is set by its blocking calls; the
    /// row is judged by its heartbeats.
    Apart,
}

impl Summarised {
    pub fn as_str(self) -> &'static str {
        match self {
            Summarised::Runtime => "runtime",
            Summarised::Compiler => "compiler",
            Summarised::Apart => "apart",
        }
    }
}

impl Workload {
    /// Which summary geomean this row counts in.
    pub fn summarised(&self) -> Summarised {
        match self.name {
            "fib" | "sum_squares" | "primes" => Summarised::Compiler,
            "blocking_pressure" => Summarised::Apart,
            _ => Summarised::Runtime,
        }
    }

    /// Counted runs the full profile gives this workload when it names its
    /// own: spawn_10k / 100k / 1m get 10 / 5 / 3, fewer as each run grows.
    pub fn full_passes(&self) -> Option<u32> {
        match self.name {
            "spawn_10k" => Some(10),
            "spawn_100k" => Some(5),
            "spawn_1m" => Some(3),
            _ => None,
        }
    }

    /// Whether `n` fits this workload's shape (a size that does not would
    /// make every correct peer "fail" against the formula).
    pub fn check_size(&self, n: u64) -> Result<(), String> {
        let need = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(format!("{}: --size {n} must be {what}", self.name))
            }
        };
        if self.name.starts_with("skynet") {
            let mut m = n;
            while m >= 10 && m.is_multiple_of(10) {
                m /= 10;
            }
            return need(m == 1 && n >= 10, "a power of 10 (at least 10)");
        }
        if let Some(k) = self
            .name
            .strip_prefix("select_")
            .and_then(|k| k.parse::<u64>().ok())
        {
            return need(
                n.is_multiple_of(k),
                &format!("a multiple of {k} (the producers split it evenly)"),
            );
        }
        if self.name == "fib" || self.name == "fib_par" {
            return need(n <= 90, "at most 90 (fib(91) overflows u64)");
        }
        Ok(())
    }

    /// What the result line's `ops` must say (the catalogue's last column).
    pub fn expected_ops(&self, n: u64, workers: usize) -> u64 {
        match self.name {
            "fib" | "fib_par" => 1,
            "blocking_pressure" => 4 * workers as u64 * n,
            _ => n,
        }
    }

    pub fn size(&self, profile: Profile) -> u64 {
        match profile {
            Profile::Full => self.full,
            Profile::Quick => self.quick,
            Profile::Tiny => self.tiny,
        }
    }
}

// ---- expected-result formulas ------------------------------------------------

/// T(n) = n(n-1)/2, the sum of 0..n.
pub fn tri(n: u64) -> u128 {
    let n = n as u128;
    if n == 0 {
        0
    } else {
        n * (n - 1) / 2
    }
}

fn e_tri(n: u64, _: usize) -> String {
    tri(n).to_string()
}
fn e_sum_1_to_n(n: u64, _: usize) -> String {
    tri(n + 1).to_string()
}
fn e_fib(n: u64, _: usize) -> String {
    let (mut a, mut b) = (0u128, 1u128);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a.to_string()
}
fn e_sum_squares(n: u64, _: usize) -> String {
    let n = n as u128;
    (n * (n + 1) * (2 * n + 1) / 6).to_string()
}
/// π(n) by a sieve (the peers use trial division; the two must agree).
fn e_primes(n: u64, _: usize) -> String {
    if n < 2 {
        return "0".into();
    }
    let n = n as usize;
    let mut composite = vec![false; n + 1];
    let mut count = 0u64;
    for i in 2..=n {
        if !composite[i] {
            count += 1;
            let mut j = i * i;
            while j <= n {
                composite[j] = true;
                j += i;
            }
        }
    }
    count.to_string()
}
fn e_async_compute(n: u64, _: usize) -> String {
    (100 * tri(n) + 4950 * n as u128).to_string()
}
fn e_blocking(n: u64, w: usize) -> String {
    (4 * w as u128 * n as u128).to_string()
}
fn e_fizzbuzz(n: u64, _: usize) -> String {
    let fb = n / 15;
    let f = n / 3 - fb;
    let b = n / 5 - fb;
    let v = n - f - b - fb;
    let mut s = String::new();
    let _ = write!(s, "F:{f},B:{b},FB:{fb},V:{v}");
    s
}
fn e_times_5(n: u64, _: usize) -> String {
    (n as u128 * 5).to_string()
}
fn e_times_10(n: u64, _: usize) -> String {
    (n as u128 * 10).to_string()
}
fn e_times_20(n: u64, _: usize) -> String {
    (n as u128 * 20).to_string()
}

// ---- published figures -------------------------------------------------------

const SEQ_HW: &str = "MacBook Pro M-series";
const CC_HW: &str = "M1/M2 Mac, Linux x64";
const WYN_HW: &str = "their machine, unspecified";
const SS_HW: &str = "modern i5";
const COFLUX_HW: &str = "AMD Ryzen 9 7940H, Windows, MSVC";

const fn seq(system: &'static str, ms: f64, ops: u64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "Seq",
        system,
        hardware: SEQ_HW,
        value: Published::TotalMs { ms, ops },
        quote,
    }
}
const fn cc(system: &'static str, rate: f64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "Concurrent-C",
        system,
        hardware: CC_HW,
        value: Published::OpsPerSec(rate),
        quote,
    }
}
const fn wyn(system: &'static str, ms: f64, ops: u64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "Wyn",
        system,
        hardware: WYN_HW,
        value: Published::TotalMs { ms, ops },
        quote,
    }
}
const fn ss(system: &'static str, rate: f64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "steady_state",
        system,
        hardware: SS_HW,
        value: Published::OpsPerSec(rate),
        quote,
    }
}
const fn coflux(ns: f64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "Coflux",
        system: "Coflux",
        hardware: COFLUX_HW,
        value: Published::NsPerOp(ns),
        quote,
    }
}

const NONE: &[SeedFigure] = &[];
const NO_KEYS: &[&str] = &[];

macro_rules! w {
    ($name:expr, $group:expr, $desc:expr, $full:expr, $quick:expr, $tiny:expr, $exp:expr, $unit:expr, $keys:expr, $seeds:expr) => {
        Workload {
            name: $name,
            description: $desc,
            group: $group,
            full: $full,
            quick: $quick,
            tiny: $tiny,
            expected: $exp,
            ops_unit: $unit,
            extra_keys: $keys,
            seeds: $seeds,
            quick_skip: &[],
            quick_skip_why: "",
        }
    };
}

/// `std` creates an OS thread per task on these rows: seconds per run at
/// the quick size, most of the quick budget for a reference point.
const STD_THREAD_PER_TASK: &str =
    "std spawns an OS thread per task here: tens of seconds at this size";

const fn skip_std(w: Workload) -> Workload {
    Workload {
        quick_skip: &["std"],
        quick_skip_why: STD_THREAD_PER_TASK,
        ..w
    }
}

/// On these rows every message is a hand-off between two OS threads that
/// park in between: a futex wake-up each way, seconds per run at the quick
/// size (most of the quick budget) for a reference point.
const THREADS_PARK_PER_MESSAGE: &str =
    "OS threads park and wake each other for every message here: seconds per run at this size";

const fn skip_parking_threads(w: Workload) -> Workload {
    Workload {
        quick_skip: &["std", "crossbeam", "flume"],
        quick_skip_why: THREADS_PARK_PER_MESSAGE,
        ..w
    }
}

/// The whole catalogue, in the order of `docs/bench-catalogue.md`.
pub static CATALOGUE: &[Workload] = &[
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
        "skynet's 10-ary tree with the fork-join API (spindle::fork, rayon's join): \
         a child no worker took runs inline in its parent's await",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "leaves",
        NO_KEYS,
        NONE
    ),
    skip_std(w!(
        "pipeline_1x5",
        "pipeline",
        "1 chain of 5 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_5,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_4x10",
        "pipeline",
        "4 concurrent chains of 10 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_10,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_8x5",
        "pipeline",
        "8 concurrent chains of 5 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_5,
        "pipelines",
        NO_KEYS,
        &[coflux(4670.0, "~214 K/s, ~4.67 µs/pipeline (C=8, D=5)")]
    )),
    skip_std(w!(
        "pipeline_8x10",
        "pipeline",
        "8 concurrent chains of 10 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_10,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_16x10",
        "pipeline",
        "16 concurrent chains of 10 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_10,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_8x20",
        "pipeline",
        "8 concurrent chains of 20 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_20,
        "pipelines",
        NO_KEYS,
        NONE
    )),
];

/// Looks a workload up by name.
pub fn find(name: &str) -> Option<&'static Workload> {
    CATALOGUE.iter().find(|w| w.name == name)
}

/// All names, for error messages.
pub fn names() -> Vec<&'static str> {
    CATALOGUE.iter().map(|w| w.name).collect()
}

/// Resolves a comma list (or `all`) into catalogue rows, in catalogue order.
pub fn select(spec: &str) -> Result<Vec<&'static Workload>, String> {
    if spec.trim() == "all" {
        return Ok(CATALOGUE.iter().collect());
    }
    let mut wanted = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match find(part) {
            Some(w) => wanted.push(w.name),
            None => {
                return Err(format!(
                    "unknown workload `{part}`; valid names: all, {}",
                    names().join(", ")
                ))
            }
        }
    }
    if wanted.is_empty() {
        return Err("no workload named; use `all` or a comma list".into());
    }
    Ok(CATALOGUE
        .iter()
        .filter(|w| wanted.contains(&w.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut n = names();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), CATALOGUE.len());
    }

    #[test]
    fn formulas_match_the_seed_figures() {
        assert_eq!(
            (find("skynet").unwrap().expected)(1_000_000, 2),
            "499999500000"
        );
        assert_eq!((find("fib").unwrap().expected)(40, 2), "102334155");
        assert_eq!((find("fib_par").unwrap().expected)(35, 2), "9227465");
        assert_eq!(
            (find("sum_squares").unwrap().expected)(1_000_000, 2),
            "333333833333500000"
        );
        assert_eq!((find("primes").unwrap().expected)(100_000, 2), "9592");
        assert_eq!((find("primes").unwrap().expected)(10_000, 2), "1229");
        assert_eq!((find("fanout").unwrap().expected)(10, 2), "55");
        assert_eq!(
            (find("async_compute").unwrap().expected)(2, 1),
            (100 + 9900).to_string()
        );
        assert_eq!((find("blocking_pressure").unwrap().expected)(20, 2), "160");
        assert_eq!(
            (find("fizzbuzz_pipeline").unwrap().expected)(30, 1),
            "F:8,B:4,FB:2,V:16"
        );
        assert_eq!((find("pipeline_8x20").unwrap().expected)(10, 1), "200");
        assert_eq!(
            (find("sleep_1m").unwrap().expected)(1_000_000, 2),
            "499999500000"
        );
    }

    #[test]
    fn sizes_respect_shapes() {
        for w in CATALOGUE {
            for p in [Profile::Full, Profile::Quick, Profile::Tiny] {
                let n = w.size(p);
                assert!(n > 0, "{} {:?}", w.name, p);
                w.check_size(n).unwrap();
                if w.name.starts_with("skynet") {
                    let mut m = n;
                    while m % 10 == 0 {
                        m /= 10;
                    }
                    assert_eq!(m, 1, "skynet size must be a power of 10");
                }
                if w.name.starts_with("select_") {
                    assert_eq!(n % 4, 0, "{} {:?}", w.name, p);
                }
                if w.name.starts_with("pipeline_") {
                    assert_eq!(n % 16, 0, "{} {:?}", w.name, p);
                }
            }
        }
    }

    #[test]
    fn sizes_that_break_the_formula_are_refused() {
        assert!(find("skynet").unwrap().check_size(1000).is_ok());
        assert!(find("skynet")
            .unwrap()
            .check_size(1500)
            .unwrap_err()
            .contains("power of 10"));
        assert!(find("select_4").unwrap().check_size(1002).is_err());
        // Pipelines spread a remainder over the first chains: any size works.
        assert!(find("pipeline_16x10").unwrap().check_size(1001).is_ok());
        assert!(find("fib").unwrap().check_size(91).is_err());
        assert!(find("primes").unwrap().check_size(7).is_ok());
    }

    #[test]
    fn agrees_with_the_peers_copy_of_the_catalogue() {
        use spindle_peer_common::catalogue as peer;
        assert_eq!(names(), peer::WORKLOADS.to_vec());
        for w in CATALOGUE {
            for n in [w.tiny, w.quick, w.full, 1_000, 4_096] {
                if w.check_size(n).is_err() {
                    continue;
                }
                for workers in [1, 2, 16] {
                    assert_eq!(w.expected_ops(n, workers), peer::ops(w.name, n, workers));
                    assert_eq!(
                        Some((w.expected)(n, workers)),
                        peer::expected(w.name, n, workers),
                        "{} n={n} workers={workers}",
                        w.name
                    );
                }
            }
        }
    }

    #[test]
    fn select_rejects_unknown_names_listing_valid_ones() {
        let e = select("skynet,nope").unwrap_err();
        assert!(e.contains("nope") && e.contains("pingpong"));
        assert_eq!(select("pingpong,skynet").unwrap()[0].name, "skynet");
        assert_eq!(select("all").unwrap().len(), CATALOGUE.len());
    }

    #[test]
    fn published_figures_convert_to_ns_per_op() {
        let go = find("skynet")
            .unwrap()
            .seeds
            .iter()
            .find(|s| s.system == "Go")
            .unwrap();
        assert!((go.value.ns_per_op() - 170.0).abs() < 1e-9);
        assert!((Published::OpsPerSec(20e6).ns_per_op() - 50.0).abs() < 1e-9);
    }
}
