//! `Sleep`: a future that completes at a deadline.
//!
//! States (`Timer`): *unarmed* (not yet polled, reset, or done) → *armed*
//! (a wheel entry holds its waker) → unarmed again once it fired. The
//! entry is freed when the sleep completes, is reset, or is dropped.
//!
//! The clock is read once per sleep, where the deadline is made: `sleep`
//! reads it to add the duration, and its first poll files the deadline in
//! the wheel without reading it again (a clock read is a noticeable share
//! of a sleep's whole cost in sleep_1m): a deadline that has passed by then
//! is refused by the wheel (due at once) or fires at the driver's next turn,
//! never early either way. Only where the deadline may already have passed
//! when it is made (a zero duration, `sleep_until`, `reset`, a sleep that
//! has completed) does the first poll read the clock, so that those are
//! ready at once, as documented.

use super::Instant;
use crate::driver::timers::{Armed, Slot};
use crate::driver::Driver;
use crate::sched_ref::SchedRef;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Waits until `duration` has passed (zero: ready at once).
///
/// # Panics
/// When first polled outside a spindle runtime.
pub fn sleep(duration: Duration) -> Sleep {
    // A deadline past what `Instant` can hold means "never".
    Sleep::new(super::now().checked_add(duration), duration.is_zero())
}

/// `timeout` from the runtime's [`now`](super::now), for the async timed
/// operations built on a deadline; a timeout past what `Instant` holds is
/// a century, which no test or program waits out.
#[cfg(not(loom))]
pub(crate) fn deadline_after(timeout: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    let now = super::now();
    now.checked_add(timeout).unwrap_or(now + CENTURY)
}

/// Waits until `deadline` (in the past: ready at once).
///
/// # Panics
/// When first polled outside a spindle runtime.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(Some(deadline), true)
}

/// The future [`sleep`] and [`sleep_until`] return.
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    /// `None`: never (the deadline overflowed).
    deadline: Option<Instant>,
    timer: Timer,
}

/// The wheel entry, from the first `Pending` poll until it fired or the
/// sleep was reset or dropped. (No "done" state: a poll after completion
/// finds the deadline passed on the clock. 16 bytes, so that a `Sleep` is
/// 32 and a task sleeping in it fits a 112-byte cell.)
enum Timer {
    /// `check_clock`: the deadline may have passed already (module docs),
    /// so the next poll reads the clock before arming.
    Unarmed {
        check_clock: bool,
    },
    Armed(SchedRef<Driver>, Slot),
}

impl Sleep {
    fn new(deadline: Option<Instant>, check_clock: bool) -> Sleep {
        Sleep {
            deadline,
            timer: Timer::Unarmed { check_clock },
        }
    }

    fn elapsed_at(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| d <= now)
    }

    /// When this sleep completes (`None`: never).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the deadline has been reached (reads the clock).
    pub fn is_elapsed(&self) -> bool {
        self.elapsed_at(super::now())
    }

    /// Moves the deadline (earlier or later), re-arming on the next poll.
    pub fn reset(&mut self, deadline: Instant) {
        self.set_deadline(Some(deadline));
    }

    /// `reset`, where `None` is never.
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.disarm();
        self.deadline = deadline;
    }

    fn disarm(&mut self) {
        let unarmed = Timer::Unarmed { check_clock: true };
        if let Timer::Armed(driver, slot) = std::mem::replace(&mut self.timer, unarmed) {
            driver.timers.remove(slot);
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            match this.timer {
                Timer::Armed(ref driver, slot) => {
                    if !driver.timers.poll(slot, cx.waker()) {
                        return Poll::Pending;
                    }
                    // Fired, and freed by that poll; a later poll reads the clock.
                    this.timer = Timer::Unarmed { check_clock: true };
                    return Poll::Ready(());
                }
                Timer::Unarmed { check_clock } => {
                    if check_clock && this.elapsed_at(super::now()) {
                        return Poll::Ready(()); // also every poll after completion
                    }
                }
            }
            let (driver, shard) = crate::sched::current_driver().unwrap_or_else(|| {
                panic!(
                    "spindle::time: a timer was polled outside a spindle runtime; \
                     run it inside `Runtime::block_on` or a spawned task"
                )
            });
            let Some(deadline) = this.deadline else {
                return Poll::Pending; // never: no timer needed, nothing will wake it
            };
            match driver.timers.arm(shard, deadline.into_std(), cx.waker()) {
                Armed::Due => Poll::Ready(()),
                Armed::Filed { slot, notify } => {
                    if notify {
                        driver.notify();
                    }
                    this.timer = Timer::Armed(driver, slot);
                    Poll::Pending
                }
                Armed::ShutDown => Poll::Pending,
            }
        })
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.disarm();
    }
}

impl std::fmt::Debug for Sleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.deadline)
            .field("armed", &matches!(self.timer, Timer::Armed(..)))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn a_sleep_is_four_words() {
        // A task sleeping in it (with a u64 beside) fits a 112-byte cell.
        assert_eq!(std::mem::size_of::<super::Sleep>(), 32);
    }
}
