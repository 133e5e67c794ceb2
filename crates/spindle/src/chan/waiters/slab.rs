//! The entries of a [`WaitList`](super::WaitList), in a slab that keeps
//! and reuses them: the FIFO of waiters is linked through it, and freed
//! entries form a free list. An entry's state (`Free`, `Waiting`,
//! `Notified`) and the counts kept with it follow the invariants in
//! `mod.rs`; the mutex around the slab is the list's.

use std::task::Waker;

/// No entry: the end of a link.
pub(super) const NIL: usize = usize::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum State {
    Free,
    Waiting,
    Notified,
}

#[derive(Debug)]
pub(super) struct Entry {
    pub(super) waker: Option<Waker>,
    pub(super) state: State,
    /// Set when the entry went from `Notified` back to `Waiting` (its
    /// operation found nothing and parked again), cleared when it is
    /// released: it still holds the wake-up it was given, which notifies
    /// absorbed at the limit may have counted on (module docs), so it is
    /// passed on like a notification when the operation ends.
    pub(super) baton: bool,
    pub(super) prev: usize,
    /// Next in the FIFO while `Waiting`, next free entry while `Free`.
    pub(super) next: usize,
}

#[derive(Debug)]
pub(super) struct Slab {
    pub(super) entries: Vec<Entry>,
    /// First free entry.
    pub(super) free: usize,
    /// Oldest waiter.
    pub(super) head: usize,
    /// Newest waiter.
    pub(super) tail: usize,
    /// Entries in state `Notified`.
    pub(super) pending: usize,
}

impl Slab {
    pub(super) fn new() -> Self {
        Slab {
            entries: Vec::new(),
            free: NIL,
            head: NIL,
            tail: NIL,
            pending: 0,
        }
    }

    pub(super) fn alloc(&mut self) -> usize {
        if self.free != NIL {
            let k = self.free;
            self.free = self.entries[k].next;
            k
        } else {
            self.entries.push(Entry {
                waker: None,
                state: State::Free,
                baton: false,
                prev: NIL,
                next: NIL,
            });
            self.entries.len() - 1
        }
    }

    pub(super) fn release(&mut self, k: usize) {
        let e = &mut self.entries[k];
        e.state = State::Free;
        e.waker = None;
        e.baton = false;
        e.next = self.free;
        self.free = k;
    }

    pub(super) fn link_back(&mut self, k: usize) {
        self.entries[k].prev = self.tail;
        self.entries[k].next = NIL;
        if self.tail == NIL {
            self.head = k;
        } else {
            self.entries[self.tail].next = k;
        }
        self.tail = k;
    }

    pub(super) fn unlink(&mut self, k: usize) {
        let (p, n) = (self.entries[k].prev, self.entries[k].next);
        if p == NIL {
            self.head = n;
        } else {
            self.entries[p].next = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.entries[n].prev = p;
        }
    }
}
