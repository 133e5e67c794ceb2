//! The semaphore's waiters, oldest first, in a [`LinkedSlab`] kept under
//! its lock: queueing allocates nothing once the slab has grown, and a
//! cancelled waiter leaves from anywhere in O(1). Every change here that
//! can empty or fill the queue ends by [`Queue::settle`], which keeps the
//! word's `WAITING` bit equal to "the queue is not empty".
//!
//! A waiter served in full leaves the queue at once: the hand-out sets the
//! `granted` flag inside its pinned `Acquire` ([`GrantFlag`]), under the
//! lock, and frees its entry, so that the waiter's next poll reads the flag
//! and takes no lock. The flag's pointer is used only under the lock and
//! only while the entry is queued; an `Acquire` takes its entry out under
//! the lock before it is dropped (`acquire.rs`), so the flag is alive
//! whenever it is set.

use super::word;
use crate::linked_slab::{LinkedSlab, NIL};
use crate::loom::{AtomicBool, AtomicUsize, Ordering};
use std::ptr::NonNull;
use std::task::Waker;

pub(super) struct Queue {
    /// Waiters still queued; one served in full leaves at once.
    list: LinkedSlab<Waiter>,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            list: LinkedSlab::new(),
        }
    }
}

struct Waiter {
    /// Permits still to come.
    needed: usize,
    /// Permits already handed to it.
    assigned: usize,
    /// Set once it is served in full (module docs).
    granted: GrantFlag,
    waker: Option<Waker>,
}

/// Where the queue tells a waiter it has been served: the `granted` flag
/// inside the waiter's pinned `Acquire`.
pub(super) struct GrantFlag(NonNull<AtomicBool>);

// SAFETY: the pointee is an atomic, set from whichever thread serves the
// waiter; `GrantFlag::new`'s contract keeps it alive while it may be set.
unsafe impl Send for GrantFlag {}

impl GrantFlag {
    /// # Safety
    /// `flag` stays in place and alive until its owner has taken its entry
    /// out of the queue, under the queue's lock (or seen it served).
    pub(super) unsafe fn new(flag: &AtomicBool) -> GrantFlag {
        GrantFlag(NonNull::from(flag))
    }

    /// Tells the waiter it was served in full (its entry is let go next).
    fn grant(&self) {
        // SAFETY: we hold the queue's lock and the waiter's entry is still
        // queued, so by `new`'s contract the flag is alive and in place.
        unsafe { self.0.as_ref() }.store(true, Ordering::Release);
    }
}

/// The wakers a hand-out collected, woken once the lock is released;
/// one waker, the usual case, needs no allocation.
#[derive(Default)]
pub(super) struct Wakers {
    one: Option<Waker>,
    more: Vec<Waker>,
}

impl Wakers {
    fn push(&mut self, w: Waker) {
        match self.one {
            None => self.one = Some(w),
            Some(_) => self.more.push(w),
        }
    }

    pub(super) fn wake(self) {
        self.one.into_iter().chain(self.more).for_each(Waker::wake);
    }
}

/// What an acquire that found too few free permits did under the lock.
pub(super) enum Enqueue {
    /// The permits were free after all (a release came in between).
    Taken,
    /// The semaphore is closed.
    Closed,
    /// Queued under this key, holding every permit that was free.
    Queued(usize),
}

/// What a later poll of a queued acquire that was not yet served finds.
pub(super) enum Check {
    Waiting,
    /// Closed before it was served: what it held went back to `free`.
    Closed,
}

impl Queue {
    /// Waiters queued now.
    pub(super) fn len(&self) -> usize {
        let (mut n, mut k) = (0, self.list.head());
        while k != NIL {
            n += 1;
            k = self.list.next(k);
        }
        n
    }

    /// Takes `n` permits if they are free and nobody is queued, else
    /// queues a waiter for them holding every free permit; one
    /// compare-exchange either way, so a release in between is never lost.
    pub(super) fn enqueue(
        &mut self,
        word: &AtomicUsize,
        n: usize,
        waker: &Waker,
        granted: GrantFlag,
    ) -> Enqueue {
        let mut cur = word.load(Ordering::Acquire);
        loop {
            if word::closed(cur) {
                return Enqueue::Closed;
            }
            let free = word::free(cur);
            let (new, taken_all) = if free >= n && !word::waiting(cur) {
                (word::with_free(cur, free - n), true)
            } else {
                (word::with_free(cur, 0) | word::WAITING, false)
            };
            match word.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) if taken_all => return Enqueue::Taken,
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        // `free < n` here (or the queue was not empty, and then `free` is
        // zero), so this waiter holds what was free and waits for the rest.
        let assigned = word::free(cur);
        let key = self.list.alloc(Waiter {
            needed: n - assigned,
            assigned,
            granted,
            waker: Some(waker.clone()),
        });
        self.list.link_back(key);
        Enqueue::Queued(key)
    }

    /// A later poll of the queued waiter `key` (not served: its flag is
    /// clear): still waiting (its waker refreshed), or failed by a close.
    pub(super) fn check(&mut self, word: &AtomicUsize, key: usize, waker: &Waker) -> Check {
        let w = &mut self.list[key];
        if !word::closed(word.load(Ordering::Acquire)) {
            match &mut w.waker {
                Some(old) if old.will_wake(waker) => {}
                slot => *slot = Some(waker.clone()),
            }
            return Check::Waiting;
        }
        // Closed: what it held goes back to the free count; the other
        // queued waiters fail on their next poll, so none is owed it.
        let held = w.assigned;
        w.waker = None;
        self.list.unlink(key);
        self.list.release(key);
        self.settle(word, held);
        Check::Closed
    }

    /// The queued waiter `key` (not served: its flag is clear) was
    /// dropped: it leaves, and what it had been handed goes to the next
    /// waiters.
    pub(super) fn cancel(&mut self, word: &AtomicUsize, key: usize) -> Wakers {
        let held = self.list[key].assigned;
        self.list.unlink(key);
        self.list.release(key);
        self.hand_out(word, held)
    }

    /// Adds `n` permits: to queued waiters front to back, the rest to the
    /// free count. Returns the wakers of the waiters it served in full.
    pub(super) fn hand_out(&mut self, word: &AtomicUsize, mut n: usize) -> Wakers {
        let mut wakers = Wakers::default();
        while n > 0 {
            let k = self.list.head();
            if k == NIL {
                break;
            }
            let w = &mut self.list[k];
            let give = w.needed.min(n);
            w.needed -= give;
            w.assigned += give;
            n -= give;
            if w.needed > 0 {
                break;
            }
            w.granted.grant();
            if let Some(waker) = w.waker.take() {
                wakers.push(waker);
            }
            self.list.unlink(k);
            self.list.release(k);
        }
        self.settle(word, n);
        wakers
    }

    /// Every queued waiter's waker, for a close.
    pub(super) fn take_wakers(&mut self) -> Wakers {
        let mut wakers = Wakers::default();
        let mut k = self.list.head();
        while k != NIL {
            if let Some(waker) = self.list[k].waker.take() {
                wakers.push(waker);
            }
            k = self.list.next(k);
        }
        wakers
    }

    /// Adds `leftover` to the free count and clears `WAITING` if the queue
    /// is now empty, in one update (fast paths may change `free` meanwhile
    /// only while `WAITING` is clear, and then `leftover` is added to it).
    fn settle(&self, word: &AtomicUsize, leftover: usize) {
        let empty = self.list.is_empty();
        if leftover == 0 && !empty {
            return;
        }
        let update = |cur: usize| {
            let free = word::free(cur)
                .saturating_add(leftover)
                .min(super::Semaphore::MAX_PERMITS);
            let new = word::with_free(cur, free);
            Some(if empty { new & !word::WAITING } else { new })
        };
        let _ = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, update);
    }
}
