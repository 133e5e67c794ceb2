//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use spindle_actor::{ActorContext, ActorState, Graph, PortError, RxHandle, TxHandle};

/// The runtimes every behaviour test runs on: current-thread, 1 worker,
/// 2 workers.
pub fn runtimes() -> Vec<(&'static str, spindle::Runtime)> {
    vec![
        (
            "current_thread",
            spindle::Builder::new_current_thread().build().unwrap(),
        ),
        (
            "1 worker",
            spindle::Builder::new_multi_thread()
                .workers(1)
                .build()
                .unwrap(),
        ),
        (
            "2 workers",
            spindle::Builder::new_multi_thread()
                .workers(2)
                .build()
                .unwrap(),
        ),
    ]
}

/// Generous: only reached when something hangs.
pub const STOP: Duration = Duration::from_secs(20);

/// Runs a started graph to its end on `rt` (inside `block_on`, so that a
/// current-thread runtime drives it too). A watchdog requests a stop after
/// `STOP`, and the actors then get 5 s: a hang fails the test with a
/// report instead of hanging it.
pub fn finish(
    rt: &spindle::Runtime,
    running: &spindle_actor::RunningGraph,
) -> spindle_actor::StopReport {
    running.shutdown_after(STOP);
    rt.block_on(running.wait_stopped(Duration::from_secs(5)))
}

/// Waits up to 10 s, inside `rt` (so that a current-thread runtime runs the
/// graph meanwhile), for `actor` to show `status`; panics with `why` if it
/// does not.
pub fn wait_for_status(
    rt: &spindle::Runtime,
    running: &spindle_actor::RunningGraph,
    actor: &str,
    status: spindle_actor::ActorStatus,
    why: &str,
) {
    rt.block_on(spindle::time::timeout(Duration::from_secs(10), async {
        while running.report().actor(actor).unwrap().status != status {
            spindle::time::sleep(Duration::from_millis(2)).await;
        }
    }))
    .expect(why);
}

/// A source actor: sends 1..=n in batches of `batch`, then returns (which
/// closes its channel). Stops early, closing, if the graph is stopped.
pub async fn source(
    ctx: ActorContext,
    out: TxHandle<u64>,
    n: u64,
    batch: usize,
) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let mut buf = Vec::with_capacity(batch);
    let mut next = tx.sent() + 1;
    while next <= n && ctx.is_running(|| tx.mark_closed()) {
        buf.clear();
        let end = (next + batch as u64 - 1).min(n);
        buf.extend(next..=end);
        tx.send_slice(&buf).await;
        next = end + 1;
    }
    Ok(())
}

/// What a collecting sink saw.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub values: Vec<u64>,
}

/// A sink actor: collects every value until its input is closed and
/// drained.
pub async fn sink(
    ctx: ActorContext,
    input: RxHandle<u64>,
    seen: ActorState<Seen>,
) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut s = seen.lock();
    let mut buf = vec![0u64; 64];
    loop {
        if !ctx.is_running(|| rx.is_closed_and_empty()) {
            break;
        }
        if rx.wait_avail(1).await.is_none() {
            break;
        }
        let k = rx.take_slice(&mut buf);
        s.values.extend_from_slice(&buf[..k]);
    }
    Ok(())
}

/// A two-actor graph: source(1..=n) → sink.
pub fn pipe(n: u64, cap: usize, batch: usize) -> (Graph, ActorState<Seen>) {
    let mut g = Graph::new("pipe");
    let (tx, rx) = g.channel::<u64>("numbers").capacity(cap).build();
    let seen = ActorState::new(Seen::default());
    let s = seen.clone();
    g.actor("source")
        .writes(&tx)
        .run(move |ctx| source(ctx, tx.clone(), n, batch));
    g.actor("sink")
        .reads(&rx)
        .run(move |ctx| sink(ctx, rx.clone(), s.clone()));
    (g, seen)
}

/// A raw HTTP/1.1 exchange: sends `request` as is, returns the whole
/// response (status line, headers, body) as text.
pub fn http_raw(addr: SocketAddr, request: &[u8]) -> String {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    exchange(s, request)
}

/// [`http_raw`] on a connection already made. A request the server
/// closes the connection on, unwritten or unanswered, gets "".
pub fn exchange(mut s: TcpStream, request: &[u8]) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    if s.write_all(request).is_err() {
        return String::new();
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// `GET path`: (status code, body).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let r = http_raw(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    );
    parse(&r)
}

pub fn parse(r: &str) -> (u16, String) {
    let status = r
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = r
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// Waits up to 10 s for `f` to hold (polling every 20 ms).
pub fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = std::time::Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
