//! `spindle-bench telemetry-cost`: what spindle-actor's telemetry server
//! costs the fizzbuzz pipeline.
//!
//! The spindle peer runs a fizzbuzz row (zero-copy by default) at `--size`
//! messages, alternately with telemetry off and on. "On" is
//! `SPINDLE_ACTOR_TELEMETRY=127.0.0.1:0`: the server thread with its 100 ms
//! sampler, plus a client in the peer fetching `/metrics` and
//! `/api/graph.json` every 50 ms for the whole run, far more often than a
//! Prometheus scrape or the live page would (`peers/spindle/src/fizzbuzz.rs`).
//! Rounds alternate the order (off then on, on then off) so that a drift in
//! the machine's load falls on both sides.
//!
//! Every run is checked as in the suite (exit status, result against the
//! catalogue's formula, ops); an "on" run must also report that scrapes were
//! answered (`scrapes=` > 0 on its result line), so a server that never
//! served cannot pass for a cheap one. Figures: each side's median
//! messages/s, and the paired ratio of on to off times with its 95 %
//! bootstrap interval; the cost is that ratio minus one. The process's CPU
//! time (user + sys) is paired the same way: on a noisy machine it shows
//! what the server and its client took even when wall times scatter.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::meta::RunMeta;
use crate::peers::Peer;
use crate::runner::{check_run, run_process, Status};
use crate::stats::{median, paired_ratio, Ratio};
use crate::workloads;

/// The variable that turns telemetry on in the spindle peer.
pub const TELEMETRY_ENV: &str = "SPINDLE_ACTOR_TELEMETRY";

/// What one `telemetry-cost` invocation measured.
#[derive(Debug, Serialize)]
pub struct TelemetryCost {
    pub meta: RunMeta,
    pub workload: String,
    pub size: u64,
    pub workers: usize,
    pub rounds: u32,
    /// Timed-region nanoseconds, run by run (`off[r]` ran beside `on[r]`).
    pub off_ns: Vec<u64>,
    pub on_ns: Vec<u64>,
    /// Process CPU time (user + sys), run by run.
    pub off_cpu_ns: Vec<u64>,
    pub on_cpu_ns: Vec<u64>,
    /// Scrapes answered in each "on" run.
    pub scrapes: Vec<u64>,
    /// Median messages per second.
    pub off_msgs_per_s: f64,
    pub on_msgs_per_s: f64,
    /// On time / off time, paired.
    pub ratio: Ratio,
    /// On CPU time / off CPU time, paired.
    pub cpu_ratio: Ratio,
}

impl TelemetryCost {
    /// The throughput lost to telemetry, in percent (negative: none seen).
    pub fn cost_pct(&self) -> f64 {
        (self.ratio.ratio - 1.0) * 100.0
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub workload: String,
    pub size: u64,
    pub workers: usize,
    pub rounds: u32,
    /// Per run.
    pub timeout: Duration,
}

/// Runs the rounds; the first failed run ends it with the reason.
pub fn measure(
    peer: &Peer,
    plan: &Plan,
    mut meta: RunMeta,
    progress: &dyn Fn(&str),
) -> Result<TelemetryCost, String> {
    let job = Job::new(peer, plan)?;
    let t = run_rounds(&job, progress)?;
    let size = plan.size;
    let per_s = |ns: &[u64]| {
        let xs: Vec<f64> = ns.iter().map(|&t| size as f64 / (t as f64 / 1e9)).collect();
        median(&xs).unwrap_or(0.0)
    };
    let as_f = |ns: &[u64]| ns.iter().map(|&t| t as f64).collect::<Vec<_>>();
    let ratio = paired_ratio(&as_f(&t.on_ns), &as_f(&t.off_ns)).ok_or("no runs to compare")?;
    let cpu_ratio =
        paired_ratio(&as_f(&t.on_cpu_ns), &as_f(&t.off_cpu_ns)).ok_or("no CPU times")?;
    meta.loadavg_end = crate::meta::loadavg();
    Ok(TelemetryCost {
        meta,
        workload: plan.workload.clone(),
        size,
        workers: plan.workers,
        rounds: plan.rounds,
        off_msgs_per_s: per_s(&t.off_ns),
        on_msgs_per_s: per_s(&t.on_ns),
        off_ns: t.off_ns,
        on_ns: t.on_ns,
        off_cpu_ns: t.off_cpu_ns,
        on_cpu_ns: t.on_cpu_ns,
        scrapes: t.scrapes,
        ratio,
        cpu_ratio,
    })
}

/// The plan's row on the peer, checked and ready to run.
struct Job<'a> {
    peer: &'a Peer,
    plan: &'a Plan,
    w: &'static workloads::Workload,
    args: Vec<String>,
    expected: String,
}

/// One run's figures: its timed region, its process's CPU time (user +
/// sys), and the scrapes its result line says were answered.
struct RunFigures {
    ns: u64,
    cpu_ns: u64,
    scrapes: Option<u64>,
}

impl<'a> Job<'a> {
    /// The job, if the workload exists, takes the size and the peer runs it.
    fn new(peer: &'a Peer, plan: &'a Plan) -> Result<Job<'a>, String> {
        let workload = &plan.workload;
        let w =
            workloads::find(workload).ok_or_else(|| format!("unknown workload `{workload}`"))?;
        w.check_size(plan.size)?;
        peer.support(workload)
            .map_err(|why| format!("{} cannot run {workload}: {why}", peer.name))?;
        Ok(Job {
            peer,
            plan,
            w,
            args: crate::runner::peer_args(w, plan.size, plan.workers),
            expected: (w.expected)(plan.size, plan.workers),
        })
    }

    /// One run with telemetry `on` or off, checked as in the suite.
    fn run(&self, on: bool) -> Result<RunFigures, String> {
        let Plan {
            ref workload,
            size,
            workers,
            timeout,
            ..
        } = *self.plan;
        let path = &self.peer.path;
        let env: &[(&str, &str)] = if on {
            &[(TELEMETRY_ENV, "127.0.0.1:0")]
        } else {
            &[]
        };
        let o = run_process(path, &self.args, env, timeout)
            .map_err(|e| format!("could not start {}: {e}", path.display()))?;
        let side = if on { "telemetry on" } else { "telemetry off" };
        let line = check_run(self.w, size, workers, &self.expected, &o).map_err(|s| match s {
            Status::Failed(why) | Status::Unsupported(why) | Status::Skipped(why) => {
                format!("{workload} with {side}: {why}")
            }
            Status::Ok => unreachable!("check_run fails with a reason"),
        })?;
        let scrapes = match line.extra.get("scrapes") {
            None => None,
            Some(v) => Some(
                v.parse::<u64>()
                    .map_err(|_| format!("{workload} with {side}: `scrapes={v}` is not a count"))?,
            ),
        };
        Ok(RunFigures {
            ns: line.ns,
            cpu_ns: o.user_ns + o.sys_ns,
            scrapes,
        })
    }
}

/// Every run's figures, by side, in run order.
struct Times {
    off_ns: Vec<u64>,
    on_ns: Vec<u64>,
    off_cpu_ns: Vec<u64>,
    on_cpu_ns: Vec<u64>,
    scrapes: Vec<u64>,
}

/// The rounds, off then on in even rounds and on then off in odd ones; an
/// "on" run whose server answered no scrape ends them.
fn run_rounds(job: &Job<'_>, progress: &dyn Fn(&str)) -> Result<Times, String> {
    let rounds = job.plan.rounds;
    let mut t = Times {
        off_ns: Vec::new(),
        on_ns: Vec::new(),
        off_cpu_ns: Vec::new(),
        on_cpu_ns: Vec::new(),
        scrapes: Vec::new(),
    };
    for round in 0..rounds {
        progress(&format!("telemetry-cost round {}/{rounds}", round + 1));
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for on in order {
            let f = job.run(on)?;
            if on {
                match f.scrapes {
                    Some(k) if k > 0 => t.scrapes.push(k),
                    _ => {
                        return Err(format!(
                            "{} with telemetry on: the server answered no scrape \
                             (is {TELEMETRY_ENV} honoured by {}?)",
                            job.plan.workload,
                            job.peer.path.display()
                        ))
                    }
                }
                t.on_ns.push(f.ns);
                t.on_cpu_ns.push(f.cpu_ns);
            } else {
                t.off_ns.push(f.ns);
                t.off_cpu_ns.push(f.cpu_ns);
            }
        }
    }
    Ok(t)
}

/// The human-readable summary.
pub fn render(c: &TelemetryCost) -> String {
    let m = |x: f64| x / 1e6;
    format!(
        "telemetry-cost: {} size {} on {} workers, {} rounds ({} cores, {}; {})\n\
         \x20 telemetry off  {:>8.1} M msg/s (median)\n\
         \x20 telemetry on   {:>8.1} M msg/s (median; scrapes answered per run: {:?})\n\
         \x20 on/off time    {} [{:.3}, {:.3}]  cost {:+.1} %\n\
         \x20 on/off CPU     {} [{:.3}, {:.3}]  (process user + sys)\n",
        c.workload,
        c.size,
        c.workers,
        c.rounds,
        c.meta.machine.cores,
        c.meta.machine.cpu_model,
        c.meta.date,
        m(c.off_msgs_per_s),
        m(c.on_msgs_per_s),
        c.scrapes,
        c.ratio.display(),
        c.ratio.lo,
        c.ratio.hi,
        c.cost_pct(),
        c.cpu_ratio.display(),
        c.cpu_ratio.lo,
        c.cpu_ratio.hi,
    )
}

/// Writes `<out>/telemetry.json`.
pub fn save(out: &Path, c: &TelemetryCost) -> Result<PathBuf, String> {
    crate::meta::save_json(out, "telemetry.json", c)
}
