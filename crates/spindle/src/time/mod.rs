//! Timers: [`sleep`], [`sleep_until`], [`timeout`], [`interval`].
//!
//! Every runtime has one timer wheel per worker (`driver/wheel.rs`,
//! `driver/timers.rs`),
//! driven by the worker that parks on the runtime's driver, or by busy
//! workers every few dozen polls (`driver/mod.rs`). Resolution is one
//! millisecond; a timer **never fires early**: its deadline rounds up to a
//! tick, the clock rounds down.
//!
//! Time can be paused for tests ([`pause`], [`advance`], [`resume`],
//! `Builder::start_paused`, `#[spindle::test(start_paused = true)]`):
//! timers then follow a virtual clock, read with [`Instant::now`] (or
//! [`now`]), that moves only when advanced or when every task is idle
//! (`pause.rs`). [`Instant`] is the standard library's with that one
//! difference (`instant.rs`), as Tokio's `time::Instant`.
//!
//! A zero or past duration is ready at once (no timer is armed). A deadline
//! too far to represent (`Duration::MAX`) waits forever. Timers are
//! runtime-bound: a [`Sleep`] first polled outside any spindle runtime
//! panics, saying so, unless it is ready at once (a zero or past
//! deadline).
//!
//! A timeout arm in [`select!`](crate::select) is just a sleep:
//!
//! ```
//! # spindle::Runtime::new().unwrap().block_on(async {
//! use std::time::Duration;
//! let (_tx, rx) = spindle::chan::bounded::<u32>(1);
//! let got = spindle::select! {
//!     v = rx.recv() => Some(v),
//!     _ = spindle::time::sleep(Duration::from_millis(5)) => None,
//! };
//! assert!(got.is_none());
//! # });
//! ```

mod instant;
mod interval;
mod pause;
mod sleep;
mod timeout;

pub use instant::Instant;
pub use interval::{interval, interval_at, Interval, MissedTicks};
pub use pause::{advance, now, pause, resume};
#[cfg(not(loom))]
pub(crate) use sleep::deadline_after;
pub use sleep::{sleep, sleep_until, Sleep};
pub use std::time::Duration;
pub use timeout::{timeout, timeout_at, Elapsed, Timeout};
