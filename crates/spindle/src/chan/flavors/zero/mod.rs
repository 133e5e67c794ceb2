//! Rendezvous (zero-capacity) channel: direct hand-off, no buffer.
//!
//! Both sides can park, as in Go's `hchan` (`sendq`/`recvq`):
//! - a receiver that finds no sender parks a *taker* (an entry with an empty
//!   slot, the analogue of a receiving `sudog`); a sender that finds a parked
//!   taker puts its value straight into the taker's slot, wakes it, and its
//!   send is complete at once, without parking;
//! - a sender that finds no taker parks its value in an *offer* and sleeps;
//!   a receiver takes the oldest offer's value straight out of it and wakes
//!   that sender, whose `send` then completes.
//!
//! There is no ring buffer: each value is owned by its sender's offer or by
//! its taker's slot, never by the channel.
//!
//! # Invariants (all under `inner`'s lock, a spin lock: `chan/spin.rs`)
//! - `queue` lists, oldest first, the keys of `Offered` offers; an offer
//!   slot is `Offered` (value present, sender waiting) or `Free` (the value
//!   left: taken, reclaimed, or never there).
//! - `takers_waiting` lists, oldest first, the keys of `WAITING` takers, and
//!   `handed` the keys of `FILLED` and `DRAINED` ones (states: [`TakerCell`]).
//! - Never both a queued offer and a waiting taker: a sender gives to a
//!   waiting taker before it offers, a receiver takes an offer before it
//!   parks a taker, each under the lock.
//! - A value is moved exactly once out of an offer or a filled taker: taken
//!   by a receiver, or reclaimed by its sender (close, timeout,
//!   cancellation); a filled taker whose receive is cancelled passes the
//!   value to the next waiting taker, or else queues it first in line as an
//!   *orphan* offer (no sender), which the receiver that takes it frees.
//! - After close, no new offer or gift is made; queued offers can still be
//!   taken until their senders reclaim them (close wakes every sender and
//!   every taker; a waiting taker then sees `Closed`, a filled one its value).
//!
//! Every waker is woken after the lock is released.
//!
//! # Taken without the lock
//! An offer slot is freed the moment its value leaves it: by the receiver
//! that takes it, or by its own sender reclaiming it. Each slot has a
//! *generation*, changed exactly when the slot is freed, and a sender holds
//! a *ticket*: its slot's key and the generation when it offered. While the
//! offer waits, only a receiver's take can free the slot (a sender frees
//! its own slot only when it gives up or reclaims its value, and then never
//! looks at the ticket again), so "the slot's generation is no longer the
//! ticket's" means "a receiver took the value". The generations of the
//! first [`MIRRORED`] slots are mirrored in atomics outside the lock
//! (`Channel::gens`), stored with Release after the value has left the slot
//! and read with Acquire: a woken sender learns that its send completed
//! with one load instead of a lock (two locked instructions fewer per
//! pingpong round trip). A mirror that still shows the ticket's generation
//! sends the sender to the lock, where the slot's own generation decides.
//! A ticket could be fooled only by the generation wrapping back to its
//! value, `usize::BITS / 2` bits of it (2^32 frees of that one slot on
//! 64-bit targets), between the take and the sender's next poll.
//!
//! # Drained without the lock
//! Symmetrically, a receive whose taker was filled takes the value without
//! the lock. Each taker's value and state live in a boxed [`TakerCell`],
//! whose address the first [`MIRRORED`] takers mirror in atomics outside
//! the lock (`Channel::cells`). The sender writes the value and then
//! stores `FILLED` with Release, under the lock; the receive that parked
//! the taker (its *owner*: the one holder of its key) loads `FILLED` with
//! Acquire, moves the value out, and stores `DRAINED` with Release. Claim:
//! only the owner touches a `FILLED` cell's value, and only it changes a
//! `FILLED` state. Proof sketch: a taker enters `FILLED` from `WAITING` in
//! `give`, which also moves its key from `takers_waiting` to `handed`;
//! under the lock, code other than the owner's reads a `handed` state and
//! acts only on `DRAINED` (reclaiming the taker). So the owner's lock-free
//! move and store cannot race a locked write, and a reclaim that sees
//! `DRAINED` (Acquire) comes after the owner's move. A drained taker waits
//! in `handed` until a receive parks again (`reuse_taker` takes the last
//! one handed, usually the same task's previous taker, or, with no free
//! taker, sweeps `handed` once it has doubled since the last sweep), so
//! the drain itself costs no lock: one lock fewer a message when receivers
//! park first (pingpong's *takers* pattern).
//!
//! # Kept wakers
//! A freed offer slot keeps its sender's waker, and a freed taker its
//! receiver's, when it is a spindle task's (`crate::task::is_task_waker`);
//! the next offer (taker) parked there reuses it when it wakes the same
//! task (`Waker::will_wake`) instead of cloning a new one: a task sending
//! (receiving) in a loop parks where its last offer (taker) was (the free
//! lists hand back the entry freed last). So a take (give) cannot move the
//! waker out to wake it after the lock: it wakes it in place
//! (`crate::task::notify_in_place`), the task's state transition under the
//! lock, the scheduling after it (`Wakeup`). Two locked instructions fewer
//! a message on either side (the clone's and the drop's counts). Both sides
//! keep them: which side parks first in a pingpong depends on which task
//! ran first, and with only one side keeping its wakers the two patterns
//! run at clearly different speeds (`docs/profiles.md`, "pingpong's slow
//! runs"). The price: a free entry holds a reference to the last task that
//! parked in it, so that task's cell (not its future, dropped when it
//! finished) outlives it until another task parks there or the channel is
//! dropped: at most one cell per entry, and there are never more entries
//! than sends (receives) ever parked at once. Foreign wakers are not kept
//! (woken by value after the lock).
//!
//! # Files
//! - `inner.rs`: the state under the lock: offers, takers and their queues.
//! - `taker.rs`: a taker's boxed cell, drained without the lock.
//! - `mod.rs` (here): the channel's operations, which take the lock, and
//!   the lock-free reads of the mirrored generations and cells.

use std::ptr;
use std::task::{Poll, Waker};

use crate::chan::error::{RecvError, TryRecvError};
use crate::chan::spin::ChanLock;
use crate::loom::{AtomicPtr, AtomicUsize, Ordering};

mod inner;
mod taker;
#[cfg(all(test, not(loom)))]
mod tests;

use inner::{keep_or_clone, untick, Inner, State};
use taker::TakerCell;

/// Offer slots below this key mirror their generation in an atomic a sender
/// reads without the lock, and takers below it their cell's address, which
/// a receive reads without the lock (module docs). Small under loom, so
/// that the models run both the lock-free paths and the locked ones.
#[cfg(not(loom))]
const MIRRORED: usize = 64;
#[cfg(loom)]
const MIRRORED: usize = 1;

/// What a send learns from the channel.
pub(crate) enum SendState<T> {
    /// A parked receiver has the value: the send is complete.
    Given,
    /// The value waits in an offer for a receiver; the ticket to it.
    Offered(usize),
    /// No receiver waits and the caller asked not to offer: the value back.
    NotNow(T),
    /// The channel is closed: the value back.
    Closed(T),
}

/// What a parked send learns when it looks at its offer again.
pub(crate) enum OfferState<T> {
    /// A receiver took the value: the send is complete.
    Taken,
    /// Still waiting.
    Pending,
    /// The channel closed first: here is the value back.
    Closed(T),
}

pub(crate) struct Channel<T> {
    inner: ChanLock<Inner<T>>,
    /// The generations of slots `0..MIRRORED`, written under the lock and
    /// read without it (module docs, "Taken without the lock").
    gens: Box<[AtomicUsize]>,
    /// The cells of takers `0..MIRRORED`, stored under the lock when the
    /// taker is made and read without it by its owner (module docs,
    /// "Drained without the lock").
    cells: Box<[AtomicPtr<TakerCell<T>>]>,
}

impl<T> Channel<T> {
    pub(crate) fn new() -> Self {
        Channel {
            inner: ChanLock::new(Inner::new()),
            gens: (0..MIRRORED).map(|_| AtomicUsize::new(0)).collect(),
            cells: (0..MIRRORED)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
        }
    }

    /// Sends `value`: straight into a parked receiver when one waits; else,
    /// if `may_offer`, parks it in a new offer woken through `waker`.
    pub(crate) fn send(&self, value: T, waker: &Waker, may_offer: bool) -> SendState<T> {
        let woken = {
            let mut g = self.inner.lock();
            if g.closed {
                return SendState::Closed(value);
            }
            match g.give(value) {
                Ok(w) => w,
                Err(value) if !may_offer => return SendState::NotNow(value),
                Err(value) => {
                    let t = g.alloc(value, Some(waker));
                    g.queue.push_back(untick(t).0);
                    return SendState::Offered(t);
                }
            }
        };
        if let Some(w) = woken {
            w.wake();
        }
        SendState::Given
    }

    /// Gives `value` to a parked receiver, if one waits (`try_send`).
    /// `Err((value, closed))` otherwise.
    pub(crate) fn try_give(&self, value: T) -> Result<(), (T, bool)> {
        let woken = {
            let mut g = self.inner.lock();
            if g.closed {
                return Err((value, true));
            }
            g.give(value).map_err(|v| (v, false))?
        };
        if let Some(w) = woken {
            w.wake();
        }
        Ok(())
    }

    /// Whether the offer of ticket `t` is known taken without the lock
    /// (module docs); `false` may still be taken (ask `poll_offer`).
    #[inline(always)]
    pub(crate) fn taken(&self, t: usize) -> bool {
        let (k, gen) = untick(t);
        // Acquire: pairs with `release`'s store (module docs).
        self.gens
            .get(k)
            .is_some_and(|mirror| mirror.load(Ordering::Acquire) != gen)
    }

    /// Looks at the offer of ticket `t` again on behalf of its sender,
    /// under the lock (the caller tried `taken` first).
    pub(crate) fn poll_offer(&self, t: usize, waker: &Waker) -> OfferState<T> {
        let (k, gen) = untick(t);
        let mut g = self.inner.lock();
        if g.offers[k].gen != gen {
            return OfferState::Taken;
        }
        debug_assert_eq!(g.offers[k].state, State::Offered);
        if g.closed {
            let v = g.offers[k].value.take();
            g.unqueue(k);
            g.release(k, &self.gens);
            return OfferState::Closed(v.expect("offered entry holds its value"));
        }
        keep_or_clone(&mut g.offers[k].waker, waker);
        OfferState::Pending
    }

    /// Withdraws the offer of ticket `t` (its sender gave up). Returns the
    /// value if no receiver took it (`None`: it was delivered).
    pub(crate) fn withdraw(&self, t: usize) -> Option<T> {
        let (k, gen) = untick(t);
        let mut g = self.inner.lock();
        if g.offers[k].gen != gen {
            return None;
        }
        g.unqueue(k);
        let v = g.offers[k].value.take();
        g.release(k, &self.gens);
        v
    }

    /// Takes the oldest offer without waiting.
    pub(crate) fn try_pop(&self) -> Result<T, TryRecvError> {
        let (v, waker) = {
            let mut g = self.inner.lock();
            match g.take_offer(&self.gens) {
                Some(got) => got,
                None if g.closed => return Err(TryRecvError::Closed),
                None => return Err(TryRecvError::Empty),
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(v)
    }

    /// One poll of a receive. `key` is its taker while parked. With
    /// `may_park` false (a probing `select!`), an empty channel gives
    /// `Pending` without parking a taker.
    pub(crate) fn poll_take(
        &self,
        key: &mut Option<usize>,
        waker: &Waker,
        may_park: bool,
    ) -> Poll<Result<T, RecvError>> {
        if let Some(k) = *key {
            if let Some(v) = self.drain_unlocked(k) {
                *key = None;
                return Poll::Ready(Ok(v));
            }
        }
        let (got, sender) = {
            let mut g = self.inner.lock();
            if let Some(k) = *key {
                if let Some(v) = g.takers[k].cell().drain() {
                    *key = None;
                    return Poll::Ready(Ok(v));
                }
            }
            // Never both a waiting taker and an offer (module docs): a
            // parked taker finds none here unless it is this one's turn.
            match g.take_offer(&self.gens) {
                Some((v, w)) => {
                    if let Some(k) = key.take() {
                        g.unqueue_taker(k);
                        g.release_taker(k);
                    }
                    (Ok(v), w)
                }
                None if g.closed => {
                    if let Some(k) = key.take() {
                        g.unqueue_taker(k);
                        g.release_taker(k);
                    }
                    (Err(RecvError), None)
                }
                None => {
                    match *key {
                        Some(k) => keep_or_clone(&mut g.takers[k].waker, waker),
                        None if !may_park => {}
                        None => *key = Some(g.park_taker(waker, &self.cells)),
                    }
                    return Poll::Pending;
                }
            }
        };
        if let Some(w) = sender {
            w.wake();
        }
        Poll::Ready(got)
    }

    /// The owner's take of taker `k`'s value without the lock, if `k` is
    /// mirrored and filled ("Drained without the lock").
    #[inline(always)]
    fn drain_unlocked(&self, k: usize) -> Option<T> {
        // Acquire: pairs with `park_taker`'s store of the address.
        let cell = self.cells.get(k)?.load(Ordering::Acquire);
        // SAFETY: `k` is the caller's parked taker, whose cell was made and
        // mirrored before; cells live as long as the channel `&self` borrows.
        unsafe { cell.as_ref() }?.drain()
    }

    /// Gives up the receive parked as taker `k`. A value a sender already
    /// put there is not lost: it goes to the next waiting taker, or first in
    /// line as an orphan offer.
    pub(crate) fn cancel_take(&self, k: usize) {
        let woken = {
            let mut g = self.inner.lock();
            // Filled: drained here (reclaimed later from `handed`); else
            // still waiting.
            let v = g.takers[k].cell().drain();
            if v.is_none() {
                g.unqueue_taker(k);
                g.release_taker(k);
            }
            match v.map(|v| g.give(v)) {
                Some(Ok(w)) => w,
                Some(Err(v)) => {
                    let t = g.alloc(v, None);
                    g.queue.push_front(untick(t).0);
                    None
                }
                None => None,
            }
        };
        if let Some(w) = woken {
            w.wake();
        }
    }

    /// Closes; wakes every parked sender (to reclaim its value) and every
    /// parked receiver (to see the close).
    pub(crate) fn close(&self) -> bool {
        let wakers: Vec<Waker> = {
            let mut g = self.inner.lock();
            if g.closed {
                return false;
            }
            g.closed = true;
            let Inner {
                queue,
                offers,
                takers_waiting,
                takers,
                ..
            } = &mut *g;
            queue
                .iter()
                .filter_map(|&k| offers[k].waker.take())
                .chain(
                    takers_waiting
                        .iter()
                        .filter_map(|&k| takers[k].waker.take()),
                )
                .collect()
        };
        for w in wakers {
            w.wake();
        }
        true
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.inner.lock().closed
    }

    /// Offers waiting to be taken.
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().queue.len()
    }
}
