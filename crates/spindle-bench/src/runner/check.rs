//! A run's result line, and the check of one run against what was asked.
//!
//! Invariants: a run passes only if its result line parsed, named the
//! workload, size and workers asked for, and its `result` and `ops` equal
//! the catalogue's expected values (and its witness fields pass); a peer
//! that exits with status 3 gives [`Status::Unsupported`], not a failure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::process::{tail, Exit, Outcome};
use super::Status;
use crate::workloads::Workload;

/// Exit status of a peer asked for a workload it cannot express.
pub const EXIT_UNSUPPORTED: i32 = 3;

/// The parsed `SPINDLE-BENCH …` result line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultLine {
    pub workload: String,
    pub peer: String,
    pub size: u64,
    pub workers: u64,
    pub result: String,
    pub ops: u64,
    pub ns: u64,
    pub extra: BTreeMap<String, String>,
}

/// Finds and parses the result line in a peer's stdout.
pub fn parse_result_line(stdout: &str) -> Result<ResultLine, String> {
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("SPINDLE-BENCH "))
        .collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => return Err("no `SPINDLE-BENCH` result line on stdout".into()),
        _ => {
            return Err(format!(
                "{} result lines on stdout, expected one",
                lines.len()
            ))
        }
    };
    let mut kv = BTreeMap::new();
    for field in line.split_whitespace().skip(1) {
        let (k, v) = field
            .split_once('=')
            .ok_or_else(|| format!("field `{field}` is not key=value"))?;
        kv.insert(k.to_string(), v.to_string());
    }
    let mut take = |k: &str| {
        kv.remove(k)
            .ok_or_else(|| format!("result line lacks `{k}=`"))
    };
    let num = |k: &str, v: String| {
        v.parse::<u64>()
            .map_err(|_| format!("`{k}={v}` is not a non-negative integer"))
    };
    let workload = take("workload")?;
    let peer = take("peer")?;
    let size = num("size", take("size")?)?;
    let workers = num("workers", take("workers")?)?;
    let result = take("result")?;
    let ops = num("ops", take("ops")?)?;
    let ns = num("ns", take("ns")?)?;
    Ok(ResultLine {
        workload,
        peer,
        size,
        workers,
        result,
        ops,
        ns,
        extra: kv,
    })
}

/// Checks one run's outcome against what was asked; `Ok` carries the parsed line.
pub fn check_run(
    w: &Workload,
    size: u64,
    workers: usize,
    expected: &str,
    o: &Outcome,
) -> Result<ResultLine, Status> {
    let why = |msg: String| {
        let t = tail(&o.stderr, 5);
        Status::Failed(if t.is_empty() {
            msg
        } else {
            format!("{msg}; stderr: {t}")
        })
    };
    match &o.exit {
        Exit::TimedOut => return Err(why("timed out".into())),
        Exit::Signal(s) => return Err(why(format!("killed by signal {s}"))),
        Exit::Code(EXIT_UNSUPPORTED) => {
            let reason = o.stderr.trim();
            return Err(Status::Unsupported(if reason.is_empty() {
                "unsupported".into()
            } else {
                tail(reason, 2)
            }));
        }
        Exit::Code(0) => {}
        Exit::Code(c) => return Err(why(format!("exit status {c}"))),
    }
    let line = parse_result_line(&o.stdout).map_err(why)?;
    if line.workload != w.name || line.size != size || line.workers != workers as u64 {
        return Err(why(format!(
            "result line answers workload={} size={} workers={}, asked {} {} {}",
            line.workload, line.size, line.workers, w.name, size, workers
        )));
    }
    if line.result != expected {
        return Err(why(format!(
            "wrong result: got {}, expected {}",
            line.result, expected
        )));
    }
    let ops = w.expected_ops(size, workers);
    if line.ops != ops {
        return Err(why(format!(
            "ops={} but the catalogue counts {ops} for this size",
            line.ops
        )));
    }
    crate::witness::check(w.name, size, &line.extra).map_err(why)?;
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_result_line_with_extras() {
        let out = "noise\nSPINDLE-BENCH workload=blocking_pressure peer=go size=20 workers=2 result=160 ops=160 ns=123456 beats=95 due=100\n";
        let l = parse_result_line(out).unwrap();
        assert_eq!(l.workload, "blocking_pressure");
        assert_eq!((l.size, l.workers, l.ops, l.ns), (20, 2, 160, 123456));
        assert_eq!(l.result, "160");
        assert_eq!(l.extra.get("beats").map(String::as_str), Some("95"));
        assert_eq!(l.extra.len(), 2);
    }

    #[test]
    fn rejects_malformed_result_lines() {
        assert!(parse_result_line("nothing here")
            .unwrap_err()
            .contains("no `SPINDLE-BENCH`"));
        let e =
            parse_result_line("SPINDLE-BENCH workload=x peer=p size=1 workers=1 result=1 ops=1")
                .unwrap_err();
        assert!(e.contains("ns"), "{e}");
        let e = parse_result_line(
            "SPINDLE-BENCH workload=x peer=p size=-1 workers=1 result=1 ops=1 ns=1",
        )
        .unwrap_err();
        assert!(e.contains("size=-1"), "{e}");
        let two =
            "SPINDLE-BENCH workload=x peer=p size=1 workers=1 result=1 ops=1 ns=1\n".repeat(2);
        assert!(parse_result_line(&two)
            .unwrap_err()
            .contains("2 result lines"));
    }
}
