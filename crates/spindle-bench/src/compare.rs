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

use crate::report::json::LatestRun;
use crate::stats;

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub workload: String,
    pub peer: String,
    pub what: String,
    pub red_flag: bool,
}

pub fn compare(baseline: &LatestRun, latest: &LatestRun, threshold_pct: f64) -> Vec<Finding> {
    let mut out = Vec::new();
    let (was, is) = (&baseline.meta.machine, &latest.meta.machine);
    if (&was.cpu_model, was.cores) != (&is.cpu_model, is.cores) {
        out.push(Finding {
            workload: "*".into(),
            peer: "*".into(),
            what: format!(
                "baseline measured on another machine ({}, {} cores; now {}, {} cores): \
                 every ratio mixes machine and code",
                was.cpu_model, was.cores, is.cpu_model, is.cores
            ),
            red_flag: false,
        });
    }
    for now in &latest.results {
        let Some(base) = baseline.row(&now.workload, &now.peer) else {
            continue;
        };
        let f = |what: String, red_flag: bool| Finding {
            workload: now.workload.clone(),
            peer: now.peer.clone(),
            what,
            red_flag,
        };
        if base.ok && now.status == "failed" {
            out.push(f(
                format!(
                    "was ok, now FAILED: {}",
                    now.error.clone().unwrap_or_default()
                ),
                true,
            ));
            continue;
        }
        if !(base.ok && now.ok) {
            continue;
        }
        if base.size != now.size || base.workers != now.workers {
            out.push(f(
                format!(
                    "not compared: size/workers {}/{} vs {}/{}",
                    base.size, base.workers, now.size, now.workers
                ),
                false,
            ));
            continue;
        }
        let Some(r) = stats::unpaired_ratio(&now.samples_f64(), &base.samples_f64()) else {
            continue;
        };
        let limit = 1.0 + threshold_pct / 100.0;
        let red = r.significant && r.lo > 1.0 && r.ratio > limit;
        let change = (r.ratio - 1.0) * 100.0;
        out.push(f(
            format!(
                "{:+.1}% ({} → {} median; ratio {} CI {:.2}–{:.2})",
                change,
                crate::report::table::fmt_ns(base.median_ns.unwrap_or(0.0)),
                crate::report::table::fmt_ns(now.median_ns.unwrap_or(0.0)),
                r.display(),
                r.lo,
                r.hi
            ),
            red,
        ));
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
