//! Each view of one fixed snapshot, against the files in `../testdata`.

use super::dot::{dot_str, si};
use super::json::{json, json_str, num};
use super::prometheus::{label, prometheus};
use crate::telemetry::probes::ProbeSnap;
use crate::telemetry::sampler::{ActorSnap, ChannelSnap, Snapshot};

#[test]
fn escapes() {
    assert_eq!(json_str("a\"b\\c\n<x>"), r#""a\"b\\c\n\u003cx\u003e""#);
    assert_eq!(dot_str("a\"b"), r#""a\"b""#);
    assert_eq!(label("q\"\\\n"), r#"q\"\\\n"#);
    assert_eq!(si(64_200_000.0), "64.2M");
    assert_eq!(num(f64::NAN), "0");
}

/// A snapshot with two actors, two channels and two workers, its names
/// and failure message holding characters that need escaping.
fn fixed_snapshot() -> Snapshot {
    let actor = |name: &str, status, n: u64, busy_pct| ActorSnap {
        name: name.to_string(),
        mode: "task".to_string(),
        status,
        restarts: n,
        polls: 1234 + n,
        busy_seconds: 1.5 + n as f64,
        busy_pct,
        last_failure: (n > 0).then(|| "boom <\"here\">".to_string()),
    };
    let channel = |name: &str, from: &str, to: &str, n: u64| ChannelSnap {
        name: name.to_string(),
        from: from.to_string(),
        to: to.to_string(),
        capacity: 1024 << n,
        batch: 32,
        sent: 5000 + n,
        taken: 4990 + n,
        dead_letters: 2 + n,
        closed: n > 0,
        rate: 2500.5 + n as f64,
        rate_window: 2400.25 + n as f64,
        fill_pct: [12.5 + n as f64, 50.0, 99.0],
    };
    let mut runtime = spindle::RuntimeMetrics::default();
    runtime.flavor = "multi_thread";
    runtime.remote_schedules = 7;
    runtime.injector_depth = 3;
    runtime.registered_tasks = 11;
    runtime.sleeping_workers = 1;
    for n in 0..2u64 {
        let mut w = spindle::WorkerMetrics::default();
        w.index = n as usize;
        w.polls = 100 + n;
        w.spawns = 20 + n;
        w.steals = 5 + n;
        w.parks = 9 + n;
        w.lifo_hits = 40 + n;
        w.injector_pops = 3 + n;
        runtime.workers.push(w);
    }
    Snapshot {
        graph: "pipe\"line".to_string(),
        uptime: std::time::Duration::from_millis(12_345),
        window: std::time::Duration::from_secs(60),
        stopping: false,
        live: 2,
        actors: vec![
            actor("source", "running", 0, 37.5),
            actor("sink\nb", "failed", 3, f64::NAN),
        ],
        channels: vec![
            channel("numbers", "source", "sink\nb", 0),
            channel("back\\", "sink\nb", "source", 1),
        ],
        probes: ["in", "out"]
            .iter()
            .enumerate()
            .map(|(n, dir)| ProbeSnap {
                name: format!("{dir} \"q\""),
                labels: vec![("direction", dir.to_string())],
                readings: vec![crate::Reading {
                    metric: "test_items_total",
                    help: "Items through the probe.",
                    counter: true,
                    short: "items",
                    value: 10.0 + n as f64,
                }],
            })
            .collect(),
        runtime,
    }
}

#[test]
fn prometheus_renders_a_fixed_snapshot() {
    let want = include_str!("../testdata/metrics.prom");
    assert_eq!(prometheus(&fixed_snapshot()), want);
}

#[test]
fn json_renders_a_fixed_snapshot() {
    let want = include_str!("../testdata/graph.json");
    assert_eq!(json(&fixed_snapshot()), want);
}

/// A runtime's named tasks, from its metrics, in the runtime's object:
/// id as the runtime's reports write it, name escaped.
#[test]
fn json_lists_the_runtimes_named_tasks() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let (tx, rx) = spindle::chan::oneshot::<()>();
    let task = spindle::task::Builder::new()
        .name("flush \"<now>\"")
        .spawn_on(
            async move {
                let _ = rx.await;
            },
            rt.handle(),
        );
    rt.block_on(spindle::yield_now()); // its first poll enters the name
    let mut snapshot = fixed_snapshot();
    snapshot.runtime = rt.metrics();
    let text = json(&snapshot);
    let want = format!(
        r#""named_tasks":[{{"id":"{}","name":"flush \"\u003cnow\u003e\""}}]}}"#,
        task.id()
    );
    assert!(text.contains(&want), "{text}\nwants {want}");
    drop(tx);
    rt.block_on(task).unwrap();
}
