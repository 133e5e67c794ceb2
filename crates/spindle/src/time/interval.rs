//! `Interval`: ticks at a fixed period, with a policy for missed ticks.

use super::sleep::{sleep_until, Sleep};
use super::Instant;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// What an [`Interval`] does when ticks were missed (the task was late).
///
/// For `Delay` and `Skip`, a tick is late only when its time passed by more
/// than the timer's resolution (one millisecond): timers round deadlines up
/// so as never to fire early, so up to a tick of lateness is the clock's
/// grain, not the task falling behind. (Without that slack, a 1 ms interval
/// whose start sat just past a millisecond boundary fired every tick about
/// 1 ms late, and `Skip` dropped every other one.)
///
/// A next tick too far away for `Instant` (a period near `Duration::MAX`)
/// never comes: the interval ticks once, then waits for good.
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
    interval_at(super::now(), period)
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
        next: Some(start),
        period,
        missed: MissedTicks::default(),
    }
}

/// The ticker [`interval`] returns.
#[derive(Debug)]
pub struct Interval {
    sleep: Sleep,
    /// The deadline of the tick being waited for (`None`: never).
    next: Option<Instant>,
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
        // A sleep that completed had a deadline.
        let Some(due) = self.next else {
            return Poll::Pending;
        };
        self.next = next_tick(self.missed, due, super::now(), self.period);
        self.sleep.set_deadline(self.next);
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
        self.next = super::now().checked_add(self.period);
        self.sleep.set_deadline(self.next);
    }
}

/// The deadline after the tick `due`, returned at `now` (see the note on
/// lateness under [`MissedTicks`]); `None` when it is past what `Instant`
/// can hold.
fn next_tick(policy: MissedTicks, due: Instant, now: Instant, period: Duration) -> Option<Instant> {
    let late = now
        .saturating_duration_since(due)
        .saturating_sub(crate::driver::timers::RESOLUTION);
    match policy {
        MissedTicks::Burst => due.checked_add(period),
        MissedTicks::Delay if !late.is_zero() => now.checked_add(period),
        MissedTicks::Delay => due.checked_add(period),
        MissedTicks::Skip => {
            // In u128 nanoseconds: more than 2^32 periods may have passed
            // (a 1 µs period 72 minutes behind), which `Duration`'s `u32`
            // multiplier cannot express.
            let periods = late.as_nanos() / period.as_nanos() + 1;
            let ahead = period.as_nanos().checked_mul(periods)?;
            let secs = u64::try_from(ahead / 1_000_000_000).ok()?;
            due.checked_add(Duration::new(secs, (ahead % 1_000_000_000) as u32))
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// More than 2^32 periods behind, `Skip` still finds the next tick on
    /// the schedule rather than giving up ("never").
    #[test]
    fn skip_far_behind_finds_the_next_tick() {
        let due = Instant::now();
        let now = due + Duration::from_secs(5);
        let period = Duration::from_nanos(1);
        let next = next_tick(MissedTicks::Skip, due, now, period).expect("a next tick");
        let res = crate::driver::timers::RESOLUTION;
        assert!(
            next + res > now && next <= now,
            "{:?} after due",
            next - due
        );
    }

    #[test]
    fn lateness_within_the_resolution_drops_no_tick() {
        let d = Instant::now();
        // Fired 0.95 periods late (the wheel's rounding and a wake-up):
        // every policy keeps the schedule, the next tick due at once.
        let now = d + MS - MS / 20;
        for policy in [MissedTicks::Burst, MissedTicks::Delay, MissedTicks::Skip] {
            assert_eq!(next_tick(policy, d, now, MS), Some(d + MS));
        }
        // 1.05 ms late: `Skip` keeps the next tick (its time passed by
        // less than the resolution), `Delay` starts over from now.
        let now = d + MS + MS / 20;
        assert_eq!(next_tick(MissedTicks::Skip, d, now, MS), Some(d + MS));
        assert_eq!(next_tick(MissedTicks::Delay, d, now, MS), Some(now + MS));
    }

    #[test]
    fn ticks_missed_by_more_than_the_resolution_are_skipped_or_delayed() {
        let d = Instant::now();
        let p = 10 * MS;
        // 35 ms late: ticks at +10, +20 and +30 are missed (the last by more
        // than a millisecond), +40 is the next still ahead.
        let now = d + 35 * MS;
        assert_eq!(next_tick(MissedTicks::Skip, d, now, p), Some(d + 4 * p));
        assert_eq!(next_tick(MissedTicks::Delay, d, now, p), Some(now + p));
        assert_eq!(next_tick(MissedTicks::Burst, d, now, p), Some(d + p));
        // On time: every policy goes one period on.
        for policy in [MissedTicks::Burst, MissedTicks::Delay, MissedTicks::Skip] {
            assert_eq!(next_tick(policy, d, d, p), Some(d + p));
        }
    }

    /// `Delay` starts over after any lateness past the resolution, not only
    /// after a whole period: it never goes on from the missed tick's time.
    #[test]
    fn delay_starts_over_after_a_tick_late_by_less_than_a_period() {
        let d = Instant::now();
        let now = d + 50 * MS;
        assert_eq!(
            next_tick(MissedTicks::Delay, d, now, 100 * MS),
            Some(now + 100 * MS)
        );
    }

    /// A next tick past what `Instant` holds is never, under every policy.
    #[test]
    fn a_next_tick_out_of_range_is_never() {
        let d = Instant::now();
        for policy in [MissedTicks::Burst, MissedTicks::Delay, MissedTicks::Skip] {
            assert_eq!(next_tick(policy, d, d, Duration::MAX), None);
            assert_eq!(next_tick(policy, d, d + 5 * MS, Duration::MAX), None);
        }
    }
}
