//! The two pods: the publisher (`generator → publish`) and the subscriber
//! (`subscribe → worker → logger`), each a graph of its own, and the one
//! line each prints when it stops. Beside the numbers, on the same
//! channel, the heartbeat stream measures latency under their load
//! (`heartbeat.rs`).

use crate::args::Args;
use crate::heartbeat;
use spindle_actor::{ActorContext, ActorState, Graph, PortError, RxHandle, TxHandle};
use spindle_actor_aeron::{
    publish, subscribe, PlainCodec, Pod, PublishOptions, Stream, SubscribeOptions,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The stream FizzBuzz's numbers travel on.
pub const STREAM_ID: i32 = 1001;

/// `[V, F, B, FB]` counts.
pub type Counts = [u64; 4];

/// FizzBuzz's counts for `1..=n`, in closed form.
pub fn expected(n: u64) -> Counts {
    let fb = n / 15;
    let (f, b) = (n / 3 - fb, n / 5 - fb);
    [n - f - b - fb, f, b, fb]
}

fn class(v: u64) -> u8 {
    u8::from(v.is_multiple_of(3)) | (u8::from(v.is_multiple_of(5)) << 1)
}

/// A runtime of `workers` workers, or one per core.
fn runtime(workers: Option<usize>) -> Result<spindle::Runtime, String> {
    let b = spindle::Builder::new_multi_thread();
    let b = match workers {
        Some(w) => b.workers(w),
        None => b,
    };
    b.build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// Starts the `role` pod's graph (serving telemetry when asked) and runs
/// it until it stops; Ok when it stopped cleanly.
fn run_to_stop(mut g: Graph, rt: &spindle::Runtime, role: &str, a: &Args) -> Result<(), String> {
    if let Some(addr) = &a.telemetry {
        g.telemetry(addr.to_string());
    }
    let running = g.start(rt.handle()).map_err(|e| e.to_string())?;
    if let Some(addr) = running.telemetry_addr() {
        // One write, so that the two pods' lines do not interleave.
        let line =
            format!("{role} pod: telemetry on http://{addr}/ (metrics: http://{addr}/metrics)\n");
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    let report = running.block_until_stopped(Duration::from_secs(600));
    if report.is_clean() {
        Ok(())
    } else {
        Err(format!("the {role} pod did not stop cleanly:\n{report}"))
    }
}

/// Runs the publisher pod to its end; returns its summary line.
pub fn run_publisher(pod: &Pod, channel: &str, a: &Args) -> Result<String, String> {
    let (rt, n) = (runtime(a.workers)?, a.messages);
    let mut g = Graph::new("publisher");
    let (tx, rx) = g.channel::<u64>("numbers").capacity(1 << 16).build();
    let done = Arc::new(AtomicBool::new(false));
    let generated = done.clone();
    g.actor("generator")
        .writes(&tx)
        .run(move |ctx| generate(ctx, tx.clone(), n, generated.clone()));
    let stream = Stream::new(channel, STREAM_ID);
    let ep = publish(
        &mut g,
        "to-aeron",
        &rx,
        pod,
        stream,
        PlainCodec::<u64>::new(),
        PublishOptions::default(),
    );
    if a.heartbeat {
        heartbeat::add_sender(&mut g, pod, channel, ep.clone(), done);
    }
    let start = Instant::now();
    run_to_stop(g, &rt, "publisher", a)?;
    let secs = start.elapsed().as_secs_f64();
    Ok(format!(
        "POD role=publish messages={} frames={} back_pressure={} seconds={secs:.3}",
        ep.messages(),
        ep.frames(),
        ep.back_pressure_events()
    ))
}

async fn generate(
    _ctx: ActorContext,
    out: TxHandle<u64>,
    n: u64,
    done: Arc<AtomicBool>,
) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let mut next = 1u64;
    let mut batch = [0u64; 4096];
    while next <= n {
        let len = (n + 1 - next).min(batch.len() as u64) as usize;
        for (i, slot) in batch[..len].iter_mut().enumerate() {
            *slot = next + i as u64;
        }
        tx.send_slice(&batch[..len]).await;
        next += len as u64;
    }
    tx.mark_closed();
    done.store(true, Ordering::Release);
    Ok(())
}

/// Runs the subscriber pod to the end of the stream; returns its summary.
pub fn run_subscriber(pod: &Pod, channel: &str, a: &Args) -> Result<String, String> {
    let rt = runtime(a.workers)?;
    let mut g = Graph::new("subscriber");
    let (num_tx, num_rx) = g.channel::<u64>("numbers").capacity(1 << 16).build();
    let (cls_tx, cls_rx) = g.channel::<u8>("classes").capacity(1 << 16).build();
    let stream = Stream::new(channel, STREAM_ID);
    let ep = subscribe(
        &mut g,
        "from-aeron",
        &num_tx,
        pod,
        stream,
        PlainCodec::<u64>::new(),
        SubscribeOptions::default(),
    );
    g.actor("worker")
        .reads(&num_rx)
        .writes(&cls_tx)
        .run(move |_| work(num_rx.clone(), cls_tx.clone()));
    let latencies = a
        .heartbeat
        .then(|| heartbeat::add_receiver(&mut g, pod, channel));
    let logged = ActorState::new(Logged::default());
    let l = logged.clone();
    g.actor("logger")
        .reads(&cls_rx)
        .run(move |_| log(cls_rx.clone(), l.clone()));
    run_to_stop(g, &rt, "subscriber", a)?;
    let Logged {
        counts: [v, f, b, fb],
        seconds: secs,
    } = logged.take().unwrap_or_default();
    Ok(format!(
        "POD role=subscribe messages={} V={v} F={f} B={b} FB={fb} missed={} seconds={secs:.6} {}",
        ep.messages(),
        ep.missed(),
        latencies.map_or(String::new(), |l| l.take().unwrap_or_default().fields())
    ))
}

async fn work(input: RxHandle<u64>, output: TxHandle<u8>) -> Result<(), PortError> {
    let (mut rx, mut tx) = (input.lock()?, output.lock()?);
    let mut nums = Vec::with_capacity(4096);
    let mut classes = Vec::with_capacity(4096);
    while rx.wait_avail(1).await.is_some() {
        rx.take_batch(&mut nums, 4096);
        classes.extend(nums.iter().map(|&v| class(v)));
        nums.clear();
        tx.send_slice(&classes).await;
        classes.clear();
    }
    tx.mark_closed();
    Ok(())
}

/// The logger's counts, and the seconds from its first message to the
/// end of the stream (the pipeline's steady rate, connection set-up left out).
#[derive(Default)]
struct Logged {
    counts: Counts,
    seconds: f64,
}

async fn log(input: RxHandle<u8>, logged: ActorState<Logged>) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut buf = vec![0u8; 4096];
    let mut local = [0u64; 4];
    let mut first = None;
    while rx.wait_avail(1).await.is_some() {
        first.get_or_insert_with(Instant::now);
        let n = rx.take_slice(&mut buf);
        for &c in &buf[..n] {
            local[usize::from(c)] += 1;
        }
    }
    *logged.lock() = Logged {
        counts: local,
        seconds: first.map_or(0.0, |t| t.elapsed().as_secs_f64()),
    };
    Ok(())
}
