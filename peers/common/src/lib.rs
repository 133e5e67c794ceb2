//! The contract between `spindle-bench` and every benchmark peer.
//!
//! A peer is one executable per runtime (`peers/<name>/`). The harness runs it
//! once per measured run, in its own process, so that peak RSS and CPU time
//! belong to that run alone:
//!
//! ```text
//! <peer> list
//!     one line per workload of the catalogue:
//!       `workload <name>`                    the peer runs it
//!       `unsupported <name> <reason...>`     it cannot, and why
//! <peer> run <workload> --size N --workers W
//!     runs the workload once and prints exactly one result line (below),
//!     exit status 0; a peer that cannot run it exits 3 with the reason on
//!     stderr; any other failure exits non-zero with the reason on stderr.
//! ```
//!
//! The result line, identical for every peer in every language:
//!
//! ```text
//! SPINDLE-BENCH workload=<name> peer=<peer> size=<N> workers=<W> result=<R> ops=<O> ns=<T> [key=value ...]
//! ```
//!
//! `result` is what the workload computed (a number, or `k:v,k:v` for
//! workloads with several counts); the harness, never the peer, compares it
//! with the expected value. `ops` is the unit of work counted (tasks,
//! messages, round trips). `ns` is the monotonic time around the workload
//! alone: runtime start-up and tear-down are outside it. Extra `key=value`
//! pairs carry workload-specific figures (heartbeats achieved, bytes moved).
//! Values contain no spaces.
//!
//! Peers that serve the loopback echo benchmark (`spindle-bench echo`) also
//! answer `<peer> serve-echo --workers W`: see [`echo`].

use std::fmt::Display;
use std::time::{Duration, Instant};

pub mod catalogue;
pub mod check;
pub mod echo;
pub mod http;
pub mod kernels;
pub mod peer;
pub mod threads;
pub mod witness;

pub use peer::{run_main, Measured, Support};

/// Exit status of a peer asked for a workload it cannot express.
pub const EXIT_UNSUPPORTED: i32 = 3;

/// A parsed `run` request.
#[derive(Debug, Clone)]
pub struct Request {
    pub workload: String,
    pub size: u64,
    pub workers: usize,
}

/// What a peer's `main` is asked to do.
#[derive(Debug, Clone)]
pub enum Command {
    List,
    Run(Request),
}

/// Parses the peer command line (`list`, or `run W --size N --workers W`).
///
/// On bad input prints a usage error naming what was wrong and exits 2.
pub fn parse_args() -> Command {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("usage: <peer> list | <peer> run <workload> --size N --workers W");
            std::process::exit(2);
        }
    }
}

/// The parser behind [`parse_args`], separate so it can be tested.
pub fn parse(args: &[String]) -> Result<Command, String> {
    match args.first().map(String::as_str) {
        Some("list") => Ok(Command::List),
        Some("run") => {
            let workload = args
                .get(1)
                .filter(|w| !w.starts_with("--"))
                .ok_or("`run` needs a workload name")?
                .clone();
            let mut size = None;
            let mut workers = None;
            let mut rest = args[2..].iter();
            while let Some(flag) = rest.next() {
                let value = rest
                    .next()
                    .ok_or_else(|| format!("flag `{flag}` needs a value"))?;
                let parsed: u64 = value
                    .parse()
                    .map_err(|_| format!("`{flag} {value}`: not a non-negative integer"))?;
                match flag.as_str() {
                    "--size" => size = Some(parsed),
                    "--workers" if parsed == 0 => {
                        return Err("`--workers 0`: need at least one".into())
                    }
                    "--workers" => workers = Some(parsed as usize),
                    other => return Err(format!("unknown flag `{other}`")),
                }
            }
            Ok(Command::Run(Request {
                workload,
                size: size.ok_or("`run` needs --size")?,
                workers: workers.ok_or("`run` needs --workers")?,
            }))
        }
        Some(other) => Err(format!("unknown command `{other}`")),
        None => Err("missing command".into()),
    }
}

/// Times `f`, returning its value and the elapsed monotonic time.
pub fn timed<R>(f: impl FnOnce() -> R) -> (R, Duration) {
    let start = Instant::now();
    let r = f();
    (r, start.elapsed())
}

/// Formats the one result line (see the module docs).
pub fn result_line(
    peer: &str,
    req: &Request,
    result: impl Display,
    ops: u64,
    elapsed: Duration,
    extra: &[(&str, String)],
) -> String {
    let mut line = format!(
        "SPINDLE-BENCH workload={} peer={} size={} workers={} result={} ops={} ns={}",
        req.workload,
        peer,
        req.size,
        req.workers,
        result,
        ops,
        elapsed.as_nanos()
    );
    for (k, v) in extra {
        line.push_str(&format!(" {k}={v}"));
    }
    line
}

/// Prints the result line to stdout.
pub fn report(
    peer: &str,
    req: &Request,
    result: impl Display,
    ops: u64,
    elapsed: Duration,
    extra: &[(&str, String)],
) {
    println!("{}", result_line(peer, req, result, ops, elapsed, extra));
}

/// Exits with [`EXIT_UNSUPPORTED`] and the reason on stderr.
pub fn unsupported(workload: &str, reason: &str) -> ! {
    eprintln!("unsupported {workload}: {reason}");
    std::process::exit(EXIT_UNSUPPORTED);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_run() {
        let Command::Run(r) = parse(&args("run skynet --size 1000 --workers 2")).unwrap() else {
            panic!("expected run")
        };
        assert_eq!(
            (r.workload.as_str(), r.size, r.workers),
            ("skynet", 1000, 2)
        );
    }

    #[test]
    fn rejects_bad_input_naming_it() {
        assert!(parse(&args("run --size 1"))
            .unwrap_err()
            .contains("workload"));
        assert!(parse(&args("run x --size -1 --workers 2"))
            .unwrap_err()
            .contains("-1"));
        assert!(parse(&args("run x --size 1 --workers 0"))
            .unwrap_err()
            .contains("workers 0"));
        assert!(parse(&args("run x --size 1 --bogus 3 --workers 1"))
            .unwrap_err()
            .contains("--bogus"));
        assert!(parse(&args("run x --workers 1"))
            .unwrap_err()
            .contains("--size"));
        assert!(parse(&args("fly")).unwrap_err().contains("fly"));
    }

    #[test]
    fn line_format() {
        let req = Request {
            workload: "fib".into(),
            size: 40,
            workers: 2,
        };
        let l = result_line(
            "tokio",
            &req,
            102334155u64,
            1,
            Duration::from_nanos(5),
            &[("x", "1".into())],
        );
        assert_eq!(
            l,
            "SPINDLE-BENCH workload=fib peer=tokio size=40 workers=2 result=102334155 ops=1 ns=5 x=1"
        );
    }
}
