//! The catalogue of `docs/bench-catalogue.md` in code: workload names, the
//! shape constants each row fixes, what `ops` counts, and the expected result
//! of every row (used only by tests; a peer never prints it).

/// Every workload of the catalogue, in its order.
pub const WORKLOADS: &[&str] = &[
    "skynet",
    "pingpong",
    "fanout",
    "fib",
    "fib_par",
    "sum_squares",
    "primes",
    "chan_single",
    "chan_buffered",
    "chan_unbuffered",
    "async_trivial",
    "async_compute",
    "block_all",
    "select_1",
    "select_2",
    "select_4",
    "payload_4",
    "payload_16",
    "payload_256",
    "payload_1024",
    "blocking_pressure",
    "spawn_nursery",
    "spawn_sequential",
    "spawn_10k",
    "spawn_100k",
    "spawn_1m",
    "live_1m",
    "sleep_1m",
    "fizzbuzz_pipeline",
    "fizzbuzz_pipeline_zc",
    "fizzbuzz_distributed_ipc",
    "fizzbuzz_distributed_udp",
    "fork_inline",
    "fork_pool",
    "skynet_fork",
    "pipeline_1x5",
    "pipeline_4x10",
    "pipeline_8x5",
    "pipeline_8x10",
    "pipeline_16x10",
    "pipeline_8x20",
    "mutex_uncontended",
    "mutex_contended",
    "rwlock_read_heavy",
    "semaphore_limit",
    "notify_pingpong",
    "watch_fanout",
    "joinset_drain",
];

/// The rows that cross two processes over Aeron, and the one peer that
/// runs them (on `spindle-actor-aeron`); every other peer lists them as
/// unsupported with [`NO_AERON_PODS`].
pub const AERON_ROWS: &[&str] = &["fizzbuzz_distributed_ipc", "fizzbuzz_distributed_udp"];
pub const AERON_PEER: &str = "spindle-aeron";
pub const NO_AERON_PODS: &str = "the suite has Aeron pods for spindle-actor only \
     (peer spindle-aeron): this runtime has none here yet";

/// skynet: children per node.
pub const SKYNET_FANOUT: u64 = 10;
/// pingpong: capacity of each of the two channels.
pub const PINGPONG_CAPACITY: usize = 1;
/// fanout: receiving workers and the shared channel's capacity.
pub const FANOUT_WORKERS: usize = 100;
pub const FANOUT_CAPACITY: usize = 1024;
/// chan_single, chan_buffered, select_k, payload_B: channel capacity.
pub const CHAN_CAPACITY: usize = 1000;
/// fib_par: both halves are spawned while `n > FIB_PAR_CUTOFF`.
pub const FIB_PAR_CUTOFF: u64 = 20;
/// async_compute: loop length and the step at which the task yields once.
pub const ASYNC_COMPUTE_STEPS: u64 = 100;
pub const ASYNC_COMPUTE_YIELD_AT: u64 = 50;
/// block_all: tasks per batch.
pub const BLOCK_ALL_BATCH: u64 = 10;
/// spawn_nursery: tasks per batch.
pub const NURSERY_BATCH: u64 = 1000;
/// blocking_pressure: length of one blocking call and of one heartbeat.
pub const BLOCKING_SLEEP: std::time::Duration = std::time::Duration::from_millis(1);
/// sleep_1m: the sleeps are spread over this many milliseconds.
pub const SLEEP_SPREAD_MS: u64 = 100;

/// The synchronisation rows, which the runtime peers run from one place
/// of their own (`sync_rows.rs`).
pub const SYNC_ROWS: &[&str] = &[
    "mutex_uncontended",
    "mutex_contended",
    "rwlock_read_heavy",
    "semaphore_limit",
    "notify_pingpong",
    "watch_fanout",
    "joinset_drain",
];

/// semaphore_limit: the tasks and the permits they share.
pub const SEMAPHORE_TASKS: u64 = 1000;
pub const SEMAPHORE_PERMITS: usize = 8;
/// watch_fanout: the watchers following the one sender.
pub const WATCHERS: u64 = 100;
/// rwlock_read_heavy: index `i` writes when `i % RW_WRITE_EVERY == 0`
/// (5 % of the operations), reads otherwise.
pub const RW_WRITE_EVERY: u64 = 20;

/// mutex_contended, rwlock_read_heavy: the tasks sharing the lock, `4·W`.
pub fn contenders(workers: usize) -> u64 {
    4 * workers as u64
}

/// The indices `i < n` that task `t` of `tasks` handles: `i ≡ t (mod
/// tasks)`, so that every index is handled once whatever the task count.
pub fn strided(t: u64, tasks: u64, n: u64) -> impl Iterator<Item = u64> {
    (t..n).step_by(tasks as usize)
}

/// `T(n) = n(n-1)/2`, the sum of `0..n`.
pub fn triangle(n: u64) -> u64 {
    (n as u128 * n.saturating_sub(1) as u128 / 2) as u64
}

/// select_k: the number of producers `k`.
pub fn select_arity(workload: &str) -> Option<usize> {
    workload.strip_prefix("select_")?.parse().ok()
}

/// payload_B: the message size `B` in bytes.
pub fn payload_bytes(workload: &str) -> Option<usize> {
    workload.strip_prefix("payload_")?.parse().ok()
}

/// pipeline_CxD: `(C chains, D stages)`.
pub fn pipeline_shape(workload: &str) -> Option<(u64, u64)> {
    let (c, d) = workload.strip_prefix("pipeline_")?.split_once('x')?;
    Some((c.parse().ok()?, d.parse().ok()?))
}

/// pipeline: how many of the `n` executions chain `c` of `chains` runs
/// (`n / C` each, the remainder spread over the first chains so that the
/// total is always `n`).
pub fn chain_share(n: u64, chains: u64, c: u64) -> u64 {
    n / chains + u64::from(c < n % chains)
}

/// sleep_1m: how long task `i` sleeps, `1 + (i mod 100)` ms: the sleeps
/// spread evenly over 1..=100 ms, neighbouring tasks on different ticks.
pub fn sleep_duration(i: u64) -> std::time::Duration {
    std::time::Duration::from_millis(1 + i % SLEEP_SPREAD_MS)
}

/// blocking_pressure: the number of blocking tasks, `4·W`.
pub fn blockers(workers: usize) -> usize {
    4 * workers
}

/// fizzbuzz: channel capacity in messages for `n` messages. The catalogue
/// fixes 1<<20 at the full size (2^26) and 1<<16 at the quick one (2^22),
/// which is `n / 64` in both; the same rule is used for other sizes, clamped.
pub fn fizzbuzz_capacity(n: u64) -> usize {
    (n / 64).clamp(2, 1 << 20) as usize
}

/// fizzbuzz: messages per batch, half a channel.
pub fn fizzbuzz_batch(n: u64) -> usize {
    fizzbuzz_capacity(n) / 2
}

/// What `ops` counts for this row (see the catalogue's last column).
pub fn ops(workload: &str, n: u64, workers: usize) -> u64 {
    match workload {
        "fib" | "fib_par" => 1,
        "blocking_pressure" => blockers(workers) as u64 * n,
        _ => n,
    }
}

/// Extra `key=value` pairs the catalogue fixes from the size alone.
pub fn extra(workload: &str, n: u64) -> Vec<(&'static str, String)> {
    match payload_bytes(workload) {
        Some(b) => vec![("bytes", (n * b as u64).to_string())],
        None => Vec::new(),
    }
}

/// The FizzBuzz result for `1..=n`, computed from the closed form.
pub fn fizzbuzz_expected(n: u64) -> String {
    let fb = n / 15;
    let f = n / 3 - fb;
    let b = n / 5 - fb;
    let v = n - f - b - fb;
    format!("F:{f},B:{b},FB:{fb},V:{v}")
}

/// The result the harness expects for `workload` at size `n` with `workers`
/// workers, or `None` for a name not in the catalogue. For checking only.
pub fn expected(workload: &str, n: u64, workers: usize) -> Option<String> {
    let r: u128 = match workload {
        "fanout" => n as u128 * (n as u128 + 1) / 2,
        "fib" | "fib_par" => {
            let (mut a, mut b) = (0u128, 1u128);
            for _ in 0..n {
                (a, b) = (b, a + b);
            }
            a
        }
        "sum_squares" => n as u128 * (n as u128 + 1) * (2 * n as u128 + 1) / 6,
        "primes" => sieve_count(n) as u128,
        "async_compute" => 100 * triangle(n) as u128 + 4950 * n as u128,
        "blocking_pressure" => (blockers(workers) as u64 * n) as u128,
        "watch_fanout" => WATCHERS as u128 * n as u128,
        "fizzbuzz_pipeline" | "fizzbuzz_pipeline_zc" => return Some(fizzbuzz_expected(n)),
        w if AERON_ROWS.contains(&w) => return Some(fizzbuzz_expected(n)),
        w if pipeline_shape(w).is_some() => {
            let (_, d) = pipeline_shape(w)?;
            n as u128 * d as u128
        }
        w if WORKLOADS.contains(&w) => triangle(n) as u128,
        _ => return None,
    };
    Some(r.to_string())
}

/// π(n) by a sieve: an independent check of the peers' trial division.
fn sieve_count(n: u64) -> u64 {
    let n = n as usize;
    if n < 2 {
        return 0;
    }
    let mut composite = vec![false; n + 1];
    let mut count = 0;
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
    count
}

/// The small size every peer's tests run a row at: a few milliseconds of
/// work each, but still several batches, chains and tree levels.
pub fn tiny_size(workload: &str) -> u64 {
    match workload {
        "fib" => 20,
        "fib_par" => 23,
        "blocking_pressure" => 3,
        "spawn_nursery" => 2_500,
        "fizzbuzz_pipeline" | "fizzbuzz_pipeline_zc" => (1 << 12) + 7,
        w if AERON_ROWS.contains(&w) => (1 << 16) + 7,
        "chan_single" | "chan_buffered" => 10_000,
        "watch_fanout" => 200,
        w if pipeline_shape(w).is_some() => 170,
        _ => 1_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_figures() {
        assert_eq!(expected("skynet", 1_000_000, 4).unwrap(), "499999500000");
        assert_eq!(expected("skynet_fork", 1_000, 2).unwrap(), "499500");
        assert_eq!(expected("fib", 40, 4).unwrap(), "102334155");
        assert_eq!(expected("fib_par", 35, 4).unwrap(), "9227465");
        assert_eq!(
            expected("sum_squares", 1_000_000, 4).unwrap(),
            "333333833333500000"
        );
        assert_eq!(expected("primes", 100_000, 4).unwrap(), "9592");
        assert_eq!(expected("primes", 10_000, 4).unwrap(), "1229");
        assert_eq!(expected("fanout", 10, 4).unwrap(), "55");
        assert_eq!(expected("blocking_pressure", 20, 2).unwrap(), "160");
        assert_eq!(expected("pipeline_8x20", 100, 2).unwrap(), "2000");
        assert_eq!(expected("sleep_1m", 1_000_000, 2).unwrap(), "499999500000");
        assert_eq!(
            expected("fizzbuzz_pipeline", 15, 2).unwrap(),
            "F:4,B:2,FB:1,V:8"
        );
        assert_eq!(expected("watch_fanout", 7, 2).unwrap(), "700");
        assert_eq!(expected("nonesuch", 1, 1), None);
    }

    #[test]
    fn shapes() {
        assert_eq!(select_arity("select_4"), Some(4));
        assert_eq!(payload_bytes("payload_1024"), Some(1024));
        assert_eq!(pipeline_shape("pipeline_16x10"), Some((16, 10)));
        assert_eq!((0..16).map(|c| chain_share(170, 16, c)).sum::<u64>(), 170);
        assert_eq!(fizzbuzz_capacity(1 << 26), 1 << 20);
        assert_eq!(fizzbuzz_capacity(1 << 22), 1 << 16);
        assert_eq!(extra("payload_16", 10), vec![("bytes", "160".to_string())]);
        assert_eq!(sleep_duration(0).as_millis(), 1);
        assert_eq!(sleep_duration(99).as_millis(), 100);
        assert_eq!(sleep_duration(100).as_millis(), 1);
        assert!(WORKLOADS.iter().all(|w| expected(w, 100, 2).is_some()));
        let all: u64 = (0..7).flat_map(|t| strided(t, 7, 100)).sum();
        assert_eq!(all, triangle(100));
        assert_eq!(strided(9, 10, 5).count(), 0);
    }
}
