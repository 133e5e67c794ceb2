//! `Sleep`: a future that completes at a deadline.
//!
//! States: *unarmed* (`slot` is `None`, not yet polled, or reset) →
//! *armed* (`slot` names a wheel entry that holds its waker) → *done*. The
//! entry is freed when the sleep completes, is reset, or is dropped.

use crate::sched::driver::Driver;
use crate::sched::hook::Hook;
use crate::time::timers::{Armed, Slot};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Waits until `duration` has passed (zero: ready at once).
///
/// # Panics
/// When first polled outside a spindle runtime.
pub fn sleep(duration: Duration) -> Sleep {
    // A deadline past what `Instant` can hold means "never".
    Sleep::new(Instant::now().checked_add(duration))
}

/// Waits until `deadline` (in the past: ready at once).
///
/// # Panics
/// When first polled outside a spindle runtime.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(Some(deadline))
}

/// The future [`sleep`] and [`sleep_until`] return.
#[must_use = "futures do nothing unless polled"]
pub struct Sleep {
    /// `None`: never (the deadline overflowed).
    deadline: Option<Instant>,
    /// The timer, from the first `Pending` poll until it fired or the sleep
    /// was reset or dropped. (No "done" flag: a poll after the deadline
    /// finds it passed on the clock; 32 bytes, so that a task sleeping in
    /// it fits a 112-byte cell.)
    armed: Option<(Hook<Driver>, Slot)>,
}

impl Sleep {
    fn new(deadline: Option<Instant>) -> Sleep {
        Sleep {
            deadline,
            armed: None,
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
        self.elapsed_at(Instant::now())
    }

    /// Moves the deadline (earlier or later), re-arming on the next poll.
    pub fn reset(&mut self, deadline: Instant) {
        self.disarm();
        self.deadline = Some(deadline);
    }

    fn disarm(&mut self) {
        if let Some((driver, slot)) = self.armed.take() {
            driver.timers.remove(slot);
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if let Some((driver, slot)) = &this.armed {
            if !driver.timers.poll(*slot, cx.waker()) {
                return Poll::Pending;
            }
            this.armed = None; // fired, and freed by that poll
            return Poll::Ready(());
        }
        if this.elapsed_at(Instant::now()) {
            return Poll::Ready(()); // also every poll after completion
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
        match driver.timers.arm(shard, deadline, cx.waker()) {
            Armed::Due => Poll::Ready(()),
            Armed::Filed { slot, notify } => {
                if notify {
                    driver.notify();
                }
                this.armed = Some((driver, slot));
                Poll::Pending
            }
            Armed::ShutDown => Poll::Pending,
        }
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
            .field("armed", &self.armed.is_some())
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
