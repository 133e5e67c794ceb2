//! One parked waiter per side of a ring, woken without a lock on the fast
//! path.
//!
//! # Invariants
//! - `waiting` is true only while `waker` holds the waker of a side that
//!   registered and was not woken since; both are written under the mutex.
//! - A waker is woken after the mutex is released, queued where an idle
//!   worker can steal it (pipelines run their stages on separate cores).
//!
//! # The no-lost-wake-up protocol (Dekker, with two SeqCst fences)
//! Waiter: [`WakerSlot::register`] stores `waiting = true` (A), then
//! `fence(SeqCst)` (F_w), then re-checks the ring index it waits on (B).
//! Notifier: publishes the index (C: the Release store of `tail` or `head`),
//! then [`WakerSlot::notify`] runs `fence(SeqCst)` (F_n) and loads `waiting`
//! (D). The fences are totally ordered: if F_w comes first, D reads A (or a
//! later value), so the notifier takes the lock and wakes; if F_n comes
//! first, B reads C (or later), so the waiter sees the change and does not
//! park. Either way nobody sleeps beside work it could do. The uncontended
//! notify costs one fence and one load. Loom: `ring_wakeup_*` in
//! `loom_models.rs`.

use std::task::Waker;

use crate::loom::{fence, lock, AtomicBool, Mutex, Ordering};

#[derive(Debug)]
pub(crate) struct WakerSlot {
    waiting: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl WakerSlot {
    pub(crate) fn new() -> WakerSlot {
        WakerSlot {
            waiting: AtomicBool::new(false),
            waker: Mutex::new(None),
        }
    }

    /// Parks `waker` here. The caller must re-check its condition after
    /// this returns (the fence at the end pairs with the one in `notify`).
    pub(crate) fn register(&self, waker: &Waker) {
        {
            let mut g = lock(&self.waker);
            match &*g {
                Some(w) if w.will_wake(waker) => {}
                _ => *g = Some(waker.clone()),
            }
            self.waiting.store(true, Ordering::Relaxed);
        }
        fence(Ordering::SeqCst);
    }

    /// Wakes the parked waiter, if any. Call after publishing the change.
    pub(crate) fn notify(&self) {
        fence(Ordering::SeqCst);
        if !self.waiting.load(Ordering::Relaxed) {
            return;
        }
        let w = {
            let mut g = lock(&self.waker);
            self.waiting.store(false, Ordering::Relaxed);
            g.take()
        };
        if let Some(w) = w {
            // Queued, not LIFO: the other side should run now, beside this
            // one, not after this poll (`spindle::task::wake_queued`).
            spindle::task::wake_queued(w);
        }
    }

    /// Forgets a registration whose wait ended without a notify (the
    /// condition turned true on the re-check), so that the next publish does
    /// not take the lock for nobody.
    pub(crate) fn clear(&self) {
        if self.waiting.load(Ordering::Relaxed) {
            let mut g = lock(&self.waker);
            self.waiting.store(false, Ordering::Relaxed);
            *g = None;
        }
    }
}
