//! The logger: counts verdicts by class, printing a line at most once a
//! second, and a final line at shutdown.

use std::time::{Duration, Instant};

use spindle_actor::{ActorContext, ActorState, PortError, RxHandle};

use crate::messages::{Counts, Verdict};

pub async fn run(
    ctx: ActorContext,
    input: RxHandle<Verdict>,
    zero_copy: bool,
    counts: ActorState<Counts>,
) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut c = counts.lock();
    let batch = rx.batch_hint();
    let mut buf = if zero_copy {
        Vec::new()
    } else {
        vec![Verdict::Value; batch.min(1 << 14)]
    };
    let mut last = Instant::now();
    while ctx.is_running(|| rx.is_closed_and_empty()) {
        if rx.wait_avail(batch).await.is_none() {
            continue;
        }
        if zero_copy {
            let s = rx.peek_slots(usize::MAX);
            c.add(s.a);
            c.add(s.b);
            let n = s.len();
            rx.advance(n);
        } else {
            loop {
                let n = rx.take_slice(&mut buf);
                if n == 0 {
                    break;
                }
                c.add(&buf[..n]);
            }
        }
        if last.elapsed() >= Duration::from_secs(1) {
            last = Instant::now();
            println!("Logger: {} messages processed ({})", c.total(), *c);
        }
    }
    println!("Logger shutting down. Total: {} ({})", c.total(), *c);
    Ok(())
}
