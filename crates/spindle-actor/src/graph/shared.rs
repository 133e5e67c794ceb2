//! [`GraphShared`]: the running graph's state, shared by its actors, its
//! [`RunningGraph`](crate::RunningGraph) and telemetry: the stop flag and
//! why it was set, the live actor count, recorded failures, and the
//! wakers and condition variable that wait for the last actor.
//!
//! Invariant: `live` goes down exactly once per actor (in
//! `Supervised::finish`); the stop request is set once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::Waker;
use std::time::Instant;

use crate::actor::ActorCell;
use crate::loom::lock_std;
use crate::port::ChannelInfo;

/// The running graph's shared state.
pub(crate) struct GraphShared {
    pub(crate) name: String,
    pub(crate) actors: Vec<Arc<ActorCell>>,
    pub(crate) channels: Vec<Arc<dyn ChannelInfo>>,
    pub(crate) probes: Vec<Arc<dyn crate::Probe>>,
    pub(super) stopping: AtomicBool,
    pub(super) stop_request: Mutex<Option<(Instant, String)>>,
    pub(super) live: AtomicUsize,
    pub(super) done_lock: Mutex<()>,
    pub(crate) done_cv: Condvar,
    pub(super) done_wakers: Mutex<Vec<Waker>>,
    pub(super) failures: Mutex<Vec<String>>,
    pub(crate) started: Instant,
    pub(crate) rt: spindle::Handle,
}

impl GraphShared {
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Asks every actor to stop (once; later calls do nothing).
    pub(crate) fn request_shutdown(&self, why: &str) {
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        *lock_std(&self.stop_request) = Some((Instant::now(), why.to_string()));
        for a in &self.actors {
            a.give_notice();
        }
        let _g = lock_std(&self.done_lock);
        self.done_cv.notify_all();
    }

    pub(crate) fn stop_request(&self) -> Option<(Instant, String)> {
        lock_std(&self.stop_request).clone()
    }

    pub(crate) fn record_failure(&self, msg: String) {
        lock_std(&self.failures).push(msg);
    }

    pub(crate) fn failures(&self) -> Vec<String> {
        lock_std(&self.failures).clone()
    }

    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// One actor stopped for good.
    pub(crate) fn actor_done(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            {
                let _g = lock_std(&self.done_lock);
                self.done_cv.notify_all();
            }
            let ws = std::mem::take(&mut *lock_std(&self.done_wakers));
            for w in ws {
                w.wake();
            }
        }
    }

    pub(crate) fn done_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        lock_std(&self.done_lock)
    }

    /// Registers `w` to be woken when the last actor stops; `false` if that
    /// already happened.
    pub(crate) fn register_done(&self, w: &Waker) -> bool {
        let mut g = lock_std(&self.done_wakers);
        if self.live() == 0 {
            return false;
        }
        if !g.iter().any(|x| x.will_wake(w)) {
            g.push(w.clone());
        }
        true
    }
}
