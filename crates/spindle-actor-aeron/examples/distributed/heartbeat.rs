//! The heartbeat stream: a second stream on the numbers' channel, one
//! small message a millisecond while the numbers flow, each carrying the
//! time it was sent. The subscriber's latency for each is the time it
//! reached the `latency` actor less that stamp: actor to actor across
//! both pods, through the channel the numbers load.
//!
//! The stamp is the system clock (nanoseconds since the Unix epoch), so
//! the figure is exact for two pods on one host; between two machines it
//! also holds the offset of their clocks.

use spindle_actor::{ActorContext, ActorState, Graph, PortError, RxHandle, TxHandle};
use spindle_actor_aeron::{
    publish, subscribe, Endpoint, Idle, PlainCodec, Pod, PublishOptions, Stream, SubscribeOptions,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The stream the heartbeats travel on.
pub const STREAM_ID: i32 = 1002;
/// One heartbeat per period.
const PERIOD: Duration = Duration::from_millis(1);
/// How long the heartbeat subscriber's thread parks at most while
/// nothing comes: a heartbeat waits at most about this long to be polled.
const MAX_PARK: Duration = Duration::from_micros(20);

/// Adds `heartbeat → heartbeat-to-aeron` to the publisher's graph. A
/// heartbeat is sent only while both it and `numbers` are connected to
/// the subscriber (the time before is set-up, not load); they stop once
/// `done` is set, or the pod is asked to stop.
pub fn add_sender(
    g: &mut Graph,
    pod: &Pod,
    channel: &str,
    numbers: Arc<Endpoint>,
    done: Arc<AtomicBool>,
) {
    let (tx, rx) = g.channel::<u64>("heartbeats").capacity(64).build();
    let own = publish(
        g,
        "heartbeat-to-aeron",
        &rx,
        pod,
        Stream::new(channel, STREAM_ID),
        PlainCodec::<u64>::new(),
        PublishOptions::default(),
    );
    let connected = move || own.is_connected() && numbers.is_connected();
    g.actor("heartbeat")
        .writes(&tx)
        .run(move |ctx| beat(ctx, tx.clone(), connected.clone(), done.clone()));
}

async fn beat(
    ctx: ActorContext,
    output: TxHandle<u64>,
    connected: impl Fn() -> bool,
    done: Arc<AtomicBool>,
) -> Result<(), PortError> {
    let mut tx = output.lock()?;
    let mut tick = spindle::time::interval(PERIOD);
    while !done.load(Ordering::Acquire) && !ctx.is_stopping() {
        tick.tick().await;
        if !connected() {
            continue;
        }
        if tx.send(now_ns()).await.is_err() {
            break; // the publisher is gone: the graph is stopping
        }
    }
    tx.mark_closed();
    Ok(())
}

/// Adds `heartbeat-from-aeron → latency` to the subscriber's graph;
/// returns the latencies it records.
pub fn add_receiver(g: &mut Graph, pod: &Pod, channel: &str) -> ActorState<Latencies> {
    let (tx, rx) = g.channel::<u64>("heartbeats").capacity(64).build();
    let options = SubscribeOptions {
        idle: Idle::Backoff { max_park: MAX_PARK },
        ..SubscribeOptions::default()
    };
    let stream = Stream::new(channel, STREAM_ID);
    subscribe(
        g,
        "heartbeat-from-aeron",
        &tx,
        pod,
        stream,
        PlainCodec::<u64>::new(),
        options,
    );
    let latencies = ActorState::new(Latencies::default());
    let l = latencies.clone();
    g.actor("latency")
        .reads(&rx)
        .run(move |_| record(rx.clone(), l.clone()));
    latencies
}

async fn record(input: RxHandle<u64>, out: ActorState<Latencies>) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut ns = Vec::new();
    while let Some(sent) = rx.take().await {
        ns.push(now_ns().saturating_sub(sent));
    }
    *out.lock() = Latencies { ns };
    Ok(())
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Each heartbeat's latency, in nanoseconds.
#[derive(Debug, Default, Clone)]
pub struct Latencies {
    ns: Vec<u64>,
}

impl Latencies {
    /// `heartbeats=N hb_p50_us=.. hb_p99_us=.. hb_max_us=..`; with no
    /// heartbeat, only the count.
    pub fn fields(&self) -> String {
        let mut v = self.ns.clone();
        v.sort_unstable();
        let n = v.len();
        if n == 0 {
            return "heartbeats=0".into();
        }
        let us = |q: usize| v[(n * q / 100).min(n - 1)] as f64 / 1e3;
        format!(
            "heartbeats={n} hb_p50_us={:.1} hb_p99_us={:.1} hb_max_us={:.1}",
            us(50),
            us(99),
            v[n - 1] as f64 / 1e3
        )
    }
}
