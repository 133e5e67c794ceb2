//! The single-producer single-consumer ring under every actor channel.
//!
//! One [`Producer`] and one [`Consumer`] (neither is `Clone`): each index
//! has a single writer, so no read-modify-write is needed anywhere, and a
//! whole batch is published with one store.
//!
//! It is the head/tail protocol of `spindle::chan::spsc`, kept apart because
//! an actor channel needs what that public channel does not offer: waits
//! for a batch of `want` slots or values rather than one, batches that
//! cross the wrap point as two runs (and initialised `&mut [T]` through
//! [`Producer::poke`]), the sent and taken counts telemetry reads, and one
//! [`WakerSlot`] per side instead of a waiter list, with no blocking or
//! `select` to serve.
//!
//! # Invariants
//! - `tail` (positions published) is written only by the producer, `head`
//!   (positions released) only by the consumer. Both are `u64` counters that
//!   only grow: `head <= tail <= head + cap`. Position `p` lives in slot
//!   `p % cap`. Slots of positions `head..tail` hold initialised values that
//!   belong to the consumer; the others belong to the producer.
//! - Each side keeps its own index privately and a cached copy of the other
//!   side's, reloaded when the cache says "full" / "empty" or when a batch
//!   operation wants the longest run available.
//! - A batch is written (or read) in at most two contiguous runs, the second
//!   one when the positions wrap, and published with **one** Release store.
//! - `closed` is set by the producer after its last `tail` store;
//!   `consumer_gone` by the consumer when it is dropped. Neither is ever
//!   cleared.
//! - `init_hwm` (producer-private): slots `0..init_hwm` have been written at
//!   least once. For `T: Copy` such a slot always holds a valid `T` (reading
//!   a `Copy` value leaves it in place), which is what lets
//!   [`Producer::poke`] hand out `&mut [T]` over free slots.
//!
//! # Ordering contract
//! - `tail` Release store (after the slot writes) pairs with the consumer's
//!   Acquire load: the writes happen-before the reads. `head` Release store
//!   (after the reads / drops) pairs with the producer's Acquire load: the
//!   consumer is done with a slot before the producer reuses it.
//! - The consumer loads `closed` (Acquire, pairing with its Release store)
//!   *before* `tail`, so "closed and empty" means drained.
//! - Wake-ups: [`WakerSlot`]'s fence protocol (see `waker_slot.rs`).
//!
//! The batch operations (from and into a `Vec`, copies from and to slices,
//! runs written and read in place) are in `batch.rs`.

mod batch;
#[cfg(all(test, not(loom)))]
mod tests;

use std::mem::MaybeUninit;
use std::task::{Context, Poll};

use crate::loom::{Arc, AtomicBool, AtomicU64, CachePadded, Ordering, UnsafeCell};
use crate::waker_slot::WakerSlot;

pub(crate) struct Ring<T> {
    tail: CachePadded<AtomicU64>,
    head: CachePadded<AtomicU64>,
    closed: AtomicBool,
    consumer_gone: AtomicBool,
    /// The consumer waiting for values.
    data_waiter: WakerSlot,
    /// The producer waiting for room.
    room_waiter: WakerSlot,
    buf: Box<[UnsafeCell<MaybeUninit<T>>]>,
    cap: usize,
}

// Values of type T cross from the producer's thread to the consumer's
// (T: Send); the head/tail protocol above splits slot access between them.
// SAFETY: no slot is ever accessed from two threads at once (above).
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above; shared access only reaches atomics, the waker slots
// (mutex-protected) and slots owned by exactly one side.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    fn slot(&self, pos: u64) -> &UnsafeCell<MaybeUninit<T>> {
        &self.buf[(pos % self.cap as u64) as usize]
    }

    /// The buffer as `MaybeUninit<T>`s with interior mutability.
    #[cfg(not(loom))]
    fn base(&self) -> *mut MaybeUninit<T> {
        // `crate::loom::UnsafeCell` is `repr(transparent)` over
        // `std::cell::UnsafeCell`, itself transparent: the buffer is an
        // array of `MaybeUninit<T>` that may be written through `&self`.
        self.buf.as_ptr().cast::<MaybeUninit<T>>().cast_mut()
    }

    /// Positions published so far (messages ever sent).
    pub(crate) fn sent(&self) -> u64 {
        self.tail.load(Ordering::Relaxed)
    }

    /// Positions released so far (messages ever taken). Acquire: a `sent`
    /// read after it is at least this (the consumer saw that tail first).
    pub(crate) fn taken(&self) -> u64 {
        self.head.load(Ordering::Acquire)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn is_consumer_gone(&self) -> bool {
        self.consumer_gone.load(Ordering::Acquire)
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        for pos in head..tail {
            self.slot(pos).with_mut(|p| {
                // SAFETY: positions head..tail are initialised; `&mut self`
                // excludes every other access; each is dropped once.
                unsafe { (*p).assume_init_drop() }
            });
        }
    }
}

/// A new ring of `cap` slots (`cap > 0`).
pub(crate) fn ring<T>(cap: usize) -> (Producer<T>, Consumer<T>) {
    assert!(cap > 0, "a ring needs at least one slot");
    let ring = Arc::new(Ring {
        tail: CachePadded(AtomicU64::new(0)),
        head: CachePadded(AtomicU64::new(0)),
        closed: AtomicBool::new(false),
        consumer_gone: AtomicBool::new(false),
        data_waiter: WakerSlot::new(),
        room_waiter: WakerSlot::new(),
        buf: (0..cap)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
        cap,
    });
    (
        Producer {
            ring: ring.clone(),
            tail: 0,
            cached_head: 0,
            init_hwm: 0,
            reserved: 0,
            closed: false,
        },
        Consumer {
            ring,
            head: 0,
            cached_tail: 0,
        },
    )
}

/// Where a run of `n` positions starting at `pos` lies in the buffer:
/// `(start index, length of the first run, length of the second run)`.
fn runs(pos: u64, n: usize, cap: usize) -> (usize, usize, usize) {
    let start = (pos % cap as u64) as usize;
    let first = n.min(cap - start);
    (start, first, n - first)
}

/// The producing side.
pub(crate) struct Producer<T> {
    ring: Arc<Ring<T>>,
    tail: u64,
    cached_head: u64,
    init_hwm: usize,
    /// Slots reserved by the last `poke`, not yet published.
    reserved: usize,
    /// This producer closed the ring: it has no room from then on, so
    /// nothing is published after `closed` (the ordering contract).
    closed: bool,
}

impl<T> Producer<T> {
    pub(crate) fn ring(&self) -> &Arc<Ring<T>> {
        &self.ring
    }

    /// Free slots; reloads the consumer's index (Acquire: pairs with its
    /// Release store of `head`).
    pub(crate) fn vacant(&mut self) -> usize {
        if self.closed {
            return 0;
        }
        self.cached_head = self.ring.head.load(Ordering::Acquire);
        self.ring.cap - (self.tail - self.cached_head) as usize
    }

    /// Free slots by the cached index, reloading only when it says full.
    #[inline]
    fn vacant_cached(&mut self) -> usize {
        let v = self.ring.cap - (self.tail - self.cached_head) as usize;
        if v == 0 || self.closed {
            self.vacant()
        } else {
            v
        }
    }

    /// Publishes `n` written slots with one Release store (pairs with the
    /// consumer's Acquire load of `tail`), then wakes a parked consumer.
    #[inline]
    pub(crate) fn publish(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.reserved = 0;
        self.tail += n as u64;
        self.init_hwm = self
            .init_hwm
            .max(self.tail.min(self.ring.cap as u64) as usize);
        self.ring.tail.store(self.tail, Ordering::Release);
        self.ring.data_waiter.notify();
    }

    /// Writes one value if there is room.
    pub(crate) fn try_push(&mut self, value: T) -> Result<(), T> {
        if self.vacant_cached() == 0 {
            return Err(value);
        }
        let slot = self.ring.slot(self.tail);
        // SAFETY: slot `tail` is free (vacant > 0, by an Acquire load of
        // head) and only the producer writes free slots.
        slot.with_mut(|p| unsafe { (*p).write(value) });
        self.publish(1);
        Ok(())
    }

    /// Closes the ring: the consumer drains what is published, then sees
    /// closed; this producer has no room from then on. Idempotent.
    pub(crate) fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        // Release: pairs with the consumer's Acquire load of `closed`; after
        // our last `tail` store.
        self.ring.closed.store(true, Ordering::Release);
        self.ring.data_waiter.notify();
    }

    /// One poll of "wait for `want` free slots" (capped at the capacity).
    /// Ready with the free count, or with `None` once the consumer is gone
    /// or this producer closed the ring.
    pub(crate) fn poll_vacant(&mut self, want: usize, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let want = want.clamp(1, self.ring.cap);
        for round in 0..2 {
            if self.ring.is_consumer_gone() || self.closed {
                self.ring.room_waiter.clear();
                return Poll::Ready(None);
            }
            let v = self.vacant();
            if v >= want {
                if round == 1 {
                    self.ring.room_waiter.clear();
                }
                return Poll::Ready(Some(v));
            }
            if round == 0 {
                self.ring.room_waiter.register(cx.waker());
            }
        }
        Poll::Pending
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        self.close();
    }
}

/// The consuming side.
pub(crate) struct Consumer<T> {
    ring: Arc<Ring<T>>,
    head: u64,
    cached_tail: u64,
}

impl<T> Consumer<T> {
    /// Position of the oldest value not yet released.
    pub(crate) fn head(&self) -> u64 {
        self.head
    }

    /// Values ready; reloads the producer's index (Acquire: pairs with its
    /// Release store of `tail`).
    pub(crate) fn avail(&mut self) -> usize {
        self.cached_tail = self.ring.tail.load(Ordering::Acquire);
        (self.cached_tail - self.head) as usize
    }

    #[inline]
    fn avail_cached(&mut self) -> usize {
        let a = (self.cached_tail - self.head) as usize;
        if a == 0 {
            self.avail()
        } else {
            a
        }
    }

    /// Whether the producer closed the ring and every value was released.
    pub(crate) fn is_drained(&mut self) -> bool {
        // `closed` before `tail` (see the ordering contract).
        self.ring.is_closed() && self.avail() == 0
    }

    /// Drops the first `n` ready values in place and releases their slots
    /// with one Release store (pairs with the producer's Acquire load of
    /// `head`), then wakes a parked producer. `n` must not exceed what
    /// `avail` reported.
    pub(crate) fn release(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        assert!(
            n as u64 <= self.cached_tail - self.head,
            "released more than is ready"
        );
        if std::mem::needs_drop::<T>() {
            for i in 0..n as u64 {
                self.ring.slot(self.head + i).with_mut(|p| {
                    // Position head+i is owned by the consumer and dropped
                    // once: head moves past it below.
                    // SAFETY: it is ready (below the Acquire-loaded tail).
                    unsafe { (*p).assume_init_drop() }
                });
            }
        }
        self.advance_head(n);
    }

    fn advance_head(&mut self, n: usize) {
        self.head += n as u64;
        self.ring.head.store(self.head, Ordering::Release);
        self.ring.room_waiter.notify();
    }

    /// Takes one value if one is ready.
    pub(crate) fn try_pop(&mut self) -> Option<T> {
        if self.avail_cached() == 0 {
            return None;
        }
        let v = self.ring.slot(self.head).with(|p| {
            // SAFETY: position head is ready (Acquire on tail), owned by the
            // consumer; moved out once, head moves past it right after.
            unsafe { (*p).assume_init_read() }
        });
        self.advance_head(1);
        Some(v)
    }

    /// A reference to the oldest ready value, if any, without taking it.
    pub(crate) fn peek(&mut self) -> Option<&T> {
        if self.avail_cached() == 0 {
            return None;
        }
        Some(self.ring.slot(self.head).with(|p| {
            // Only the consumer releases position head, and it is borrowed.
            // SAFETY: ready (Acquire on tail), initialised and unwritten meanwhile.
            unsafe { (*p).assume_init_ref() }
        }))
    }

    /// One poll of "wait for `want` ready values" (capped at the capacity).
    /// Ready with the count, or with whatever is left once the producer
    /// closed (`0`: drained).
    pub(crate) fn poll_avail(&mut self, want: usize, cx: &mut Context<'_>) -> Poll<usize> {
        let want = want.clamp(1, self.ring.cap);
        for round in 0..2 {
            // `closed` before `tail`: a closed ring's count is final.
            let closed = self.ring.is_closed();
            let a = self.avail();
            if a >= want || closed {
                if round == 1 {
                    self.ring.data_waiter.clear();
                }
                return Poll::Ready(a);
            }
            if round == 0 {
                self.ring.data_waiter.register(cx.waker());
            }
        }
        Poll::Pending
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        // Release: orders our last reads before the producer learns that
        // nobody will read any more (it may then drop the ring's values).
        self.ring.consumer_gone.store(true, Ordering::Release);
        self.ring.room_waiter.notify();
    }
}
