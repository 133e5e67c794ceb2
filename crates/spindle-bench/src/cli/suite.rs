//! The suite command (the default command and `run`): the plan of
//! workloads and peers, the run, its table and its saved outputs.

use std::time::Duration;

use super::{build_options, out_dir, Common, RunArgs};
use crate::meta;
use crate::peers::{self, BuildOptions, PeerInfo};
use crate::report::{self, json};
use crate::runner::{self, Plan};
use crate::workloads::{self, Profile};

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
