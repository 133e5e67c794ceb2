//! Paused time, for tests: [`pause`], [`advance`], [`resume`] and [`now`],
//! Tokio's `test-util` semantics on a current-thread runtime.
//!
//! While the clock is paused it does not move by itself: timers fire when
//! [`advance`] moves it past their deadline, or when every task is idle
//! (nothing to run, no ready I/O, no blocking call in flight) and the
//! runtime moves it to the next timer's deadline at once (auto-advance).
//! A test of a timeout of an hour then runs in microseconds, and runs the
//! same every time. [`now`] and `spindle::time::Instant::now()` read the
//! runtime's clock, as `tokio::time::Instant::now()` does; the standard
//! library's `Instant::now()` keeps reading the real one.
//!
//! ```
//! use std::time::Duration;
//! let rt = spindle::Builder::new_current_thread()
//!     .start_paused(true)
//!     .build()
//!     .unwrap();
//! rt.block_on(async {
//!     let start = spindle::time::now();
//!     spindle::time::sleep(Duration::from_secs(3600)).await; // auto-advance
//!     assert!(spindle::time::now() - start >= Duration::from_secs(3600));
//! });
//! ```

use crate::driver::clock::{Clock, ClockError};
use std::time::{Duration, Instant};

/// The current runtime's clock: paused time while it is paused, else the
/// monotonic clock (also outside any runtime). The same as
/// [`Instant::now`](super::Instant::now).
pub fn now() -> super::Instant {
    super::Instant::now()
}

/// [`now`] as the timers keep it.
pub(crate) fn clock_now() -> Instant {
    if !Clock::any_virtual() {
        return Instant::now();
    }
    match crate::sched::current_driver() {
        Some((driver, _)) => driver.timers.clock.now(),
        None => Instant::now(),
    }
}

/// Freezes the current runtime's clock (see the module docs).
///
/// # Panics
/// Outside a spindle runtime, on a multi-thread runtime, or when the clock
/// is already paused; the message says which.
pub fn pause() {
    with_clock("pause", Clock::pause);
}

/// Lets a paused clock run again, at the real clock's pace, from where it
/// is (time advanced while paused stays added).
///
/// # Panics
/// Outside a spindle runtime, or when the clock is not paused.
pub fn resume() {
    with_clock("resume", Clock::resume);
}

/// Moves a paused clock forward by `duration`, then yields once so that
/// the runtime fires the timers that came due (the tasks they wake run
/// after this returns, as with Tokio's `advance`).
///
/// # Panics
/// Outside a spindle runtime, or when the clock is not paused (call
/// [`pause`] first, or build the runtime with `start_paused(true)`).
pub async fn advance(duration: Duration) {
    with_clock("advance", |clock| clock.advance(duration));
    crate::yield_now().await;
}

/// Runs `op` on the current runtime's clock, panicking with a message
/// that names `what` and the way to fix the call if it is refused.
fn with_clock(what: &str, op: impl FnOnce(&Clock) -> Result<(), ClockError>) {
    let Some((driver, _)) = crate::sched::current_driver() else {
        panic!("spindle::time::{what} called outside a spindle runtime");
    };
    let result = op(&driver.timers.clock);
    // A moved or resumed clock changes when the next timer is due.
    driver.notify();
    match result {
        Ok(()) => {}
        Err(ClockError::NotPausable) => panic!(
            "spindle::time::{what}: a multi-thread runtime's clock cannot be paused; use a \
             current-thread runtime (Builder::new_current_thread, or #[spindle::test])"
        ),
        Err(ClockError::AlreadyPaused) => {
            panic!("spindle::time::{what}: the clock is already paused")
        }
        Err(ClockError::NotPaused) => panic!(
            "spindle::time::{what}: the clock is not paused; call spindle::time::pause() first \
             (or build the runtime with start_paused(true))"
        ),
    }
}
