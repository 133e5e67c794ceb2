//! `LifoStack`: a worker's *fresh* tasks, those it spawned or woke during
//! the poll now running, newest on top. The top one is the worker's "next
//! task" (what other runtimes call the LIFO slot).
//!
//! Why more than one slot: a task that forks children and then awaits them
//! in order (`for f in forks { f.await }`: a tree of forks) awaits the *oldest*
//! child first. With a single LIFO slot the older children have already
//! gone to the ring, so every await suspends the parent and the tree runs
//! breadth first, through the queues. Kept here, the awaited child is found
//! and run inline (`WorkerCtx::run_inline_if_next`, for a `Fork` only): the
//! tree runs depth first, each child polled once, with no queue trip and no
//! join waker.
//!
//! Invariants:
//! - Only the thread holding the core touches it (no atomics): the owner,
//!   or a visitor while the owner's borrows wait (`core_slot.rs`). So that this
//!   never hides work from idle workers for long, every task below the top
//!   is moved to the ring (where thieves see it) as soon as the poll that
//!   queued it returns, before the run loop starts a poll (`next_task`),
//!   or, when a spawn lands on the stack, at once if some worker is idle
//!   (`WorkerCtx::schedule_local`; a woken task waits for the poll's end).
//!   A poll that lasts across two of the monitor's looks has all of them,
//!   the top one too, taken by an idle worker's visit (`WorkerCtx::steal_hidden`); a blocked
//!   one has its core handed to a new thread, which publishes them first
//!   (`docs/sleep-wake.md`, rule 1).
//! - At most `CAPACITY` tasks; pushing onto a full stack first gives back
//!   the oldest `SPILL` of them, oldest first, which the caller puts in the
//!   ring. A few at once, not one per push: a spawn loop keeps the stack
//!   full, and moving the other 31 entries down for every spawn would add
//!   that copy to every spawn. Spilling 4 does as well for a spawn loop as
//!   8 or 16 and costs fork-join trees the least.
//! - Each entry is the task's one `Notified` (state.rs): taking it out is
//!   holding the permission to run it.

use crate::task::{Notified, RawTask};

/// Enough for a 10-ary tree's pending siblings three levels deep.
pub(crate) const CAPACITY: usize = 32;
/// How many of the oldest tasks a full stack gives back.
pub(crate) const SPILL: usize = CAPACITY / 8;

/// A worker's fresh tasks, newest on top (module docs).
pub(crate) struct LifoStack {
    /// `slots[..len]` hold tasks, oldest first, the top at `len - 1`; the
    /// rest are `None`.
    slots: [Option<Notified>; CAPACITY],
    len: usize,
}

impl LifoStack {
    pub(crate) fn new() -> LifoStack {
        LifoStack {
            slots: [const { None }; CAPACITY],
            len: 0,
        }
    }

    /// Puts `task` on top. When the stack was full, first hands its oldest
    /// `SPILL` tasks to `spill`, oldest first.
    pub(crate) fn push(&mut self, task: Notified, mut spill: impl FnMut(Notified)) {
        if self.len == CAPACITY {
            for slot in &mut self.slots[..SPILL] {
                spill(slot.take().expect("a full stack has every slot"));
            }
            self.slots.rotate_left(SPILL);
            self.len -= SPILL;
        }
        // The slot is empty (`None`): nothing to drop.
        std::mem::forget(self.slots[self.len].replace(task));
        self.len += 1;
    }

    /// Takes the top task.
    pub(crate) fn pop(&mut self) -> Option<Notified> {
        let top = self.len.checked_sub(1)?;
        self.len = top;
        self.slots[top].take()
    }

    /// Takes `task`'s `Notified` out, if it is here (searched from the top,
    /// where a task spawned and then awaited at once is).
    pub(crate) fn take(&mut self, task: RawTask) -> Option<Notified> {
        let i = self.slots[..self.len]
            .iter()
            .rposition(|n| n.as_ref().is_some_and(|n| n.is(task)))?;
        self.remove(i)
    }

    /// Takes the oldest task, unless it is the top one (to go to the ring).
    pub(crate) fn pop_below_top(&mut self) -> Option<Notified> {
        if self.len > 1 {
            self.pop_oldest()
        } else {
            None
        }
    }

    /// Takes the oldest task, the top one too if it is the last.
    pub(crate) fn pop_oldest(&mut self) -> Option<Notified> {
        if self.len > 0 {
            self.remove(0)
        } else {
            None
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Takes slot `i` (`< len`) out, closing the gap.
    fn remove(&mut self, i: usize) -> Option<Notified> {
        let task = self.slots[i].take();
        self.slots[i..self.len].rotate_left(1);
        self.len -= 1;
        task
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::task::inert;

    /// Pushes `n` tasks; returns their raw handles, oldest first.
    fn fill(fresh: &mut LifoStack, n: usize) -> Vec<RawTask> {
        (0..n)
            .map(|_| {
                let (notified, raw) = inert::task();
                fresh.push(notified, |_| panic!("not full"));
                raw
            })
            .collect()
    }

    fn release(raws: Vec<RawTask>) {
        raws.into_iter().for_each(RawTask::drop_join_handle);
    }

    #[test]
    fn the_newest_pops_first_and_a_full_stack_gives_back_its_oldest() {
        let mut fresh = LifoStack::new();
        let raws = fill(&mut fresh, CAPACITY);
        let (extra, extra_raw) = inert::task();
        let mut spilled = Vec::new();
        fresh.push(extra, |t| spilled.push(t));
        assert_eq!(spilled.len(), SPILL);
        for (t, raw) in spilled.iter().zip(&raws) {
            assert!(t.is(*raw), "oldest first");
        }
        drop(spilled);
        assert_eq!(fresh.len(), CAPACITY - SPILL + 1);
        assert!(fresh.pop().unwrap().is(extra_raw));
        for raw in raws[SPILL..].iter().rev() {
            assert!(fresh.pop().unwrap().is(*raw));
        }
        assert!(fresh.pop().is_none() && fresh.is_empty());
        release(raws);
        extra_raw.drop_join_handle();
    }

    #[test]
    fn take_finds_any_task_and_keeps_the_order_of_the_rest() {
        let mut fresh = LifoStack::new();
        let raws = fill(&mut fresh, 5);
        assert!(fresh.take(raws[1]).unwrap().is(raws[1]));
        assert!(fresh.take(raws[1]).is_none(), "taken once");
        assert!(fresh.take(raws[4]).unwrap().is(raws[4]));
        // Oldest first below the top, which stays.
        assert!(fresh.pop_below_top().unwrap().is(raws[0]));
        assert!(fresh.pop_below_top().unwrap().is(raws[2]));
        assert!(fresh.pop_below_top().is_none());
        assert!(fresh.pop().unwrap().is(raws[3]));
        release(raws);
    }
}
