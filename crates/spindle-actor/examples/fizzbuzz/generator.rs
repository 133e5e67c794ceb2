//! The generator: 1, 2, 3, … into `values`, half a channel at a time, as
//! fast as the channel takes them.

use spindle_actor::{ActorContext, ActorState, PortError, TxHandle};

pub async fn run(
    ctx: ActorContext,
    out: TxHandle<u64>,
    zero_copy: bool,
    generated: ActorState<u64>,
) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let batch = tx.batch_hint();
    let mut generated = generated.lock();
    // The double buffer of the copy mode, allocated once per run.
    let mut buf = if zero_copy {
        Vec::new()
    } else {
        vec![0u64; batch]
    };
    while ctx.is_running(|| tx.mark_closed()) {
        let Some(room) = tx.wait_vacant(batch).await else {
            break; // the worker is gone
        };
        let n = room.min(batch);
        if n == 0 {
            continue; // a stop request cut the wait short: vote again
        }
        let mut next = *generated + 1;
        if zero_copy {
            // Write the values straight into the channel's memory.
            let mut slots = tx.poke_slots(n);
            let (a, b) = slots.slices();
            for s in a.iter_mut().chain(b.iter_mut()) {
                *s = next;
                next += 1;
            }
            slots.commit(n);
        } else {
            let mut left = n;
            while left > 0 {
                let k = left.min(buf.len());
                for s in &mut buf[..k] {
                    *s = next;
                    next += 1;
                }
                tx.send_slice(&buf[..k]).await;
                left -= k;
            }
        }
        *generated += n as u64;
    }
    println!("Generator shutting down. Total generated: {}", *generated);
    Ok(())
}
