//! `spindle-bench echo`: the loopback echo benchmark.
//!
//! Each peer that speaks the `serve-echo` mode (`peers/common/src/echo.rs`:
//! spindle, Tokio, Go) is started in its own process with W workers, binds
//! 127.0.0.1:0 and announces its port. One load generator, the same for every
//! peer ([`drive`]), then opens C connections to it and on each sends a
//! request of B bytes, waits for the whole echo, **checks every byte**, and
//! sends the next (one request in flight per connection, a closed loop).
//!
//! Bounds: only 127.0.0.1 is ever connected to; a run lasts a warm-up plus a
//! measured window (seconds, fixed) and each connection sends at most
//! `--max-requests` requests, so a run stops by itself whatever the server
//! does; the server is told to exit by closing its stdin and killed if it
//! has not exited 5 s later.
//!
//! Figures per run: requests/s (requests completed in the window, divided
//! by the window), the latency of each of those requests (write start to
//! last byte read) as p50 and p99, and the server's CPU time (user + sys,
//! from `wait4`) per request served, warm-up included. A request counts only
//! if its echo matched; a mismatch, a short echo or a closed connection
//! fails the run, naming the connection and request. Peers alternate run by
//! run (A B C, A B C, …), as in the suite.
//!
//! The load generator is one thread (or `--client-threads`) on the
//! `polling` crate, level-triggered, so that on a small machine the client
//! takes as little CPU from the server as it can.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use polling::{Event, Events, PollMode, Poller};
use serde::{Deserialize, Serialize};

use crate::peers::Peer;
use spindle_peer_common::echo;

/// What one run of the load generator does.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Load {
    pub connections: usize,
    pub request_bytes: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// Per connection, warm-up included.
    pub max_requests: u64,
    pub client_threads: usize,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct LoadResult {
    /// Requests completed (and checked) inside the measured window.
    pub counted: u64,
    /// Requests completed in all, warm-up included.
    pub total: u64,
    /// The measured window as it was (shorter if every connection hit
    /// `max_requests` early).
    pub window: Duration,
    /// Latency of every counted request, nanoseconds.
    pub latencies_ns: Vec<u64>,
}

impl LoadResult {
    pub fn requests_per_s(&self) -> f64 {
        self.counted as f64 / self.window.as_secs_f64().max(1e-9)
    }
    fn merge(&mut self, other: LoadResult) {
        self.counted += other.counted;
        self.total += other.total;
        self.window = self.window.max(other.window);
        self.latencies_ns.extend(other.latencies_ns);
    }
}

/// The `q` quantile (0..=1) of `sorted` by nearest rank.
pub fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// One connection of the load generator.
struct Conn {
    stream: TcpStream,
    id: u64,
    seq: u64,
    request: Vec<u8>,
    response: Vec<u8>,
    sent: usize,
    received: usize,
    started: Instant,
    want_write: bool,
    open: bool,
}

impl Conn {
    /// Fills the next request: connection id, sequence number, then bytes
    /// that depend on both, so a misrouted or stale echo shows.
    fn next_request(&mut self, now: Instant) {
        self.seq += 1;
        let (id, seq) = (self.id, self.seq);
        for (i, b) in self.request.iter_mut().enumerate() {
            *b = match i {
                0..8 => id.to_le_bytes()[i],
                8..16 => seq.to_le_bytes()[i - 8],
                _ => (i as u64).wrapping_mul(31).wrapping_add(seq ^ id) as u8,
            };
        }
        self.sent = 0;
        self.received = 0;
        self.started = now;
    }

    /// Writes what it can of the request; whether the rest must wait.
    fn flush(&mut self) -> Result<(), String> {
        while self.sent < self.request.len() {
            match self.stream.write(&self.request[self.sent..]) {
                Ok(0) => return Err(self.failure("the server closed the connection")),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.failure(&format!("write failed: {e}"))),
            }
        }
        self.want_write = self.sent < self.request.len();
        Ok(())
    }

    /// Reads what there is of the echo; `Some(latency)` once it is whole
    /// and checked.
    fn read(&mut self, now: impl Fn() -> Instant) -> Result<Option<Duration>, String> {
        let len = self.request.len();
        while self.received < len {
            match self.stream.read(&mut self.response[self.received..len]) {
                Ok(0) => {
                    return Err(self.failure(&format!(
                        "the server closed the connection after {} of {len} echoed bytes",
                        self.received
                    )))
                }
                Ok(n) => self.received += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.failure(&format!("read failed: {e}"))),
            }
        }
        if self.sent < len {
            return Err(self.failure("echo arrived before the request was sent"));
        }
        if let Some(i) = (0..len).find(|&i| self.response[i] != self.request[i]) {
            return Err(self.failure(&format!(
                "the echo differs from the request at byte {i} (sent {:#04x}, got {:#04x})",
                self.request[i], self.response[i]
            )));
        }
        Ok(Some(now().duration_since(self.started)))
    }

    fn failure(&self, what: &str) -> String {
        format!("connection {}, request {}: {what}", self.id, self.seq)
    }
}

/// Runs the load against `addr` (loopback only) and checks every echo.
pub fn drive(addr: SocketAddr, load: &Load) -> Result<LoadResult, String> {
    if !addr.ip().is_loopback() {
        return Err(format!(
            "refusing to load {addr}: the echo benchmark only targets loopback"
        ));
    }
    if load.request_bytes < 16 {
        return Err(format!(
            "--request-bytes {}: at least 16 (connection id and sequence number)",
            load.request_bytes
        ));
    }
    let threads = load.client_threads.clamp(1, load.connections.max(1));
    let start = Instant::now();
    let warm_end = start + load.warmup;
    let end = warm_end + load.duration;
    let mut parts = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let ids: Vec<u64> = (0..load.connections as u64)
                    .filter(|c| *c as usize % threads == t)
                    .collect();
                s.spawn(move || drive_some(addr, load, &ids, warm_end, end))
            })
            .collect();
        for h in handles {
            parts.push(
                h.join()
                    .unwrap_or_else(|_| Err("a client thread panicked".into())),
            );
        }
    });
    let mut result = LoadResult::default();
    for p in parts {
        result.merge(p?);
    }
    if result.counted == 0 {
        return Err(format!(
            "no echo completed in the {:.1} s measured window",
            load.duration.as_secs_f64()
        ));
    }
    Ok(result)
}

/// One client thread: its connections on one poller.
fn drive_some(
    addr: SocketAddr,
    load: &Load,
    ids: &[u64],
    warm_end: Instant,
    end: Instant,
) -> Result<LoadResult, String> {
    let poller = Poller::new().map_err(|e| format!("poller: {e}"))?;
    let mut conns = Vec::with_capacity(ids.len());
    for &id in ids {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map_err(|e| format!("connection {id}: could not connect to {addr}: {e}"))?;
        stream
            .set_nodelay(true)
            .and_then(|_| stream.set_nonblocking(true))
            .map_err(|e| format!("connection {id}: {e}"))?;
        conns.push(Conn {
            stream,
            id,
            seq: 0,
            request: vec![0; load.request_bytes],
            response: vec![0; load.request_bytes],
            sent: 0,
            received: 0,
            started: Instant::now(),
            want_write: false,
            open: true,
        });
    }
    let result = run_conns(&poller, &mut conns, load, warm_end, end);
    for c in &conns {
        let _ = poller.delete(&c.stream);
    }
    result
}

fn interest(key: usize, c: &Conn) -> Event {
    if c.want_write {
        Event::all(key)
    } else {
        Event::readable(key)
    }
}

fn run_conns(
    poller: &Poller,
    conns: &mut [Conn],
    load: &Load,
    warm_end: Instant,
    end: Instant,
) -> Result<LoadResult, String> {
    let mut result = LoadResult::default();
    let mut last_counted = warm_end;
    let now = Instant::now();
    for (key, c) in conns.iter_mut().enumerate() {
        c.next_request(now);
        c.flush()?;
        // SAFETY: each stream stays open until `drive_some` deletes it from
        // the poller, after this function returns.
        unsafe { poller.add_with_mode(&c.stream, interest(key, c), PollMode::Level) }
            .map_err(|e| format!("poller: {e}"))?;
    }
    let mut open = conns.len();
    let mut events = Events::new();
    while open > 0 {
        let now = Instant::now();
        if now >= end {
            break;
        }
        events.clear();
        match poller.wait(&mut events, Some(end - now)) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("poller: {e}")),
        }
        for ev in events.iter() {
            let c = &mut conns[ev.key];
            if !c.open {
                continue;
            }
            let wanted_write = c.want_write;
            if ev.writable && c.want_write {
                c.flush()?;
            }
            if ev.readable {
                if let Some(latency) = c.read(Instant::now)? {
                    let done = Instant::now();
                    result.total += 1;
                    if c.started >= warm_end && done <= end {
                        result.counted += 1;
                        result.latencies_ns.push(latency.as_nanos() as u64);
                        last_counted = done;
                    }
                    if c.seq >= load.max_requests || done >= end {
                        c.open = false;
                        open -= 1;
                        let _ = poller.delete(&c.stream);
                        continue;
                    }
                    c.next_request(done);
                    c.flush()?;
                }
            }
            if c.want_write != wanted_write {
                poller
                    .modify_with_mode(&c.stream, interest(ev.key, c), PollMode::Level)
                    .map_err(|e| format!("poller: {e}"))?;
            }
        }
    }
    result.window = if open == 0 {
        last_counted.saturating_duration_since(warm_end)
    } else {
        load.duration
    };
    Ok(result)
}

/// One run against one peer: its figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFigures {
    pub peer: String,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub counted: u64,
    /// Server CPU (user + sys) per request it served, warm-up included.
    pub server_cpu_us_per_request: f64,
}

/// A started `serve-echo` process.
struct Server {
    child: Child,
    port: u16,
    stderr: mpsc::Receiver<String>,
}

fn start_server(peer: &Peer, workers: usize) -> Result<Server, String> {
    let mut child = Command::new(&peer.path)
        .args(["serve-echo", "--workers", &workers.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", peer.path.display()))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let (line_tx, line_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(l)) = lines.next() {
            let _ = line_tx.send(l);
        }
        for _ in lines {} // drain
    });
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut s);
        let _ = err_tx.send(s);
    });
    let line = line_rx.recv_timeout(Duration::from_secs(10));
    let port = line
        .as_ref()
        .ok()
        .and_then(|l| l.strip_prefix(echo::ANNOUNCE))
        .and_then(|rest| rest.trim().strip_prefix("port="))
        .and_then(|p| p.parse::<u16>().ok());
    let mut server = Server {
        child,
        port: 0,
        stderr: err_rx,
    };
    match port {
        Some(p) => {
            server.port = p;
            Ok(server)
        }
        None => {
            let (_, err) = stop_server(&mut server);
            Err(format!(
                "{} serve-echo did not announce a port ({}){}",
                peer.name,
                match line {
                    Ok(l) => format!("said `{l}`"),
                    Err(_) => "nothing within 10 s".into(),
                },
                if err.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", crate::runner::tail(&err, 3))
                }
            ))
        }
    }
}

/// Closes the server's stdin, waits up to 5 s, kills it if needed; returns
/// its CPU time (user + sys) and its stderr.
fn stop_server(server: &mut Server) -> (Duration, String) {
    drop(server.child.stdin.take());
    let pid = server.child.id() as libc::pid_t;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut killed = false;
    let cpu = loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own child, not yet reaped (only this loop
        // reaps it); `status` and `usage` are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            let tv = |t: libc::timeval| {
                Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
            };
            break tv(usage.ru_utime) + tv(usage.ru_stime);
        }
        if r < 0 {
            break Duration::ZERO;
        }
        if Instant::now() >= deadline && !killed {
            let _ = server.child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = server
        .stderr
        .recv_timeout(Duration::from_secs(2))
        .unwrap_or_default();
    (cpu, err)
}

/// One run: start the peer, load it, stop it.
pub fn run_once(peer: &Peer, workers: usize, load: &Load) -> Result<RunFigures, String> {
    let mut server = start_server(peer, workers)?;
    let addr = SocketAddr::from(([127, 0, 0, 1], server.port));
    let outcome = drive(addr, load);
    let (cpu, err) = stop_server(&mut server);
    let mut r = outcome.map_err(|e| {
        let said = crate::runner::tail(&err, 3);
        if said.is_empty() {
            format!("{}: {e}", peer.name)
        } else {
            format!("{}: {e} (server said: {said})", peer.name)
        }
    })?;
    r.latencies_ns.sort_unstable();
    let us = |q| quantile(&r.latencies_ns, q).unwrap_or(0) as f64 / 1e3;
    Ok(RunFigures {
        peer: peer.name.clone(),
        requests_per_s: r.requests_per_s(),
        p50_us: us(0.50),
        p99_us: us(0.99),
        counted: r.counted,
        server_cpu_us_per_request: cpu.as_secs_f64() * 1e6 / r.total.max(1) as f64,
    })
}

/// Per peer, over its runs: the medians.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeerSummary {
    pub peer: String,
    pub runs: Vec<RunFigures>,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub server_cpu_us_per_request: f64,
    pub error: Option<String>,
}

pub fn summarize(peer: &str, runs: Vec<RunFigures>, error: Option<String>) -> PeerSummary {
    let med = |f: fn(&RunFigures) -> f64| {
        crate::stats::median(&runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
    };
    PeerSummary {
        peer: peer.to_string(),
        requests_per_s: med(|r| r.requests_per_s),
        p50_us: med(|r| r.p50_us),
        p99_us: med(|r| r.p99_us),
        server_cpu_us_per_request: med(|r| r.server_cpu_us_per_request),
        runs,
        error,
    }
}

/// The saved run (`<out>/echo.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EchoRun {
    pub meta: crate::meta::RunMeta,
    pub workers: usize,
    pub load: Load,
    pub runs_per_peer: u32,
    pub peers: Vec<PeerSummary>,
}

/// The table: medians per peer, and each peer's throughput against Tokio's and Go's.
pub fn render(run: &EchoRun) -> String {
    let mut s = format!(
        "echo over loopback: {} connections, {}-byte requests, one in flight each; \
         {:.1} s warm-up + {:.1} s measured, {} runs per peer (medians); server workers {}\n",
        run.load.connections,
        run.load.request_bytes,
        run.load.warmup.as_secs_f64(),
        run.load.duration.as_secs_f64(),
        run.runs_per_peer,
        run.workers
    );
    s.push_str(&format!(
        "{:<10} {:>12} {:>9} {:>9} {:>13} {:>9} {:>9}\n",
        "peer", "requests/s", "p50 µs", "p99 µs", "CPU µs/req", "vs tokio", "vs go"
    ));
    let rate = |name: &str| {
        run.peers
            .iter()
            .find(|p| p.peer == name && p.error.is_none())
            .map(|p| p.requests_per_s)
    };
    for p in &run.peers {
        if let Some(e) = &p.error {
            s.push_str(&format!("{:<10} FAILED: {e}\n", p.peer));
            continue;
        }
        let ratio = |other: &str| match rate(other) {
            Some(o) if o > 0.0 => format!("{:.2}x", p.requests_per_s / o),
            _ => "-".into(),
        };
        s.push_str(&format!(
            "{:<10} {:>12.0} {:>9.1} {:>9.1} {:>13.2} {:>9} {:>9}\n",
            p.peer,
            p.requests_per_s,
            p.p50_us,
            p.p99_us,
            p.server_cpu_us_per_request,
            ratio("tokio"),
            ratio("go")
        ));
    }
    s.push_str("vs X: requests/s over X's (above 1: more requests served); CPU: the server process's user+sys per request\n");
    s
}

/// Where the run is saved.
pub fn save(out: &std::path::Path, run: &EchoRun) -> Result<PathBuf, String> {
    crate::meta::save_json(out, "echo.json", run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A std-thread echo server on loopback; `corrupt_at`: flips that byte
    /// of the stream once.
    fn server(corrupt_at: Option<usize>) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { return };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let mut offset = 0;
                    loop {
                        let n = match s.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        if let Some(at) = corrupt_at {
                            if (offset..offset + n).contains(&at) {
                                buf[at - offset] ^= 0xff;
                            }
                        }
                        offset += n;
                        if s.write_all(&buf[..n]).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    /// No warm-up, and a window long enough for any machine: the request
    /// cap ends the run, not the clock.
    fn load(max_requests: u64) -> Load {
        Load {
            connections: 4,
            request_bytes: 100,
            warmup: Duration::ZERO,
            duration: Duration::from_secs(20),
            max_requests,
            client_threads: 2,
        }
    }

    #[test]
    fn counts_checked_echoes_within_the_bounds() {
        let r = drive(server(None), &load(50)).unwrap();
        // 4 connections × 50 requests, all checked and counted.
        assert_eq!((r.total, r.counted), (200, 200), "{r:?}");
        assert_eq!(r.latencies_ns.len() as u64, r.counted);
    }

    #[test]
    fn a_wrong_byte_fails_the_run_naming_it() {
        let e = drive(server(Some(150)), &load(1000)).unwrap_err();
        assert!(e.contains("differs from the request at byte 50"), "{e}");
        assert!(e.contains("request 2"), "{e}");
    }

    #[test]
    fn refuses_anything_but_loopback_and_tiny_requests() {
        let e = drive("10.0.0.1:7".parse().unwrap(), &load(1)).unwrap_err();
        assert!(e.contains("loopback"), "{e}");
        let mut l = load(1);
        l.request_bytes = 8;
        assert!(drive(server(None), &l)
            .unwrap_err()
            .contains("--request-bytes 8"));
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let xs: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&xs, 0.5), Some(50));
        assert_eq!(quantile(&xs, 0.99), Some(99));
        assert_eq!(quantile(&xs, 1.0), Some(100));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
