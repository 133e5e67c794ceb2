//! The `main` every Rust peer shares: `list` from the peer's support table,
//! `run` dispatched to the peer's workload function, one result line out.

use crate::catalogue::{self, WORKLOADS};
use crate::{parse_args, report, unsupported, Command, Request};
use std::fmt::Display;
use std::time::Duration;

/// What a workload run hands back: its result, computed from the work done,
/// the time around the workload alone, and row-specific extras.
#[derive(Debug, Clone)]
pub struct Measured {
    pub result: String,
    pub elapsed: Duration,
    pub extra: Vec<(&'static str, String)>,
}

impl Measured {
    pub fn new(result: impl Display, elapsed: Duration) -> Self {
        Measured {
            result: result.to_string(),
            elapsed,
            extra: Vec::new(),
        }
    }

    /// Adds one `key=value` pair to the result line.
    pub fn with(mut self, key: &'static str, value: impl Display) -> Self {
        self.extra.push((key, value.to_string()));
        self
    }

    /// Times `f` (see [`crate::timed`]) and wraps its value.
    pub fn time<R: Display>(f: impl FnOnce() -> R) -> Self {
        let (r, t) = crate::timed(f);
        Measured::new(r, t)
    }
}

/// Whether a peer runs a workload: `Err(reason)` when it cannot express it.
pub type Support = Result<(), &'static str>;

/// Runs a peer's command line. `support` says which rows the peer expresses
/// (asked for every catalogue name; the Aeron rows are unsupported here for
/// every peer but [`catalogue::AERON_PEER`]); `run` runs one of them. `ops`
/// and the catalogue's extras (payload bytes) are added here from the
/// catalogue.
pub fn run_main(
    peer: &str,
    support: impl Fn(&str) -> Support,
    run: impl FnOnce(&Request) -> Measured,
) {
    let support = |w: &str| match catalogue::AERON_ROWS.contains(&w) {
        true if peer != catalogue::AERON_PEER => Err(catalogue::NO_AERON_PODS),
        _ => support(w),
    };
    match parse_args() {
        Command::List => {
            for w in WORKLOADS {
                match support(w) {
                    Ok(()) => println!("workload {w}"),
                    Err(reason) => println!("unsupported {w} {reason}"),
                }
            }
        }
        Command::Run(req) => {
            if !WORKLOADS.contains(&req.workload.as_str()) {
                eprintln!(
                    "error: `{}` is not a workload of the catalogue",
                    req.workload
                );
                std::process::exit(2);
            }
            if let Err(reason) = support(&req.workload) {
                unsupported(&req.workload, reason);
            }
            let m = run(&req);
            let mut extra = catalogue::extra(&req.workload, req.size);
            extra.extend(m.extra);
            let ops = catalogue::ops(&req.workload, req.size, req.workers);
            report(peer, &req, m.result, ops, m.elapsed, &extra);
        }
    }
}
