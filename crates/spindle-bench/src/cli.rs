//! The command line (clap derive) and what each command does.
//!
//! - no command: the quick profile, every workload, every available peer;
//!   progress on stderr, the table on stdout, outputs saved, report path printed;
//! - `list`, `run`, `compare`, `check-fresh`, `report`, `echo`,
//!   `telemetry-cost` (see `--help`).
//!
//! Exit status: 0 when every row that ran is correct; 1 when a row failed
//! (wrong result, crash, time-out), a regression was flagged or the run is
//! stale; 2 for bad usage (unknown workload or peer, bad numbers); 3 when
//! every row that ran is correct but a requested peer was missing (not
//! installed, or it failed to build): the others ran and were saved.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

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

use crate::peers::{self, BuildOptions, PeerInfo};
use crate::report::{self, json};
use crate::runner::{self, Plan};
use crate::workloads::{self, Profile};
use crate::{compare, fresh, meta};

#[derive(Debug, Parser)]
#[command(
    name = "spindle-bench",
    version,
    about = "Cross-runtime benchmark suite: spindle against Go, Tokio, std threads and reference crates",
    long_about = "Cross-runtime benchmark suite. With no command: the quick profile, every workload, every \
                  available peer, the table on stdout and the HTML report saved under --out."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Cmd>,
    #[command(flatten)]
    pub common: Common,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Common {
    /// Directory for latest.json, history.jsonl, latest.benchstat.txt and report.html [default: <target>/spindle-bench, untracked]
    #[arg(long, global = true, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Use the committed reference folder <workspace>/bench (the figures the README quotes) as --out
    #[arg(long, global = true, conflicts_with = "out")]
    pub reference: bool,
    /// Do not build the peers; use the binaries that exist
    #[arg(long, global = true)]
    pub no_build: bool,
    /// Worker threads for every peer [default: the cores available]
    #[arg(long, global = true, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub workers: Option<u64>,
    /// Per-run time limit in seconds [default: 60 quick, 300 full, 30 tiny]
    #[arg(long, global = true, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,
    /// An extra peer binary, NAME=PATH (not built; asked `list` like the others)
    #[arg(long = "peer-bin", global = true, value_name = "NAME=PATH", value_parser = parse_peer_bin)]
    pub peer_bin: Vec<(String, PathBuf)>,
    /// Cargo profile the Rust peers are built with (`dev` for fast smoke tests)
    #[arg(long, global = true, default_value = "release", value_name = "PROFILE")]
    pub cargo_profile: String,
    /// No progress lines on stderr
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Workloads with one-line descriptions; peers, whether available, and why not
    List,
    /// Run workloads on peers
    Run(RunArgs),
    /// Regression check of the latest run against a saved run (exit 1 on red flags)
    Compare {
        /// A saved latest.json to compare against
        #[arg(long, value_name = "FILE")]
        baseline: PathBuf,
        /// The run to check [default: <out>/latest.json]
        #[arg(long, value_name = "FILE")]
        latest: Option<PathBuf>,
        /// Slow-down (percent) beyond which a significant change is a red flag
        #[arg(long, default_value_t = 20.0, value_name = "PCT", value_parser = parse_pct)]
        threshold: f64,
    },
    /// Fail when the reference latest.json (or <out>'s) is older than --max-age or than the last commit touching crates/spindle
    CheckFresh {
        /// Maximum age, like 90s, 30m, 24h, 7d
        #[arg(long, default_value = "24h", value_parser = parse_age)]
        max_age: u64,
    },
    /// Regenerate report.html from <out>/latest.json and <out>/history.jsonl
    Report,
    /// Loopback echo benchmark: requests/s and p99 latency of each peer's echo server under one load generator
    Echo(EchoArgs),
    /// What spindle-actor's telemetry server costs fizzbuzz: the spindle peer with telemetry off and on (scraped), alternating
    TelemetryCost(TelemetryArgs),
}

#[derive(Debug, Args, Clone)]
pub struct TelemetryArgs {
    /// The fizzbuzz row to run
    #[arg(long, default_value = "fizzbuzz_pipeline_zc", value_parser = ["fizzbuzz_pipeline_zc", "fizzbuzz_pipeline"])]
    pub workload: String,
    /// Messages per run (the full row's 1<<26 by default; more gives the scraper more rounds)
    #[arg(long, default_value_t = 1 << 26, value_parser = clap::value_parser!(u64).range(1..))]
    pub size: u64,
    /// Rounds: each runs once with telemetry off and once on, the order alternating
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// Do not write <out>/telemetry.json
    #[arg(long)]
    pub no_save: bool,
}

#[derive(Debug, Args, Clone)]
pub struct EchoArgs {
    /// Peers: a comma list (each must answer `serve-echo`)
    #[arg(long, default_value = "spindle,tokio,go")]
    pub peer: String,
    /// Concurrent connections, one request in flight on each
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub connections: u64,
    /// Bytes per request (echoed back whole and checked)
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(16..=1_048_576))]
    pub request_bytes: u64,
    /// Seconds of warm-up per run (not counted)
    #[arg(long, default_value_t = 0.5, value_parser = parse_secs)]
    pub warmup: f64,
    /// Seconds measured per run
    #[arg(long, default_value_t = 2.0, value_parser = parse_secs)]
    pub duration: f64,
    /// Runs per peer (peers alternate run by run)
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
    /// Most requests one connection sends in a run, warm-up included
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_requests: u64,
    /// Load-generator threads (the connections are shared out among them)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub client_threads: u64,
    /// Do not write <out>/echo.json
    #[arg(long)]
    pub no_save: bool,
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=600.0).contains(&x) => Ok(x),
        _ => Err(format!("`{s}`: expected seconds between 0 and 600")),
    }
}

#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Workloads: a comma list or `all`
    #[arg(long, default_value = "all")]
    pub workload: String,
    /// Peers: a comma list or `all`
    #[arg(long, default_value = "all")]
    pub peer: String,
    /// Sizes and run counts: full (docs/bench-catalogue.md), quick (the default command), tiny (smoke test)
    #[arg(long, value_enum, default_value_t = Profile::Quick)]
    pub profile: Profile,
    /// Counted runs per (workload, peer) [default: 5 full, 3 quick, 1 tiny]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: Option<u32>,
    /// Warm-up runs, not counted
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub warmup: u32,
    /// Size for every selected workload, overriding the profile
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub size: Option<u64>,
    /// Print one JSON object per (workload, peer) on stdout instead of the table
    #[arg(long)]
    pub json: bool,
    /// Do not write latest.json, history.jsonl, benchstat or the report
    /// (a tiny-profile run writes them only when --out is given)
    #[arg(long)]
    pub no_save: bool,
}

impl Default for RunArgs {
    fn default() -> Self {
        RunArgs {
            workload: "all".into(),
            peer: "all".into(),
            profile: Profile::Quick,
            runs: None,
            warmup: 1,
            size: None,
            json: false,
            no_save: false,
        }
    }
}

fn parse_peer_bin(s: &str) -> Result<(String, PathBuf), String> {
    let (n, p) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected NAME=PATH"))?;
    if n.is_empty() || n.contains(',') || p.is_empty() {
        return Err(format!("`{s}`: expected NAME=PATH"));
    }
    Ok((n.to_string(), PathBuf::from(p)))
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("`{s}`: expected a non-negative percentage")),
    }
}

fn parse_age(s: &str) -> Result<u64, String> {
    fresh::parse_age(s)
}

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

/// Runs a suite (the default command and `run`).
pub fn suite(c: &Common, a: &RunArgs) -> Result<i32, String> {
    let selected = workloads::select(&a.workload)?;
    if let Some(n) = a.size {
        for w in &selected {
            w.check_size(n)?;
        }
    }
    // Peer names are checked before any build starts.
    let opts = build_options(c);
    let names = suite_peers(c, a, &opts)?;
    let root = peers::workspace_root();
    // Taken before the build: the tree id and date are those of what is measured.
    let mut run_meta = meta::collect(&root);
    let infos = peers::discover(&names, &opts);
    let plan = suite_plan(c, a, &selected, &infos)?;
    let started = std::time::Instant::now();
    let rows = runner::run_suite(&plan, c.quiet);
    let elapsed = started.elapsed();
    run_meta.loadavg_end = meta::loadavg();
    let settings = json::RunSettings {
        profile: a.profile.as_str().into(),
        workers: plan.workers,
        warmup: a.warmup,
        runs: plan.runs,
    };
    let run = json::analyse(run_meta, settings, &infos, &rows);
    if a.json {
        out!("{}", json::json_lines(&run));
    } else {
        out!("{}", report::table::render(&run));
    }
    if !c.quiet {
        eprintln!("spindle-bench: measured in {:.1}s", elapsed.as_secs_f64());
    }
    save_suite(c, a, &run)?;
    let missing: Vec<&str> = infos
        .iter()
        .filter(|p| p.available.is_err())
        .map(|p| p.name.as_str())
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "spindle-bench: missing peer(s): {} (see above); the others ran",
            missing.join(", ")
        );
    }
    Ok(match (run.any_failed(), missing.is_empty()) {
        (true, _) => 1,
        (false, false) => EXIT_PEER_MISSING,
        (false, true) => 0,
    })
}

/// The suite's plan: the selected workloads at their sizes on the
/// available peers (each unavailable one said on stderr); an error if no
/// peer is available.
fn suite_plan(
    c: &Common,
    a: &RunArgs,
    selected: &[&'static workloads::Workload],
    infos: &[PeerInfo],
) -> Result<Plan, String> {
    for p in infos {
        if let Err(why) = &p.available {
            eprintln!("spindle-bench: peer {} unavailable: {why}", p.name);
        }
    }
    let available: Vec<_> = infos
        .iter()
        .filter_map(|p| p.available.clone().ok())
        .collect();
    if available.is_empty() {
        return Err("no peer available (see above): nothing run, nothing saved".into());
    }
    Ok(Plan {
        workloads: selected
            .iter()
            .map(|w| (*w, a.size.unwrap_or(w.size(a.profile))))
            .collect(),
        peers: available,
        workers: c.workers.map(|w| w as usize).unwrap_or_else(meta::cores),
        warmup: a.warmup,
        runs: a.runs.unwrap_or(a.profile.default_runs()),
        runs_given: a.runs.is_some(),
        timeout: Duration::from_secs(c.timeout.unwrap_or(a.profile.default_timeout_s())),
        profile: a.profile,
    })
}

/// Saves a suite's outputs, unless `--no-save`, a tiny run or a selection
/// without `--out` (said on stderr) keeps them out.
fn save_suite(c: &Common, a: &RunArgs, run: &json::LatestRun) -> Result<(), String> {
    // A tiny run is a smoke test, and a selection (of workloads, peers or
    // a size) is a partial picture: neither replaces bench/latest.json or
    // joins the history unless an --out was named for it.
    let whole =
        a.profile != Profile::Tiny && a.workload == "all" && a.peer == "all" && a.size.is_none();
    let save = !a.no_save && (whole || c.out.is_some());
    if !a.no_save && !save && !c.quiet {
        eprintln!(
            "spindle-bench: not saved: a tiny run or a selection (--workload, --peer, --size) \
             does not replace {}; name --out DIR to keep it",
            out_dir(c).join(report::LATEST).display()
        );
    }
    if save {
        let out = out_dir(c);
        let path = report::save(&out, run)?;
        if a.json {
            eprintln!("report: {}", path.display());
        } else {
            outln!("report: {}", path.display());
        }
    }
    Ok(())
}

/// The peers a suite run asks for: `--peer`'s, less, for `all` outside the
/// full profile, those that run in the full profile only (said on stderr).
fn suite_peers(c: &Common, a: &RunArgs, opts: &BuildOptions) -> Result<Vec<String>, String> {
    let mut names = peers::select(&a.peer, opts)?;
    if a.peer.trim() == "all" && a.profile != Profile::Full {
        for (name, why) in peers::FULL_PROFILE_ONLY {
            if names.iter().any(|n| n == name) && !c.quiet {
                eprintln!(
                    "spindle-bench: {name} runs in the full profile only ({why}); \
                     --profile full or --peer {name} runs it"
                );
            }
            names.retain(|n| n != name);
        }
    }
    Ok(names)
}

/// Exit status of a run whose rows are correct but that lacked a peer.
pub const EXIT_PEER_MISSING: i32 = 3;

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
