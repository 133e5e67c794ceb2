//! fizzbuzz_pipeline(_zc) on spindle-actor: a graph of three actors —
//! generator → worker (FizzBuzz) → logger — over two SPSC channels of
//! `fizzbuzz_capacity(n)` slots (1<<20 at the full size), moving batches of
//! half a channel (the double-buffer split). The kernels (`fill`, `classify`,
//! counting) are the ones every peer uses.
//!
//! - copy (`fizzbuzz_pipeline`): each actor waits for a batch, then copies
//!   it out of its input channel through a reused buffer and copies its
//!   output into the next channel (`take_slice` / `send_slice`), in chunks
//!   of `CHUNK` messages that stay in cache; no allocation after start.
//! - zero-copy (`fizzbuzz_pipeline_zc`): the generator writes values in
//!   place in the channel (`poke_slots`), the worker reads them in place and
//!   writes classes in place in the next channel, the logger counts in place
//!   (`peek_slots`); no buffer at all. Waits are per batch; once a batch is
//!   there it is worked through `CHUNK` messages per commit, as in the copy
//!   mode (measured: the same throughput as one commit per batch, with the
//!   next stage fed sooner).
//!
//! `SPINDLE_ACTOR_TELEMETRY=127.0.0.1:0` turns the telemetry server on, and
//! a client scraping it for the whole run (`Scraper`): `spindle-bench
//! telemetry-cost` sets it to measure what telemetry costs; the suite never does.
//!
//! The generator closes its channel after the last value; the stop follows
//! the last message down the pipeline, and the row waits for every actor to
//! stop, then checks that the stop was clean (every message sent was taken).

use spindle_actor::{ActorContext, ActorState, Graph, RxHandle, TxHandle};
use spindle_peer_common::catalogue::{fizzbuzz_batch, fizzbuzz_capacity};
use spindle_peer_common::kernels::{self, FizzCounts};

type Res = Result<(), spindle_actor::PortError>;

/// Where the actors run: spindle tasks (the default), one team
/// (`SPINDLE_ACTOR_PLACEMENT=team`), or a thread each (`=thread`), for
/// measuring the placements; the harness never sets it.
fn place(b: spindle_actor::ActorBuilder<'_>) -> spindle_actor::ActorBuilder<'_> {
    match std::env::var("SPINDLE_ACTOR_PLACEMENT").as_deref() {
        Ok("team") => b.team("all"),
        Ok("thread") => b.own_thread(),
        _ => b,
    }
}

/// The counts, and with telemetry on, how many scrapes were answered.
pub async fn run(n: u64, zero_copy: bool) -> (FizzCounts, Option<u64>) {
    let cap = fizzbuzz_capacity(n);
    let batch = fizzbuzz_batch(n);
    let mut g = Graph::new(if zero_copy { "fizzbuzz_zc" } else { "fizzbuzz" });
    let (vtx, vrx) = g
        .channel::<u64>("values")
        .capacity(cap)
        .batch(batch)
        .build();
    let (ctx_, crx) = g
        .channel::<u8>("classes")
        .capacity(cap)
        .batch(batch)
        .build();
    let counts = ActorState::new(FizzCounts::default());
    let c = counts.clone();
    if zero_copy {
        place(g.actor("generator"))
            .writes(&vtx)
            .run(move |_| generator_zc(vtx.clone(), n, batch));
        place(g.actor("worker"))
            .reads(&vrx)
            .writes(&ctx_)
            .run(move |_| worker_zc(vrx.clone(), ctx_.clone(), batch));
        place(g.actor("logger"))
            .reads(&crx)
            .run(move |ctx| logger_zc(ctx, crx.clone(), c.clone(), batch));
    } else {
        place(g.actor("generator"))
            .writes(&vtx)
            .run(move |_| generator(vtx.clone(), n, batch));
        place(g.actor("worker"))
            .reads(&vrx)
            .writes(&ctx_)
            .run(move |_| worker(vrx.clone(), ctx_.clone(), batch));
        place(g.actor("logger"))
            .reads(&crx)
            .run(move |ctx| logger(ctx, crx.clone(), c.clone(), batch));
    }
    if let Ok(addr) = std::env::var("SPINDLE_ACTOR_TELEMETRY") {
        g.telemetry(addr); // to measure what telemetry costs
    }
    let running = g.start(&spindle::Handle::current()).expect("graph");
    let scraper = running.telemetry_addr().map(Scraper::start);
    running.stopped().await;
    let scrapes = scraper.map(Scraper::finish);
    let report = running.report();
    assert!(report.is_clean(), "{report}");
    (counts.take().expect("logger state"), scrapes)
}

/// A client of the telemetry server for the length of a run: at once and
/// then every `PERIOD` until told to stop, it fetches `/metrics` and
/// `/api/graph.json` (a Prometheus scrape and the live page's poll, each far
/// more often than usual) and counts the answers that were `200 OK`.
struct Scraper {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<u64>,
}

impl Scraper {
    const PERIOD: std::time::Duration = std::time::Duration::from_millis(50);

    fn start(addr: std::net::SocketAddr) -> Scraper {
        use std::sync::mpsc::RecvTimeoutError::Timeout;
        let (stop, stopped) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut ok = 0;
            loop {
                for path in ["/metrics", "/api/graph.json"] {
                    ok += u64::from(get_ok(addr, path));
                }
                if stopped.recv_timeout(Self::PERIOD) != Err(Timeout) {
                    return ok;
                }
            }
        });
        Scraper { stop, thread }
    }

    /// Stops the client (it does not finish a period's sleep) and says how
    /// many answers were good.
    fn finish(self) -> u64 {
        let _ = self.stop.send(());
        self.thread.join().expect("scraper thread")
    }
}

/// One HTTP/1.0 GET; whether the answer was `200 OK` with a body.
fn get_ok(addr: std::net::SocketAddr, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut c) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let mut answer = Vec::new();
    let sent = write!(c, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").is_ok();
    sent && c.read_to_end(&mut answer).is_ok() && {
        let text = String::from_utf8_lossy(&answer);
        text.starts_with("HTTP/1.")
            && text.contains(" 200 ")
            && text.split("\r\n\r\n").nth(1).is_some_and(|b| !b.is_empty())
    }
}

/// The copy rows move each half-channel batch through buffers of this many
/// messages (128 KiB of values), so that the copy's source is still in
/// cache; the channel waits stay per batch.
const CHUNK: usize = 1 << 14;

async fn generator(out: TxHandle<u64>, n: u64, batch: usize) -> Res {
    let mut tx = out.lock()?;
    let mut buf = Vec::with_capacity(CHUNK.min(batch));
    let mut next = 1;
    while next <= n {
        let want = batch.min((n - next + 1) as usize);
        if tx.wait_vacant(want).await.is_none() {
            break;
        }
        let end = next + want as u64;
        while next < end {
            next = kernels::fill_batch(&mut buf, next, CHUNK.min((end - next) as usize), n);
            tx.send_slice(&buf).await;
        }
    }
    Ok(()) // returning closes `values`
}

async fn worker(input: RxHandle<u64>, out: TxHandle<u8>, batch: usize) -> Res {
    let (mut rx, mut tx) = (input.lock()?, out.lock()?);
    let chunk = CHUNK.min(batch);
    let mut values = vec![0u64; chunk];
    let mut classes = vec![0u8; chunk];
    while let Some(avail) = rx.wait_avail(batch).await {
        let mut left = avail.min(batch);
        while left > 0 {
            let k = rx.take_slice(&mut values[..chunk.min(left)]);
            classify(&values[..k], &mut classes[..k]);
            tx.send_slice(&classes[..k]).await;
            left -= k;
        }
    }
    Ok(())
}

async fn logger(
    _: ActorContext,
    input: RxHandle<u8>,
    counts: ActorState<FizzCounts>,
    batch: usize,
) -> Res {
    let mut rx = input.lock()?;
    let mut c = counts.lock();
    let mut classes = vec![0u8; CHUNK.min(batch)];
    while rx.wait_avail(batch).await.is_some() {
        loop {
            let k = rx.take_slice(&mut classes);
            if k == 0 {
                break;
            }
            c.add_all(&classes[..k]);
        }
    }
    Ok(())
}

async fn generator_zc(out: TxHandle<u64>, n: u64, batch: usize) -> Res {
    let mut tx = out.lock()?;
    let mut next = 1;
    while next <= n {
        let want = batch.min((n - next + 1) as usize);
        if tx.wait_vacant(want).await.is_none() {
            break;
        }
        // The batch is there: write it in place, a chunk per commit.
        let end = next + want as u64;
        while next < end {
            let mut slots = tx.poke_slots(CHUNK.min((end - next) as usize));
            let (a, b) = slots.slices();
            let v = count_up(b, count_up(a, next));
            slots.commit((v - next) as usize);
            next = v;
        }
    }
    Ok(())
}

async fn worker_zc(input: RxHandle<u64>, out: TxHandle<u8>, batch: usize) -> Res {
    let (mut rx, mut tx) = (input.lock()?, out.lock()?);
    while let Some(avail) = rx.wait_avail(batch).await {
        let mut left = avail.min(batch);
        while left > 0 {
            let Some(room) = tx.wait_vacant(CHUNK.min(left)).await else {
                return Ok(());
            };
            // Both rings may wrap at different points: classify the common
            // prefix run by run, in place, then commit and release it.
            let inp = rx.peek_slots(CHUNK.min(left).min(room));
            let mut outp = tx.poke_slots(inp.len());
            let (oa, ob) = outp.slices();
            let done = classify_runs(inp.a, inp.b, oa, ob);
            outp.commit(done);
            rx.advance(done);
            left -= done;
        }
    }
    Ok(())
}

/// The worker's kernel over a run: `kernels::classify` for each value.
fn classify(values: &[u64], classes: &mut [u8]) {
    for (c, &v) in classes.iter_mut().zip(values) {
        *c = kernels::classify(v);
    }
}

/// Writes `from, from + 1, …` into `run`; returns the value after it.
fn count_up(run: &mut [u64], from: u64) -> u64 {
    for (i, s) in run.iter_mut().enumerate() {
        *s = from + i as u64;
    }
    from + run.len() as u64
}

/// Classifies `ia ++ ib` into `oa ++ ob` (equal total lengths, different
/// split points); returns how many.
fn classify_runs(ia: &[u64], ib: &[u64], oa: &mut [u8], ob: &mut [u8]) -> usize {
    let n = (ia.len() + ib.len()).min(oa.len() + ob.len());
    let mut i = 0;
    while i < n {
        let (src, so) = if i < ia.len() {
            (ia, i)
        } else {
            (ib, i - ia.len())
        };
        let (dst, d0): (&mut [u8], usize) = if i < oa.len() {
            (&mut *oa, i)
        } else {
            (&mut *ob, i - oa.len())
        };
        let run = (src.len() - so).min(dst.len() - d0).min(n - i);
        classify(&src[so..so + run], &mut dst[d0..d0 + run]);
        i += run;
    }
    n
}

async fn logger_zc(
    _: ActorContext,
    input: RxHandle<u8>,
    counts: ActorState<FizzCounts>,
    batch: usize,
) -> Res {
    let mut rx = input.lock()?;
    let mut c = counts.lock();
    while rx.wait_avail(batch).await.is_some() {
        loop {
            let s = rx.peek_slots(CHUNK);
            if s.is_empty() {
                break;
            }
            c.add_all(s.a);
            c.add_all(s.b);
            let k = s.len();
            rx.advance(k);
        }
    }
    Ok(())
}
