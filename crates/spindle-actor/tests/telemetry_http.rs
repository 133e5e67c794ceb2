//! The telemetry server over real HTTP on loopback: every endpoint, the
//! Prometheus text format, and requests it must refuse without falling
//! over.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{eventually, exchange, http_get, http_raw, parse, Seen};
use spindle_actor::{ActorContext, ActorState, Graph, PortError, RunningGraph, TxHandle};

/// Sends 1..=100, then idles until the graph stops.
async fn hundred(ctx: ActorContext, out: TxHandle<u64>) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let v: Vec<u64> = (1..=100).collect();
    tx.send_slice(&v).await;
    while ctx.is_running(|| tx.mark_closed()) {
        ctx.sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

fn start(rt: &spindle::Runtime) -> (RunningGraph, SocketAddr) {
    let mut g = Graph::new("web \"test\"");
    let (tx, rx) = g.channel::<u64>("numbers").capacity(32).build();
    let seen = ActorState::new(Seen::default());
    g.actor("source")
        .writes(&tx)
        .run(move |ctx| hundred(ctx, tx.clone()));
    g.actor("sink")
        .reads(&rx)
        .run(move |ctx| common::sink(ctx, rx.clone(), seen.clone()));
    g.telemetry("127.0.0.1:0");
    let running = g.start(rt.handle()).unwrap();
    let addr = running.telemetry_addr().unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0);
    (running, addr)
}

#[test]
fn every_endpoint_answers() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    let (running, addr) = start(&rt);
    eventually("all 100 messages taken", || {
        running.report().channel("numbers").unwrap().taken == 100
    });

    let (code, page) = http_get(addr, "/");
    assert_eq!(code, 200);
    assert!(page.contains("<svg") && page.contains("/api/graph.json"));

    let (code, json) = http_get(addr, "/api/graph.json");
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&json).expect(&json);
    assert_eq!(v["graph"], "web \"test\"");
    let actors: Vec<&str> = v["actors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(actors, ["source", "sink"]);
    let c = &v["channels"][0];
    assert_eq!(
        (c["name"].as_str(), c["from"].as_str(), c["to"].as_str()),
        (Some("numbers"), Some("source"), Some("sink"))
    );
    assert_eq!(
        (
            c["sent"].as_u64(),
            c["taken"].as_u64(),
            c["capacity"].as_u64()
        ),
        (Some(100), Some(100), Some(32))
    );
    assert!(v["runtime"]["workers"].as_u64() == Some(2));

    let (code, dot) = http_get(addr, "/graph.dot");
    assert_eq!(code, 200);
    assert!(dot.starts_with("digraph G {"), "{dot}");
    assert!(dot.contains("\"source\" -> \"sink\""), "{dot}");
    assert!(dot.contains("Total: 100"), "{dot}");

    let (code, metrics) = http_get(addr, "/metrics?anything=1");
    assert_eq!(code, 200);
    check_exposition_format(&metrics);
    assert!(metrics.contains("# TYPE spindle_channel_sent_total counter"));
    assert!(metrics.contains(
        "spindle_channel_sent_total{graph=\"web \\\"test\\\"\",channel=\"numbers\",from=\"source\",to=\"sink\"} 100"
    ), "{metrics}");
    assert!(metrics.contains("spindle_actor_up{graph=\"web \\\"test\\\"\",actor=\"sink\"} 1"));
    assert!(metrics.contains("spindle_runtime_workers{flavor=\"multi_thread\"} 2"));

    running.request_shutdown();
    let report = running.block_until_stopped(Duration::from_secs(10));
    assert!(report.is_clean(), "{report}");
    // Still serving while the RunningGraph lives: the stop shows.
    let (_, json) = http_get(addr, "/api/graph.json");
    assert!(
        json.contains("\"stopping\":true") && json.contains("\"live_actors\":0"),
        "{json}"
    );
    drop(running);
    // Refused, or (the listener may linger briefly) not served; one
    // connection for both checks, since the listener may close between two.
    if let Ok(s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
        let answer = exchange(s, b"GET / HTTP/1.1\r\n\r\n");
        assert!(
            answer.is_empty(),
            "served after the graph was dropped: {answer}"
        );
    }
}

/// Prometheus text format 0.0.4: `# HELP` / `# TYPE` per family before its
/// samples, every sample `name{label="value",...} number`.
fn check_exposition_format(text: &str) {
    let mut typed = std::collections::HashSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut it = rest.split(' ');
            let name = it.next().unwrap();
            assert!(matches!(it.next(), Some("counter" | "gauge")), "{line}");
            assert!(typed.insert(name.to_string()), "family typed twice: {line}");
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(
            !line.is_empty() && !line.starts_with('#'),
            "stray line: {line:?}"
        );
        let (series, value) = line.rsplit_once(' ').unwrap();
        value
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("bad value in {line}"));
        let name = series.split('{').next().unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "bad name in {line}"
        );
        assert!(typed.contains(name), "sample before its TYPE: {line}");
        if let Some(labels) = series.strip_prefix(name) {
            if !labels.is_empty() {
                assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
            }
        }
    }
    assert!(typed.len() > 20, "too few families: {}", typed.len());
}

#[test]
fn bad_requests_get_4xx_and_the_server_stays_up() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let (running, addr) = start(&rt);
    assert_eq!(http_get(addr, "/nope").0, 404);
    assert_eq!(http_get(addr, "/metrics/../etc/passwd").0, 404);
    let (code, _) = parse(&http_raw(
        addr,
        b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ));
    assert_eq!(code, 405);
    let (code, body) = parse(&http_raw(
        addr,
        b"HEAD / HTTP/1.1\r\nConnection: close\r\n\r\n",
    ));
    assert_eq!((code, body.as_str()), (200, ""));
    for junk in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"\x00\x01\x02\xff\xfe\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost\r\n\r\n",
    ] {
        let r = http_raw(addr, junk);
        let code = parse(&r).0;
        assert!(
            r.is_empty() || (400..500).contains(&code),
            "{junk:?} -> {r:?}"
        );
    }
    // A long URL and a request cut off half-way.
    let long = format!("/{}", "a".repeat(100_000));
    assert!((400..500).contains(&http_get(addr, &long).0));
    {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(b"GET /metr").unwrap();
    }
    assert_eq!(http_get(addr, "/api/graph.json").0, 200);
    running.request_shutdown();
    assert!(running
        .block_until_stopped(Duration::from_secs(10))
        .is_clean());
}
