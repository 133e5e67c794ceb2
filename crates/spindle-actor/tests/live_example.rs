//! The fizzbuzz example, running for real, watched from the outside:
//!
//! - a real browser (headless Chromium from Debian's `chromium` package)
//!   loads the telemetry page, runs its script, and the test reads back the
//!   DOM: every actor and every channel of the graph must be drawn; a
//!   screenshot is kept under `target/tmp/spindle-actor-artifacts/`;
//! - a real Prometheus server (Debian's `prometheus` package) scrapes
//!   `/metrics` on loopback, and a query through its HTTP API must return a
//!   spindle metric.
//!
//! Both skip, saying so, when the program is not installed
//! (`scripts/test-all` installs them). The example's own end-of-run check
//! (totals match at every end, F/B/FB/V match the closed form) runs after
//! each.

#[allow(dead_code)]
#[path = "../examples/fizzbuzz/app.rs"]
mod app;
#[allow(dead_code)]
#[path = "../examples/fizzbuzz/args.rs"]
mod args;
mod common;
#[path = "../examples/fizzbuzz/generator.rs"]
mod generator;
#[path = "../examples/fizzbuzz/heartbeat.rs"]
mod heartbeat;
#[path = "../examples/fizzbuzz/logger.rs"]
mod logger;
#[allow(dead_code)]
#[path = "../examples/fizzbuzz/messages.rs"]
mod messages;
#[path = "../examples/fizzbuzz/worker.rs"]
mod worker;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use spindle_actor::RunningGraph;

/// The example with telemetry on a free loopback port: small channels, a
/// fast heartbeat, more beats than the test will wait for.
fn start_example(rt: &spindle::Runtime) -> (RunningGraph, app::Totals, SocketAddr) {
    let argv = [
        "--rate",
        "1",
        "--beats",
        "1000000",
        "--capacity",
        "16384",
        "--telemetry",
        "127.0.0.1:0",
    ];
    let a = args::Args::parse(argv.iter().map(|s| s.to_string())).unwrap();
    let (g, totals) = app::build(&a);
    let running = g.start(rt.handle()).expect("the example starts");
    let addr = running.telemetry_addr().unwrap();
    (running, totals, addr)
}

/// Stops the example and runs its end-of-run check.
fn stop_and_check(running: RunningGraph, totals: app::Totals) {
    running.request_shutdown();
    let report = running.block_until_stopped(Duration::from_secs(20));
    let out = totals.take();
    let problems = out.problems(&report);
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(out.generated > 0, "the example moved no message");
}

fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn artifacts() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("spindle-actor-artifacts");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Kills and reaps a child process when dropped (a failed assert included).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn chromium(bin: &Path, profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=3000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(url)
    .stdin(Stdio::null());
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Bounded: a browser that hangs fails the test instead of hanging it.
    let t0 = Instant::now();
    let mut child = Reaped(child);
    loop {
        if let Some(_status) = child.0.try_wait().unwrap() {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "chromium did not finish in 90 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let c = std::mem::replace(&mut child.0, Command::new("true").spawn().unwrap());
    c.wait_with_output().unwrap()
}

#[test]
fn a_real_browser_draws_every_actor_and_edge() {
    let Some(bin) = find(&["chromium", "chromium-browser", "google-chrome"]) else {
        eprintln!("SKIPPED a_real_browser_draws_every_actor_and_edge: no chromium on PATH (apt-get install chromium)");
        return;
    };
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    let (running, totals, addr) = start_example(&rt);
    let profile = tempdir("chromium-profile");
    let url = format!("http://{addr}/");

    let out = chromium(&bin, &profile, &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for actor in ["heartbeat", "generator", "worker", "logger"] {
        assert!(
            dom.contains(&format!("data-actor=\"{actor}\"")),
            "actor {actor} not drawn:\n{dom}"
        );
    }
    for (ch, from, to) in [
        ("heartbeat", "heartbeat", "worker"),
        ("values", "generator", "worker"),
        ("fizzbuzz", "worker", "logger"),
    ] {
        let edge = format!("data-channel=\"{ch}\" data-from=\"{from}\" data-to=\"{to}\"");
        assert!(dom.contains(&edge), "edge {ch} not drawn:\n{dom}");
    }
    assert!(
        dom.contains("graph fizzbuzz"),
        "the page did not load the graph:\n{dom}"
    );

    let shot = artifacts().join("telemetry-page.png");
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    let out = chromium(&bin, &profile, &[&arg, "--window-size=1200,800"], &url);
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "not a real PNG"
    );
    eprintln!("screenshot of the telemetry page: {}", shot.display());
    let _ = std::fs::remove_dir_all(&profile);

    stop_and_check(running, totals);
}

fn tempdir(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spindle-actor-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_real_prometheus_scrapes_the_metrics() {
    let Some(bin) = find(&["prometheus"]) else {
        eprintln!("SKIPPED a_real_prometheus_scrapes_the_metrics: no prometheus on PATH (apt-get install prometheus)");
        return;
    };
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    let (running, totals, addr) = start_example(&rt);
    let dir = tempdir("prometheus");
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: spindle\n    static_configs:\n      - targets: ['{addr}']\n"
        ),
    )
    .unwrap();
    let web: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let prom = Command::new(&bin)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
        .spawn()
        .expect("prometheus starts");
    let _prom = Reaped(prom);

    // Query until a scrape has landed: the sent total of `values`, > 0.
    let query = "/api/v1/query?query=spindle_channel_sent_total%7Bchannel%3D%22values%22%7D";
    let t0 = Instant::now();
    let value = loop {
        if let Ok(s) = std::net::TcpStream::connect_timeout(&web, Duration::from_millis(200)) {
            drop(s);
            let (code, body) = common::http_get(web, query);
            if code == 200 {
                let v: serde_json::Value = serde_json::from_str(&body).expect(&body);
                if let Some(r) = v["data"]["result"].as_array().and_then(|r| r.first()) {
                    assert_eq!(r["metric"]["from"], "generator");
                    assert_eq!(r["metric"]["job"], "spindle");
                    break r["value"][1].as_str().unwrap().parse::<f64>().unwrap();
                }
            }
        }
        let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no scrape landed in 60 s; prometheus log:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(value > 0.0, "spindle_channel_sent_total = {value}");
    let (code, body) = common::http_get(web, "/api/v1/targets");
    assert_eq!(code, 200);
    assert!(body.contains("\"health\":\"up\""), "{body}");
    drop(_prom);
    let _ = std::fs::remove_dir_all(&dir);

    stop_and_check(running, totals);
}
