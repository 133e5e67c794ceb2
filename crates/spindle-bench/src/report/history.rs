//! The JSONL history, `bench/history.jsonl`: one line per (workload, peer)
//! per suite run, appended, never rewritten.
//!
//! Each line carries what is needed to plot a row over commits without the
//! run it came from: git commit, date, machine (cores, CPU model), toolchain
//! versions, workload, peer, profile, size, workers, status, the samples and
//! the peak RSS. Unsupported and skipped rows are not recorded; failed rows are, with no
//! samples. Lines that do not parse are skipped when reading (the file is
//! append-only and may be hand-edited), but counted.

use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::json::LatestRun;
use crate::meta::{Machine, Toolchains};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryLine {
    #[serde(default)]
    pub run_id: String,
    pub date: String,
    pub timestamp_unix: u64,
    pub git_commit: String,
    pub git_dirty: bool,
    pub machine: Machine,
    pub toolchains: Toolchains,
    pub profile: String,
    pub workload: String,
    pub peer: String,
    pub size: u64,
    pub workers: usize,
    pub ok: bool,
    pub ops: Option<u64>,
    pub samples_ns: Vec<u64>,
    pub median_ns: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
}

pub fn lines_of(run: &LatestRun) -> Vec<HistoryLine> {
    run.results
        .iter()
        .filter(|r| r.status == "ok" || r.status == "failed")
        .map(|r| HistoryLine {
            run_id: run.meta.run_id.clone(),
            date: run.meta.date.clone(),
            timestamp_unix: run.meta.timestamp_unix,
            git_commit: run.meta.git_commit.clone(),
            git_dirty: run.meta.git_dirty,
            machine: run.meta.machine.clone(),
            toolchains: run.meta.toolchains.clone(),
            profile: run.profile.clone(),
            workload: r.workload.clone(),
            peer: r.peer.clone(),
            size: r.size,
            workers: r.workers,
            ok: r.ok,
            ops: r.ops,
            samples_ns: r.samples_ns.clone(),
            median_ns: r.median_ns,
            peak_rss_bytes: r.peak_rss_bytes,
        })
        .collect()
}

pub fn to_jsonl(lines: &[HistoryLine]) -> String {
    lines
        .iter()
        .map(|l| serde_json::to_string(l).expect("history line serialises") + "\n")
        .collect()
}

/// Parses JSONL; returns the good lines and how many were skipped.
pub fn parse(text: &str) -> (Vec<HistoryLine>, usize) {
    let mut good = Vec::new();
    let mut bad = 0;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str(l) {
            Ok(h) => good.push(h),
            Err(_) => bad += 1,
        }
    }
    (good, bad)
}

pub fn append(path: &Path, run: &LatestRun) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(to_jsonl(&lines_of(run)).as_bytes())
}

pub fn read(path: &Path) -> (Vec<HistoryLine>, usize) {
    match std::fs::read_to_string(path) {
        Ok(s) => parse(&s),
        Err(_) => (Vec::new(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> HistoryLine {
        HistoryLine {
            run_id: "1".into(),
            date: "2026-11-21T19:00:00Z".into(),
            timestamp_unix: 1,
            git_commit: "abc".into(),
            git_dirty: false,
            machine: Machine {
                cores: 2,
                cpu_model: "Some CPU @ 2GHz".into(),
                os: "linux x86_64".into(),
            },
            toolchains: Toolchains {
                rustc: "rustc 1.95.0".into(),
                go: "go version go1.26".into(),
                crates: Default::default(),
            },
            profile: "quick".into(),
            workload: "skynet".into(),
            peer: "spindle".into(),
            size: 100_000,
            workers: 2,
            ok: true,
            ops: Some(100_000),
            samples_ns: vec![3, 1, 2],
            median_ns: Some(2.0),
            peak_rss_bytes: Some(4096),
        }
    }

    #[test]
    fn jsonl_round_trip() {
        let mut b = sample();
        b.peer = "go".into();
        b.samples_ns.clear();
        b.ok = false;
        let text = to_jsonl(&[sample(), b.clone()]);
        assert_eq!(text.lines().count(), 2);
        let (back, bad) = parse(&(text + "not json\n"));
        assert_eq!(bad, 1);
        assert_eq!(back, vec![sample(), b]);
    }
}
