//! Periodic samples of the graph's counters, and the snapshot computed from
//! them (rates, fill percentiles, busy shares) that every endpoint renders.
//!
//! # Invariants
//! - Samples are taken by the telemetry thread only, in time order, and
//!   kept for [`WINDOW`](super::WINDOW) (plus one older sample, so a full
//!   window is always covered once the graph is that old).
//! - Counters only grow (`sent`, `taken`, busy time), so every difference
//!   between two samples is non-negative; fill = sent - taken is read from
//!   one channel's two counters in one sample (taken first, so fill is
//!   never negative).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::actor::ActorCell;
use crate::graph::GraphShared;
use crate::port::ChannelInfo;

struct Sample {
    at: Instant,
    /// Per channel: (sent, fill).
    chans: Vec<(u64, u64)>,
    /// Per actor: busy nanoseconds.
    busy: Vec<u64>,
}

#[derive(Default)]
pub(crate) struct Sampler {
    samples: VecDeque<Sample>,
}

/// One actor, as the endpoints show it.
#[derive(Debug, Clone)]
pub(crate) struct ActorSnap {
    pub(crate) name: String,
    pub(crate) mode: String,
    pub(crate) status: &'static str,
    pub(crate) restarts: u64,
    pub(crate) polls: u64,
    pub(crate) busy_seconds: f64,
    /// Share of the last second spent in polls, 0..=100.
    pub(crate) busy_pct: f64,
    pub(crate) last_failure: Option<String>,
}

/// One channel, as the endpoints show it.
#[derive(Debug, Clone)]
pub(crate) struct ChannelSnap {
    pub(crate) name: String,
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) capacity: usize,
    pub(crate) batch: usize,
    pub(crate) sent: u64,
    pub(crate) taken: u64,
    pub(crate) dead_letters: u64,
    pub(crate) closed: bool,
    /// Messages per second over the last second.
    pub(crate) rate: f64,
    /// Messages per second over the whole window.
    pub(crate) rate_window: f64,
    /// Fill (percent of capacity) percentiles over the window: p50, p80, p99.
    pub(crate) fill_pct: [f64; 3],
}

/// Everything the endpoints render.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) graph: String,
    pub(crate) uptime: Duration,
    pub(crate) window: Duration,
    pub(crate) stopping: bool,
    pub(crate) live: usize,
    pub(crate) actors: Vec<ActorSnap>,
    pub(crate) channels: Vec<ChannelSnap>,
    pub(crate) probes: Vec<super::probes::ProbeSnap>,
    pub(crate) runtime: spindle::RuntimeMetrics,
}

fn take(g: &GraphShared) -> Sample {
    Sample {
        at: Instant::now(),
        chans: g
            .channels
            .iter()
            .map(|c| {
                let taken = c.taken();
                let sent = c.sent();
                (sent, sent.saturating_sub(taken))
            })
            .collect(),
        busy: g
            .actors
            .iter()
            .map(|a| a.busy_ns.load(Ordering::Relaxed))
            .collect(),
    }
}

/// The `q`-quantile (0..=1) of `v` by nearest rank; `v` is sorted here.
pub(crate) fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

impl Sampler {
    /// Takes a sample now and forgets those older than the window.
    pub(crate) fn tick(&mut self, g: &GraphShared) {
        let s = take(g);
        let now = s.at;
        self.samples.push_back(s);
        while self.samples.len() > 2 && now.duration_since(self.samples[1].at) > super::WINDOW {
            self.samples.pop_front();
        }
    }

    /// The newest sample at least `age` old (or the oldest one).
    fn back(&self, age: Duration) -> Option<&Sample> {
        let now = self.samples.back()?.at;
        self.samples
            .iter()
            .rev()
            .find(|s| now.duration_since(s.at) >= age)
            .or(self.samples.front())
    }

    pub(crate) fn snapshot(&self, g: &GraphShared) -> Snapshot {
        let now = take(g);
        let oldest = self.samples.front();
        let channels = g
            .channels
            .iter()
            .enumerate()
            .map(|(i, c)| self.channel(&now, i, c.as_ref()))
            .collect();
        let actors = g
            .actors
            .iter()
            .enumerate()
            .map(|(i, a)| self.actor(&now, i, a))
            .collect();
        Snapshot {
            graph: g.name.clone(),
            uptime: g.started.elapsed(),
            window: oldest.map_or(Duration::ZERO, |s| now.at - s.at),
            stopping: g.is_stopping(),
            live: g.live(),
            actors,
            channels,
            probes: super::probes::read(&g.probes),
            runtime: g.rt.metrics(),
        }
    }

    /// Channel `i`, `c`, with its rates over the last second and the
    /// window and its fill percentiles over the window (`now` included).
    fn channel(&self, now: &Sample, i: usize, c: &dyn ChannelInfo) -> ChannelSnap {
        let second = self.back(Duration::from_secs(1));
        let oldest = self.samples.front();
        let (sent, _) = now.chans[i];
        let taken = c.taken();
        let cap = c.capacity().max(1) as f64;
        let mut fills: Vec<f64> = self
            .samples
            .iter()
            .map(|s| s.chans[i].1 as f64 * 100.0 / cap)
            .collect();
        fills.push(now.chans[i].1 as f64 * 100.0 / cap);
        ChannelSnap {
            name: c.name().to_string(),
            from: c.writer().map(|a| a.name.clone()).unwrap_or_default(),
            to: c.reader().map(|a| a.name.clone()).unwrap_or_default(),
            capacity: c.capacity(),
            batch: c.batch(),
            sent,
            taken,
            dead_letters: c.dead_letters(),
            closed: c.is_closed(),
            rate: second.map_or(0.0, |s| per_sec(sent, s.chans[i].0, now.at - s.at)),
            rate_window: oldest.map_or(0.0, |s| per_sec(sent, s.chans[i].0, now.at - s.at)),
            fill_pct: [
                quantile(&mut fills, 0.5),
                quantile(&mut fills, 0.8),
                quantile(&mut fills, 0.99),
            ],
        }
    }

    /// Actor `i`, `a`, with its busy share of the last second.
    fn actor(&self, now: &Sample, i: usize, a: &ActorCell) -> ActorSnap {
        let busy = now.busy[i];
        let pct = self.back(Duration::from_secs(1)).map_or(0.0, |s| {
            let dt = (now.at - s.at).as_nanos() as f64;
            if dt == 0.0 {
                0.0
            } else {
                (busy.saturating_sub(s.busy[i]) as f64 * 100.0 / dt).min(100.0)
            }
        });
        ActorSnap {
            name: a.name.clone(),
            mode: a.mode.to_string(),
            status: a.status().as_str(),
            restarts: a.restarts.load(Ordering::Relaxed),
            polls: a.polls.load(Ordering::Relaxed),
            busy_seconds: busy as f64 / 1e9,
            busy_pct: pct,
            last_failure: a.last_failure(),
        }
    }
}

/// The rate of a counter that went from `old` to `new` in `dt` (0 over no
/// time).
fn per_sec(new: u64, old: u64, dt: Duration) -> f64 {
    if dt.is_zero() {
        0.0
    } else {
        new.saturating_sub(old) as f64 / dt.as_secs_f64()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::quantile;

    #[test]
    fn nearest_rank_quantiles() {
        let mut v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        assert_eq!(quantile(&mut v, 0.5), 5.0);
        assert_eq!(quantile(&mut v, 0.8), 8.0);
        assert_eq!(quantile(&mut v, 0.99), 10.0);
        assert_eq!(quantile(&mut [], 0.5), 0.0);
    }
}
