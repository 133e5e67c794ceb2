//! `Interval`: ticks at a fixed period, with a policy for missed ticks.

use super::sleep::{sleep_until, Sleep};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// What an [`Interval`] does when ticks were missed (the task was late).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTicks {
    /// Fire the missed ticks at once, one per `tick()`, to catch up.
    Burst,
    /// Start over: the next tick is one period after the late one.
    Delay,
    /// Drop the missed ticks: the next tick is the next one on the original
    /// schedule that is still ahead.
    #[default]
    Skip,
}

/// Ticks every `period`, the first tick at once.
///
/// # Panics
/// If `period` is zero.
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start`.
///
/// # Panics
/// If `period` is zero.
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "spindle::time::interval: the period must be non-zero"
    );
    Interval {
        sleep: sleep_until(start),
        next: start,
        period,
        missed: MissedTicks::default(),
    }
}

/// The ticker [`interval`] returns.
#[derive(Debug)]
pub struct Interval {
    sleep: Sleep,
    /// The deadline of the tick being waited for.
    next: Instant,
    period: Duration,
    missed: MissedTicks,
}

impl Interval {
    /// Waits for the next tick; returns the time it was scheduled for.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Poll form of [`tick`](Interval::tick).
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if Pin::new(&mut self.sleep).poll(cx).is_pending() {
            return Poll::Pending;
        }
        let due = self.next;
        let now = Instant::now();
        let next = match self.missed {
            MissedTicks::Burst => due + self.period,
            MissedTicks::Delay if now > due + self.period => now + self.period,
            MissedTicks::Delay => due + self.period,
            MissedTicks::Skip => {
                let late = now.saturating_duration_since(due);
                let periods = late.as_nanos() / self.period.as_nanos() + 1;
                due + self.period * u32::try_from(periods).unwrap_or(u32::MAX)
            }
        };
        self.next = next;
        self.sleep.reset(next);
        Poll::Ready(due)
    }

    /// Sets the missed-tick policy (default [`MissedTicks::Skip`]).
    pub fn set_missed_ticks(&mut self, policy: MissedTicks) {
        self.missed = policy;
    }

    /// The missed-tick policy.
    pub fn missed_ticks(&self) -> MissedTicks {
        self.missed
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Restarts the schedule: the next tick one period from now.
    pub fn reset(&mut self) {
        self.next = Instant::now() + self.period;
        self.sleep.reset(self.next);
    }
}
