//! A runtime's clock: the monotonic clock, or, once paused, a virtual one
//! that moves only when told to (`spindle::time::pause`, `advance`,
//! `resume`) or, on a current-thread runtime with nothing to run, jumps
//! to the next timer (auto-advance, in `sched/current_thread.rs`).
//!
//! Invariants:
//! - `now()` never goes backwards: a pause freezes it where it is, an
//!   advance moves it forward, and a resume lets it run on from there at
//!   the real clock's pace.
//! - Until a clock is first paused, `now()` is `Instant::now()` and costs
//!   one relaxed load more; after that it takes the clock's lock.
//! - Only a pausable clock (a current-thread runtime's) can be paused:
//!   on a multi-thread runtime workers read the clock concurrently and
//!   could not agree on when "every task is idle" holds.

use crate::loom::{lock, AtomicBool, Mutex, Ordering};
use std::time::{Duration, Instant};

/// Whether any clock in the process has been paused: while not, the
/// time functions read the real clock without looking for a runtime. A
/// std atomic under loom too: a process-wide hint, set once, that no
/// modelled protocol depends on.
static ANY_VIRTUAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) struct Clock {
    pausable: bool,
    /// Set on the first pause, never cleared: `now()` then reads `state`.
    virtual_: AtomicBool,
    state: Mutex<State>,
}

struct State {
    /// `now()` while frozen; where the clock was when it last resumed.
    base: Instant,
    /// Since when (real time) the clock runs again; `None`: frozen.
    running_since: Option<Instant>,
}

/// Why a pause, resume or advance was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClockError {
    NotPausable,
    AlreadyPaused,
    NotPaused,
}

impl Clock {
    pub(crate) fn new(pausable: bool, start_paused: bool) -> Clock {
        let now = Instant::now();
        let clock = Clock {
            pausable,
            virtual_: AtomicBool::new(false),
            state: Mutex::new(State {
                base: now,
                running_since: Some(now),
            }),
        };
        if start_paused {
            clock.pause().expect("a new pausable clock pauses");
        }
        clock
    }

    /// Whether any clock in the process has ever been paused.
    pub(crate) fn any_virtual() -> bool {
        ANY_VIRTUAL.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn now(&self) -> Instant {
        if !self.virtual_.load(Ordering::Acquire) {
            return Instant::now();
        }
        let st = lock(&self.state);
        match st.running_since {
            None => st.base,
            Some(since) => st.base + since.elapsed(),
        }
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.virtual_.load(Ordering::Acquire) && lock(&self.state).running_since.is_none()
    }

    pub(crate) fn pause(&self) -> Result<(), ClockError> {
        if !self.pausable {
            return Err(ClockError::NotPausable);
        }
        let mut st = lock(&self.state);
        let Some(since) = st.running_since.take() else {
            return Err(ClockError::AlreadyPaused);
        };
        st.base += since.elapsed();
        ANY_VIRTUAL.store(true, std::sync::atomic::Ordering::Relaxed);
        self.virtual_.store(true, Ordering::Release);
        Ok(())
    }

    pub(crate) fn resume(&self) -> Result<(), ClockError> {
        let mut st = lock(&self.state);
        if st.running_since.is_some() {
            return Err(ClockError::NotPaused);
        }
        st.running_since = Some(Instant::now());
        Ok(())
    }

    /// Moves a paused clock forward by `by`.
    pub(crate) fn advance(&self, by: Duration) -> Result<(), ClockError> {
        let mut st = lock(&self.state);
        if st.running_since.is_some() {
            return Err(ClockError::NotPaused);
        }
        st.base += by;
        Ok(())
    }

    /// Moves a paused clock forward to `to`, if that is ahead of it
    /// (auto-advance); returns whether it moved.
    pub(crate) fn advance_to(&self, to: Instant) -> bool {
        let mut st = lock(&self.state);
        if st.running_since.is_some() || to <= st.base {
            return false;
        }
        st.base = to;
        true
    }
}
