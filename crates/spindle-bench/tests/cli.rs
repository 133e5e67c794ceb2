//! End-to-end tests through the real binary: fake peers (shell scripts) that
//! answer right, wrong, crash or hang; bad input; every output file; and the
//! whole catalogue on every available real peer at tiny sizes.
//!
//! Every test writes under its own temporary directory, never `bench/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spindle-bench"))
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spindle-bench-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fake peer: `list` runs skynet, fib, sum_squares, primes (pingpong
/// unsupported); skynet and sum_squares answer right, fib wrong, primes
/// crashes, and fanout (listed) hangs.
fn fake_peer(dir: &Path) -> PathBuf {
    script(
        dir,
        "fake-peer",
        r#"#!/bin/sh
case "$1" in
list)
  echo "workload skynet"; echo "workload fib"; echo "workload sum_squares"
  echo "workload primes"; echo "workload fanout"
  echo "unsupported pingpong no channels here"
  exit 0;;
run)
  n=$4; w=$6
  case "$2" in
  skynet) r=$(( n * (n - 1) / 2 ));;
  sum_squares) r=$(( n * (n + 1) * (2 * n + 1) / 6 ));;
  fib) r=12345;;
  primes) echo "boom: primes exploded" >&2; exit 1;;
  fanout) sleep 30; exit 0;;
  *) echo "unsupported $2" >&2; exit 3;;
  esac
  echo "SPINDLE-BENCH workload=$2 peer=fake size=$n workers=$w result=$r ops=$n ns=1000"
  exit 0;;
esac
exit 2
"#,
    )
}

/// Writes an executable script `dir/name`.
fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

fn run_fake(dir: &Path, workloads: &str, extra: &[&str]) -> Output {
    let peer = fake_peer(dir);
    let mut c = bin();
    c.args([
        "run",
        "--workload",
        workloads,
        "--peer",
        "fake",
        "--profile",
        "tiny",
        "--no-build",
        "-q",
    ])
    .arg("--peer-bin")
    .arg(format!("fake={}", peer.display()))
    .arg("--out")
    .arg(dir.join("out"))
    .args(extra);
    c.output().unwrap()
}

fn json_rows(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad json line {l}: {e}")))
        .collect()
}

fn row<'a>(rows: &'a [Value], w: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["workload"] == w)
        .unwrap_or_else(|| panic!("no row {w}"))
}

#[test]
fn a_wrong_result_fails_the_row_shows_no_time_and_exits_non_zero() {
    let dir = tmpdir("wrong");
    let out = run_fake(&dir, "skynet,fib", &["--json", "--runs", "3"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = json_rows(&out);
    let fib = row(&rows, "fib");
    assert_eq!(fib["ok"], false);
    assert_eq!(fib["status"], "failed");
    assert!(fib["error"]
        .as_str()
        .unwrap()
        .contains("wrong result: got 12345, expected 6765"));
    assert_eq!(fib["samples_ns"].as_array().unwrap().len(), 0);
    assert!(fib["median_ns"].is_null() && fib["mean"].is_null());
    let sky = row(&rows, "skynet");
    assert_eq!(sky["ok"], true);
    assert_eq!(sky["result"], sky["expected"]);
    assert_eq!(sky["samples_ns"].as_array().unwrap().len(), 3);
    assert_eq!(sky["median_ns"], 1000.0);
    assert!(sky["peak_rss_bytes"].as_u64().unwrap() > 0);

    // The table says FAILED for fib and shows no time on that line.
    let out = run_fake(&dir, "fib", &[]);
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8_lossy(&out.stdout);
    let line = table.lines().find(|l| l.starts_with("fib")).unwrap();
    assert!(
        line.contains("FAILED") && !line.contains("µs") && !line.contains(" ms"),
        "{line}"
    );
}

#[test]
fn crashes_and_timeouts_fail_their_rows_and_the_suite_goes_on() {
    let dir = tmpdir("crash");
    let t = std::time::Instant::now();
    let out = run_fake(
        &dir,
        "primes,fanout,sum_squares,pingpong",
        &["--json", "--timeout", "1"],
    );
    assert!(t.elapsed().as_secs() < 20, "the hung peer was not killed");
    assert_eq!(out.status.code(), Some(1));
    let rows = json_rows(&out);
    let primes = row(&rows, "primes");
    assert_eq!(primes["ok"], false);
    let e = primes["error"].as_str().unwrap();
    assert!(
        e.contains("exit status 1") && e.contains("boom: primes exploded"),
        "{e}"
    );
    assert!(row(&rows, "fanout")["error"]
        .as_str()
        .unwrap()
        .contains("timed out"));
    assert_eq!(row(&rows, "sum_squares")["ok"], true);
    let pp = row(&rows, "pingpong");
    assert_eq!(pp["status"], "unsupported");
    assert!(pp["error"].as_str().unwrap().contains("no channels here"));
}

#[test]
fn every_output_is_written_and_the_checks_read_them() {
    let dir = tmpdir("outputs");
    let out = run_fake(&dir, "skynet,sum_squares", &["--runs", "3"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let o = dir.join("out");
    let latest: Value =
        serde_json::from_str(&std::fs::read_to_string(o.join("latest.json")).unwrap()).unwrap();
    assert_eq!(latest["results"].as_array().unwrap().len(), 2);
    assert!(latest["machine"]["cores"].as_u64().unwrap() >= 1);
    let hist = std::fs::read_to_string(o.join("history.jsonl")).unwrap();
    assert_eq!(hist.lines().count(), 2);
    let bs = std::fs::read_to_string(o.join("latest.benchstat.txt")).unwrap();
    assert_eq!(
        bs.lines()
            .filter(|l| l.starts_with("BenchmarkSkynet/impl=fake-"))
            .count(),
        3
    );
    let html = std::fs::read_to_string(o.join("report.html")).unwrap();
    for w in ["skynet", "sum_squares"] {
        let section = html.split(&format!("<section id=\"{w}\">")).nth(1).unwrap();
        let section = section.split("</section>").next().unwrap();
        assert!(section.contains("<svg"), "no chart for {w}");
    }
    assert!(!html.contains("<script"));
    // Published seed figures sit beside ours with their hardware.
    assert!(html.contains("MacBook Pro M-series"));

    // A second run: history grows, the report regenerates with a history chart.
    assert_eq!(
        run_fake(&dir, "skynet,sum_squares", &["--runs", "3"])
            .status
            .code(),
        Some(0)
    );
    let out = bin().args(["report", "--out"]).arg(&o).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(std::fs::read_to_string(o.join("report.html"))
        .unwrap()
        .contains("over runs"));

    // The run compared with itself: no red flag.
    let base = dir.join("base.json");
    std::fs::copy(o.join("latest.json"), &base).unwrap();
    let out = bin()
        .args(["compare", "--out"])
        .arg(&o)
        .arg("--baseline")
        .arg(&base)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // A baseline twice as fast: every row is a significant slow-down.
    let mut fast = latest.clone();
    for r in fast["results"].as_array_mut().unwrap() {
        let halved: Vec<Value> = r["samples_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x.as_u64().unwrap() / 2).into())
            .collect();
        r["samples_ns"] = halved.into();
    }
    std::fs::write(&base, serde_json::to_string(&fast).unwrap()).unwrap();
    let out = bin()
        .args(["compare", "--out"])
        .arg(&o)
        .arg("--baseline")
        .arg(&base)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("RED"));
    let compare_with = |baseline: &Value| {
        std::fs::write(&base, serde_json::to_string(baseline).unwrap()).unwrap();
        let out = bin()
            .args(["compare", "--out"])
            .arg(&o)
            .arg("--baseline")
            .arg(&base)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };

    // Twice as fast but from one sample a row: too few to call significant.
    let mut one = fast.clone();
    for r in one["results"].as_array_mut().unwrap() {
        let first = r["samples_ns"][0].clone();
        r["samples_ns"] = vec![first].into();
    }
    let (code, text) = compare_with(&one);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("RED") && text.contains('~'), "{text}");

    // A peer the baseline measured on a workload run now without it: a red
    // flag, however fast the rest; a baseline from another CPU is said.
    let mut more = latest.clone();
    let mut ghost = more["results"][0].clone();
    ghost["peer"] = "ghost".into();
    more["results"].as_array_mut().unwrap().push(ghost);
    more["machine"]["cpu_model"] = "Another CPU".into();
    let (code, text) = compare_with(&more);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("ghost") && text.contains("MISSING"), "{text}");
    assert!(text.contains("another machine"), "{text}");

    // A run with no spindle row is no evidence of anything fresh.
    let check_fresh = |args: &[&str]| {
        let out = bin()
            .arg("check-fresh")
            .args(args)
            .arg("--out")
            .arg(&o)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, why) = check_fresh(&[]);
    assert_eq!(code, Some(1), "{why}");
    assert!(why.contains("no spindle row"), "{why}");

    // With the fake's rows taken for spindle's: fresh now; stale once the
    // run is dated 1970.
    let mut latest = latest;
    for r in latest["results"].as_array_mut().unwrap() {
        r["peer"] = "spindle".into();
    }
    std::fs::write(
        o.join("latest.json"),
        serde_json::to_string(&latest).unwrap(),
    )
    .unwrap();
    let (code, why) = check_fresh(&[]);
    assert_eq!(code, Some(0), "{why}");
    let mut old = latest;
    old["timestamp_unix"] = 0.into();
    std::fs::write(o.join("latest.json"), serde_json::to_string(&old).unwrap()).unwrap();
    let (code, why) = check_fresh(&["--max-age", "24h"]);
    assert_eq!(code, Some(1), "{why}");
    assert!(why.contains("stale"), "{why}");
}

#[test]
fn a_run_with_no_peer_available_saves_nothing() {
    let dir = tmpdir("nopeer");
    let out = bin()
        .args([
            "run",
            "--peer",
            "fake",
            "--profile",
            "tiny",
            "--no-build",
            "-q",
        ])
        .arg("--peer-bin")
        .arg(format!("fake={}", dir.join("no-such-binary").display()))
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("no peer available"), "{err}");
    assert!(!dir.join("out").join("latest.json").exists());
}

#[test]
fn bad_input_is_a_usage_error_naming_the_valid_choices() {
    let dir = tmpdir("bad");
    let cases: &[&[&str]] = &[
        &["run", "--workload", "nope"],
        &["run", "--peer", "nodejs"],
        &["run", "--runs", "0"],
        &["run", "--size", "-5"],
        &["run", "--size", "abc"],
        &["run", "--size", "0"],
        &["run", "--workers", "0"],
        &["run", "--profile", "huge"],
        &["run", "--workload", "skynet", "--size", "1234"],
        &["check-fresh", "--max-age", "3 weeks"],
    ];
    for args in cases {
        let out = bin()
            .args(*args)
            .arg("--no-build")
            .arg("--out")
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = bin()
        .args(["run", "--workload", "skynet,nope", "--no-build"])
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nope") && err.contains("pingpong") && err.contains("fork_pool"),
        "{err}"
    );
    let out = bin()
        .args(["run", "--peer", "nodejs", "--no-build"])
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nodejs") && err.contains("tokio") && err.contains("go"),
        "{err}"
    );
}

#[test]
fn list_names_workloads_and_says_why_a_peer_cannot_run_a_row() {
    let dir = tmpdir("list");
    let peer = fake_peer(&dir);
    let out = bin()
        .args(["list", "--no-build", "--peer-bin"])
        .arg(format!("fake={}", peer.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("skynet") && text.contains("10-ary tree"),
        "{text}"
    );
    let runs = format!(
        "fake       available: runs 5 of {}",
        spindle_bench::workloads::CATALOGUE.len()
    );
    assert!(text.contains(&runs), "{text}");
    assert!(text.contains("pingpong: no channels here"), "{text}");
    assert!(text.contains("go ") && text.contains("spindle "), "{text}");
}

/// The whole catalogue on every real peer at tiny sizes, through the same
/// path as the default command (peers built by the harness, in the `dev`
/// profile to keep CI fast). Peers that are not written yet are unavailable
/// and skipped; rows a peer lists as unsupported are skipped; every row a
/// peer claims must return the expected result.
#[test]
fn a_missing_peer_is_named_with_how_to_install_it_and_the_others_run() {
    // The fake peer needs no build and Go's binary is not found: only the
    // Go build is tried.
    let dir = tmpdir("missing");
    let peer = fake_peer(&dir);
    let out = bin()
        .args([
            "run",
            "--workload",
            "skynet",
            "--peer",
            "fake,go",
            "--profile",
            "tiny",
            "-q",
            "--json",
        ])
        .arg("--peer-bin")
        .arg(format!("fake={}", peer.display()))
        .arg("--out")
        .arg(dir.join("out"))
        .env("GO", dir.join("no-go-here"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("missing peer(s): go"), "{err}");
    assert!(err.contains("install Go"), "{err}");
    let rows = json_rows(&out);
    assert_eq!(row(&rows, "skynet")["status"], "ok");
    assert!(dir.join("out").join("latest.json").exists());
}

#[test]
fn tiny_catalogue_on_every_peer() {
    let dir = tmpdir("tiny");
    let out = bin()
        .args([
            "run",
            "--workload",
            "all",
            "--peer",
            "all",
            "--profile",
            "tiny",
            "--json",
            "--cargo-profile",
            "dev",
        ])
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rows = json_rows(&out);
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| r["status"] == "failed")
        .map(|r| format!("{} on {}: {}", r["workload"], r["peer"], r["error"]))
        .collect();
    assert!(
        failed.is_empty(),
        "failed rows:\n{}\n(stderr tail: {})",
        failed.join("\n"),
        tail(&stderr)
    );
    for r in rows.iter().filter(|r| r["ok"] == true) {
        assert_eq!(r["result"], r["expected"], "{r}");
        assert!(!r["samples_ns"].as_array().unwrap().is_empty());
    }
    // Exit 3: a peer is missing. Every peer is a prerequisite of the
    // README's test command (Go included), so a missing one fails here
    // rather than passing on the peers that happen to be installed.
    assert_eq!(out.status.code(), Some(0), "stderr tail: {}", tail(&stderr));
    let ran = rows.iter().filter(|r| r["ok"] == true).count();
    eprintln!(
        "tiny catalogue: {ran} rows checked, {} unsupported",
        rows.len() - ran
    );
}

fn tail(s: &str) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(15)..].join("\n")
}

#[test]
fn telemetry_cost_runs_the_spindle_peer_with_the_server_scraped() {
    let dir = tmpdir("telemetry");
    let out = bin()
        .args([
            "telemetry-cost",
            "--size",
            "4096",
            "--rounds",
            "2",
            "--cargo-profile",
            "dev",
            "-q",
        ])
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr tail: {}", tail(&stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("telemetry on") && stdout.contains("cost"),
        "{stdout}"
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("telemetry.json")).unwrap())
            .unwrap();
    for side in ["off_ns", "on_ns", "scrapes"] {
        assert_eq!(saved[side].as_array().unwrap().len(), 2, "{side}: {saved}");
    }
    assert!(saved["scrapes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|k| k.as_u64().unwrap() > 0));
}

#[test]
fn telemetry_cost_refuses_a_peer_whose_server_never_answered() {
    let dir = tmpdir("telemetry-silent");
    // Right counts for 15 messages, but no `scrapes=`: telemetry never ran.
    let p = script(
        &dir,
        "silent-peer",
        r#"#!/bin/sh
case "$1" in
list) echo "workload fizzbuzz_pipeline_zc"; exit 0;;
run) echo "SPINDLE-BENCH workload=$2 peer=spindle size=$4 workers=$6 result=F:4,B:2,FB:1,V:8 ops=$4 ns=1000"; exit 0;;
esac
exit 2
"#,
    );
    let out = bin()
        .args([
            "telemetry-cost",
            "--size",
            "15",
            "--rounds",
            "1",
            "--no-build",
            "-q",
        ])
        .arg("--peer-bin")
        .arg(format!("spindle={}", p.display()))
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains("answered no scrape"), "stderr: {stderr}");
    assert!(!dir.join("telemetry.json").exists());
}
