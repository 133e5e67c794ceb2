//! Single-producer single-consumer ring for pipelines, with zero-copy slot
//! access.
//!
//! One [`Producer`] and one [`Consumer`] (neither is `Clone`: the ring's speed
//! comes from each index having a single writer, so no CAS is needed).
//!
//! `spindle-actor` keeps its own ring (`crates/spindle-actor/src/ring/`) on
//! this same head/tail protocol, because its channels wait for batches of
//! slots rather than one, read and write across the wrap point in two runs,
//! and count messages for telemetry, which this public channel does not
//! offer.
//!
//! # Invariants
//! - `tail` is written only by the producer, `head` only by the consumer;
//!   both are `u64` counters that only grow; `head <= tail <= head + cap`.
//!   Position `p` lives in slot `p % cap`. Slots `head..tail` hold
//!   initialised values, the others are uninitialised.
//! - Each side caches the other's index and reloads it only when the cached
//!   value says "full"/"empty".
//! - `closed` is set by the producer (close or drop) after its last `tail`
//!   store; `consumer_gone` by the consumer's drop.
//!
//! # Ordering contract
//! - `tail` Release store (after writing the slots) pairs with the consumer's
//!   Acquire load: writes happen-before reads. `head` Release store (after
//!   reading / dropping) pairs with the producer's Acquire load: the consumer
//!   is done with a slot before the producer reuses it.
//! - The consumer loads `closed` (Acquire, pairs with its Release store)
//!   *before* loading `tail`, so "closed and empty" means drained.
//! - Wake-ups use [`WaitList`]'s fence protocol (`docs/chan.md`).
//!
//! # Zero-copy access
//! [`Producer::write_slice`] reserves a contiguous run of free slots; values
//! are written in place ([`WriteSlice::push`], or through the raw
//! `MaybeUninit` slice) and published by [`WriteSlice::commit`] (one Release
//! store for the run). [`Consumer::read_slice`] exposes a contiguous run of
//! ready values as `&[T]`, read in place; [`ReadSlice::release`] drops the
//! first `n` in place and frees their slots (one Release store). Both are
//! unavailable under loom, whose cells cannot be viewed as one slice.

use std::fmt;
use std::future::Future;
use std::mem::MaybeUninit;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};

use crate::chan::blocking;
use crate::chan::error::{RecvError, SendError, TryRecvError, TrySendError};
use crate::chan::waiters::{Signal, WaitList};
use crate::loom::{Arc, AtomicBool, AtomicU64, CachePadded, Ordering, UnsafeCell};

struct Ring<T> {
    head: CachePadded<AtomicU64>,
    tail: CachePadded<AtomicU64>,
    closed: AtomicBool,
    consumer_gone: AtomicBool,
    buf: Box<[UnsafeCell<MaybeUninit<T>>]>,
    cap: u64,
    /// The producer waiting for room.
    prod_wait: WaitList,
    /// The consumer waiting for values.
    cons_wait: WaitList,
}

// SAFETY: values of type T cross from the producer's thread to the
// consumer's (T: Send); slot access is split by the head/tail protocol.
unsafe impl<T: std::marker::Send> std::marker::Send for Ring<T> {}
// SAFETY: as above.
unsafe impl<T: std::marker::Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    fn slot(&self, pos: u64) -> &UnsafeCell<MaybeUninit<T>> {
        &self.buf[(pos % self.cap) as usize]
    }

    #[cfg(not(loom))]
    fn base(&self) -> *mut MaybeUninit<T> {
        // `crate::loom::UnsafeCell` is `repr(transparent)` over
        // `std::cell::UnsafeCell`, itself transparent: the buffer is an
        // array of `MaybeUninit<T>` with interior mutability.
        self.buf.as_ptr().cast::<MaybeUninit<T>>().cast_mut()
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        for pos in head..tail {
            let slot = self.slot(pos);
            // SAFETY: head..tail are initialised; `&mut self` excludes others; each dropped once.
            slot.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

/// The sending end of an SPSC ring.
pub struct Producer<T> {
    ring: Arc<Ring<T>>,
    tail: u64,
    cached_head: u64,
    key: Option<usize>,
}

/// The receiving end of an SPSC ring.
pub struct Consumer<T> {
    ring: Arc<Ring<T>>,
    head: u64,
    cached_tail: u64,
    key: Option<usize>,
}

/// An SPSC ring of `cap` slots (`cap > 0`).
pub fn channel<T>(cap: usize) -> (Producer<T>, Consumer<T>) {
    assert!(cap > 0, "spsc capacity must be at least 1");
    let ring = Arc::new(Ring {
        head: CachePadded(AtomicU64::new(0)),
        tail: CachePadded(AtomicU64::new(0)),
        closed: AtomicBool::new(false),
        consumer_gone: AtomicBool::new(false),
        buf: (0..cap)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
        cap: cap as u64,
        prod_wait: WaitList::new(),
        cons_wait: WaitList::new(),
    });
    (
        Producer {
            ring: ring.clone(),
            tail: 0,
            cached_head: 0,
            key: None,
        },
        Consumer {
            ring,
            head: 0,
            cached_tail: 0,
            key: None,
        },
    )
}

impl<T> Producer<T> {
    /// Free slots, reloading the consumer's index if the cache says full.
    fn free(&mut self) -> u64 {
        let cap = self.ring.cap;
        if self.tail - self.cached_head == cap {
            // Acquire: pairs with the consumer's Release store of `head`.
            self.cached_head = self.ring.head.load(Ordering::Acquire);
        }
        cap - (self.tail - self.cached_head)
    }

    fn publish(&mut self, new_tail: u64) {
        self.tail = new_tail;
        // Release: pairs with the consumer's Acquire load of `tail`.
        self.ring.tail.store(new_tail, Ordering::Release);
        self.ring.cons_wait.notify_one(Signal::Fence);
    }

    /// Sends without waiting.
    pub fn try_send(&mut self, value: T) -> Result<(), TrySendError<T>> {
        if self.ring.consumer_gone.load(Ordering::Relaxed)
            || self.ring.closed.load(Ordering::Relaxed)
        {
            return Err(TrySendError::Closed(value));
        }
        if self.free() == 0 {
            return Err(TrySendError::Full(value));
        }
        let slot = self.ring.slot(self.tail);
        // SAFETY: slot `tail` is free (free() > 0, Acquire on head); only the producer writes slots.
        slot.with_mut(|p| unsafe { (*p).write(value) });
        self.publish(self.tail + 1);
        Ok(())
    }

    /// Sends, waiting for room. Cancel-safe: the value stays in the future
    /// until placed.
    pub fn send(&mut self, value: T) -> Send<'_, T> {
        Send {
            p: self,
            value: Some(value),
        }
    }

    /// Sends from a plain thread.
    pub fn send_blocking(&mut self, value: T) -> Result<(), SendError<T>> {
        blocking::block_on(pin!(self.send(value)))
    }

    /// Reserves up to `max` contiguous free slots for in-place writing.
    /// The run may be shorter than `max` (or empty) when the ring is nearly
    /// full or wraps; it is empty once the ring is closed or the consumer
    /// gone ([`Producer::is_closed`]), as `try_send` then refuses: nothing
    /// is published after `closed` (module invariants: otherwise a consumer
    /// could get `Closed` and then more values).
    #[cfg(not(loom))]
    pub fn write_slice(&mut self, max: usize) -> WriteSlice<'_, T> {
        // Acquire: as in `free`; always reloaded so the run is as long as
        // possible.
        self.cached_head = self.ring.head.load(Ordering::Acquire);
        let free = if self.is_closed() { 0 } else { self.free() };
        let to_end = self.ring.cap - self.tail % self.ring.cap;
        let len = free.min(to_end).min(max as u64) as usize;
        WriteSlice {
            start: (self.tail % self.ring.cap) as usize,
            len,
            written: 0,
            p: self,
        }
    }

    /// Closes the ring: the consumer drains, then sees closed. Returns
    /// whether this call closed it.
    pub fn close(&self) -> bool {
        // Release: pairs with the consumer's Acquire load of `closed`; after
        // our last `tail` store.
        let was_closed = self.ring.closed.swap(true, Ordering::Release);
        self.ring.cons_wait.notify_all(Signal::Fence);
        self.ring.prod_wait.notify_all(Signal::Fence);
        !was_closed
    }

    /// Whether the consumer is gone or the ring closed.
    pub fn is_closed(&self) -> bool {
        self.ring.consumer_gone.load(Ordering::Relaxed) || self.ring.closed.load(Ordering::Relaxed)
    }

    /// Capacity of the ring.
    pub fn capacity(&self) -> usize {
        self.ring.cap as usize
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        self.ring.prod_wait.complete(&mut self.key, Signal::Fence);
        self.close();
    }
}

/// Future of [`Producer::send`].
#[must_use = "futures do nothing unless polled"]
pub struct Send<'a, T> {
    p: &'a mut Producer<T>,
    value: Option<T>,
}

impl<T> Unpin for Send<'_, T> {}

impl<T> Future for Send<'_, T> {
    type Output = Result<(), SendError<T>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            for round in 0..2 {
                let v = this.value.take().expect("send polled after completion");
                match this.p.try_send(v) {
                    Ok(()) => {
                        this.p
                            .ring
                            .prod_wait
                            .complete(&mut this.p.key, Signal::Fence);
                        return Poll::Ready(Ok(()));
                    }
                    Err(TrySendError::Closed(v)) => {
                        this.p
                            .ring
                            .prod_wait
                            .complete(&mut this.p.key, Signal::Fence);
                        return Poll::Ready(Err(SendError(v)));
                    }
                    Err(TrySendError::Full(v)) => this.value = Some(v),
                }
                if round == 0 {
                    let ring = &*this.p.ring;
                    ring.prod_wait
                        .register(&mut this.p.key, cx.waker(), Signal::Fence);
                }
            }
            Poll::Pending
        })
    }
}

impl<T> Drop for Send<'_, T> {
    fn drop(&mut self) {
        self.p
            .ring
            .prod_wait
            .complete(&mut self.p.key, Signal::Fence);
    }
}

/// A reserved run of free slots; see [`Producer::write_slice`]. Dropped
/// without [`WriteSlice::commit`], it drops the values written into it.
#[cfg(not(loom))]
pub struct WriteSlice<'a, T> {
    p: &'a mut Producer<T>,
    start: usize,
    len: usize,
    written: usize,
}

#[cfg(not(loom))]
impl<T> WriteSlice<'_, T> {
    /// Slots reserved.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing could be reserved.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Writes `value` in place into the next reserved slot; gives it back
    /// when the run is full.
    pub fn push(&mut self, value: T) -> Result<(), T> {
        if self.written == self.len {
            return Err(value);
        }
        // SAFETY: slot start+written is inside the reserved free run, which
        // only this producer may write until commit.
        unsafe { (*self.p.ring.base().add(self.start + self.written)).write(value) };
        self.written += 1;
        Ok(())
    }

    /// The reserved run as raw slots, for writing in place. Slots below
    /// [`WriteSlice::written`] are initialised.
    pub fn as_uninit_mut(&mut self) -> &mut [MaybeUninit<T>] {
        // SAFETY: the run is free, reserved to us (exclusive: `&mut self`
        // borrows the producer), and inside the buffer.
        unsafe { std::slice::from_raw_parts_mut(self.p.ring.base().add(self.start), self.len) }
    }

    /// Declares the first `n` reserved slots initialised.
    ///
    /// # Safety
    /// The first `n` slots of [`WriteSlice::as_uninit_mut`] must hold
    /// initialised values, and `n <= len()`.
    pub unsafe fn assume_init(&mut self, n: usize) {
        debug_assert!(n <= self.len);
        self.written = n;
    }

    /// Publishes the written slots to the consumer (one Release store).
    pub fn commit(mut self) -> usize {
        let n = self.written;
        self.written = 0;
        let t = self.p.tail + n as u64;
        if n > 0 {
            self.p.publish(t);
        }
        n
    }
}

#[cfg(not(loom))]
impl<T: Copy> WriteSlice<'_, T> {
    /// Copies as much of `src` as fits; returns how many.
    pub fn copy_from_slice(&mut self, src: &[T]) -> usize {
        let n = src.len().min(self.len - self.written);
        let w = self.written;
        let dst = &mut self.as_uninit_mut()[w..w + n];
        for (d, s) in dst.iter_mut().zip(src) {
            d.write(*s);
        }
        self.written += n;
        n
    }
}

#[cfg(not(loom))]
impl<T> Drop for WriteSlice<'_, T> {
    fn drop(&mut self) {
        for i in 0..self.written {
            // SAFETY: slots start..start+written were initialised by us and
            // never published; each dropped once.
            unsafe { (*self.p.ring.base().add(self.start + i)).assume_init_drop() };
        }
    }
}

impl<T> Consumer<T> {
    /// Ready values, reloading the producer's index if the cache says empty.
    fn ready(&mut self) -> u64 {
        if self.cached_tail == self.head {
            // Acquire: pairs with the producer's Release store of `tail`.
            self.cached_tail = self.ring.tail.load(Ordering::Acquire);
        }
        self.cached_tail - self.head
    }

    fn release_to(&mut self, new_head: u64) {
        self.head = new_head;
        // Release: pairs with the producer's Acquire load of `head`.
        self.ring.head.store(new_head, Ordering::Release);
        self.ring.prod_wait.notify_one(Signal::Fence);
    }

    /// Receives without waiting.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        // Acquire: pairs with the producer's Release store in `close`; read
        // before `tail` so that closed + empty means drained.
        let closed = self.ring.closed.load(Ordering::Acquire);
        if self.ready() == 0 {
            return Err(if closed {
                TryRecvError::Closed
            } else {
                TryRecvError::Empty
            });
        }
        let slot = self.ring.slot(self.head);
        // SAFETY: slot `head` is initialised (ready() > 0, Acquire on tail); only the consumer reads.
        let v = slot.with(|p| unsafe { (*p).assume_init_read() });
        self.release_to(self.head + 1);
        Ok(v)
    }

    /// Receives, waiting for a value. Cancel-safe.
    pub fn recv(&mut self) -> Recv<'_, T> {
        Recv { c: self }
    }

    /// Receives from a plain thread.
    pub fn recv_blocking(&mut self) -> Result<T, RecvError> {
        blocking::block_on(pin!(self.recv()))
    }

    /// Peeks at up to `max` contiguous ready values, in place.
    #[cfg(not(loom))]
    pub fn read_slice(&mut self, max: usize) -> ReadSlice<'_, T> {
        // Acquire: as in `ready`; always reloaded so the run is as long as
        // possible.
        self.cached_tail = self.ring.tail.load(Ordering::Acquire);
        let ready = self.ready();
        let to_end = self.ring.cap - self.head % self.ring.cap;
        let len = ready.min(to_end).min(max as u64) as usize;
        ReadSlice {
            start: (self.head % self.ring.cap) as usize,
            len,
            c: self,
        }
    }

    /// Whether the producer closed the ring (values may remain).
    pub fn is_closed(&self) -> bool {
        self.ring.closed.load(Ordering::Acquire)
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        self.ring.cons_wait.complete(&mut self.key, Signal::Fence);
        self.ring.consumer_gone.store(true, Ordering::Relaxed);
        self.ring.prod_wait.notify_all(Signal::Fence);
    }
}

/// Future of [`Consumer::recv`].
#[must_use = "futures do nothing unless polled"]
pub struct Recv<'a, T> {
    c: &'a mut Consumer<T>,
}

impl<T> Future for Recv<'_, T> {
    type Output = Result<T, RecvError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            for round in 0..2 {
                match this.c.try_recv() {
                    Ok(v) => {
                        this.c
                            .ring
                            .cons_wait
                            .complete(&mut this.c.key, Signal::Fence);
                        return Poll::Ready(Ok(v));
                    }
                    Err(TryRecvError::Closed) => {
                        this.c
                            .ring
                            .cons_wait
                            .complete(&mut this.c.key, Signal::Fence);
                        return Poll::Ready(Err(RecvError));
                    }
                    Err(TryRecvError::Empty) => {}
                }
                if round == 0 {
                    let ring = &*this.c.ring;
                    ring.cons_wait
                        .register(&mut this.c.key, cx.waker(), Signal::Fence);
                }
            }
            Poll::Pending
        })
    }
}

impl<T> Drop for Recv<'_, T> {
    fn drop(&mut self) {
        self.c
            .ring
            .cons_wait
            .complete(&mut self.c.key, Signal::Fence);
    }
}

/// A run of ready values, readable in place; see [`Consumer::read_slice`].
/// Dropping it without [`ReadSlice::release`] leaves the values queued.
#[cfg(not(loom))]
pub struct ReadSlice<'a, T> {
    c: &'a mut Consumer<T>,
    start: usize,
    len: usize,
}

#[cfg(not(loom))]
impl<T> std::ops::Deref for ReadSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // Slots start..start+len were published by the producer (Acquire on tail).
        // SAFETY: they are initialised and stay so while we borrow the consumer.
        unsafe {
            std::slice::from_raw_parts(self.c.ring.base().add(self.start).cast::<T>(), self.len)
        }
    }
}

#[cfg(not(loom))]
impl<T> ReadSlice<'_, T> {
    /// Drops the first `n` values in place and frees their slots (one
    /// Release store). Returns how many were released (`n` capped at len).
    pub fn release(self, n: usize) -> usize {
        let n = n.min(self.len);
        for i in 0..n {
            // SAFETY: initialised (see Deref) and released once: head moves
            // past it right after.
            unsafe { (*self.c.ring.base().add(self.start + i)).assume_init_drop() };
        }
        let h = self.c.head + n as u64;
        if n > 0 {
            self.c.release_to(h);
        }
        n
    }

    /// Moves the first `n` values out into `out`, then frees their slots.
    pub fn take_into(self, n: usize, out: &mut Vec<T>) -> usize {
        let n = n.min(self.len);
        out.reserve(n);
        for i in 0..n {
            // SAFETY: initialised (see Deref), moved out once; head moves
            // past it right after.
            out.push(unsafe { (*self.c.ring.base().add(self.start + i)).assume_init_read() });
        }
        let h = self.c.head + n as u64;
        if n > 0 {
            self.c.release_to(h);
        }
        n
    }
}

impl<T> fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("spsc::Producer").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("spsc::Consumer").finish_non_exhaustive()
    }
}
