//! Two pods in one process joined by Aeron, over IPC and UDP on loopback:
//! every message arrives once, in order, with the same totals on both
//! sides; a slow subscriber holds the publisher back and loses nothing.

mod common;

use common::{publisher, subscriber};
use spindle_actor_aeron::{DriverMode, Pod, PublishOptions, Stream, SubscribeOptions};
use std::time::Duration;

#[test]
fn every_message_arrives_once_in_order_over_ipc_and_udp() {
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    let n = 200_000;
    for (channel, id) in [
        ("aeron:ipc", 1001),
        ("aeron:udp?endpoint=127.0.0.1:40456", 1002),
    ] {
        let stream = Stream::new(channel, id);
        let (sub_graph, seen, sub_ep) =
            subscriber::<u64>(&pod, stream.clone(), None, SubscribeOptions::default());
        let (pub_graph, pub_ep) = publisher(&pod, stream, n, PublishOptions::default());
        let sub = sub_graph.start(rt.handle()).unwrap();
        let publ = pub_graph.start(rt.handle()).unwrap();
        let pub_report = publ.block_until_stopped(Duration::from_secs(60));
        let sub_report = sub.block_until_stopped(Duration::from_secs(60));
        assert!(pub_report.is_clean(), "{pub_report}");
        assert!(sub_report.is_clean(), "{sub_report}");
        let seen = seen.take().unwrap();
        assert_eq!(seen.count, n, "{channel}");
        assert_eq!(seen.sum, n * (n + 1) / 2, "{channel}");
        assert!(seen.in_order, "{channel}");
        assert_eq!((pub_ep.messages(), sub_ep.messages()), (n, n));
        assert!(pub_ep.ended() && sub_ep.ended());
        assert!(sub_ep.gaps().is_empty(), "{:?}", sub_ep.gaps());
    }
}

#[test]
fn a_slow_subscriber_holds_the_publisher_back_and_loses_nothing() {
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    // The smallest term Aeron allows: its flow-control window is a few
    // thousand messages, so the publisher must wait for the sink.
    let stream = Stream::new("aeron:ipc?term-length=65536", 1003);
    let n = 40_000;
    let (sub_graph, seen, sub_ep) = subscriber::<u64>(
        &pod,
        stream.clone(),
        Some(Duration::from_micros(300)),
        SubscribeOptions::default(),
    );
    let (pub_graph, pub_ep) = publisher(&pod, stream, n, PublishOptions::default());
    let sub = sub_graph.start(rt.handle()).unwrap();
    let publ = pub_graph.start(rt.handle()).unwrap();
    assert!(publ.block_until_stopped(Duration::from_secs(60)).is_clean());
    assert!(sub.block_until_stopped(Duration::from_secs(60)).is_clean());
    let seen = seen.take().unwrap();
    assert_eq!((seen.count, seen.sum), (n, n * (n + 1) / 2));
    assert!(seen.in_order);
    assert!(
        pub_ep.back_pressure_events() > 0,
        "the publisher never waited"
    );
    assert!(
        sub_ep.back_pressure_events() > 0,
        "the subscriber never waited for its sink"
    );
}

/// GET `path` from a telemetry server; the body.
fn get(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn each_pod_shows_its_endpoints_on_its_telemetry() {
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    let stream = Stream::new("aeron:ipc", 1004);
    let n = 50_000;
    let (mut sub_graph, _, _) =
        subscriber::<u64>(&pod, stream.clone(), None, SubscribeOptions::default());
    sub_graph.telemetry("127.0.0.1:0");
    let (pub_graph, _) = publisher(&pod, stream, n, PublishOptions::default());
    let sub = sub_graph.start(rt.handle()).unwrap();
    let publ = pub_graph.start(rt.handle()).unwrap();
    assert!(publ.block_until_stopped(Duration::from_secs(60)).is_clean());
    // The subscriber's graph is stopped by the end of the stream; its
    // server answers until the graph is dropped.
    sub.block_until_stopped(Duration::from_secs(60));
    let addr = sub.telemetry_addr().unwrap();
    let metrics = get(addr, "/metrics");
    let line = format!(
        "spindle_aeron_messages_total{{graph=\"sub\",actor=\"from-aeron\",direction=\"subscribe\",channel=\"aeron:ipc\",stream=\"1004\"}} {n}"
    );
    assert!(metrics.contains(&line), "{metrics}");
    assert!(metrics.contains("# TYPE spindle_aeron_back_pressure_total counter"));
    let json = get(addr, "/api/graph.json");
    assert!(
        json.contains("\"probes\":[{\"name\":\"from-aeron (subscribe aeron:ipc stream 1004)\""),
        "{json}"
    );
}
