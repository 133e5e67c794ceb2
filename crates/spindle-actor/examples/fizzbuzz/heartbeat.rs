//! The heartbeat: one beat every `rate` on the `heartbeat` channel; after
//! `beats` beats it asks the graph to stop.

use std::time::Duration;

use spindle_actor::{ActorContext, ActorState, PortError, TxHandle};

pub async fn run(
    ctx: ActorContext,
    out: TxHandle<u64>,
    rate: Duration,
    beats: u64,
    sent: ActorState<u64>,
) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let mut sent = sent.lock();
    let mut every = ctx.every(rate);
    while ctx.is_running(|| tx.mark_closed()) {
        if *sent >= beats {
            ctx.request_shutdown(); // the next vote stops this actor too
            continue;
        }
        if every.tick().await {
            // A full heartbeat channel means the worker is behind: the
            // beat is skipped, not queued (burst at most the capacity).
            if tx.try_send(*sent).is_ok() {
                *sent += 1;
            }
        }
    }
    println!("Heartbeat shutting down. Beats: {}", *sent);
    Ok(())
}
