//! Which workers are awake, which are searching for work, and waking one.
//!
//! ```text
//! state: AtomicUsize = (unparked << 16) | searching
//! sleepers: Mutex<Vec<worker index>>
//! ```
//!
//! Protocol (the proof sketch is in `docs/sleep-wake.md`):
//! - A worker with no local work may become *searching* (stealing, reading the
//!   injector) only while fewer than half the workers search: a herd of
//!   searchers would fight over the same few tasks.
//! - Whoever makes work available (a push to a ring or the injector) then
//!   does `fence(SeqCst)` and wakes a sleeper only if nobody is searching and
//!   somebody sleeps. A woken worker starts as a searcher (the waker counts it
//!   as one under the sleepers lock), so one push wakes at most one worker.
//! - A searcher that finds work stops searching; if it was the last searcher
//!   it wakes another, so that work pushed while it searched is not missed.
//! - A worker going to sleep stops searching (if it was: a searcher that
//!   found nothing stays awake a moment longer, `spin.rs`, and must not
//!   keep notifiers from waking others meanwhile), then records itself
//!   (SeqCst RMW under the lock), then (fence) re-checks every queue and
//!   wakes a worker if it finds any work. With the notifier's fence,
//!   either the notifier sees the sleeper or the sleeper sees the work.

use crate::loom::{fence, lock, AtomicUsize, Mutex, Ordering::*};

const UNPARK_SHIFT: usize = 16;
const SEARCH_MASK: usize = (1 << UNPARK_SHIFT) - 1;

pub(crate) struct Idle {
    state: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    workers: usize,
}

impl Idle {
    pub(crate) fn new(workers: usize) -> Idle {
        assert!(workers < SEARCH_MASK);
        Idle {
            state: AtomicUsize::new(workers << UNPARK_SHIFT),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            workers,
        }
    }

    fn searching(s: usize) -> usize {
        s & SEARCH_MASK
    }

    fn unparked(s: usize) -> usize {
        s >> UNPARK_SHIFT
    }

    /// May this worker start searching? (fewer than half are).
    pub(crate) fn worker_to_searching(&self) -> bool {
        let s = self.state.load(SeqCst);
        if 2 * Self::searching(s) >= self.workers {
            return false;
        }
        self.state.fetch_add(1, SeqCst);
        true
    }

    /// A searcher found work; `true` if it was the last searcher.
    pub(crate) fn worker_from_searching(&self) -> bool {
        let prev = self.state.fetch_sub(1, SeqCst);
        debug_assert!(Self::searching(prev) > 0);
        Self::searching(prev) == 1
    }

    /// The worker, no longer searching, goes to sleep (it then re-checks
    /// every queue: rule 4).
    pub(crate) fn worker_to_parked(&self, index: usize) {
        let mut sleepers = lock(&self.sleepers);
        self.state.fetch_sub(1 << UNPARK_SHIFT, SeqCst);
        sleepers.push(index);
    }

    /// The worker woke up; `true` if a notifier woke it (it is then counted
    /// as a searcher), `false` if it woke for another reason (it is then
    /// counted as awake, not searching).
    pub(crate) fn worker_from_parked(&self, index: usize) -> bool {
        let mut sleepers = lock(&self.sleepers);
        if let Some(pos) = sleepers.iter().position(|&i| i == index) {
            sleepers.swap_remove(pos);
            self.state.fetch_add(1 << UNPARK_SHIFT, SeqCst);
            false
        } else {
            true
        }
    }

    /// Picks a sleeper to wake, if one should be woken (module docs); the
    /// caller unparks the returned worker.
    pub(crate) fn worker_to_notify(&self) -> Option<usize> {
        // SeqCst fence: orders the caller's push before this read (Dekker
        // with the sleeper's RMW and re-check).
        fence(SeqCst);
        if !self.should_notify() {
            return None;
        }
        let mut sleepers = lock(&self.sleepers);
        if !self.should_notify() {
            return None;
        }
        let index = sleepers.pop()?;
        // Counted awake and searching from now on.
        self.state.fetch_add((1 << UNPARK_SHIFT) + 1, SeqCst);
        Some(index)
    }

    fn should_notify(&self) -> bool {
        let s = self.state.load(SeqCst);
        Self::searching(s) == 0 && Self::unparked(s) < self.workers
    }

    /// A hint, without ordering (no fence): is some worker searching or
    /// asleep? Whoever acts on a stale answer must still notify through
    /// `worker_to_notify` when it publishes work.
    pub(crate) fn any_idle(&self) -> bool {
        let s = self.state.load(Relaxed);
        Self::searching(s) > 0 || Self::unparked(s) < self.workers
    }

    pub(crate) fn num_sleeping(&self) -> usize {
        self.workers - Self::unparked(self.state.load(SeqCst))
    }
}
