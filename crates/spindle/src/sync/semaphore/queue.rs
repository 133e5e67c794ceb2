//! The semaphore's waiters, oldest first, kept under its lock; every
//! change here that can empty or fill the queue ends by [`Queue::settle`],
//! which keeps the word's `WAITING` bit equal to "the queue is not empty".

use super::word;
use crate::loom::{AtomicUsize, Ordering};
use std::collections::{BTreeMap, BTreeSet};
use std::task::Waker;

#[derive(Default)]
pub(super) struct Queue {
    /// Waiters not yet served, oldest first.
    waiters: BTreeMap<u64, Waiter>,
    /// Waiters served in full whose futures have not yet seen it.
    granted: BTreeSet<u64>,
    next_ticket: u64,
}

struct Waiter {
    /// Permits still to come.
    needed: usize,
    /// Permits already handed to it.
    assigned: usize,
    waker: Option<Waker>,
}

/// What an acquire that found too few free permits did under the lock.
pub(super) enum Enqueue {
    /// The permits were free after all (a release came in between).
    Taken,
    /// The semaphore is closed.
    Closed,
    /// Queued with this ticket, holding every permit that was free.
    Queued(u64),
}

/// What a later poll of a queued acquire finds.
pub(super) enum Check {
    Granted,
    Waiting,
    /// Closed before it was served: what it held went back to `free`.
    Closed,
}

impl Queue {
    pub(super) fn len(&self) -> usize {
        self.waiters.len()
    }

    /// Takes `n` permits if they are free and nobody is queued, else
    /// queues a waiter for them holding every free permit; one
    /// compare-exchange either way, so a release in between is never lost.
    pub(super) fn enqueue(&mut self, word: &AtomicUsize, n: usize, waker: &Waker) -> Enqueue {
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
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let waiter = Waiter {
            needed: n - assigned,
            assigned,
            waker: Some(waker.clone()),
        };
        self.waiters.insert(ticket, waiter);
        Enqueue::Queued(ticket)
    }

    /// A later poll of the waiter `ticket`: served, or still waiting (its
    /// waker refreshed), or failed by a close.
    pub(super) fn check(&mut self, word: &AtomicUsize, ticket: u64, waker: &Waker) -> Check {
        if self.granted.remove(&ticket) {
            return Check::Granted;
        }
        let closed = word::closed(word.load(Ordering::Acquire));
        let Some(w) = self.waiters.get_mut(&ticket) else {
            unreachable!("an acquire's ticket is queued or granted");
        };
        if !closed {
            match &mut w.waker {
                Some(old) if old.will_wake(waker) => {}
                slot => *slot = Some(waker.clone()),
            }
            return Check::Waiting;
        }
        // Closed: what it held goes back to the free count; the other
        // queued waiters fail on their next poll, so none is owed it.
        let held = w.assigned;
        self.waiters.remove(&ticket);
        self.settle(word, held);
        Check::Closed
    }

    /// A pending acquire dropped: what it held goes to the next waiters.
    pub(super) fn cancel(&mut self, word: &AtomicUsize, ticket: u64, n: usize) -> Vec<Waker> {
        // Served in full but never told: all `n` go on; still queued: what
        // it was handed so far goes on.
        let held = if self.granted.remove(&ticket) {
            n
        } else {
            self.waiters.remove(&ticket).map_or(0, |w| w.assigned)
        };
        self.hand_out(word, held)
    }

    /// Adds `n` permits: to queued waiters front to back, the rest to the
    /// free count. Returns the wakers of the waiters it served in full.
    pub(super) fn hand_out(&mut self, word: &AtomicUsize, mut n: usize) -> Vec<Waker> {
        let mut wakers = Vec::new();
        while n > 0 {
            let Some(mut entry) = self.waiters.first_entry() else {
                break;
            };
            let w = entry.get_mut();
            let give = w.needed.min(n);
            w.needed -= give;
            w.assigned += give;
            n -= give;
            if w.needed > 0 {
                break;
            }
            let (ticket, w) = entry.remove_entry();
            self.granted.insert(ticket);
            wakers.extend(w.waker);
        }
        self.settle(word, n);
        wakers
    }

    /// Every queued waiter's waker, for a close.
    pub(super) fn take_wakers(&mut self) -> Vec<Waker> {
        self.waiters
            .values_mut()
            .filter_map(|w| w.waker.take())
            .collect()
    }

    /// Adds `leftover` to the free count and clears `WAITING` if the queue
    /// is now empty, in one update (fast paths may change `free` meanwhile
    /// only while `WAITING` is clear, and then `leftover` is added to it).
    fn settle(&self, word: &AtomicUsize, leftover: usize) {
        let empty = self.waiters.is_empty();
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
