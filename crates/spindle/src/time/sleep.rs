//! `Sleep`: a future that completes at a deadline.
//!
//! States: *unarmed* (`slot` is `None`, not yet polled, or reset) →
//! *armed* (`slot` names a wheel entry that holds its waker) → *done*. The
//! entry is freed when the sleep completes, is reset, or is dropped.

use crate::loom::Arc;
use crate::sched::driver::Driver;
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
    armed: Option<(Arc<Driver>, Slot)>,
    done: bool,
}

impl Sleep {
    fn new(deadline: Option<Instant>) -> Sleep {
        Sleep {
            deadline,
            armed: None,
            done: false,
        }
    }

    /// When this sleep completes (`None`: never).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the deadline has been reached (as seen by the last poll).
    pub fn is_elapsed(&self) -> bool {
        self.done
    }

    /// Moves the deadline (earlier or later), re-arming on the next poll.
    pub fn reset(&mut self, deadline: Instant) {
        self.disarm();
        self.deadline = Some(deadline);
        self.done = false;
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
        if this.done {
            return Poll::Ready(());
        }
        if let Some((driver, slot)) = &this.armed {
            if !driver.timers.poll(*slot, cx.waker()) {
                return Poll::Pending;
            }
            this.disarm();
            this.done = true;
            return Poll::Ready(());
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
        if deadline <= Instant::now() {
            this.done = true;
            return Poll::Ready(());
        }
        match driver.timers.arm(shard, deadline, cx.waker()) {
            Armed::Due => {
                this.done = true;
                Poll::Ready(())
            }
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
            .field("done", &self.done)
            .finish()
    }
}
