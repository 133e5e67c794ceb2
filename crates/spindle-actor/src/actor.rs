//! The shared record of one actor ([`ActorCell`]): its name and wiring,
//! lifecycle state, counters for telemetry, and the waker through which a
//! shutdown request reaches it.
//!
//! # Invariants
//! - A cell lives as long as the graph; restarts reuse it (the counters and
//!   `restarts` keep counting across runs).
//! - `waker` holds the waker of the actor's latest poll; it is stored
//!   *before* the actor's future is polled, so a shutdown request that sets
//!   `notice` and then takes the lock to wake either finds that waker or
//!   happened before the poll (whose waits then read `notice` as set).
//! - `notice` is set by a shutdown request and consumed by the first wait
//!   that returns early because of it (`Rx::wait_avail`, `Tx::wait_vacant`,
//!   `Every::tick`, ...): each request interrupts one wait, so an actor that
//!   keeps running (vetoes) waits normally afterwards instead of spinning.
//! - The counters are written only by the thread polling the actor (one at
//!   a time) and read by the telemetry sampler with Relaxed loads.

use crate::loom::lock_std;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Waker;

/// Where an actor runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunMode {
    /// Its own spindle task on the graph's runtime (the default).
    Task,
    /// One task shared with the other members of the named team: the team's
    /// actors never run in parallel, and pass messages without a thread hop.
    Team(String),
    /// A dedicated OS thread running a current-thread spindle runtime.
    OwnThread,
}

impl std::fmt::Display for RunMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunMode::Task => write!(f, "task"),
            RunMode::Team(t) => write!(f, "team:{t}"),
            RunMode::OwnThread => write!(f, "thread"),
        }
    }
}

/// Lifecycle of an actor, as telemetry and the stop report show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ActorStatus {
    /// Started, not stopped yet.
    Running = 0,
    /// Waiting out its restart backoff after a failure.
    Restarting = 1,
    /// Returned normally.
    Stopped = 2,
    /// Ran out of its restart budget.
    Failed = 3,
}

impl ActorStatus {
    fn from_u8(v: u8) -> ActorStatus {
        match v {
            0 => ActorStatus::Running,
            1 => ActorStatus::Restarting,
            2 => ActorStatus::Stopped,
            _ => ActorStatus::Failed,
        }
    }

    /// Lower-case name: `running`, `restarting`, `stopped`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorStatus::Running => "running",
            ActorStatus::Restarting => "restarting",
            ActorStatus::Stopped => "stopped",
            ActorStatus::Failed => "failed",
        }
    }

    /// Stopped or failed.
    pub fn is_done(self) -> bool {
        matches!(self, ActorStatus::Stopped | ActorStatus::Failed)
    }
}

pub(crate) struct ActorCell {
    pub(crate) name: String,
    pub(crate) mode: RunMode,
    status: AtomicU8,
    pub(crate) restarts: AtomicU64,
    pub(crate) busy_ns: AtomicU64,
    pub(crate) polls: AtomicU64,
    pub(crate) notice: AtomicBool,
    pub(crate) waker: Mutex<Option<Waker>>,
    pub(crate) last_failure: Mutex<Option<String>>,
}

impl ActorCell {
    pub(crate) fn new(name: String, mode: RunMode) -> ActorCell {
        ActorCell {
            name,
            mode,
            status: AtomicU8::new(ActorStatus::Running as u8),
            restarts: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            polls: AtomicU64::new(0),
            notice: AtomicBool::new(false),
            waker: Mutex::new(None),
            last_failure: Mutex::new(None),
        }
    }

    pub(crate) fn status(&self) -> ActorStatus {
        ActorStatus::from_u8(self.status.load(Ordering::Acquire))
    }

    pub(crate) fn set_status(&self, s: ActorStatus) {
        self.status.store(s as u8, Ordering::Release);
    }

    /// Stores the waker of the poll about to run (see the invariants).
    pub(crate) fn set_waker(&self, w: &Waker) {
        let mut g = lock_std(&self.waker);
        match &*g {
            Some(old) if old.will_wake(w) => {}
            _ => *g = Some(w.clone()),
        }
    }

    /// A shutdown request reaching this actor: interrupt its current wait.
    pub(crate) fn give_notice(&self) {
        self.notice.store(true, Ordering::SeqCst);
        let w = lock_std(&self.waker).clone();
        if let Some(w) = w {
            w.wake();
        }
    }

    /// Consumes a pending shutdown notice (for a wait about to return early).
    pub(crate) fn take_notice(&self) -> bool {
        self.notice.load(Ordering::Relaxed) && self.notice.swap(false, Ordering::SeqCst)
    }

    pub(crate) fn add_poll(&self, ns: u64) {
        // Single writer (the polling thread): load + store, no RMW.
        self.busy_ns.store(
            self.busy_ns.load(Ordering::Relaxed).wrapping_add(ns),
            Ordering::Relaxed,
        );
        self.polls.store(
            self.polls.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Relaxed,
        );
    }

    pub(crate) fn set_failure(&self, why: String) {
        *lock_std(&self.last_failure) = Some(why);
    }

    pub(crate) fn last_failure(&self) -> Option<String> {
        lock_std(&self.last_failure).clone()
    }
}

thread_local! {
    /// The actor being polled on this thread, so that locking a channel end
    /// can check the graph's wiring.
    static CURRENT: RefCell<Option<Arc<ActorCell>>> = const { RefCell::new(None) };
}

/// Marks `cell` as the actor polled on this thread until the guard drops.
pub(crate) fn enter(cell: &Arc<ActorCell>) -> CurrentGuard {
    let prev = CURRENT.with(|c| c.replace(Some(cell.clone())));
    CurrentGuard(prev)
}

pub(crate) struct CurrentGuard(Option<Arc<ActorCell>>);

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        let prev = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

/// The actor polled on this thread, if any.
pub(crate) fn current() -> Option<Arc<ActorCell>> {
    CURRENT.with(|c| c.borrow().clone())
}
