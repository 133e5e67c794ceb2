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
use crate::port::ChannelInfo;

/// The running graph's shared state.
pub(crate) struct GraphShared {
    pub(crate) name: String,
    pub(crate) actors: Vec<Arc<ActorCell>>,
    pub(crate) channels: Vec<Arc<dyn ChannelInfo>>,
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
        *self.stop_request.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), why.to_string()));
        for a in &self.actors {
            a.give_notice();
        }
        let _g = self.done_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.done_cv.notify_all();
    }

    pub(crate) fn stop_request(&self) -> Option<(Instant, String)> {
        self.stop_request
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn record_failure(&self, msg: String) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(msg);
    }

    pub(crate) fn failures(&self) -> Vec<String> {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// One actor stopped for good.
    pub(crate) fn actor_done(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            {
                let _g = self.done_lock.lock().unwrap_or_else(|p| p.into_inner());
                self.done_cv.notify_all();
            }
            let ws =
                std::mem::take(&mut *self.done_wakers.lock().unwrap_or_else(|p| p.into_inner()));
            for w in ws {
                w.wake();
            }
        }
    }

    pub(crate) fn done_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.done_lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `w` to be woken when the last actor stops; `false` if that
    /// already happened.
    pub(crate) fn register_done(&self, w: &Waker) -> bool {
        let mut g = self.done_wakers.lock().unwrap_or_else(|p| p.into_inner());
        if self.live() == 0 {
            return false;
        }
        if !g.iter().any(|x| x.will_wake(w)) {
            g.push(w.clone());
        }
        true
    }
}
