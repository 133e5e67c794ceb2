//! [`Endpoint`]: the live figures of one publication or subscription,
//! updated by its actor and read by anyone (the pod's telemetry, a test,
//! the example's summary).
//!
//! Invariants: counters only grow; `window` is the latest sample (a
//! publisher's room before the subscriber's progress holds it back; 0 on a
//! subscriber); `gaps` lists
//! every sequence range a subscriber missed, in order, so nothing is lost
//! silently.

use spindle_actor::{Probe, Reading};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// Publication or subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Publish,
    Subscribe,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Publish => "publish",
            Direction::Subscribe => "subscribe",
        }
    }
}

/// One Aeron endpoint of a pod.
#[derive(Debug)]
pub struct Endpoint {
    pub actor: String,
    pub direction: Direction,
    pub channel: String,
    pub stream_id: i32,
    messages: AtomicU64,
    frames: AtomicU64,
    back_pressure: AtomicU64,
    window: AtomicI64,
    connected: AtomicBool,
    ended: AtomicBool,
    gaps: Mutex<Vec<(u64, u64)>>,
    /// The telemetry's last reading (when, messages) and the rate it gave.
    last_read: Mutex<(Option<(Instant, u64)>, f64)>,
}

impl Endpoint {
    /// A new endpoint for actor `actor` on `stream`, shown on `graph`'s
    /// telemetry.
    pub(crate) fn added_to(
        graph: &mut spindle_actor::Graph,
        actor: &str,
        direction: Direction,
        stream: &crate::Stream,
    ) -> std::sync::Arc<Endpoint> {
        let endpoint = std::sync::Arc::new(Endpoint::new(
            actor,
            direction,
            &stream.channel,
            stream.stream_id,
        ));
        graph.probe(endpoint.clone());
        endpoint
    }

    fn new(actor: &str, direction: Direction, channel: &str, stream_id: i32) -> Endpoint {
        Endpoint {
            actor: actor.into(),
            direction,
            channel: channel.into(),
            stream_id,
            messages: AtomicU64::new(0),
            frames: AtomicU64::new(0),
            back_pressure: AtomicU64::new(0),
            window: AtomicI64::new(0),
            connected: AtomicBool::new(false),
            ended: AtomicBool::new(false),
            gaps: Mutex::new(Vec::new()),
            last_read: Mutex::new((None, 0.0)),
        }
    }

    /// Messages published or delivered.
    pub fn messages(&self) -> u64 {
        self.messages.load(Relaxed)
    }

    /// Aeron frames (batches) published or received.
    pub fn frames(&self) -> u64 {
        self.frames.load(Relaxed)
    }

    /// Offers refused for back pressure (publisher) or waits for room
    /// downstream (subscriber): each one a moment the stream waited, never
    /// a message dropped.
    pub fn back_pressure_events(&self) -> u64 {
        self.back_pressure.load(Relaxed)
    }

    /// Publisher: bytes it may still send before the subscriber's position
    /// holds it back (Aeron's position limit less its position), at the
    /// last offer. Near 0 means the subscriber is the bottleneck.
    pub fn window(&self) -> i64 {
        self.window.load(Relaxed)
    }

    /// Whether the other end is connected now.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Relaxed)
    }

    /// Whether the end-of-stream marker was sent (publisher) or received
    /// (subscriber).
    pub fn ended(&self) -> bool {
        self.ended.load(Relaxed)
    }

    /// Sequence ranges `[from, to)` this subscriber never received.
    pub fn gaps(&self) -> Vec<(u64, u64)> {
        self.gaps.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Messages of all gaps.
    pub fn missed(&self) -> u64 {
        self.gaps().iter().map(|(a, b)| b - a).sum()
    }

    pub(crate) fn add_frame(&self, messages: u64) {
        self.frames.fetch_add(1, Relaxed);
        self.messages.fetch_add(messages, Relaxed);
    }

    pub(crate) fn add_back_pressure(&self) {
        self.back_pressure.fetch_add(1, Relaxed);
    }

    pub(crate) fn set_window(&self, bytes: i64) {
        self.window.store(bytes, Relaxed);
    }

    pub(crate) fn set_connected(&self, on: bool) {
        self.connected.store(on, Relaxed);
    }

    pub(crate) fn set_ended(&self) {
        self.ended.store(true, Relaxed);
    }

    pub(crate) fn add_gap(&self, from: u64, to: u64) {
        self.gaps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((from, to));
    }
}

impl Endpoint {
    /// Messages per second since the previous reading (kept for a second
    /// at least, so that a quick second scrape does not read as zero).
    fn rate(&self) -> f64 {
        let now = (Instant::now(), self.messages());
        let mut last = self.last_read.lock().unwrap_or_else(|e| e.into_inner());
        match last.0 {
            Some((at, n)) if now.0.duration_since(at).as_secs_f64() >= 1.0 => {
                last.1 = (now.1 - n) as f64 / now.0.duration_since(at).as_secs_f64();
                last.0 = Some(now);
            }
            Some(_) => {}
            None => last.0 = Some(now),
        }
        last.1
    }
}

/// The endpoint's row on its pod's telemetry page and its families on
/// `/metrics` (`spindle_aeron_*`, labelled by actor, direction, channel
/// and stream).
impl Probe for Endpoint {
    fn name(&self) -> String {
        format!(
            "{} ({} {} stream {})",
            self.actor,
            self.direction.as_str(),
            self.channel,
            self.stream_id
        )
    }

    fn labels(&self) -> Vec<(&'static str, String)> {
        vec![
            ("actor", self.actor.clone()),
            ("direction", self.direction.as_str().into()),
            ("channel", self.channel.clone()),
            ("stream", self.stream_id.to_string()),
        ]
    }

    fn read(&self) -> Vec<Reading> {
        let r = |metric, help, counter, short, value| Reading {
            metric,
            help,
            counter,
            short,
            value,
        };
        vec![
            r("spindle_aeron_messages_total", "Messages published or delivered.", true, "messages", self.messages() as f64),
            r("spindle_aeron_messages_per_second", "Messages per second lately.", false, "rate /s", self.rate()),
            r("spindle_aeron_frames_total", "Aeron messages (batches) published or received.", true, "frames", self.frames() as f64),
            r(
                "spindle_aeron_back_pressure_total",
                "Times the stream waited: offers refused for back pressure, or a full downstream channel.",
                true,
                "back pressure",
                self.back_pressure_events() as f64,
            ),
            r(
                "spindle_aeron_window_bytes",
                "Publisher: bytes it may still send before the subscriber's position holds it back.",
                false,
                "window bytes",
                self.window() as f64,
            ),
            r("spindle_aeron_connected", "1 while the other end is connected.", false, "connected", f64::from(u8::from(self.is_connected()))),
            r("spindle_aeron_missed_total", "Messages a subscriber never received (gaps).", true, "missed", self.missed() as f64),
        ]
    }
}
