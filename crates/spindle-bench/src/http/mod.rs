//! `spindle-bench http`: real HTTP servers under `wrk`, a load generator
//! nobody here wrote.
//!
//! Servers, started one at a time in processes of their own, W workers
//! each: hyper on spindle (`spindle-hyper`'s `hello` example), hyper on
//! Tokio (`peer-tokio serve-http`) and Go's `net/http` (`peer-go
//! serve-http`); the protocol and the routes are in
//! `peers/common/src/http.rs`. Each run of a server: start it, check its
//! answers (`check.rs`), then per test (plaintext, json) a warm-up wrk run
//! that is not counted and a measured one, with the server's CPU time read
//! before and after; then the server is killed. Servers alternate run by
//! run (A B C, A B C, ...).
//!
//! Figures per run and test: requests/s, p50 and p99 latency (wrk's
//! `--latency` distribution), errors (socket errors and non-2xx/3xx
//! answers) and server CPU (user + sys) per request. Per server and test,
//! the medians over the runs.
//!
//! wrk runs on the same machine as the server: on a small machine the two
//! compete for the cores, and every figure says so.

mod check;
mod html;
mod wrk;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::server::Launch;
pub use wrk::Load;

/// The tests, in report order: (name, path).
pub const TESTS: [(&str, &str); 2] = [
    ("plaintext", spindle_peer_common::http::PLAINTEXT_PATH),
    ("json", spindle_peer_common::http::JSON_PATH),
];

/// What the command was asked to do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub servers: Vec<Launch>,
    pub load: Load,
    pub warmup: Duration,
    pub runs: u32,
    pub workers: usize,
}

/// One measured wrk run of one server on one test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFigures {
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub requests: u64,
    pub errors: u64,
    pub server_cpu_us_per_request: f64,
}

/// Per server and test: the runs and their medians.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub peer: String,
    pub test: String,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub errors: u64,
    pub server_cpu_us_per_request: f64,
    pub runs: Vec<RunFigures>,
    /// Why the server stopped being measured (or never was).
    pub error: Option<String>,
}

/// The saved run (`<out>/http.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HttpRun {
    pub meta: crate::meta::RunMeta,
    pub workers: usize,
    pub connections: u32,
    pub wrk_threads: u32,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub runs_per_peer: u32,
    /// Always said beside the figures: wrk shares the server's machine.
    pub note: String,
    pub results: Vec<Summary>,
}

/// Runs the plan; `progress` hears one line per run.
pub fn measure(
    plan: &Plan,
    meta: crate::meta::RunMeta,
    progress: &dyn Fn(&str),
) -> Result<HttpRun, String> {
    let wrk = wrk::ensure()?;
    let mut results: Vec<Summary> = plan
        .servers
        .iter()
        .flat_map(|s| TESTS.iter().map(move |(t, _)| empty_summary(&s.name, t)))
        .collect();
    for round in 1..=plan.runs {
        for (i, launch) in plan.servers.iter().enumerate() {
            let mine = &mut results[i * TESTS.len()..(i + 1) * TESTS.len()];
            if mine[0].error.is_some() {
                continue;
            }
            progress(&format!(
                "http run {round}/{} on {}",
                plan.runs, launch.name
            ));
            match run_server(&wrk, launch, plan) {
                Ok(figures) => {
                    for (s, f) in mine.iter_mut().zip(figures) {
                        s.runs.push(f);
                    }
                }
                Err(why) => mine.iter_mut().for_each(|s| s.error = Some(why.clone())),
            }
        }
    }
    results.iter_mut().for_each(summarize);
    Ok(HttpRun {
        meta,
        workers: plan.workers,
        connections: plan.load.connections,
        wrk_threads: plan.load.threads,
        warmup_s: plan.warmup.as_secs_f64(),
        duration_s: plan.load.duration.as_secs_f64(),
        runs_per_peer: plan.runs,
        note: format!(
            "wrk ({} thread) runs on the same machine as the server and competes with it \
             for the cores",
            plan.load.threads
        ),
        results,
    })
}

fn empty_summary(peer: &str, test: &str) -> Summary {
    Summary {
        peer: peer.into(),
        test: test.into(),
        requests_per_s: f64::NAN,
        p50_us: f64::NAN,
        p99_us: f64::NAN,
        errors: 0,
        server_cpu_us_per_request: f64::NAN,
        runs: Vec::new(),
        error: None,
    }
}

/// One run of one server: checked, then each test warmed up and measured.
fn run_server(wrk: &PathBuf, launch: &Launch, plan: &Plan) -> Result<Vec<RunFigures>, String> {
    let mut server = crate::server::start(launch)?;
    let outcome = (|| {
        check::check(server.port).map_err(|e| format!("{}: wrong answer: {e}", launch.name))?;
        let mut figures = Vec::new();
        for (_, path) in TESTS {
            let url = format!("http://127.0.0.1:{}{path}", server.port);
            if !plan.warmup.is_zero() {
                let warm = Load {
                    duration: plan.warmup,
                    ..plan.load
                };
                wrk::run(wrk, &url, warm)?;
            }
            let before = server.cpu()?;
            let r = wrk::run(wrk, &url, plan.load)?;
            let cpu = server.cpu()?.saturating_sub(before);
            figures.push(RunFigures {
                requests_per_s: r.requests_per_s,
                p50_us: r.p50_us,
                p99_us: r.p99_us,
                requests: r.requests,
                errors: r.errors,
                server_cpu_us_per_request: cpu.as_secs_f64() * 1e6 / r.requests.max(1) as f64,
            });
        }
        Ok(figures)
    })();
    let said = server.stop();
    outcome.map_err(|e: String| match crate::runner::tail(&said, 3) {
        t if t.is_empty() => e,
        t => format!("{e} (server said: {t})"),
    })
}

fn summarize(s: &mut Summary) {
    let med = |f: fn(&RunFigures) -> f64| {
        crate::stats::median(&s.runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
    };
    s.requests_per_s = med(|r| r.requests_per_s);
    s.p50_us = med(|r| r.p50_us);
    s.p99_us = med(|r| r.p99_us);
    s.server_cpu_us_per_request = med(|r| r.server_cpu_us_per_request);
    s.errors = s.runs.iter().map(|r| r.errors).sum();
}

impl HttpRun {
    /// The median requests/s of `peer` on `test`, if it was measured.
    pub fn rate(&self, peer: &str, test: &str) -> Option<f64> {
        self.results
            .iter()
            .find(|s| s.peer == peer && s.test == test && s.error.is_none() && !s.runs.is_empty())
            .map(|s| s.requests_per_s)
    }

    /// Whether any server failed or any answer was an error.
    pub fn failed(&self) -> bool {
        self.results
            .iter()
            .any(|s| s.error.is_some() || s.errors > 0)
    }
}

/// The terminal table.
pub fn render(run: &HttpRun) -> String {
    let mut s = format!(
        "http under wrk: {} connections, {} wrk thread, {:.0} s warm-up + {:.0} s measured, \
         {} runs per server (medians); server workers {}\nnote: {}\n",
        run.connections,
        run.wrk_threads,
        run.warmup_s,
        run.duration_s,
        run.runs_per_peer,
        run.workers,
        run.note
    );
    s.push_str(&format!(
        "{:<10} {:<10} {:>12} {:>9} {:>9} {:>7} {:>11} {:>9} {:>9}\n",
        "server",
        "test",
        "requests/s",
        "p50 µs",
        "p99 µs",
        "errors",
        "CPU µs/req",
        "vs tokio",
        "vs go"
    ));
    for r in &run.results {
        if let Some(e) = &r.error {
            s.push_str(&format!("{:<10} {:<10} FAILED: {e}\n", r.peer, r.test));
            continue;
        }
        let ratio = |other: &str| match run.rate(other, &r.test) {
            Some(o) if o > 0.0 => format!("{:.2}x", r.requests_per_s / o),
            _ => "-".into(),
        };
        s.push_str(&format!(
            "{:<10} {:<10} {:>12.0} {:>9.1} {:>9.1} {:>7} {:>11.2} {:>9} {:>9}\n",
            r.peer,
            r.test,
            r.requests_per_s,
            r.p50_us,
            r.p99_us,
            r.errors,
            r.server_cpu_us_per_request,
            ratio("tokio"),
            ratio("go")
        ));
    }
    s.push_str("vs X: requests/s over X's on the same test (above 1: more served)\n");
    s
}

/// Saves `http.json` and `http.html` under `out`; returns the JSON's path.
pub fn save(out: &Path, run: &HttpRun) -> Result<PathBuf, String> {
    let path = crate::meta::save_json(out, "http.json", run)?;
    let page = out.join("http.html");
    std::fs::write(&page, html::render(run))
        .map_err(|e| format!("cannot write {}: {e}", page.display()))?;
    Ok(path)
}
