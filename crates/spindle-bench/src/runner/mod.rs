//! Running peers: one process per measured run, checked, and the suite loop.
//!
//! [`run_process`] (`process.rs`) runs and measures one peer process;
//! [`check_run`] (`check.rs`) checks its result line against what was asked.
//!
//! [`run_suite`] runs a plan: for each workload, a warm-up round and then the
//! counted rounds, every peer once per round in the same order (round r:
//! A B C…, then round r+1), so drift in the machine hits every peer alike.
//!
//! Invariants:
//! - a row gets samples only from runs whose result line parsed, named the
//!   workload and size asked for, and whose `result` equals the catalogue's
//!   expected value; any other run fails the row, which then runs no more
//!   and keeps no time (`samples` is emptied);
//! - a peer that exits with status 3 marks the row unsupported, not failed;
//! - every peer in a plan gets the same `workers`.

mod check;
mod process;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use check::{check_run, parse_result_line, ResultLine, EXIT_UNSUPPORTED};
pub use process::{own_peak_rss, run_process, tail, Exit, Outcome};

use crate::peers::Peer;
use crate::workloads::{Profile, Workload};

/// One counted run of a row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub ns: u64,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub peak_rss_bytes: u64,
    pub rss_floor_bytes: u64,
}

/// What became of a (workload, peer) row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "reason", rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Wrong result, crash, time-out or malformed output. Never has a time.
    Failed(String),
    /// The peer says it cannot express this workload.
    Unsupported(String),
    /// Not run in this profile (a slow reference peer on the quick profile).
    Skipped(String),
}

/// One (workload, peer) row after the suite ran.
#[derive(Debug, Clone)]
pub struct Row {
    pub workload: &'static Workload,
    pub peer: String,
    pub size: u64,
    pub workers: usize,
    pub status: Status,
    pub expected: String,
    pub result: Option<String>,
    pub ops: Option<u64>,
    pub samples: Vec<Sample>,
    /// Extra keys of the median run's result line: the measured run whose
    /// time is the median (the lower of the middle two for an even count),
    /// so that counts reported beside a time come from the run it names.
    pub extra: BTreeMap<String, String>,
    pub command: String,
}

impl Row {
    pub fn ok(&self) -> bool {
        self.status == Status::Ok
    }
    pub fn samples_ns(&self) -> Vec<f64> {
        self.samples.iter().map(|s| s.ns as f64).collect()
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Each workload with the size it runs at.
    pub workloads: Vec<(&'static Workload, u64)>,
    pub peers: Vec<Peer>,
    pub workers: usize,
    pub warmup: u32,
    /// Counted runs per row, unless the workload sets its own (below).
    pub runs: u32,
    /// `runs` was asked for (`--runs`): it then holds for every workload.
    pub runs_given: bool,
    pub timeout: Duration,
    /// Decides which rows the quick profile skips.
    pub profile: Profile,
}

impl Plan {
    /// Counted runs of `w`'s rows: the workload's own number of passes in
    /// the full profile (10 / 5 / 3 for spawn_10k / 100k /
    /// 1m) unless `--runs` was given, else `runs`.
    pub fn runs_for(&self, w: &Workload) -> u32 {
        match w.full_passes() {
            Some(n) if self.profile == Profile::Full && !self.runs_given => n,
            _ => self.runs,
        }
    }

    /// Warm-up and counted rounds of `w`'s rows.
    pub fn rounds_for(&self, w: &Workload) -> u32 {
        self.warmup + self.runs_for(w)
    }
}

/// Progress on stderr: one rewritten line on a terminal, a line per workload otherwise.
pub struct Progress {
    total: usize,
    done: usize,
    tty: bool,
    started: Instant,
    quiet: bool,
}

impl Progress {
    pub fn new(total: usize, quiet: bool) -> Self {
        Progress {
            total,
            done: 0,
            tty: std::io::stderr().is_terminal(),
            started: Instant::now(),
            quiet,
        }
    }
    fn step(&mut self, what: &str) {
        self.done += 1;
        if self.tty && !self.quiet {
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r\x1b[K[{:>4}/{}] {:>5.1}s {what}",
                self.done,
                self.total,
                self.started.elapsed().as_secs_f64()
            );
            let _ = e.flush();
        }
    }
    fn workload_done(&mut self, name: &str, rows: &[Row]) {
        if self.quiet {
            return;
        }
        let summary: Vec<String> = rows
            .iter()
            .map(|r| match &r.status {
                Status::Ok => format!("{} ok", r.peer),
                Status::Failed(_) => format!("{} FAILED", r.peer),
                Status::Unsupported(_) => format!("{} n/a", r.peer),
                Status::Skipped(_) => format!("{} skipped", r.peer),
            })
            .collect();
        let mut e = std::io::stderr().lock();
        let clear = if self.tty { "\r\x1b[K" } else { "" };
        let _ = writeln!(
            e,
            "{clear}[{:>4}/{}] {:>5.1}s {name}: {}",
            self.done,
            self.total,
            self.started.elapsed().as_secs_f64(),
            summary.join(", ")
        );
    }
}

/// The peer command line for one run.
pub fn peer_args(w: &Workload, size: u64, workers: usize) -> Vec<String> {
    vec![
        "run".into(),
        w.name.into(),
        "--size".into(),
        size.to_string(),
        "--workers".into(),
        workers.to_string(),
    ]
}

fn command_string(bin: &Path, args: &[String]) -> String {
    let mut s = bin.display().to_string();
    for a in args {
        s.push(' ');
        s.push_str(a);
    }
    s
}

/// Whether a row runs at all: unsupported by the peer, skipped by the profile, or Ok.
fn initial_status(plan: &Plan, w: &Workload, p: &Peer) -> Status {
    match p.support(w.name) {
        Ok(()) if plan.profile == Profile::Quick && w.quick_skip.contains(&p.name.as_str()) => {
            Status::Skipped(format!(
                "not run on the quick profile ({}); see --profile full",
                w.quick_skip_why
            ))
        }
        Ok(()) => Status::Ok,
        Err(reason) => Status::Unsupported(reason),
    }
}

/// Runs the plan; returns one row per (workload, peer that lists it).
pub fn run_suite(plan: &Plan, quiet: bool) -> Vec<Row> {
    let total: usize = plan
        .workloads
        .iter()
        .map(|(w, _)| {
            plan.peers
                .iter()
                .filter(|p| initial_status(plan, w, p) == Status::Ok)
                .count()
                * plan.rounds_for(w) as usize
        })
        .sum();
    let mut progress = Progress::new(total, quiet);
    let mut all = Vec::new();
    for &(w, size) in &plan.workloads {
        let rows = run_workload(plan, w, size, &mut progress);
        progress.workload_done(w.name, &rows);
        all.extend(rows);
    }
    all
}

/// One peer's row while its workload runs: the row, the binary it runs,
/// and the extras of each counted run (beside `row.samples`, index for
/// index), so that the median run's can be kept.
struct RowRun {
    bin: PathBuf,
    row: Row,
    extras: Vec<BTreeMap<String, String>>,
}

impl RowRun {
    /// Takes one run's outcome: a counted run's time and extras join the
    /// row; a run that fails its check ends the row, keeping no time.
    fn record(&mut self, checked: Result<ResultLine, Status>, o: &Outcome, counted: bool) {
        match checked {
            Ok(line) => {
                self.row.result = Some(line.result.clone());
                self.row.ops = Some(line.ops);
                if counted {
                    self.extras.push(line.extra);
                    self.row.samples.push(Sample {
                        ns: line.ns,
                        wall_ns: o.wall_ns,
                        user_ns: o.user_ns,
                        sys_ns: o.sys_ns,
                        peak_rss_bytes: o.peak_rss_bytes,
                        rss_floor_bytes: o.rss_floor_bytes,
                    });
                }
            }
            Err(status) => {
                if let Status::Failed(_) = status {
                    self.row.result = parse_result_line(&o.stdout).ok().map(|l| l.result);
                }
                self.row.status = status;
                self.row.samples.clear();
                self.extras.clear();
            }
        }
    }

    /// The finished row, with the extras of its median run.
    fn finish(mut self) -> Row {
        if let Some(i) = median_run(&self.row.samples) {
            self.row.extra = std::mem::take(&mut self.extras[i]);
        }
        self.row
    }
}

/// Runs one workload on every peer: warm-up and counted rounds, the peers
/// alternating within each round.
fn run_workload(plan: &Plan, w: &'static Workload, size: u64, progress: &mut Progress) -> Vec<Row> {
    let (runs, rounds) = (plan.runs_for(w), plan.rounds_for(w));
    let expected = (w.expected)(size, plan.workers);
    let args = peer_args(w, size, plan.workers);
    let mut rows: Vec<RowRun> = plan
        .peers
        .iter()
        .map(|p| RowRun {
            bin: p.path.clone(),
            row: Row {
                workload: w,
                peer: p.name.clone(),
                size,
                workers: plan.workers,
                status: initial_status(plan, w, p),
                expected: expected.clone(),
                result: None,
                ops: None,
                samples: Vec::new(),
                extra: BTreeMap::new(),
                command: command_string(&p.path, &args),
            },
            extras: Vec::new(),
        })
        .collect();
    let done_before = progress.done;
    let listed = rows.iter().filter(|r| r.row.ok()).count();
    for round in 0..rounds {
        // Each round starts one peer further on, so that no peer always
        // runs first (on a cold cache) or right after the same other.
        for i in rotated(rows.len(), round as usize) {
            let r = &mut rows[i];
            if !r.row.ok() {
                continue;
            }
            let phase = if round < plan.warmup {
                "warm-up".to_string()
            } else {
                format!("run {}/{runs}", round - plan.warmup + 1)
            };
            progress.step(&format!("{} {} {phase}", w.name, r.row.peer));
            match run_process(&r.bin, &args, &[], plan.timeout) {
                Ok(o) => {
                    let checked = check_run(w, size, plan.workers, &expected, &o);
                    r.record(checked, &o, round >= plan.warmup);
                }
                Err(e) => {
                    r.row.status =
                        Status::Failed(format!("could not start {}: {e}", r.bin.display()));
                }
            }
        }
    }
    // Rows that stopped early skipped their remaining steps; count them done.
    progress.done = done_before + listed * rounds as usize;
    rows.into_iter().map(RowRun::finish).collect()
}

/// `0..len`, starting at `round mod len` and wrapping around.
fn rotated(len: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..len).map(move |i| (i + round) % len)
}

/// The index of the median run by time: the lower of the middle two for an
/// even count (a run that happened, not an average of two).
fn median_run(samples: &[Sample]) -> Option<usize> {
    let mut order: Vec<usize> = (0..samples.len()).collect();
    order.sort_by_key(|&i| samples[i].ns);
    order.get(samples.len().checked_sub(1)? / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_profile_gives_spawn_rows_their_own_passes() {
        let w = |n| crate::workloads::find(n).unwrap();
        let plan = |profile, runs_given| Plan {
            workloads: Vec::new(),
            peers: Vec::new(),
            workers: 2,
            warmup: 1,
            runs: 5,
            runs_given,
            timeout: Duration::from_secs(1),
            profile,
        };
        let full = plan(Profile::Full, false);
        let passes: Vec<u32> = ["spawn_10k", "spawn_100k", "spawn_1m", "skynet"]
            .into_iter()
            .map(|n| full.runs_for(w(n)))
            .collect();
        assert_eq!(passes, [10, 5, 3, 5]);
        assert_eq!(plan(Profile::Full, true).runs_for(w("spawn_10k")), 5);
        assert_eq!(plan(Profile::Quick, false).runs_for(w("spawn_10k")), 5);
    }

    #[test]
    fn each_round_starts_with_the_next_peer() {
        let order = |round| rotated(3, round).collect::<Vec<_>>();
        assert_eq!(order(0), [0, 1, 2]);
        assert_eq!(order(1), [1, 2, 0]);
        assert_eq!(order(5), [2, 0, 1]);
        assert_eq!(rotated(0, 4).count(), 0);
    }

    #[test]
    fn the_median_run_is_a_run_that_happened() {
        let runs = |ns: &[u64]| -> Vec<Sample> {
            ns.iter()
                .map(|&ns| Sample {
                    ns,
                    wall_ns: ns,
                    user_ns: 0,
                    sys_ns: 0,
                    peak_rss_bytes: 0,
                    rss_floor_bytes: 0,
                })
                .collect()
        };
        assert_eq!(median_run(&runs(&[])), None);
        assert_eq!(median_run(&runs(&[7])), Some(0));
        assert_eq!(median_run(&runs(&[30, 10, 20])), Some(2));
        assert_eq!(
            median_run(&runs(&[40, 10, 30, 20])),
            Some(3),
            "lower middle"
        );
        assert_eq!(median_run(&runs(&[5, 9, 1, 7, 3])), Some(0));
    }
}
