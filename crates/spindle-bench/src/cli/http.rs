//! The `http` command: builds or finds the servers, runs `http::measure`,
//! prints the table and saves `http.json` and `http.html`.

use super::{build_options, discover, out_dir, Common, HttpArgs};
use crate::http::{self as h, Launch, Load, Plan};
use crate::{meta, peers};
use std::time::Duration;

pub(super) fn http(c: &Common, a: &HttpArgs) -> Result<i32, String> {
    if a.duration < 1.0 {
        return Err(format!(
            "`--duration {}`: wrk measures whole seconds, at least 1",
            a.duration
        ));
    }
    let workers = c.workers.map(|w| w as usize).unwrap_or_else(meta::cores);
    let servers = launches(c, &a.peer, workers)?;
    let plan = Plan {
        servers,
        load: Load {
            connections: a.connections,
            threads: a.wrk_threads,
            duration: Duration::from_secs_f64(a.duration),
        },
        warmup: Duration::from_secs_f64(a.warmup),
        runs: a.runs,
        workers,
    };
    let quiet = c.quiet;
    let progress = |what: &str| {
        if !quiet {
            eprintln!("spindle-bench: {what}");
        }
    };
    let mut run = h::measure(&plan, meta::collect(&peers::workspace_root()), &progress)?;
    run.meta.loadavg_end = meta::loadavg();
    out!("{}", h::render(&run));
    if !a.no_save {
        let path = h::save(&out_dir(c), &run)?;
        outln!("saved: {} (and http.html beside it)", path.display());
    }
    Ok(if run.failed() { 1 } else { 0 })
}

/// The command line of each named server: `spindle` is spindle-hyper's
/// `hello` example; any other name is a peer started as `serve-http`.
fn launches(c: &Common, spec: &str, workers: usize) -> Result<Vec<Launch>, String> {
    let names: Vec<&str> = spec
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err("`--peer`: name at least one server".into());
    }
    let w = workers.to_string();
    let others: Vec<&str> = names.iter().copied().filter(|n| *n != "spindle").collect();
    let found = if others.is_empty() {
        Vec::new()
    } else {
        discover(c, &others.join(","))?
    };
    names
        .iter()
        .map(|&name| {
            if name == "spindle" {
                let program = peers::example("spindle-hyper", "hello", &build_options(c))
                    .map_err(|e| format!("spindle (spindle-hyper's hello example): {e}"))?;
                return Ok(Launch {
                    name: name.into(),
                    program,
                    args: vec![
                        "--addr".into(),
                        "127.0.0.1:0".into(),
                        "--workers".into(),
                        w.clone(),
                    ],
                });
            }
            let info = found
                .iter()
                .find(|p| p.name == name)
                .ok_or_else(|| format!("`--peer {name}`: no such peer"))?;
            let peer = info
                .available
                .as_ref()
                .map_err(|why| format!("{name} is unavailable: {why}"))?;
            Ok(Launch {
                name: name.into(),
                program: peer.path.clone(),
                args: vec!["serve-http".into(), "--workers".into(), w.clone()],
            })
        })
        .collect()
}
