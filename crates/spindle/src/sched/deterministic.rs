//! The seeded schedule of a deterministic runtime
//! (`Builder::new_deterministic(seed)`): a current-thread runtime whose
//! clock starts paused and which, instead of running its ready tasks in
//! FIFO order, picks the next one at random from a seeded generator.
//!
//! Invariants:
//! - With the same seed and the same program, the same task is picked at
//!   every step: the choice depends only on the generator and the queue,
//!   and the queue only on earlier choices (wakes from this thread land
//!   in it in program order; tasks from other threads are moved in from
//!   the injector before each pick, which is deterministic only if those
//!   threads are, so a deterministic test keeps its work on the runtime).
//! - Every ready task is a candidate at every pick, so each of them runs
//!   eventually (each pick is uniform over the queue).
//! - The thread's `select!` generator (`rand.rs`) is seeded from the same
//!   seed when `block_on` starts, so `select!`s choose the same way too.
//! - The cooperative budget counts units only (`coop::Scope::enter_counted`,
//!   from `block_on`): a busy task yields after the same operations
//!   however fast the run goes.

use super::inject::Inject;
use crate::rand::{odd_seed, xorshift32};
use crate::task::Notified;
use std::collections::VecDeque;

/// Tasks moved from the injector per lock.
const INJECT_BATCH: usize = 128;

pub(crate) struct SeededPick {
    seed: u64,
    state: u32,
}

impl SeededPick {
    pub(crate) fn new(seed: u64) -> SeededPick {
        SeededPick {
            seed,
            state: odd_seed(seed),
        }
    }

    /// The seed this schedule replays.
    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    /// Takes a ready task chosen at random (after moving in every task
    /// the injector holds), or `None` when none is ready.
    pub(crate) fn next(
        &mut self,
        queue: &mut VecDeque<Notified>,
        inject: &Inject,
    ) -> Option<Notified> {
        loop {
            let batch = inject.pop_n(INJECT_BATCH);
            if batch.is_empty() {
                break;
            }
            queue.extend(batch);
        }
        if queue.is_empty() {
            return None;
        }
        self.state = xorshift32(self.state);
        // A number in 0..len by multiply-shift (no division).
        let i = ((self.state as u64 * queue.len() as u64) >> 32) as usize;
        queue.swap_remove_back(i)
    }
}
