//! `compare`: regression check of the latest run against a saved one.
//!
//! For every (workload, peer) row present and ok in both, the ratio of the
//! latest median to the baseline's, with a bootstrap interval over the two
//! independent sample sets. A row is a *red flag* (Concurrent-C's term) when
//! it is slower by more than the threshold **and** the slow-down is
//! significant (`stats::Ratio::significant`: enough samples, the interval
//! above 1), or when it was ok in the baseline and now fails or is missing
//! from a run that ran its workload (its peer unavailable, say). Rows
//! compared at different sizes or worker counts are skipped with a note:
//! they measure different work; a baseline from another machine is said
//! first, since every ratio then mixes machine and code.

use std::fmt::Write as _;

use crate::report::json::{LatestRun, RowJson};
use crate::report::table::fmt_ns;
use crate::stats;

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub workload: String,
    pub peer: String,
    pub what: String,
    pub red_flag: bool,
}

/// The findings of `latest` against `baseline`: a note if the machines
/// differ, then each row of `latest` that `baseline` has, then each ok
/// row of `baseline` that `latest` lacks.
pub fn compare(baseline: &LatestRun, latest: &LatestRun, threshold_pct: f64) -> Vec<Finding> {
    let mut out: Vec<Finding> = other_machine(baseline, latest).into_iter().collect();
    for now in &latest.results {
        let Some(base) = baseline.row(&now.workload, &now.peer) else {
            continue;
        };
        out.extend(compare_row(base, now, threshold_pct));
    }
    for base in baseline.results.iter().filter(|b| b.ok) {
        if latest.row(&base.workload, &base.peer).is_some() {
            continue;
        }
        let ran = latest.results.iter().any(|r| r.workload == base.workload);
        out.push(Finding {
            workload: base.workload.clone(),
            peer: base.peer.clone(),
            what: if ran {
                "was ok, now MISSING: the workload ran without this peer".into()
            } else {
                "not run now (the workload was not selected)".into()
            },
            red_flag: ran,
        });
    }
    out
}

/// A note that the baseline was measured on another machine, if it was.
fn other_machine(baseline: &LatestRun, latest: &LatestRun) -> Option<Finding> {
    let (was, is) = (&baseline.meta.machine, &latest.meta.machine);
    if (&was.cpu_model, was.cores) == (&is.cpu_model, is.cores) {
        return None;
    }
    Some(Finding {
        workload: "*".into(),
        peer: "*".into(),
        what: format!(
            "baseline measured on another machine ({}, {} cores; now {}, {} cores): \
             every ratio mixes machine and code",
            was.cpu_model, was.cores, is.cpu_model, is.cores
        ),
        red_flag: false,
    })
}

/// One row of both runs: a new failure, a note that it measured other
/// work, or its change in median; nothing if either run has no time for it.
fn compare_row(base: &RowJson, now: &RowJson, threshold_pct: f64) -> Option<Finding> {
    let f = |what: String, red_flag: bool| Finding {
        workload: now.workload.clone(),
        peer: now.peer.clone(),
        what,
        red_flag,
    };
    if base.ok && now.status == "failed" {
        let why = now.error.clone().unwrap_or_default();
        return Some(f(format!("was ok, now FAILED: {why}"), true));
    }
    if !(base.ok && now.ok) {
        return None;
    }
    if base.size != now.size || base.workers != now.workers {
        return Some(f(
            format!(
                "not compared: size/workers {}/{} vs {}/{}",
                base.size, base.workers, now.size, now.workers
            ),
            false,
        ));
    }
    let r = stats::unpaired_ratio(&now.samples_f64(), &base.samples_f64())?;
    let limit = 1.0 + threshold_pct / 100.0;
    let red = r.significant && r.lo > 1.0 && r.ratio > limit;
    let change = (r.ratio - 1.0) * 100.0;
    Some(f(
        format!(
            "{:+.1}% ({} → {} median; ratio {} CI {:.2}–{:.2})",
            change,
            fmt_ns(base.median_ns.unwrap_or(0.0)),
            fmt_ns(now.median_ns.unwrap_or(0.0)),
            r.display(),
            r.lo,
            r.hi
        ),
        red,
    ))
}

pub fn render(findings: &[Finding], threshold_pct: f64) -> String {
    let mut s = String::new();
    let red: Vec<&Finding> = findings.iter().filter(|f| f.red_flag).collect();
    for f in findings {
        let _ = writeln!(
            s,
            "{} {:<22} {:<10} {}",
            if f.red_flag { "RED " } else { "    " },
            f.workload,
            f.peer,
            f.what
        );
    }
    if red.is_empty() {
        let _ = writeln!(
            s,
            "no significant slow-down beyond {threshold_pct}% ({} rows compared)",
            findings.iter().filter(|f| f.workload != "*").count()
        );
    } else {
        let _ = writeln!(
            s,
            "{} red flag(s): significant slow-down beyond {threshold_pct}%, a new failure or a missing row",
            red.len()
        );
    }
    s
}
