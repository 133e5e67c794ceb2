//! Unbounded MPMC queue of linked blocks.
//!
//! Messages live in blocks of `BLOCK_CAP` slots; a block is allocated once
//! per `BLOCK_CAP` messages (never per message) and freed by the receiver that
//! leaves it. Senders serialise on the `tail` lock, receivers on the `head`
//! lock (the two-lock queue of Michael and Scott, with blocks), so a sender
//! and a receiver never contend with each other except through the one block
//! they share. This trades some scalability under many-way contention for a
//! small, checkable protocol; a lock-free variant can replace it behind the
//! same four functions.
//!
//! # Invariants
//! - `tail` (under its lock) is the last block and the index of the next free
//!   slot in it; `head` (under its lock) the first block and the next slot to
//!   read. A block's slots `0..written` hold values written by senders; slots
//!   below the head index (in the head block) have been taken.
//! - `written` of a block only grows and is stored with Release by the
//!   sender holding the tail lock; `next` is set once, with Release, by the
//!   sender that fills the block, which never touches that block again.
//! - `closed` is set under the tail lock: after it, no slot is written.
//!
//! # Ordering contract
//! - `written`/`next` Release stores pair with the receiver's Acquire loads:
//!   the slot writes happen-before the reads; a non-null `next` means the
//!   block is no longer touched by senders, so the receiver may free it.
//! - A receiver loads `closed` (Acquire, pairs with the Release store in
//!   `close`, made under the tail lock after every earlier write) *before*
//!   looking for a message, so "closed and nothing found" means drained.

use std::mem::MaybeUninit;

use crate::chan::error::{TryRecvError, TrySendError};
use crate::loom::{
    lock, AtomicBool, AtomicU64, AtomicUsize, CachePadded, Mutex, Ordering, UnsafeCell,
};

#[cfg(not(loom))]
const BLOCK_CAP: usize = 32;
#[cfg(loom)]
const BLOCK_CAP: usize = 2;

struct Block<T> {
    /// Number of slots written (Release by the sender, Acquire by receivers).
    written: AtomicUsize,
    /// Address of the next block, 0 while none (exposed provenance).
    next: AtomicUsize,
    slots: [UnsafeCell<MaybeUninit<T>>; BLOCK_CAP],
}

impl<T> Block<T> {
    fn alloc() -> *mut Block<T> {
        Box::into_raw(Box::new(Block {
            written: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            slots: std::array::from_fn(|_| UnsafeCell::new(MaybeUninit::uninit())),
        }))
    }
}

struct End<T> {
    block: *mut Block<T>,
    index: usize,
}

pub(crate) struct Channel<T> {
    head: CachePadded<Mutex<End<T>>>,
    tail: CachePadded<Mutex<End<T>>>,
    closed: AtomicBool,
    /// Messages sent and received so far (for `len`; Relaxed counters).
    sent: AtomicU64,
    received: AtomicU64,
}

// SAFETY: the raw block pointers are owned by the channel; values of type T
// move between threads (T: Send) under the protocol of the module docs.
unsafe impl<T: Send> Send for Channel<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Channel<T> {}

impl<T> Channel<T> {
    pub(crate) fn new() -> Self {
        let b = Block::<T>::alloc();
        Channel {
            head: CachePadded(Mutex::new(End { block: b, index: 0 })),
            tail: CachePadded(Mutex::new(End { block: b, index: 0 })),
            closed: AtomicBool::new(false),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
        }
    }

    pub(crate) fn try_push(&self, v: T) -> Result<(), TrySendError<T>> {
        let mut t = lock(&self.tail);
        if self.closed.load(Ordering::Relaxed) {
            // Relaxed: `closed` is only written under this lock.
            return Err(TrySendError::Closed(v));
        }
        self.push_locked(&mut t, v);
        Ok(())
    }

    /// Moves every value of `items` into the queue under one acquisition of
    /// the tail lock; when closed, leaves them all in `items`.
    pub(crate) fn push_all(&self, items: &mut std::collections::VecDeque<T>) -> Result<usize, ()> {
        let mut t = lock(&self.tail);
        if self.closed.load(Ordering::Relaxed) {
            return Err(());
        }
        let n = items.len();
        for v in items.drain(..) {
            self.push_locked(&mut t, v);
        }
        Ok(n)
    }

    fn push_locked(&self, t: &mut End<T>, v: T) {
        if t.index == BLOCK_CAP {
            let nb = Block::<T>::alloc();
            // Only the tail lock's holder writes `next`; receivers free a block only after it is set.
            // SAFETY: `t.block` is the live tail block (see above).
            let old = unsafe { &*t.block };
            t.block = nb;
            t.index = 0;
            self.write_slot(t, v);
            // Release: pairs with the receiver's Acquire load of `next`; after
            // this store we never touch `old` again.
            old.next.store(nb.expose_provenance(), Ordering::Release);
        } else {
            self.write_slot(t, v);
        }
        self.sent.fetch_add(1, Ordering::Relaxed);
    }

    fn write_slot(&self, t: &mut End<T>, v: T) {
        // SAFETY: the tail block is alive (freed only after `next` is set,
        // which happens after the sender is done with it).
        let b = unsafe { &*t.block };
        // SAFETY: slot `t.index` is past `written`, so no receiver reads it,
        // and we hold the tail lock, so no other sender writes it.
        b.slots[t.index].with_mut(|p| unsafe { (*p).write(v) });
        t.index += 1;
        // Release: pairs with the receiver's Acquire load of `written`.
        b.written.store(t.index, Ordering::Release);
    }

    pub(crate) fn try_pop(&self) -> Result<T, TryRecvError> {
        // Acquire: pairs with the Release store in `close`; must come before
        // the search so that closed + nothing found means drained.
        let closed = self.closed.load(Ordering::Acquire);
        let mut h = lock(&self.head);
        match self.pop_locked(&mut h) {
            Some(v) => Ok(v),
            None if closed => Err(TryRecvError::Closed),
            None => Err(TryRecvError::Empty),
        }
    }

    /// Takes up to `max` messages under one acquisition of the head lock.
    pub(crate) fn pop_batch(&self, out: &mut Vec<T>, max: usize) -> Result<usize, TryRecvError> {
        let closed = self.closed.load(Ordering::Acquire);
        let mut h = lock(&self.head);
        let mut n = 0;
        while n < max {
            match self.pop_locked(&mut h) {
                Some(v) => {
                    out.push(v);
                    n += 1;
                }
                None => break,
            }
        }
        match n {
            0 if max > 0 && closed => Err(TryRecvError::Closed),
            0 if max > 0 => Err(TryRecvError::Empty),
            n => Ok(n),
        }
    }

    fn pop_locked(&self, h: &mut End<T>) -> Option<T> {
        loop {
            // SAFETY: the head block is alive: only the holder of the head
            // lock frees blocks, and only blocks it has left.
            let b = unsafe { &*h.block };
            if h.index == BLOCK_CAP {
                // Acquire: pairs with the Release store of `next`.
                let next = b.next.load(Ordering::Acquire);
                if next == 0 {
                    return None;
                }
                let old = h.block;
                h.block = std::ptr::with_exposed_provenance_mut(next);
                h.index = 0;
                // SAFETY: `next` is set, so senders are done with `old`; every
                // slot of it was read; we own it under the head lock.
                drop(unsafe { Box::from_raw(old) });
                continue;
            }
            // Acquire: pairs with the Release store in `write_slot`.
            if h.index < b.written.load(Ordering::Acquire) {
                // SAFETY: the slot is written (above) and not yet read: the
                // head index only moves forward under this lock.
                let v = b.slots[h.index].with(|p| unsafe { (*p).assume_init_read() });
                h.index += 1;
                self.received.fetch_add(1, Ordering::Relaxed);
                return Some(v);
            }
            return None;
        }
    }

    /// Closes the channel; returns whether this call did it.
    pub(crate) fn close(&self) -> bool {
        let _t = lock(&self.tail);
        // Release: pairs with the Acquire load in `try_pop`; under the tail
        // lock, after every write.
        !self.closed.swap(true, Ordering::Release)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn len(&self) -> usize {
        let r = self.received.load(Ordering::Relaxed);
        let s = self.sent.load(Ordering::Relaxed);
        s.saturating_sub(r) as usize
    }
}

impl<T> Drop for Channel<T> {
    fn drop(&mut self) {
        let h = lock(&self.head);
        let mut block = h.block;
        let mut index = h.index;
        drop(h);
        while !block.is_null() {
            // SAFETY: with `&mut self` nothing else runs; blocks from the head
            // on are alive and owned by the channel.
            let b = unsafe { Box::from_raw(block) };
            let written = b.written.load(Ordering::Relaxed);
            for slot in &b.slots[index..written.max(index)] {
                // SAFETY: slots index..written hold unread messages; each is
                // dropped exactly once here.
                slot.with_mut(|p| unsafe { (*p).assume_init_drop() });
            }
            block = std::ptr::with_exposed_provenance_mut(b.next.load(Ordering::Relaxed));
            index = 0;
        }
    }
}
