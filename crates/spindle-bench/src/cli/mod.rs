//! The command line (clap derive) and what each command does.
//!
//! - no command: the quick profile, every workload, every available peer;
//!   progress on stderr, the table on stdout, outputs saved, report path printed;
//! - `list`, `run`, `compare`, `check-fresh`, `report`, `echo`, `http`,
//!   `telemetry-cost` (see `--help`).
//!
//! Exit status: 0 when every row that ran is correct; 1 when a row failed
//! (wrong result, crash, time-out), a regression was flagged or the run is
//! stale; 2 for bad usage (unknown workload or peer, bad numbers); 3 when
//! every row that ran is correct but a requested peer was missing (not
//! installed, or it failed to build): the others ran and were saved.
//!
//! The argument types are in `args.rs`, the suite command in `suite.rs`,
//! the `http` command in `http.rs`.

/// Like `print!`, but a closed stdout (`… | head`) is not a panic: the run
/// still saves its outputs and keeps its exit status.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

mod args;
mod http;
mod suite;

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

pub use args::{Cli, Cmd, Common, EchoArgs, HttpArgs, RunArgs, TelemetryArgs};
pub use suite::{suite, EXIT_PEER_MISSING};

use crate::peers::{self, BuildOptions, PeerInfo};
use crate::report::{self, json};
use crate::workloads;
use crate::{compare, fresh, meta};

/// Parses the process arguments and runs; returns the exit status.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// Where a run's files go: `--out`, or the committed reference folder with
/// `--reference`, else an untracked folder in the target directory, so
/// that a user's runs leave the working tree clean.
fn out_dir(c: &Common) -> PathBuf {
    let root = peers::workspace_root();
    match (&c.out, c.reference) {
        (Some(out), _) => out.clone(),
        (None, true) => reference_dir(&root),
        (None, false) => peers::target_dir(&root).join("spindle-bench"),
    }
}

/// The committed folder of reference figures.
fn reference_dir(root: &std::path::Path) -> PathBuf {
    root.join("bench")
}

fn build_options(c: &Common) -> BuildOptions {
    BuildOptions {
        no_build: c.no_build,
        cargo_profile: c.cargo_profile.clone(),
        extra: c.peer_bin.clone(),
    }
}

pub fn dispatch(cli: Cli) -> Result<i32, String> {
    let c = &cli.common;
    match &cli.command {
        None => suite(c, &RunArgs::default()),
        Some(Cmd::Run(a)) => suite(c, a),
        Some(Cmd::List) => list(c),
        Some(Cmd::Compare {
            baseline,
            latest,
            threshold,
        }) => compare_runs(c, baseline, latest.as_ref(), *threshold),
        Some(Cmd::CheckFresh { max_age }) => check_fresh(c, *max_age),
        Some(Cmd::Echo(a)) => echo(c, a),
        Some(Cmd::Http(a)) => http::http(c, a),
        Some(Cmd::TelemetryCost(a)) => telemetry_cost(c, a),
        Some(Cmd::Report) => {
            let out = out_dir(c);
            let run = json::read(&out.join(report::LATEST))?;
            let path = report::regenerate(&out, &run)?;
            outln!("report: {}", path.display());
            Ok(0)
        }
    }
}

/// `compare`: the findings of the latest run against `baseline`; 1 on a
/// red flag.
fn compare_runs(
    c: &Common,
    baseline: &std::path::Path,
    latest: Option<&PathBuf>,
    threshold: f64,
) -> Result<i32, String> {
    let base = json::read(baseline)?;
    let latest_path = latest
        .cloned()
        .unwrap_or_else(|| out_dir(c).join(report::LATEST));
    let now = json::read(&latest_path)?;
    let findings = compare::compare(&base, &now, threshold);
    out!("{}", compare::render(&findings, threshold));
    Ok(if findings.iter().any(|f| f.red_flag) {
        1
    } else {
        0
    })
}

/// `check-fresh`: 1 when the saved run is stale (see `fresh.rs`) or
/// cannot be read.
fn check_fresh(c: &Common, max_age: u64) -> Result<i32, String> {
    // The committed figures unless a folder is named.
    let root = peers::workspace_root();
    let dir = c.out.clone().unwrap_or_else(|| reference_dir(&root));
    let path = dir.join(report::LATEST);
    let run = match json::read(&path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("benchmarks are stale: {e}");
            return Ok(1);
        }
    };
    let last = meta::last_commit_touching(&root, "crates/spindle");
    let same_tree = run.meta.spindle_tree.is_some()
        && run.meta.spindle_tree == meta::head_tree_id(&root, "crates/spindle");
    if path.starts_with(root.join("bench")) && meta::uncommitted(&root, "bench/latest.json") {
        eprintln!("note: bench/latest.json has uncommitted changes; CI checks the committed one");
    }
    let spindle_rows = run
        .results
        .iter()
        .filter(|r| r.peer == "spindle" && r.ok)
        .count();
    match fresh::check(
        spindle_rows,
        run.meta.timestamp_unix,
        meta::now_unix(),
        max_age,
        last,
        same_tree,
    ) {
        Ok(m) => {
            outln!("{m}");
            Ok(0)
        }
        Err(m) => {
            eprintln!("{m}");
            Ok(1)
        }
    }
}

/// `echo`: every named peer's echo server under the same load, alternating.
fn echo(c: &Common, a: &EchoArgs) -> Result<i32, String> {
    use crate::echo::{self as e, Load};
    if a.duration <= 0.0 {
        return Err("`--duration 0`: need a measured window".into());
    }
    let load = Load {
        connections: a.connections as usize,
        request_bytes: a.request_bytes as usize,
        warmup: Duration::from_secs_f64(a.warmup),
        duration: Duration::from_secs_f64(a.duration),
        max_requests: a.max_requests,
        client_threads: a.client_threads as usize,
    };
    let workers = c.workers.map(|w| w as usize).unwrap_or_else(meta::cores);
    let root = peers::workspace_root();
    let mut run_meta = meta::collect(&root);
    let infos = discover(c, &a.peer)?;
    let results = echo_rounds(c, a, &infos, workers, &load);
    run_meta.loadavg_end = meta::loadavg();
    let run = e::EchoRun {
        meta: run_meta,
        workers,
        load,
        runs_per_peer: a.runs,
        peers: results
            .into_iter()
            .map(|p| e::summarize(&p.name, p.runs, p.error))
            .collect(),
    };
    out!("{}", e::render(&run));
    if !a.no_save {
        let path = e::save(&out_dir(c), &run)?;
        outln!("saved: {}", path.display());
    }
    Ok(if run.peers.iter().any(|p| p.error.is_some()) {
        1
    } else {
        0
    })
}

/// One peer's echo runs so far, or why it stopped (or never started).
struct EchoPeer {
    name: String,
    runs: Vec<crate::echo::RunFigures>,
    error: Option<String>,
}

/// `--runs` rounds of one echo run per peer, the peers alternating; a
/// peer that is unavailable or fails a run runs no more.
fn echo_rounds(
    c: &Common,
    a: &EchoArgs,
    infos: &[PeerInfo],
    workers: usize,
    load: &crate::echo::Load,
) -> Vec<EchoPeer> {
    let mut results: Vec<EchoPeer> = infos
        .iter()
        .map(|p| EchoPeer {
            name: p.name.clone(),
            runs: Vec::new(),
            error: p
                .available
                .as_ref()
                .err()
                .map(|why| format!("unavailable: {why}")),
        })
        .collect();
    for round in 0..a.runs {
        for (info, r) in infos.iter().zip(results.iter_mut()) {
            let Ok(peer) = &info.available else { continue };
            if r.error.is_some() {
                continue;
            }
            if !c.quiet {
                eprintln!(
                    "spindle-bench: echo run {}/{} on {}",
                    round + 1,
                    a.runs,
                    peer.name
                );
            }
            match crate::echo::run_once(peer, workers, load) {
                Ok(f) => r.runs.push(f),
                Err(why) => r.error = Some(why),
            }
        }
    }
    results
}

/// `telemetry-cost`: see `telemetry.rs`.
fn telemetry_cost(c: &Common, a: &TelemetryArgs) -> Result<i32, String> {
    use crate::telemetry as t;
    let workers = c.workers.map(|w| w as usize).unwrap_or_else(meta::cores);
    let timeout = Duration::from_secs(c.timeout.unwrap_or(300));
    let info = discover(c, "spindle")?.pop().ok_or("no spindle peer")?;
    let peer = info
        .available
        .map_err(|why| format!("the spindle peer is unavailable: {why}"))?;
    let quiet = c.quiet;
    let progress = |what: &str| {
        if !quiet {
            eprintln!("spindle-bench: {what}");
        }
    };
    let plan = t::Plan {
        workload: a.workload.clone(),
        size: a.size,
        workers,
        rounds: a.rounds,
        timeout,
    };
    let cost = match t::measure(
        &peer,
        &plan,
        meta::collect(&peers::workspace_root()),
        &progress,
    ) {
        Ok(cost) => cost,
        Err(why) => {
            eprintln!("spindle-bench: telemetry-cost failed: {why}");
            return Ok(1);
        }
    };
    out!("{}", t::render(&cost));
    if !a.no_save {
        let path = t::save(&out_dir(c), &cost)?;
        outln!("saved: {}", path.display());
    }
    Ok(0)
}

fn discover(c: &Common, spec: &str) -> Result<Vec<PeerInfo>, String> {
    let opts = build_options(c);
    let names = peers::select(spec, &opts)?;
    Ok(peers::discover(&names, &opts))
}

fn list(c: &Common) -> Result<i32, String> {
    outln!("workloads ({}):", workloads::CATALOGUE.len());
    let width = workloads::CATALOGUE
        .iter()
        .map(|w| w.name.len())
        .max()
        .unwrap_or(10);
    for w in workloads::CATALOGUE {
        outln!(
            "  {:<width$}  {:<11} full {:>10}  quick {:>9}  {}",
            w.name,
            w.group,
            w.full,
            w.quick,
            w.description
        );
    }
    outln!("peers:");
    for p in discover(c, "all")? {
        match &p.available {
            Ok(peer) => {
                let runs = peer.workloads.values().filter(|r| r.is_ok()).count();
                // Group the rows it does not run by reason, to keep this readable.
                let mut by_reason: Vec<(String, Vec<&str>)> = Vec::new();
                for w in workloads::CATALOGUE.iter().filter(|w| !peer.lists(w.name)) {
                    let reason = peer.support(w.name).err().unwrap_or_default();
                    match by_reason.iter_mut().find(|(r, _)| *r == reason) {
                        Some((_, names)) => names.push(w.name),
                        None => by_reason.push((reason, vec![w.name])),
                    }
                }
                outln!(
                    "  {:<10} available: runs {runs} of {} workloads",
                    p.name,
                    workloads::CATALOGUE.len()
                );
                for (reason, names) in by_reason {
                    outln!("  {:<10}   not {}: {reason}", "", names.join(", "));
                }
            }
            Err(why) => outln!("  {:<10} unavailable: {why}", p.name),
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(args: &[&str]) -> Result<Common, clap::Error> {
        let argv = std::iter::once("spindle-bench").chain(args.iter().copied());
        Cli::try_parse_from(argv).map(|c| c.common)
    }

    #[test]
    fn a_users_run_writes_outside_the_tracked_tree() {
        let root = peers::workspace_root();
        let out = out_dir(&common(&[]).unwrap());
        assert!(!out.starts_with(reference_dir(&root)), "{}", out.display());
        assert!(out.ends_with("spindle-bench"), "{}", out.display());
        assert_eq!(
            out_dir(&common(&["--reference"]).unwrap()),
            reference_dir(&root)
        );
        assert_eq!(
            out_dir(&common(&["--out", "/tmp/x"]).unwrap()),
            PathBuf::from("/tmp/x")
        );
        let both = common(&["--reference", "--out", "/tmp/x"]).unwrap_err();
        assert!(both.to_string().contains("--reference"), "{both}");
    }
}
