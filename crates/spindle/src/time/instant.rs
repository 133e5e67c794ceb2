//! [`Instant`]: a reading of the runtime's clock, as Tokio's
//! `time::Instant`.
//!
//! It wraps `std::time::Instant` and differs from it only in
//! [`Instant::now`] (and so [`Instant::elapsed`]): those read the current
//! runtime's clock, which stands still while time is paused and jumps when
//! it is advanced (`pause.rs`). Everywhere else, and whenever time is not
//! paused, the two read the same monotonic clock, so converting between
//! them ([`Instant::from_std`], [`Instant::into_std`]) keeps the moment.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

/// A moment on the runtime's clock; see the module docs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(std::time::Instant);

impl Instant {
    /// Now on the current runtime's clock: paused time while it is paused,
    /// else the monotonic clock (also outside any runtime).
    pub fn now() -> Instant {
        Instant(super::pause::clock_now())
    }

    /// The same moment as `std`.
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant(std)
    }

    /// The same moment as a `std::time::Instant`.
    pub fn into_std(self) -> std::time::Instant {
        self.0
    }

    /// The time from `earlier` to `self`; zero if `earlier` is later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.0.saturating_duration_since(earlier.0)
    }

    /// The time from `earlier` to `self`, if `earlier` is not later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.0.checked_duration_since(earlier.0)
    }

    /// As [`duration_since`](Instant::duration_since).
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }

    /// The time since `self` on the runtime's clock ([`Instant::now`]).
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// `self + duration`, if it can be represented.
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.0.checked_add(duration).map(Instant)
    }

    /// `self - duration`, if it can be represented.
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.0.checked_sub(duration).map(Instant)
    }
}

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant(std)
    }
}

impl From<Instant> for std::time::Instant {
    fn from(instant: Instant) -> std::time::Instant {
        instant.0
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// If the result cannot be represented, as `std::time::Instant`'s.
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0 + rhs)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// If the result cannot be represented, as `std::time::Instant`'s.
    fn sub(self, rhs: Duration) -> Instant {
        Instant(self.0 - rhs)
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// The time from `rhs` to `self`; zero if `rhs` is later.
    fn sub(self, rhs: Instant) -> Duration {
        self.duration_since(rhs)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
