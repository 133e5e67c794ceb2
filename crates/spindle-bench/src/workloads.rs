//! The workload catalogue's types and the rules its rows obey; the rows
//! themselves are in [`crate::catalogue`].
//!
//! One [`Workload`] per row of `docs/bench-catalogue.md`: the name a peer is
//! asked for, a one-line description, its group, the full / quick / tiny
//! sizes, the expected result as a function of `size` (and `workers`, which
//! only `blocking_pressure` depends on), the extra `key=value` pairs that
//! matter, and the figures the seed documents publish for it.
//!
//! Invariants:
//! - names are unique and match the catalogue exactly (peers are asked by name);
//! - `expected` is computed from the formula, independently of any peer,
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

pub use crate::catalogue::{tri, CATALOGUE};

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
