//! What goes wrong across pods, and how each failure reads: a type
//! mismatch, a subscriber that dies and another that takes over (the gap
//! reported exactly), a second publisher on a stream (a stream id in use),
//! bytes that are not a frame, a channel Aeron refuses, a peer that never appears, a driver directory
//! that cannot be written.

mod common;

use common::{last_failure, publisher, subscriber};
use spindle_actor_aeron::{AeronError, DriverMode, Pod, PublishOptions, Stream, SubscribeOptions};
use std::time::Duration;

#[test]
fn a_subscriber_of_another_type_stops_with_an_error_naming_both() {
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    let stream = Stream::new("aeron:ipc", 2001);
    // u64s published, u32s expected: another tag.
    let (sub_graph, seen, sub_ep) =
        subscriber::<u32>(&pod, stream.clone(), None, SubscribeOptions::default());
    let options = PublishOptions {
        connect_timeout: Duration::from_secs(2),
        ..PublishOptions::default()
    };
    let (pub_graph, _) = publisher(&pod, stream, 10_000, options);
    let sub = sub_graph.start(rt.handle()).unwrap();
    let publ = pub_graph.start(rt.handle()).unwrap();
    let report = sub.block_until_stopped(Duration::from_secs(30));
    let failure = last_failure(&report, "from-aeron");
    assert!(failure.contains("expects `plain:u32:4`"), "{failure}");
    assert!(failure.contains("aeron:ipc stream 2001"), "{failure}");
    assert_eq!(
        seen.take().unwrap().count,
        0,
        "nothing of a refused frame is delivered"
    );
    assert_eq!(sub_ep.messages(), 0);
    publ.request_shutdown();
    publ.block_until_stopped(Duration::from_secs(30));
}

#[test]
fn a_subscriber_that_dies_is_reported_and_its_successor_names_the_gap() {
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    let stream = Stream::new("aeron:ipc?term-length=65536", 2002);
    let n = 300_000;
    let (first_graph, first_seen, _) = subscriber::<u64>(
        &pod,
        stream.clone(),
        Some(Duration::from_micros(100)),
        SubscribeOptions::default(),
    );
    let (pub_graph, pub_ep) = publisher(&pod, stream.clone(), n, PublishOptions::default());
    let first = first_graph.start(rt.handle()).unwrap();
    let publ = pub_graph.start(rt.handle()).unwrap();
    // `snapshot`, not `lock`: the sink holds the state while it runs.
    while first_seen.snapshot().map_or(0, |s| s.count) < 20_000 {
        std::thread::sleep(Duration::from_millis(5));
    }
    first.request_shutdown();
    assert!(first
        .block_until_stopped(Duration::from_secs(30))
        .is_clean());
    let had = first_seen.lock().count;
    // The publisher notices on its next offer (its window is full by now).
    let start = std::time::Instant::now();
    while pub_ep.is_connected() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the publisher never noticed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }

    let options = SubscribeOptions {
        resume_from: had,
        ..SubscribeOptions::default()
    };
    let (second_graph, second_seen, second_ep) = subscriber::<u64>(&pod, stream, None, options);
    let second = second_graph.start(rt.handle()).unwrap();
    let pub_report = publ.block_until_stopped(Duration::from_secs(60));
    assert!(second
        .block_until_stopped(Duration::from_secs(60))
        .is_clean());

    let publisher = pub_report.actor("to-aeron").unwrap();
    assert!(publisher.restarts >= 1, "{pub_report}");
    let why = publisher.last_failure.clone().unwrap_or_default();
    assert!(why.contains("the subscriber on aeron:ipc"), "{why}");
    let got = second_seen.take().unwrap().count;
    let gaps = second_ep.gaps();
    assert!(
        gaps.iter().all(|&(from, _)| from >= had),
        "{gaps:?} after {had}"
    );
    assert_eq!(
        had + got + second_ep.missed(),
        n,
        "nothing lost silently: {gaps:?}"
    );
    assert_eq!(
        pub_ep.messages(),
        n,
        "the publisher sent every message once"
    );
}

#[test]
fn a_second_publisher_on_the_stream_stops_the_subscriber_naming_both() {
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    let stream = Stream::new("aeron:ipc?term-length=65536", 2003);
    let n = 1_000_000;
    let (first, _) = publisher(&pod, stream.clone(), n, PublishOptions::default());
    let (second, _) = publisher(&pod, stream.clone(), n, PublishOptions::default());
    let (first, second) = (
        first.start(rt.handle()).unwrap(),
        second.start(rt.handle()).unwrap(),
    );
    let (sub_graph, seen, _) = subscriber::<u64>(&pod, stream, None, SubscribeOptions::default());
    let report = sub_graph
        .start(rt.handle())
        .unwrap()
        .block_until_stopped(Duration::from_secs(30));
    let why = last_failure(&report, "from-aeron");
    assert!(
        why.contains("aeron:ipc?term-length=65536 stream 2003"),
        "{why}"
    );
    assert!(why.contains("a second publisher (session "), "{why}");
    let seen = seen.take().unwrap();
    assert!(
        seen.in_order && seen.count < 2 * n,
        "only the first publisher's messages, in order: {seen:?}"
    );
    for p in [first, second] {
        p.request_shutdown();
        p.block_until_stopped(Duration::from_secs(30));
    }
}

#[test]
fn bytes_that_are_not_a_frame_stop_the_subscriber_and_nothing_is_delivered() {
    use rusteron_client::{Aeron, AeronContext, IntoCString};
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    let (sub_graph, seen, sub_ep) = subscriber::<u64>(
        &pod,
        Stream::new("aeron:ipc", 2004),
        None,
        SubscribeOptions::default(),
    );
    let sub = sub_graph.start(rt.handle()).unwrap();
    // Another program on the same driver, publishing raw bytes on the stream.
    let ctx = AeronContext::new().unwrap();
    ctx.set_dir(&pod.dir().into_c_string()).unwrap();
    let aeron = Aeron::new(&ctx).unwrap();
    aeron.start().unwrap();
    let raw = aeron
        .async_add_exclusive_publication(&"aeron:ipc".into_c_string(), 2004)
        .unwrap()
        .poll_blocking(Duration::from_secs(10))
        .unwrap();
    let start = std::time::Instant::now();
    while raw
        .offer(b"forty bytes of something that is no frame")
        .is_err()
    {
        assert!(start.elapsed() < Duration::from_secs(10), "never offered");
        std::thread::sleep(Duration::from_millis(1));
    }
    let report = sub.block_until_stopped(Duration::from_secs(30));
    let why = last_failure(&report, "from-aeron");
    assert!(
        why.contains("aeron:ipc stream 2004: a frame that does not parse"),
        "{why}"
    );
    assert_eq!(seen.take().unwrap().count, 0, "nothing of it is delivered");
    assert_eq!(sub_ep.messages(), 0);
}

#[test]
fn bad_input_reads_as_one_clear_error() {
    // A channel Aeron refuses.
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let rt = spindle::Runtime::new().unwrap();
    let (g, _) = publisher(
        &pod,
        Stream::new("aeron:carrier-pigeon", 3001),
        10,
        PublishOptions::default(),
    );
    let report = g
        .start(rt.handle())
        .unwrap()
        .block_until_stopped(Duration::from_secs(30));
    let why = last_failure(&report, "to-aeron");
    assert!(why.contains("aeron:carrier-pigeon stream 3001"), "{why}");

    // A peer that never appears.
    let quick = SubscribeOptions {
        connect_timeout: Duration::from_millis(200),
        ..SubscribeOptions::default()
    };
    let (g, _, _) = subscriber::<u64>(&pod, Stream::new("aeron:ipc", 3002), None, quick);
    let report = g
        .start(rt.handle())
        .unwrap()
        .block_until_stopped(Duration::from_secs(30));
    let why = last_failure(&report, "from-aeron");
    assert!(
        why.contains("no publisher appeared on aeron:ipc stream 3002"),
        "{why}"
    );

    // A driver directory that cannot be made, and a driver that is not there.
    let e = Pod::connect(DriverMode::EmbeddedAt("/proc/spindle-aeron".into())).unwrap_err();
    assert!(matches!(e, AeronError::Driver(_)));
    assert!(e.to_string().contains("/proc/spindle-aeron"), "{e}");
    let e = Pod::connect(DriverMode::External("/nonexistent/aeron".into())).unwrap_err();
    assert!(
        e.to_string()
            .contains("no media driver runs with directory /nonexistent/aeron"),
        "{e}"
    );
}
