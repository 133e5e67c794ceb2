//! The entries of a [`WaitList`](super::WaitList): a [`LinkedSlab`] whose
//! FIFO is the list of waiting operations, each entry with its waker and
//! its state (`Free`, `Waiting`, `Notified`), and the count of `Notified`
//! entries. The states and counts follow the invariants in `mod.rs`; the
//! mutex around the slab is the list's.

use crate::linked_slab::LinkedSlab;
use std::ops::{Deref, DerefMut};
use std::task::Waker;

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
}

#[derive(Debug)]
pub(super) struct Slab {
    list: LinkedSlab<Entry>,
    /// Entries in state `Notified`.
    pub(super) pending: usize,
}

impl Slab {
    pub(super) fn new() -> Self {
        Slab {
            list: LinkedSlab::new(),
            pending: 0,
        }
    }

    /// A `Free` entry for a new waiter.
    pub(super) fn alloc(&mut self) -> usize {
        self.list.alloc(Entry {
            waker: None,
            state: State::Free,
            baton: false,
        })
    }

    /// Back to the free list, its waker dropped now.
    pub(super) fn release(&mut self, k: usize) {
        let e = &mut self.list[k];
        e.state = State::Free;
        e.waker = None;
        e.baton = false;
        self.list.release(k);
    }
}

impl Deref for Slab {
    type Target = LinkedSlab<Entry>;

    fn deref(&self) -> &LinkedSlab<Entry> {
        &self.list
    }
}

impl DerefMut for Slab {
    fn deref_mut(&mut self) -> &mut LinkedSlab<Entry> {
        &mut self.list
    }
}
