//! [`LinkedSlab`]: a FIFO linked through a slab that keeps and reuses its
//! entries, the storage of every waiter queue (the channels' `WaitList`,
//! the semaphore's queue). Once the slab has grown to the peak number of
//! simultaneous entries, queueing allocates nothing; unlinking any entry
//! is O(1), so a waiter that gives up leaves from the middle at no cost.
//!
//! Invariants:
//! - Every entry is either linked (in the FIFO from `head` to `tail`,
//!   through `prev`/`next`) or not; an unlinked entry is either owned by
//!   its caller (between `alloc` and `release`) or on the free list
//!   (through `next`).
//! - A key is valid from `alloc` until `release`; the caller releases each
//!   key once, and unlinks it first if it is linked.
//!
//! The slab knows nothing of wakers or states: a value of `T` rides in
//! each entry, and the caller keeps whatever state it needs there.

use std::ops::{Index, IndexMut};

/// No entry: the end of a link.
pub(crate) const NIL: usize = usize::MAX;

#[derive(Debug)]
struct Node<T> {
    value: T,
    prev: usize,
    /// Next in the FIFO while linked, next free entry while free.
    next: usize,
}

#[derive(Debug)]
pub(crate) struct LinkedSlab<T> {
    nodes: Vec<Node<T>>,
    /// First free entry.
    free: usize,
    /// Oldest linked entry.
    head: usize,
    /// Newest linked entry.
    tail: usize,
}

impl<T> LinkedSlab<T> {
    pub(crate) const fn new() -> Self {
        LinkedSlab {
            nodes: Vec::new(),
            free: NIL,
            head: NIL,
            tail: NIL,
        }
    }

    /// A key for `value`, reusing a released entry when there is one.
    pub(crate) fn alloc(&mut self, value: T) -> usize {
        let node = Node {
            value,
            prev: NIL,
            next: NIL,
        };
        if self.free != NIL {
            let k = self.free;
            self.free = self.nodes[k].next;
            self.nodes[k] = node;
            k
        } else {
            self.nodes.push(node);
            self.nodes.len() - 1
        }
    }

    /// Puts `k` (not linked) on the free list; its value stays until the
    /// entry is reused, so a caller that must drop something now (a
    /// waker) takes it out first.
    pub(crate) fn release(&mut self, k: usize) {
        self.nodes[k].next = self.free;
        self.free = k;
    }

    /// Links `k` at the back of the FIFO.
    pub(crate) fn link_back(&mut self, k: usize) {
        self.nodes[k].prev = self.tail;
        self.nodes[k].next = NIL;
        if self.tail == NIL {
            self.head = k;
        } else {
            self.nodes[self.tail].next = k;
        }
        self.tail = k;
    }

    /// Unlinks `k`, wherever it is in the FIFO.
    pub(crate) fn unlink(&mut self, k: usize) {
        let (p, n) = (self.nodes[k].prev, self.nodes[k].next);
        if p == NIL {
            self.head = n;
        } else {
            self.nodes[p].next = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.nodes[n].prev = p;
        }
    }

    /// The oldest linked entry, or [`NIL`].
    pub(crate) fn head(&self) -> usize {
        self.head
    }

    /// The entry linked after `k`, or [`NIL`].
    pub(crate) fn next(&self, k: usize) -> usize {
        self.nodes[k].next
    }

    /// Whether nothing is linked.
    pub(crate) fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

impl<T> Index<usize> for LinkedSlab<T> {
    type Output = T;

    fn index(&self, k: usize) -> &T {
        &self.nodes[k].value
    }
}

impl<T> IndexMut<usize> for LinkedSlab<T> {
    fn index_mut(&mut self, k: usize) -> &mut T {
        &mut self.nodes[k].value
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn linked(s: &LinkedSlab<u32>) -> Vec<u32> {
        let mut out = Vec::new();
        let mut k = s.head();
        while k != NIL {
            out.push(s[k]);
            k = s.next(k);
        }
        out
    }

    #[test]
    fn fifo_order_unlink_from_the_middle_and_reuse() {
        let mut s = LinkedSlab::new();
        let keys: Vec<usize> = (0..4).map(|v| s.alloc(v)).collect();
        keys.iter().for_each(|&k| s.link_back(k));
        assert_eq!(linked(&s), [0, 1, 2, 3]);
        s.unlink(keys[1]);
        s.release(keys[1]);
        s.unlink(keys[3]);
        s.release(keys[3]);
        assert_eq!(linked(&s), [0, 2]);
        let k = s.alloc(9);
        assert_eq!(k, keys[3], "the last released entry is reused first");
        s.link_back(k);
        assert_eq!(linked(&s), [0, 2, 9]);
        s.unlink(keys[0]);
        s.unlink(keys[2]);
        s.unlink(k);
        assert!(s.is_empty());
    }
}
