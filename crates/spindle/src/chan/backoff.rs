//! Short waits for a peer that is half-way through an operation.
//!
//! Used when a slot has been claimed by another thread but not yet written or
//! read: that thread is running (claiming and finishing never straddle an
//! `.await`), so waiting a few hundred cycles is cheaper than parking. Under
//! loom every step is a `yield_now`, so that the model can schedule the peer.

use crate::loom::{spin_loop, yield_now};

/// Steps of spinning (1, 2, 4, … 64 pauses) before a caller should park.
const DONE: u32 = 7;

pub(crate) struct Backoff {
    step: u32,
}

impl Backoff {
    pub(crate) fn new() -> Self {
        Backoff { step: 0 }
    }

    /// For a channel poll finding nothing to do: on a spindle scheduler
    /// thread it does not spin at all (`is_done` at once), because the peer
    /// it would wait for may be queued behind this very task on the same
    /// worker, and each pause there is time nobody uses; plain threads and
    /// other executors spin as with `new`.
    pub(crate) fn for_poll() -> Self {
        let on_worker = crate::sched::on_scheduler_thread();
        Backoff {
            step: if on_worker { DONE } else { 0 },
        }
    }

    /// Waits a little, more each time; yields the thread after a while.
    pub(crate) fn snooze(&mut self) {
        if cfg!(loom) || self.step >= DONE {
            yield_now();
        } else {
            for _ in 0..(1u32 << self.step) {
                spin_loop();
            }
        }
        self.step += 1;
    }

    /// Whether the caller has spun long enough to prefer parking.
    pub(crate) fn is_done(&self) -> bool {
        cfg!(loom) || self.step >= DONE
    }
}
