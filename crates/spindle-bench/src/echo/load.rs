//! The echo benchmark's load generator, the same for every peer: C
//! connections to a loopback address, on each a request of B bytes, the
//! whole echo awaited and **checked byte by byte**, then the next request
//! (one in flight per connection, a closed loop).
//!
//! Bounds: only a loopback address is ever connected to; a run lasts a
//! warm-up plus a measured window and each connection sends at most
//! `max_requests` requests, so a run stops by itself whatever the server
//! does. A request counts only if its echo matched and it started after the
//! warm-up and ended inside the window; a mismatch, a short echo or a closed
//! connection fails the run, naming the connection and request.
//!
//! One thread (or `client_threads`) on the `polling` crate, level-triggered,
//! so that on a small machine the client takes as little CPU from the server
//! as it can.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use polling::{Event, Events, PollMode, Poller};
use serde::{Deserialize, Serialize};

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
    register_all(poller, conns)?;
    let mut tally = Tally {
        result: LoadResult::default(),
        last_counted: warm_end,
        open: conns.len(),
    };
    let mut events = Events::new();
    while tally.open > 0 {
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
            serve_event(poller, conns, ev, load, (warm_end, end), &mut tally)?;
        }
    }
    let mut result = tally.result;
    result.window = if tally.open == 0 {
        tally.last_counted.saturating_duration_since(warm_end)
    } else {
        load.duration
    };
    Ok(result)
}

/// What the load loop counts as it goes.
struct Tally {
    result: LoadResult,
    /// When the last counted reply came.
    last_counted: Instant,
    /// Connections still open.
    open: usize,
}

/// Sends every connection's first request and registers it.
fn register_all(poller: &Poller, conns: &mut [Conn]) -> Result<(), String> {
    let now = Instant::now();
    for (key, c) in conns.iter_mut().enumerate() {
        c.next_request(now);
        c.flush()?;
        // SAFETY: each stream stays open until `drive_some` deletes it from
        // the poller, after the load loop returns.
        unsafe { poller.add_with_mode(&c.stream, interest(key, c), PollMode::Level) }
            .map_err(|e| format!("poller: {e}"))?;
    }
    Ok(())
}

/// One readiness event: writes what is pending, reads a reply (counting
/// it inside the `(warm_end, end)` window) and sends the next request, or
/// closes the connection once it is done.
fn serve_event(
    poller: &Poller,
    conns: &mut [Conn],
    ev: Event,
    load: &Load,
    (warm_end, end): (Instant, Instant),
    tally: &mut Tally,
) -> Result<(), String> {
    let c = &mut conns[ev.key];
    if !c.open {
        return Ok(());
    }
    let wanted_write = c.want_write;
    if ev.writable && c.want_write {
        c.flush()?;
    }
    if ev.readable {
        if let Some(latency) = c.read(Instant::now)? {
            let done = Instant::now();
            tally.result.total += 1;
            if c.started >= warm_end && done <= end {
                tally.result.counted += 1;
                tally.result.latencies_ns.push(latency.as_nanos() as u64);
                tally.last_counted = done;
            }
            if c.seq >= load.max_requests || done >= end {
                c.open = false;
                tally.open -= 1;
                let _ = poller.delete(&c.stream);
                return Ok(());
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
    Ok(())
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
