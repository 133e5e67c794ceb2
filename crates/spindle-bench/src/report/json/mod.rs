//! The analysed run, as saved in `bench/latest.json` and printed by `--json`.
//!
//! [`LatestRun`] holds the run's metadata, one [`RowJson`] per (workload,
//! peer) and the geometric-mean summary ([`Geomean`]); [`analyse()`]
//! (`analyse.rs`) builds it from the runner's rows. Every other output
//! (table, benchstat, history, HTML) renders from this model, so `report`
//! can rebuild them from the saved files.
//!
//! Field names follow hyperfine's JSON where one exists (`command`, `mean`,
//! `stddev`, `median`, `min`, `max`, `user`, `system`, `times`, in seconds),
//! next to exact nanosecond fields (`samples_ns`, `median_ns`, …).
//!
//! Invariants: a row that is not ok has no samples, no statistics, no ratio
//! (`samples_ns` empty, every time field `null`); ratios are this row's time
//! over the reference peer's, paired by round.

mod analyse;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use analyse::{
    add_ratios, add_timed_shares, analyse, coverage, geomeans, RunSettings, TIMED_SHARE_FLOOR,
    UNTIMED_FLOOR_NS,
};

use crate::meta::RunMeta;
use crate::stats::Ratio;

pub const SCHEMA: u32 = 1;
/// The peers every row is compared with.
pub const REFERENCES: &[&str] = &["go", "tokio"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerStatus {
    pub name: String,
    pub available: bool,
    pub reason: Option<String>,
    pub path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowJson {
    pub workload: String,
    pub group: String,
    pub peer: String,
    pub command: String,
    pub ok: bool,
    /// `ok`, `failed`, `unsupported` or `skipped` (not run in this profile).
    pub status: String,
    pub error: Option<String>,
    pub result: Option<String>,
    pub expected: String,
    pub ops: Option<u64>,
    pub size: u64,
    pub workers: usize,
    pub samples_ns: Vec<u64>,
    pub median_ns: Option<f64>,
    pub mean_ns: Option<f64>,
    pub min_ns: Option<f64>,
    pub max_ns: Option<f64>,
    pub stddev_ns: Option<f64>,
    pub mad_ns: Option<f64>,
    /// Indices into `samples_ns` beyond median ± 3·MAD.
    pub outliers: Vec<usize>,
    pub ns_per_op: Option<f64>,
    pub wall_ns: Vec<u64>,
    pub user_ns: Vec<u64>,
    pub sys_ns: Vec<u64>,
    /// Largest peak RSS over the counted runs.
    pub peak_rss_bytes: Option<u64>,
    /// The harness's own peak RSS when it spawned the runs; a child's peak
    /// cannot read below it, so `peak_rss_bytes <= rss_floor_bytes` means
    /// "at most this much" (see `runner::Outcome`).
    pub rss_floor_bytes: Option<u64>,
    pub extra: BTreeMap<String, String>,
    /// The peer's own time over its process's wall time less the peer's
    /// start-up (medians; see [`add_timed_shares`]), where more than
    /// [`UNTIMED_FLOOR_NS`] went uncounted. Under [`TIMED_SHARE_FLOOR`]
    /// the row is flagged: most of the process's time fell outside the
    /// region the peer timed.
    #[serde(default)]
    pub timed_share: Option<f64>,
    /// Reference peer → ratio of this row's times to its times.
    pub ratios: BTreeMap<String, Ratio>,
    // hyperfine-like, seconds
    pub mean: Option<f64>,
    pub stddev: Option<f64>,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub user: Option<f64>,
    pub system: Option<f64>,
    pub times: Vec<f64>,
}

impl RowJson {
    /// Peak RSS for display: `≤ 5.6 MiB` when it is at the harness's floor.
    pub fn rss_display(&self, fmt: fn(u64) -> String) -> String {
        match (self.peak_rss_bytes, self.rss_floor_bytes) {
            (Some(p), Some(f)) if p <= f => format!("≤{}", fmt(f)),
            (Some(p), _) => fmt(p),
            _ => String::new(),
        }
    }
    /// The extra keys that matter for this workload, as `k=v` text.
    pub fn extras_display(&self) -> String {
        let keys = crate::workloads::find(&self.workload)
            .map(|w| w.extra_keys)
            .unwrap_or(&[]);
        let mut parts: Vec<String> = keys
            .iter()
            .filter(|k| **k != "bytes") // shown as GB/s below
            .filter_map(|k| self.extra.get(*k).map(|v| format!("{k}={v}")))
            .collect();
        // Derived figures the seeds report: heartbeats achieved, bytes per second.
        let num = |k: &str| self.extra.get(k).and_then(|v| v.parse::<f64>().ok());
        if let (Some(beats), Some(due)) = (num("beats"), num("due")) {
            if due > 0.0 {
                parts.push(format!("({:.0}% of heartbeats)", 100.0 * beats / due));
            }
        }
        if let (Some(bytes), Some(med)) = (num("bytes"), self.median_ns) {
            if med > 0.0 {
                parts.push(format!("{:.2} GB/s", bytes / med));
            }
        }
        // live_1m's figure (docs/bench-catalogue.md): the whole process's peak RSS
        // over the tasks alive at once, so an upper bound per task.
        if let (true, Some(peak), 1..) =
            (self.workload == "live_1m", self.peak_rss_bytes, self.size)
        {
            parts.push(format!(
                "({:.0} B peak RSS per live task)",
                peak as f64 / self.size as f64
            ));
        }
        if let Some(share) = self.timed_share.filter(|&x| x < TIMED_SHARE_FLOOR) {
            parts.push(format!(
                "FLAG: self-timed {:.0}% of its wall time less start-up",
                100.0 * share
            ));
        }
        parts.join(" ")
    }

    pub fn samples_f64(&self) -> Vec<f64> {
        self.samples_ns.iter().map(|&x| x as f64).collect()
    }
}

/// spindle's ratios to one other peer, summarised over one class of rows
/// ([`Summarised`](crate::workloads::Summarised)): the rows both ran, each ratio paired run by run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Geomean {
    pub peer: String,
    pub against: String,
    /// `runtime` or `compiler` ([`Summarised::as_str`](crate::workloads::Summarised::as_str)).
    #[serde(default)]
    pub class: String,
    pub geomean: f64,
    pub rows: usize,
    pub faster: usize,
    pub slower: usize,
    pub not_significant: usize,
    /// The workloads the mean covers.
    #[serde(default)]
    pub workloads: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatestRun {
    pub schema: u32,
    #[serde(flatten)]
    pub meta: RunMeta,
    pub profile: String,
    pub workers: usize,
    pub warmup: u32,
    pub runs: u32,
    pub peers: Vec<PeerStatus>,
    pub results: Vec<RowJson>,
    pub summary: Vec<Geomean>,
}

impl LatestRun {
    pub fn any_failed(&self) -> bool {
        self.results.iter().any(|r| r.status == "failed")
    }
    pub fn row(&self, workload: &str, peer: &str) -> Option<&RowJson> {
        self.results
            .iter()
            .find(|r| r.workload == workload && r.peer == peer)
    }
}

pub fn to_string(run: &LatestRun) -> String {
    serde_json::to_string_pretty(run).expect("the model serialises")
}

pub fn read(path: &std::path::Path) -> Result<LatestRun, String> {
    let s = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&s)
        .map_err(|e| format!("{} is not a spindle-bench run: {e}", path.display()))
}

/// The `--json` output: one compact object per (workload, peer), a line each.
pub fn json_lines(run: &LatestRun) -> String {
    run.results
        .iter()
        .map(|r| serde_json::to_string(r).expect("row serialises") + "\n")
        .collect()
}
