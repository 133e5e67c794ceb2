//! Bounded MPMC ring with per-slot stamps (Vyukov's algorithm).
//!
//! # Layout and invariants
//! - Positions are `u64` counters that only grow (2^63 messages before a wrap;
//!   not a concern). Position `p` lives in slot `p % cap`.
//! - `tail` holds `(next send position << 1) | closed`; `head` holds the next
//!   receive position. `head <= tail >> 1 <= head + cap`.
//! - A slot's `stamp` says what it is ready for: `stamp == 2p` — empty, ready
//!   for the send at position `p`; `stamp == 2p + 1` — holds the message of
//!   position `p`, ready for the receive at `p`; after that receive the stamp
//!   becomes `2(p + cap)`, i.e. ready for the send one lap later. (Doubling
//!   keeps "written at p" and "free for p + 1" apart even when `cap == 1`.)
//! - A sender claims position `p` by a CAS on `tail` (which fails once the
//!   closed bit is set, so no send is claimed after close), writes the value
//!   and publishes it with a Release store of the stamp. A receiver claims by
//!   a CAS on `head`, reads, and frees the slot with a Release store.
//!
//! # Ordering contract
//! - `stamp` Release stores (after writing / after reading the value) pair with
//!   the `stamp` Acquire loads of the next claimant of that slot: the value
//!   write happens-before its read, the read happens-before the next write.
//! - The CASes on `head`/`tail` only arbitrate claims and may be Relaxed: all
//!   data is handed over through the stamps.
//! - Close is a `fetch_or` on `tail`: a receiver that finds `tail >> 1 == head`
//!   with the closed bit set knows no message remains or will arrive.
//!
//! Wake-ups are not this file's business: the caller notifies after a
//! successful push/pop (`chan/mod.rs`).

use std::mem::MaybeUninit;

use crate::chan::backoff::Backoff;
use crate::chan::error::{TryRecvError, TrySendError};
use crate::loom::{AtomicU64, CachePadded, Ordering, UnsafeCell};

struct Slot<T> {
    stamp: AtomicU64,
    msg: UnsafeCell<MaybeUninit<T>>,
}

pub(crate) struct Channel<T> {
    head: CachePadded<AtomicU64>,
    tail: CachePadded<AtomicU64>,
    buf: Box<[Slot<T>]>,
    cap: u64,
}

// SAFETY: values of type T move between threads through the slots (T: Send);
// every slot access is arbitrated by the stamp protocol described above.
unsafe impl<T: Send> Send for Channel<T> {}
// SAFETY: as above; shared access never hands out &T to two threads.
unsafe impl<T: Send> Sync for Channel<T> {}

impl<T> Channel<T> {
    pub(crate) fn new(cap: usize) -> Self {
        assert!(cap > 0, "array flavor needs a capacity of at least 1");
        let buf = (0..cap as u64)
            .map(|i| Slot {
                stamp: AtomicU64::new(2 * i),
                msg: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        Channel {
            head: CachePadded(AtomicU64::new(0)),
            tail: CachePadded(AtomicU64::new(0)),
            buf,
            cap: cap as u64,
        }
    }

    fn slot(&self, pos: u64) -> &Slot<T> {
        &self.buf[(pos % self.cap) as usize]
    }

    pub(crate) fn capacity(&self) -> usize {
        self.cap as usize
    }

    pub(crate) fn try_push(&self, v: T) -> Result<(), TrySendError<T>> {
        let mut backoff = Backoff::new();
        loop {
            let tail = self.tail.load(Ordering::Relaxed);
            if tail & 1 == 1 {
                return Err(TrySendError::Closed(v));
            }
            let pos = tail >> 1;
            let slot = self.slot(pos);
            // Acquire: pairs with the Release store of the receiver that
            // freed this slot, so its read of the old value happened before
            // our write.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == 2 * pos {
                if self
                    .tail
                    .compare_exchange_weak(tail, tail + 2, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    // The CAS made us the only claimant of position `pos`.
                    // SAFETY: the stamp says the slot is empty, its last reader done (Acquire above).
                    slot.msg.with_mut(|p| unsafe { (*p).write(v) });
                    // Release: pairs with the receiver's Acquire stamp load.
                    slot.stamp.store(2 * pos + 1, Ordering::Release);
                    return Ok(());
                }
            } else if stamp + 2 * self.cap == 2 * pos + 1 {
                // The slot still holds the message of the previous lap.
                let head = self.head.load(Ordering::Relaxed);
                if head + self.cap <= pos {
                    return Err(TrySendError::Full(v));
                }
                // A receiver has claimed it and is reading: wait for it.
                backoff.snooze();
            } else {
                // Another sender won the position; retry at once.
                backoff.snooze();
            }
        }
    }

    pub(crate) fn try_pop(&self) -> Result<T, TryRecvError> {
        let mut backoff = Backoff::new();
        loop {
            let head = self.head.load(Ordering::Relaxed);
            let slot = self.slot(head);
            // Acquire: pairs with the sender's Release stamp store, so its
            // write of the value happened before our read.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == 2 * head + 1 {
                if self
                    .head
                    .compare_exchange_weak(head, head + 1, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
                {
                    // SAFETY: the CAS made us the only claimant of `head`; the
                    // stamp says the slot holds its message, fully written.
                    let v = slot.msg.with(|p| unsafe { (*p).assume_init_read() });
                    // Release: pairs with the next lap's sender Acquire load.
                    slot.stamp.store(2 * (head + self.cap), Ordering::Release);
                    return Ok(v);
                }
            } else if stamp == 2 * head {
                // Empty slot: either nothing was sent, or a sender claimed
                // this position and is writing.
                let tail = self.tail.load(Ordering::Relaxed);
                if tail >> 1 == head {
                    return Err(if tail & 1 == 1 {
                        TryRecvError::Closed
                    } else {
                        TryRecvError::Empty
                    });
                }
                backoff.snooze();
            } else {
                backoff.snooze();
            }
        }
    }

    /// Places a run of values from the front of `items` with a single claim
    /// (one CAS on `tail`) over consecutive free slots. Returns how many were
    /// placed (`0`: full, or the next slot is still being read — the caller
    /// falls back to [`Channel::try_push`]), or `Err` when closed.
    pub(crate) fn push_run(&self, items: &mut std::collections::VecDeque<T>) -> Result<usize, ()> {
        loop {
            let tail = self.tail.load(Ordering::Relaxed);
            if tail & 1 == 1 {
                return Err(());
            }
            let pos = tail >> 1;
            let mut n = 0u64;
            while (n as usize) < items.len() && n < self.cap {
                // Acquire: as in `try_push`, for each slot of the run.
                if self.slot(pos + n).stamp.load(Ordering::Acquire) != 2 * (pos + n) {
                    break;
                }
                n += 1;
            }
            if n == 0 {
                return Ok(0);
            }
            if self
                .tail
                .compare_exchange(tail, tail + 2 * n, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                for p in pos..pos + n {
                    let v = items.pop_front().expect("run length bounded by items");
                    let slot = self.slot(p);
                    // SAFETY: the CAS claimed positions pos..pos+n, each of
                    // whose stamp we saw (Acquire) marking it free.
                    slot.msg.with_mut(|ptr| unsafe { (*ptr).write(v) });
                    // Release: pairs with the receiver's Acquire stamp load.
                    slot.stamp.store(2 * p + 1, Ordering::Release);
                }
                return Ok(n as usize);
            }
        }
    }

    /// Takes up to `max` consecutive ready messages with a single claim (one
    /// CAS on `head`). Returns how many were appended, or why none was.
    pub(crate) fn pop_batch(&self, out: &mut Vec<T>, max: usize) -> Result<usize, TryRecvError> {
        if max == 0 {
            return Ok(0);
        }
        loop {
            let head = self.head.load(Ordering::Relaxed);
            let mut n = 0u64;
            while n < max as u64 && n < self.cap {
                // Acquire: as in `try_pop`, for each slot of the run.
                if self.slot(head + n).stamp.load(Ordering::Acquire) != 2 * (head + n) + 1 {
                    break;
                }
                n += 1;
            }
            if n == 0 {
                return self.try_pop().map(|v| {
                    out.push(v);
                    1
                });
            }
            if self
                .head
                .compare_exchange(head, head + n, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                out.reserve(n as usize);
                for pos in head..head + n {
                    let slot = self.slot(pos);
                    // SAFETY: the CAS claimed positions head..head+n, each of
                    // whose stamp we saw (Acquire) marking it written.
                    let v = slot.msg.with(|p| unsafe { (*p).assume_init_read() });
                    // Release: pairs with the next lap's sender.
                    slot.stamp.store(2 * (pos + self.cap), Ordering::Release);
                    out.push(v);
                }
                return Ok(n as usize);
            }
        }
    }

    /// Closes the channel; returns whether this call did it.
    pub(crate) fn close(&self) -> bool {
        // SeqCst only for simplicity: the mutex of the wait lists taken by
        // the caller right after is what orders close against waiters.
        self.tail.fetch_or(1, Ordering::SeqCst) & 1 == 0
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.tail.load(Ordering::SeqCst) & 1 == 1
    }

    pub(crate) fn len(&self) -> usize {
        loop {
            let tail = self.tail.load(Ordering::SeqCst);
            let head = self.head.load(Ordering::SeqCst);
            if self.tail.load(Ordering::SeqCst) == tail {
                return ((tail >> 1).saturating_sub(head)).min(self.cap) as usize;
            }
        }
    }
}

impl<T> Drop for Channel<T> {
    fn drop(&mut self) {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed) >> 1;
        for pos in head..tail {
            let slot = self.slot(pos);
            // With `&mut self` no operation is in flight, so every claimed
            // position below `tail` and at or above `head` was written.
            debug_assert_eq!(slot.stamp.load(Ordering::Relaxed), 2 * pos + 1);
            // SAFETY: the slot holds the initialised, unread message of
            // position `pos` (see above); it is dropped exactly once here.
            slot.msg.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}
