//! The check every Rust peer's integration test runs against its binary:
//! `list` names each catalogue row once, and every supported row, run at its
//! tiny size, prints one well-formed line whose result is the catalogue's.

use crate::catalogue::{self, WORKLOADS};
use crate::EXIT_UNSUPPORTED;
use std::collections::HashMap;
use std::process::Command;

/// Workers every tiny run uses.
pub const TINY_WORKERS: usize = 2;

/// Runs `bin list` and returns, per catalogue row, `Ok(())` or the
/// unsupported reason; panics if a row is missing, doubled or malformed.
pub fn list(bin: &str) -> HashMap<String, Result<(), String>> {
    let out = Command::new(bin)
        .arg("list")
        .output()
        .expect("run peer list");
    assert!(out.status.success(), "{bin} list failed: {out:?}");
    let mut rows = HashMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let mut words = line.splitn(3, ' ');
        let (kind, name, reason) = (words.next(), words.next(), words.next());
        let entry = match (kind, name, reason) {
            (Some("workload"), Some(_), None) => Ok(()),
            (Some("unsupported"), Some(_), Some(r)) if !r.trim().is_empty() => Err(r.to_string()),
            _ => panic!("{bin} list: malformed line `{line}`"),
        };
        let name = name.unwrap().to_string();
        assert!(
            WORKLOADS.contains(&name.as_str()),
            "{bin} list: unknown row `{name}`"
        );
        assert!(
            rows.insert(name, entry).is_none(),
            "{bin} list: `{line}` twice"
        );
    }
    for w in WORKLOADS {
        assert!(rows.contains_key(*w), "{bin} list: row `{w}` missing");
    }
    rows
}

/// Runs one row and returns its result line's `key=value` fields, checking
/// the line's shape and that result and ops are the catalogue's.
pub fn run_row(
    bin: &str,
    peer: &str,
    workload: &str,
    size: u64,
    workers: usize,
) -> HashMap<String, String> {
    let out = Command::new(bin)
        .args([
            "run",
            workload,
            "--size",
            &size.to_string(),
            "--workers",
            &workers.to_string(),
        ])
        .output()
        .expect("run peer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{peer} {workload}: exit {:?}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{peer} {workload}: want one line, got {stdout:?}"
    );
    let rest = lines[0]
        .strip_prefix("SPINDLE-BENCH ")
        .unwrap_or_else(|| panic!("{peer} {workload}: bad line {}", lines[0]));
    let fields: HashMap<String, String> = rest
        .split(' ')
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .unwrap_or_else(|| panic!("{peer} {workload}: field `{kv}`"));
            (k.to_string(), v.to_string())
        })
        .collect();
    let want = |k: &str, v: String| {
        assert_eq!(
            fields.get(k),
            Some(&v),
            "{peer} {workload} size={size}: field `{k}` in {}",
            lines[0]
        );
    };
    want("workload", workload.to_string());
    want("peer", peer.to_string());
    want("size", size.to_string());
    want("workers", workers.to_string());
    want(
        "result",
        catalogue::expected(workload, size, workers).unwrap(),
    );
    want("ops", catalogue::ops(workload, size, workers).to_string());
    let ns: u64 = fields["ns"].parse().expect("ns is an integer");
    assert!(ns > 0, "{peer} {workload}: ns=0");
    fields
}

/// The whole check: `list`, then every supported row at its tiny size, then
/// one unsupported row (if any) for its exit status.
pub fn check_peer(bin: &str, peer: &str) {
    let rows = list(bin);
    for w in WORKLOADS {
        match &rows[*w] {
            Ok(()) => {
                let size = catalogue::tiny_size(w);
                let fields = run_row(bin, peer, w, size, TINY_WORKERS);
                if let Err(e) = crate::witness::check(w, size, |k| fields.get(k).cloned()) {
                    panic!("{peer} {w}: {e}");
                }
                if *w == "blocking_pressure" {
                    assert!(
                        fields.contains_key("beats") && fields.contains_key("due"),
                        "{peer}: {fields:?}"
                    );
                }
            }
            Err(_) => {
                let status = Command::new(bin)
                    .args(["run", w, "--size", "10", "--workers", "1"])
                    .output()
                    .expect("run peer")
                    .status;
                assert_eq!(
                    status.code(),
                    Some(EXIT_UNSUPPORTED),
                    "{peer} {w}: unsupported row's exit"
                );
            }
        }
    }
}
