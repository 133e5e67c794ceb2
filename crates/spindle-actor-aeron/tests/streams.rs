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
