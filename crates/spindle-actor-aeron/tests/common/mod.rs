//! Pods for the tests: a publishing graph that sends 1..=n, a subscribing
//! graph that checks order and sums what arrives.

#![allow(dead_code)]

use spindle_actor::{ActorContext, ActorState, Graph, PortError, RxHandle, TxHandle};
use spindle_actor_aeron::{
    publish, subscribe, Endpoint, Plain, PlainCodec, Pod, PublishOptions, Stream, SubscribeOptions,
};
use std::sync::Arc;
use std::time::Duration;

/// The last failure `actor` reported before its graph stopped ("" if none).
pub fn last_failure(report: &spindle_actor::StopReport, actor: &str) -> String {
    let actor = report.actor(actor).expect("an actor of the graph");
    actor.last_failure.clone().unwrap_or_default()
}

/// A graph that sends 1..=n into an Aeron publication.
pub fn publisher(
    pod: &Pod,
    stream: Stream,
    n: u64,
    options: PublishOptions,
) -> (Graph, Arc<Endpoint>) {
    let mut g = Graph::new("pub");
    let (tx, rx) = g.channel::<u64>("numbers").capacity(4096).build();
    g.actor("source")
        .writes(&tx)
        .run(move |ctx| source(ctx, tx.clone(), n));
    let ep = publish(
        &mut g,
        "to-aeron",
        &rx,
        pod,
        stream,
        PlainCodec::<u64>::new(),
        options,
    );
    (g, ep)
}

async fn source(_ctx: ActorContext, out: TxHandle<u64>, n: u64) -> Result<(), PortError> {
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
    Ok(())
}

/// What a subscribing pod saw.
#[derive(Default, Debug, Clone, Copy, PartialEq)]
pub struct Seen {
    pub count: u64,
    pub sum: u64,
    pub in_order: bool,
    pub last: u64,
}

/// A graph that takes an Aeron stream of `T` into a sink; `pause` slows
/// the sink after every batch.
pub fn subscriber<T>(
    pod: &Pod,
    stream: Stream,
    pause: Option<Duration>,
    options: SubscribeOptions,
) -> (Graph, ActorState<Seen>, Arc<Endpoint>)
where
    T: Plain + Into<u128>,
{
    let mut g = Graph::new("sub");
    let (tx, rx) = g.channel::<T>("numbers").capacity(1024).build();
    let ep = subscribe(
        &mut g,
        "from-aeron",
        &tx,
        pod,
        stream,
        PlainCodec::<T>::new(),
        options,
    );
    let seen = ActorState::new(Seen {
        in_order: true,
        ..Seen::default()
    });
    let s = seen.clone();
    g.actor("sink")
        .reads(&rx)
        .run(move |_ctx| sink(rx.clone(), s.clone(), pause));
    (g, seen, ep)
}

async fn sink<T: Plain + Into<u128>>(
    input: RxHandle<T>,
    seen: ActorState<Seen>,
    pause: Option<Duration>,
) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut buf = Vec::new();
    while rx.wait_avail(1).await.is_some() {
        rx.take_batch(&mut buf, 256);
        {
            let mut s = seen.lock();
            for &v in &buf {
                let v = v.into() as u64;
                if s.count > 0 {
                    s.in_order &= v == s.last + 1;
                }
                s.last = v;
                s.count += 1;
                s.sum += v;
            }
        }
        buf.clear();
        if let Some(p) = pause {
            spindle::time::sleep(p).await;
        }
    }
    Ok(())
}
