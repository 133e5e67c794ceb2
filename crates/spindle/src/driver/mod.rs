//! The driver: a runtime's timers and I/O reactor, driven by whichever
//! worker parks on it (as in Tokio; Go's netpoller is polled the same way
//! from `findrunnable`).
//!
//! Protocol:
//! - The driver has a lock (`locked`). A worker about to sleep tries to take
//!   it; the one that gets it blocks in `wait` (on the poller, until an I/O
//!   event, `notify`, or the next timer) instead of on its condvar, and after
//!   waking fires due timers and dispatches I/O events (`dispatch`) with its
//!   core in place, so the woken tasks land on its own queue. Other sleepers
//!   block on their condvars as before.
//! - Busy workers take the lock with `try_lock` every so many polls and
//!   `dispatch` without blocking, so timers and I/O are served while nobody
//!   sleeps.
//! - `notify` is sticky: it makes the current or the next `wait` return. A
//!   worker's `Parker::unpark` calls it when that worker is parked on the
//!   driver; `time::Sleep` calls it when it arms a new earliest timer
//!   (`driver/timers.rs` has that handshake).

pub(crate) mod clock;
pub(crate) mod park;
#[cfg(not(any(loom, miri)))]
pub(crate) mod reactor;
pub(crate) mod timers;
mod wheel;

use crate::loom::{AtomicBool, AtomicU64, Ordering::*};
use crate::sched_ref::RefCount;
#[cfg(not(any(loom, miri)))]
use std::time::Duration;
use timers::Timers;

pub(crate) struct Driver {
    pub(crate) timers: Timers,
    #[cfg(not(any(loom, miri)))]
    pub(crate) io: reactor::Reactor,
    /// The wait while no I/O source is registered (and always under loom
    /// and miri, which cannot run epoll): a condvar with a nanosecond
    /// timeout. epoll's timeout is whole milliseconds, rounded up, which
    /// would make a 1 ms interval miss every other tick.
    waiter: park::Parker,
    locked: AtomicBool,
    /// Turns taken (a guard dropped after holding the lock); written only
    /// by the lock holder. The monitor serves the driver only when this has
    /// not moved for a whole round.
    turns: AtomicU64,
    /// What armed timers and registered sockets hold of the driver
    /// (`sched_ref.rs`): no `Arc` count per sleep.
    pub(crate) refs_out: RefCount,
}

/// Holding the driver lock.
pub(crate) struct DriverGuard<'a>(&'a Driver);

impl Driver {
    /// `clock`: pausable only for a current-thread runtime (`clock.rs`).
    pub(crate) fn new(shards: usize, clock: clock::Clock) -> std::io::Result<Driver> {
        Ok(Driver {
            timers: Timers::new(shards, clock),
            #[cfg(not(any(loom, miri)))]
            io: reactor::Reactor::new()?,
            waiter: park::Parker::new(),
            locked: AtomicBool::new(false),
            turns: AtomicU64::new(0),
            refs_out: RefCount::default(),
        })
    }

    pub(crate) fn try_lock(&self) -> Option<DriverGuard<'_>> {
        self.locked
            .compare_exchange(false, true, Acquire, Relaxed)
            .ok()
            .map(|_| DriverGuard(self))
    }

    /// Makes the current or next `wait` return (any thread).
    pub(crate) fn notify(&self) {
        // Both, since the waiter chose one before this could know which;
        // each is sticky, and each costs a swap when nobody waits on it.
        self.waiter.unpark();
        #[cfg(not(any(loom, miri)))]
        self.io.notify();
    }

    /// Whether a busy worker should take a turn at the driver.
    pub(crate) fn has_work(&self) -> bool {
        #[cfg(not(any(loom, miri)))]
        if self.io.has_sources() {
            return true;
        }
        self.timers.maybe_due()
    }

    /// How many turns have been taken at the driver so far.
    pub(crate) fn turns(&self) -> u64 {
        self.turns.load(Relaxed)
    }

    /// Whether any I/O source is registered.
    pub(crate) fn has_io(&self) -> bool {
        #[cfg(not(any(loom, miri)))]
        return self.io.has_sources();
        #[cfg(any(loom, miri))]
        false
    }

    /// Runtime shutdown: timers never fire any more.
    pub(crate) fn shut_down(&self) {
        self.timers.shut_down();
        #[cfg(not(any(loom, miri)))]
        self.io.shut_down();
    }
}

impl DriverGuard<'_> {
    /// Blocks until an I/O event, a `notify`, or the next timer's deadline.
    pub(crate) fn wait(&self) {
        let timeout = self.0.timers.until_next();
        #[cfg(not(any(loom, miri)))]
        if self.0.io.has_sources() {
            return self.0.io.wait(timeout);
        }
        self.0.waiter.park_timeout(timeout);
    }

    /// Polls for I/O events without blocking (busy workers).
    pub(crate) fn poll_now(&self) {
        #[cfg(not(any(loom, miri)))]
        if self.0.io.has_sources() {
            self.0.io.wait(Some(Duration::ZERO));
        }
    }

    /// Fires due timers and wakes the tasks whose I/O is ready; returns how
    /// many tasks were woken.
    pub(crate) fn dispatch(&self) -> usize {
        #[cfg_attr(any(loom, miri), allow(unused_mut))]
        let mut woken = self.0.timers.process();
        #[cfg(not(any(loom, miri)))]
        {
            woken += self.0.io.dispatch();
        }
        woken
    }
}

impl Drop for DriverGuard<'_> {
    fn drop(&mut self) {
        // Only the lock holder writes `turns`: a plain increment.
        self.0.turns.store(self.0.turns.load(Relaxed) + 1, Relaxed);
        self.0.locked.store(false, Release);
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::timers::Armed;
    use super::*;
    use crate::loom::Arc;
    use loom::thread;
    use std::task::Waker;
    use std::time::{Duration, Instant};

    /// Files a timer for `at` (or panics), and says whether it must notify
    /// the driver (only the racing arm does: a notification left over from
    /// the set-up would make every model pass).
    fn file(driver: &Driver, shard: usize, at: Instant) -> (timers::Slot, bool) {
        match driver.timers.arm(shard, at, Waker::noop()) {
            Armed::Filed { slot, notify } => (slot, notify),
            _ => panic!("timer not filed"),
        }
    }

    /// Arms a timer 60 s from `base` on another thread while the driver
    /// takes its turn (fires what is due, computes how long to sleep):
    /// either the driver's wake-up hint covers the new timer, or the driver
    /// was notified (its wait would return at once). Otherwise the timer
    /// would fire late by up to the old timeout.
    fn arm_during_a_turn(driver: Arc<Driver>, base: Instant) {
        let near = base + Duration::from_secs(60);
        let d = driver.clone();
        let arming = thread::spawn(move || {
            let (slot, notify) = file(&d, 1, near);
            if notify {
                d.notify();
            }
            slot
        });
        let guard = driver.try_lock().unwrap();
        guard.dispatch();
        let sleep_for = driver.timers.until_next();
        drop(guard);
        let near_slot = arming.join().unwrap();
        let covered =
            sleep_for.is_some_and(|t| Instant::now() + t <= near + Duration::from_millis(1));
        assert!(
            covered || driver.waiter.take_notification(),
            "the driver would sleep past the new timer without being told"
        );
        driver.timers.remove(near_slot);
    }

    /// The new timer is the earliest when it is armed.
    #[test]
    fn a_timer_armed_during_the_drivers_turn_is_not_missed() {
        loom::model(|| {
            let driver = Arc::new(Driver::new(2, clock::Clock::new(false, false)).unwrap());
            let base = Instant::now();
            let (far, _) = file(&driver, 0, base + Duration::from_secs(3600));
            arm_during_a_turn(driver.clone(), base);
            driver.timers.remove(far);
        });
    }

    /// The new timer is not the earliest when it is armed: an earlier one
    /// is due and fires in the driver's turn, which resets the wake-up hint
    /// while the arming thread may read the old, lower one and skip its
    /// `fetch_min` (`driver/timers.rs`). The turn's scan must then see the
    /// new timer, or the driver would sleep past it.
    #[test]
    fn a_timer_armed_behind_one_that_fires_is_not_missed() {
        loom::model(|| {
            let driver = Arc::new(Driver::new(2, clock::Clock::new(false, false)).unwrap());
            let base = Instant::now();
            let (far, _) = file(&driver, 0, base + Duration::from_secs(3600));
            file(&driver, 0, base + Duration::from_millis(1));
            std::thread::sleep(Duration::from_millis(2)); // the early one is due
            arm_during_a_turn(driver.clone(), base);
            driver.timers.remove(far);
        });
    }
}
