//! `spindle-bench echo`: the loopback echo benchmark.
//!
//! Each peer that speaks the `serve-echo` mode (`peers/common/src/echo.rs`:
//! spindle, Tokio, Go) is started in its own process with W workers, binds
//! 127.0.0.1:0 and announces its port. One load generator, the same for every
//! peer ([`drive`]), then opens C connections to it and on each sends a
//! request of B bytes, waits for the whole echo, **checks every byte**, and
//! sends the next (one request in flight per connection, a closed loop).
//!
//! Bounds: only 127.0.0.1 is ever connected to; a run lasts a warm-up plus a
//! measured window (seconds, fixed) and each connection sends at most
//! `--max-requests` requests, so a run stops by itself whatever the server
//! does; the server is killed after it (`crate::server`).
//!
//! Figures per run: requests/s (requests completed in the window, divided
//! by the window), the latency of each of those requests (write start to
//! last byte read) as p50 and p99, and the server's CPU time (user + sys,
//! from `/proc/<pid>/stat` before it is killed) per request served, warm-up
//! included. A request counts only if its echo matched; a mismatch, a short
//! echo or a closed connection fails the run, naming the connection and
//! request. Peers alternate run by
//! run (A B C, A B C, …), as in the suite.
//!
//! The load generator is one thread (or `--client-threads`) on the
//! `polling` crate, level-triggered, so that on a small machine the client
//! takes as little CPU from the server as it can.
//!
//! The load generator is in `load.rs`; the server process is `crate::server`.

mod load;

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use load::{drive, quantile, Load, LoadResult};

use crate::peers::Peer;

/// One run against one peer: its figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFigures {
    pub peer: String,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub counted: u64,
    /// Server CPU (user + sys) per request it served, warm-up included.
    pub server_cpu_us_per_request: f64,
}

/// One run: start the peer, load it, stop it.
pub fn run_once(peer: &Peer, workers: usize, load: &Load) -> Result<RunFigures, String> {
    let mut server = crate::server::start(&crate::server::Launch {
        name: peer.name.clone(),
        program: peer.path.clone(),
        args: vec!["serve-echo".into(), "--workers".into(), workers.to_string()],
    })?;
    let addr = SocketAddr::from(([127, 0, 0, 1], server.port));
    let outcome = drive(addr, load);
    let cpu = server.cpu();
    let err = server.stop();
    let cpu = cpu.map_err(|e| format!("{}: {e}", peer.name))?;
    let mut r = outcome.map_err(|e| {
        let said = crate::runner::tail(&err, 3);
        if said.is_empty() {
            format!("{}: {e}", peer.name)
        } else {
            format!("{}: {e} (server said: {said})", peer.name)
        }
    })?;
    r.latencies_ns.sort_unstable();
    let us = |q| quantile(&r.latencies_ns, q).unwrap_or(0) as f64 / 1e3;
    Ok(RunFigures {
        peer: peer.name.clone(),
        requests_per_s: r.requests_per_s(),
        p50_us: us(0.50),
        p99_us: us(0.99),
        counted: r.counted,
        server_cpu_us_per_request: cpu.as_secs_f64() * 1e6 / r.total.max(1) as f64,
    })
}

/// Per peer, over its runs: the medians.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerSummary {
    pub peer: String,
    pub runs: Vec<RunFigures>,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub server_cpu_us_per_request: f64,
    pub error: Option<String>,
}

pub fn summarize(peer: &str, runs: Vec<RunFigures>, error: Option<String>) -> PeerSummary {
    let med = |f: fn(&RunFigures) -> f64| {
        crate::stats::median(&runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
    };
    PeerSummary {
        peer: peer.to_string(),
        requests_per_s: med(|r| r.requests_per_s),
        p50_us: med(|r| r.p50_us),
        p99_us: med(|r| r.p99_us),
        server_cpu_us_per_request: med(|r| r.server_cpu_us_per_request),
        runs,
        error,
    }
}

/// The saved run (`<out>/echo.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoRun {
    pub meta: crate::meta::RunMeta,
    pub workers: usize,
    pub load: Load,
    pub runs_per_peer: u32,
    pub peers: Vec<PeerSummary>,
}

/// The table: medians per peer, and each peer's throughput against Tokio's and Go's.
pub fn render(run: &EchoRun) -> String {
    let mut s = format!(
        "echo over loopback: {} connections, {}-byte requests, one in flight each; \
         {:.1} s warm-up + {:.1} s measured, {} runs per peer (medians); server workers {}\n",
        run.load.connections,
        run.load.request_bytes,
        run.load.warmup.as_secs_f64(),
        run.load.duration.as_secs_f64(),
        run.runs_per_peer,
        run.workers
    );
    s.push_str(&format!(
        "{:<10} {:>12} {:>9} {:>9} {:>13} {:>9} {:>9}\n",
        "peer", "requests/s", "p50 µs", "p99 µs", "CPU µs/req", "vs tokio", "vs go"
    ));
    let rate = |name: &str| {
        run.peers
            .iter()
            .find(|p| p.peer == name && p.error.is_none())
            .map(|p| p.requests_per_s)
    };
    for p in &run.peers {
        if let Some(e) = &p.error {
            s.push_str(&format!("{:<10} FAILED: {e}\n", p.peer));
            continue;
        }
        let ratio = |other: &str| match rate(other) {
            Some(o) if o > 0.0 => format!("{:.2}x", p.requests_per_s / o),
            _ => "-".into(),
        };
        s.push_str(&format!(
            "{:<10} {:>12.0} {:>9.1} {:>9.1} {:>13.2} {:>9} {:>9}\n",
            p.peer,
            p.requests_per_s,
            p.p50_us,
            p.p99_us,
            p.server_cpu_us_per_request,
            ratio("tokio"),
            ratio("go")
        ));
    }
    s.push_str("vs X: requests/s over X's (above 1: more requests served); CPU: the server process's user+sys per request\n");
    s
}

/// Where the run is saved.
pub fn save(out: &std::path::Path, run: &EchoRun) -> Result<PathBuf, String> {
    crate::meta::save_json(out, "echo.json", run)
}
