//! The worker: on each heartbeat, classifies up to a whole channel of
//! values (two half-channel batches) into FizzBuzz verdicts. Once the graph
//! is stopping it no longer waits for beats: it drains `values` and then
//! closes its output.

use spindle_actor::{ActorContext, ActorState, PortError, Rx, RxHandle, Tx, TxHandle};

use crate::messages::{classify, Verdict};

#[derive(Debug, Default, Clone, Copy)]
pub struct WorkerState {
    pub heartbeats: u64,
    pub values: u64,
    pub messages: u64,
}

pub async fn run(
    ctx: ActorContext,
    heartbeat: RxHandle<u64>,
    values: RxHandle<u64>,
    out: TxHandle<Verdict>,
    zero_copy: bool,
    state: ActorState<WorkerState>,
) -> Result<(), PortError> {
    let (mut beats, mut rx, mut tx) = (heartbeat.lock()?, values.lock()?, out.lock()?);
    let mut st = state.lock();
    let batch = rx.batch_hint();
    // The double buffers of the copy mode, allocated once per run; a batch
    // goes through them in cache-sized chunks.
    let chunk = CHUNK.min(batch);
    let (mut inbuf, mut outbuf) = if zero_copy {
        (Vec::new(), Vec::new())
    } else {
        (vec![0u64; chunk], vec![Verdict::Value; chunk])
    };
    while ctx.is_running(|| agree(&mut beats, &mut rx, &mut tx, &mut st)) {
        if ctx.is_stopping() {
            // No more beats: move whatever arrives until `values` closes.
            if rx.wait_avail(batch).await.is_none() {
                continue;
            }
        } else if let Some(k) = beats.wait_avail(1).await {
            beats.advance(k);
            st.heartbeats += k as u64;
        }
        // One beat: up to a whole channel, half a channel at a time.
        for _ in 0..2 {
            let moved = if zero_copy {
                step_in_place(&mut rx, &mut tx, batch).await
            } else {
                step_copy(&mut rx, &mut tx, &mut inbuf, &mut outbuf, batch).await
            };
            st.values += moved as u64;
            st.messages += moved as u64;
            if moved == 0 {
                break;
            }
        }
    }
    println!(
        "Worker shutting down. Heartbeats: {}, Values: {}, Messages: {}",
        st.heartbeats, st.values, st.messages
    );
    Ok(())
}

/// The stop vote: agree once both inputs are drained (beats that came after
/// the last one used are counted, not left behind), then close the output
/// so that the logger can finish too.
fn agree(
    beats: &mut Rx<u64>,
    rx: &mut Rx<u64>,
    tx: &mut Tx<Verdict>,
    st: &mut WorkerState,
) -> bool {
    let k = beats.avail();
    beats.advance(k);
    st.heartbeats += k as u64;
    beats.is_closed_and_empty() && rx.is_closed_and_empty() && tx.mark_closed()
}

/// Messages per copy through the double buffers (128 KiB of values): small
/// enough that what was just copied is still in cache when it is read.
const CHUNK: usize = 1 << 14;

/// Copy mode: up to a batch of values out of the channel into a buffer,
/// verdicts into a second buffer, then into the next channel, chunk by
/// chunk.
async fn step_copy(
    rx: &mut Rx<u64>,
    tx: &mut Tx<Verdict>,
    inbuf: &mut [u64],
    outbuf: &mut [Verdict],
    batch: usize,
) -> usize {
    let mut moved = 0;
    while moved < batch {
        let want = inbuf.len().min(batch - moved);
        let k = rx.take_slice(&mut inbuf[..want]);
        if k == 0 {
            break;
        }
        classify(&inbuf[..k], &mut outbuf[..k]);
        let sent = tx.send_slice(&outbuf[..k]).await;
        moved += sent;
        if sent < k {
            break; // the logger is gone
        }
    }
    moved
}

/// Zero-copy mode: read the values where they lie in `values`, write the
/// verdicts where they will lie in `fizzbuzz`.
async fn step_in_place(rx: &mut Rx<u64>, tx: &mut Tx<Verdict>, batch: usize) -> usize {
    let want = rx.avail().min(batch);
    if want == 0 {
        return 0;
    }
    let Some(room) = tx.wait_vacant(want).await else {
        return 0; // the logger is gone
    };
    let n = want.min(room);
    let inp = rx.peek_slots(n);
    let mut out = tx.poke_slots(inp.len());
    let (oa, ob) = out.slices();
    let n = classify_runs([inp.a, inp.b], [oa, ob]);
    out.commit(n);
    rx.advance(n);
    n
}

/// Classifies two input runs into two output runs of the same total
/// length, whose split points differ (each ring wraps where it wraps).
fn classify_runs(inp: [&[u64]; 2], out: [&mut [Verdict]; 2]) -> usize {
    let mut done = 0;
    let (mut i, mut ioff) = (0, 0);
    for o in out {
        let mut ooff = 0;
        while ooff < o.len() && i < 2 {
            let src = &inp[i][ioff..];
            let run = src.len().min(o.len() - ooff);
            classify(&src[..run], &mut o[ooff..ooff + run]);
            ooff += run;
            ioff += run;
            done += run;
            if ioff == inp[i].len() {
                i += 1;
                ioff = 0;
            }
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_with_different_splits() {
        let a: Vec<u64> = (1..=4).collect();
        let b: Vec<u64> = (5..=6).collect();
        let mut o1 = [Verdict::Value; 1];
        let mut o2 = [Verdict::Value; 5];
        assert_eq!(classify_runs([&a, &b], [&mut o1, &mut o2]), 6);
        let all: Vec<Verdict> = o1.iter().chain(&o2).copied().collect();
        let want: Vec<Verdict> = (1..=6).map(Verdict::of).collect();
        assert_eq!(all, want);
    }
}
