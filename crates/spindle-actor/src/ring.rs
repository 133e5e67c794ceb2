//! The single-producer single-consumer ring under every actor channel.
//!
//! One [`Producer`] and one [`Consumer`] (neither is `Clone`): each index
//! has a single writer, so no read-modify-write is needed anywhere, and a
//! whole batch is published with one store.
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
//! Under loom the slices are unavailable (loom cells cannot be viewed as one
//! slice); the copying batch operations then go slot by slot through the
//! same reserve / publish code.

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

    /// Moves values out of the front of `items` while there is room; one
    /// publish for the run. Returns how many moved.
    pub(crate) fn push_from(&mut self, items: &mut Vec<T>) -> usize {
        let n = self.vacant().min(items.len());
        for (i, v) in items.drain(..n).enumerate() {
            let slot = self.ring.slot(self.tail + i as u64);
            // SAFETY: position tail+i is inside the free run counted by
            // `vacant` (Acquire on head); only the producer writes it.
            slot.with_mut(|p| unsafe { (*p).write(v) });
        }
        self.publish(n);
        n
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

impl<T: Copy> Producer<T> {
    /// Copies as much of `src` as fits (two runs at most), publishing it
    /// with one store. Returns how many were copied.
    pub(crate) fn push_slice(&mut self, src: &[T]) -> usize {
        let n = self.vacant().min(src.len());
        if n == 0 {
            return 0;
        }
        let (start, first, second) = runs(self.tail, n, self.ring.cap);
        #[cfg(not(loom))]
        {
            let base = self.ring.base();
            // SAFETY: both runs are free slots (Acquire on head) owned by the
            // producer until publish; the source is a distinct borrow.
            unsafe {
                std::ptr::copy_nonoverlapping(src.as_ptr(), base.add(start).cast::<T>(), first);
                std::ptr::copy_nonoverlapping(src.as_ptr().add(first), base.cast::<T>(), second);
            }
        }
        #[cfg(loom)]
        {
            let _ = (start, first, second);
            for (i, &v) in src[..n].iter().enumerate() {
                self.ring.slot(self.tail + i as u64).with_mut(|p| {
                    // SAFETY: as above, slot by slot.
                    unsafe { (*p).write(v) }
                });
            }
        }
        self.publish(n);
        n
    }
}

#[cfg(not(loom))]
impl<T: Copy + Default> Producer<T> {
    /// Reserves up to `max` free slots for writing in place and returns how
    /// many; [`Producer::poked`] exposes them, [`Producer::publish_poked`]
    /// sends a prefix. Free slots never written before are filled with
    /// `T::default()` first (once per slot in the ring's life), so every
    /// reserved slot holds a valid value.
    pub(crate) fn poke(&mut self, max: usize) -> usize {
        let n = self.vacant().min(max);
        let (start, first, _) = runs(self.tail, n, self.ring.cap);
        let end = start + first;
        if end > self.init_hwm {
            let base = self.ring.base();
            for i in self.init_hwm..end {
                // SAFETY: slot i >= init_hwm was never written: a free slot in
                // the buffer, owned by the producer.
                unsafe { (*base.add(i)).write(T::default()) };
            }
            self.init_hwm = end;
        }
        self.reserved = n;
        n
    }

    /// The slots of the last [`Producer::poke`], as two runs (the second
    /// non-empty only when the positions wrap).
    pub(crate) fn poked(&mut self) -> (&mut [T], &mut [T]) {
        let (start, first, second) = runs(self.tail, self.reserved, self.ring.cap);
        let base = self.ring.base();
        // Both runs are free slots (reserved by `poke` from an Acquire load
        // of head; the consumer cannot take them back), owned by the
        // producer until it publishes, disjoint, inside the buffer. Every
        // slot below `init_hwm` holds a valid T (module invariant, T: Copy);
        // the first run ends at or below it (ensured by `poke`) and the
        // second starts at index 0, below the first.
        // SAFETY: as just argued; the borrows end with `&mut self`, before any publish.
        unsafe {
            (
                std::slice::from_raw_parts_mut(base.add(start).cast::<T>(), first),
                std::slice::from_raw_parts_mut(base.cast::<T>(), second),
            )
        }
    }

    /// Publishes the first `n` slots of the last [`Producer::poke`].
    pub(crate) fn publish_poked(&mut self, n: usize) {
        assert!(
            n <= self.reserved,
            "committed more slots than were reserved"
        );
        self.reserved = 0;
        self.publish(n);
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

    /// Moves up to `max` ready values to the end of `out`, releasing them
    /// with one store. Returns how many moved.
    pub(crate) fn pop_into(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        let n = self.avail().min(max);
        out.reserve(n);
        for i in 0..n as u64 {
            out.push(self.ring.slot(self.head + i).with(|p| {
                // SAFETY: ready positions (Acquire on tail), moved out once;
                // head moves past them below.
                unsafe { (*p).assume_init_read() }
            }));
        }
        if n > 0 {
            self.advance_head(n);
        }
        n
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

impl<T: Copy> Consumer<T> {
    /// Copies up to `dst.len()` ready values into `dst` and releases them
    /// with one store. Returns how many.
    pub(crate) fn pop_slice(&mut self, dst: &mut [T]) -> usize {
        let n = self.avail().min(dst.len());
        if n == 0 {
            return 0;
        }
        let (start, first, second) = runs(self.head, n, self.ring.cap);
        #[cfg(not(loom))]
        {
            let base = self.ring.base();
            // SAFETY: both runs are ready slots (Acquire on tail) owned by the
            // consumer until it releases them; `dst` is a distinct borrow.
            unsafe {
                std::ptr::copy_nonoverlapping(base.add(start).cast::<T>(), dst.as_mut_ptr(), first);
                std::ptr::copy_nonoverlapping(
                    base.cast::<T>(),
                    dst.as_mut_ptr().add(first),
                    second,
                );
            }
        }
        #[cfg(loom)]
        {
            let _ = (start, first, second);
            for (i, d) in dst[..n].iter_mut().enumerate() {
                *d = self.ring.slot(self.head + i as u64).with(|p| {
                    // SAFETY: as above, slot by slot.
                    unsafe { (*p).assume_init_read() }
                });
            }
        }
        self.advance_head(n);
        n
    }
}

#[cfg(not(loom))]
impl<T> Consumer<T> {
    /// Up to `max` ready values as two runs (the second non-empty only when
    /// the positions wrap), read in place. Release them with
    /// [`Consumer::release`].
    pub(crate) fn peek_runs(&mut self, max: usize) -> (&[T], &[T]) {
        let n = self.avail().min(max);
        let (start, first, second) = runs(self.head, n, self.ring.cap);
        let base = self.ring.base();
        // SAFETY: both runs are ready slots (Acquire on tail), initialised and
        // untouched while `&mut self` is borrowed (only the consumer releases).
        unsafe {
            (
                std::slice::from_raw_parts(base.add(start).cast::<T>(), first),
                std::slice::from_raw_parts(base.cast::<T>(), second),
            )
        }
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    #[test]
    fn runs_split_at_the_end() {
        assert_eq!(runs(0, 3, 8), (0, 3, 0));
        assert_eq!(runs(6, 4, 8), (6, 2, 2));
        assert_eq!(runs(16, 8, 8), (0, 8, 0));
    }

    #[test]
    fn slices_wrap_and_keep_order() {
        let (mut p, mut c) = ring::<u32>(5);
        let mut next = 0u32;
        let mut seen = Vec::new();
        for round in 0..20 {
            let batch: Vec<u32> = (next..next + (round % 4 + 1)).collect();
            let n = p.push_slice(&batch);
            next += n as u32;
            let mut buf = [0u32; 3];
            let k = c.pop_slice(&mut buf[..(round as usize % 3) + 1]);
            seen.extend_from_slice(&buf[..k]);
        }
        let mut rest = vec![0; 5];
        let k = c.pop_slice(&mut rest);
        seen.extend_from_slice(&rest[..k]);
        assert_eq!(seen, (0..next).collect::<Vec<_>>());
    }

    #[test]
    fn poke_and_peek_in_place() {
        let (mut p, mut c) = ring::<u64>(4);
        assert_eq!(p.poke(3), 3);
        let (a, b) = p.poked();
        assert_eq!((a.len(), b.len()), (3, 0));
        a.copy_from_slice(&[1, 2, 3]);
        p.publish_poked(3);
        let (a, b) = c.peek_runs(10);
        assert_eq!((a, b), (&[1u64, 2, 3][..], &[][..]));
        c.release(2);
        // Positions 3..6: slot 3, then slots 0 and 1 (wrapped).
        assert_eq!(p.poke(10), 3);
        let (a, b) = p.poked();
        assert_eq!((a.len(), b.len()), (1, 2));
        a[0] = 4;
        b[0] = 5;
        b[1] = 6;
        p.publish_poked(3);
        let (a, b) = c.peek_runs(10);
        assert_eq!((a, b), (&[3u64, 4][..], &[5u64, 6][..]));
        c.release(4);
        assert_eq!(c.avail(), 0);
        assert_eq!((p.ring().sent(), p.ring().taken()), (6, 6));
    }

    struct Counted<'a>(&'a AtomicUsize);
    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Relaxed);
        }
    }

    #[test]
    fn every_value_dropped_once() {
        let drops = AtomicUsize::new(0);
        {
            let (mut p, mut c) = ring::<Counted<'_>>(3);
            for _ in 0..3 {
                assert!(p.try_push(Counted(&drops)).is_ok());
            }
            assert!(p.try_push(Counted(&drops)).is_err()); // full: dropped by the caller
            assert_eq!(drops.load(Relaxed), 1);
            assert_eq!(c.avail(), 3);
            c.release(1);
            assert_eq!(drops.load(Relaxed), 2);
            let v = c.try_pop().unwrap();
            drop(v);
            assert_eq!(drops.load(Relaxed), 3);
            let mut q: Vec<_> = (0..4).map(|_| Counted(&drops)).collect();
            assert_eq!(p.push_from(&mut q), 2);
            drop(q);
            assert_eq!(drops.load(Relaxed), 5);
            let mut out = Vec::new();
            assert_eq!(c.pop_into(&mut out, 1), 1);
            drop(out);
            assert_eq!(drops.load(Relaxed), 6);
        } // two values left in the ring
        assert_eq!(drops.load(Relaxed), 8);
    }

    /// Two threads, every batch path: copies and in-place runs that wrap.
    #[test]
    fn threads_move_every_value_once_in_order() {
        let n: u64 = if cfg!(miri) { 300 } else { 200_000 };
        let (mut p, mut c) = ring::<u64>(13);
        let t = std::thread::spawn(move || {
            let mut next = 0u64;
            let mut round = 0usize;
            while next < n {
                let want = ((round % 5) + 1).min((n - next) as usize);
                if round.is_multiple_of(2) {
                    let src: Vec<u64> = (next..next + want as u64).collect();
                    next += p.push_slice(&src) as u64;
                } else {
                    let k = p.poke(want);
                    let (a, b) = p.poked();
                    for (i, s) in a.iter_mut().chain(b.iter_mut()).enumerate() {
                        *s = next + i as u64;
                    }
                    p.publish_poked(k);
                    next += k as u64;
                }
                round += 1;
                std::thread::yield_now();
            }
        });
        let mut seen = 0u64;
        let mut buf = [0u64; 4];
        let mut round = 0usize;
        loop {
            let drained = c.is_drained();
            if round.is_multiple_of(2) {
                let (a, b) = c.peek_runs(7);
                let k = a.len() + b.len();
                for &v in a.iter().chain(b) {
                    assert_eq!(v, seen);
                    seen += 1;
                }
                c.release(k);
            } else {
                let k = c.pop_slice(&mut buf);
                for &v in &buf[..k] {
                    assert_eq!(v, seen);
                    seen += 1;
                }
            }
            if drained {
                break;
            }
            round += 1;
            std::thread::yield_now();
        }
        t.join().unwrap();
        assert_eq!(seen, n);
    }

    #[test]
    fn close_then_drain() {
        let (mut p, mut c) = ring::<u8>(2);
        p.try_push(1).unwrap();
        drop(p);
        assert!(!c.is_drained());
        assert_eq!(c.try_pop(), Some(1));
        assert!(c.is_drained());
    }
}
