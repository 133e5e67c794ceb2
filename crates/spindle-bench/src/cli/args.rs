//! The command line's types (clap derive): the commands, the options every
//! command takes, each command's own options, and the parsers that check
//! their values. What each command does is in `mod.rs`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::fresh;
use crate::workloads::Profile;

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
    /// HTTP servers under wrk: hyper on spindle, hyper on Tokio, Go net/http; plaintext and json
    Http(HttpArgs),
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

#[derive(Debug, Args, Clone)]
pub struct HttpArgs {
    /// Servers: a comma list of spindle (spindle-hyper's hello example) and peers answering `serve-http`
    #[arg(long, default_value = "spindle,tokio,go")]
    pub peer: String,
    /// wrk's connections (kept alive)
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub connections: u32,
    /// wrk's threads
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub wrk_threads: u32,
    /// Seconds of wrk warm-up per test and run (not counted)
    #[arg(long, default_value_t = 1.0, value_parser = parse_secs)]
    pub warmup: f64,
    /// Seconds measured per test and run (wrk counts whole seconds)
    #[arg(long, default_value_t = 5.0, value_parser = parse_secs)]
    pub duration: f64,
    /// Runs per server (servers alternate run by run)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub runs: u32,
    /// Do not write <out>/http.json and <out>/http.html
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
