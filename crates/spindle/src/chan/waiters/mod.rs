//! Waiter lists: who to wake when a channel changes.
//!
//! A [`WaitList`] is a FIFO of parked operations (async futures or threads,
//! both seen as a [`Waker`]). Each waiter owns a *key*, an index into a slab
//! that the list keeps and reuses, so that parking does not allocate once the
//! slab has grown to the peak number of simultaneous waiters.
//!
//! # Invariants
//! - An entry is in one of three states: `Free` (on the free list), `Waiting`
//!   (linked in the FIFO, counted in `waiting`) or `Notified` (unlinked, its
//!   waker taken and woken, the key still owned by the waiter).
//! - `waiting` equals the number of `Waiting` entries; it is only written
//!   while the mutex is held.
//! - `pending` equals the number of `Notified` entries; a notify takes it
//!   past `limit` only through [`WaitList::nudge`] or [`WaitList::notify_all`].
//! - A key is released (entry back to `Free`) only by its owner, through
//!   [`WaitList::complete`] or [`WaitList::cancel`].
//!
//! # The no-lost-wake-up protocol (proof sketch in `docs/chan.md`)
//! Every method takes the [`Signal`] through which notifiers learn that
//! someone waits:
//! - [`Signal::Fence`]: waiter: `register` (store to `waiting` under the
//!   lock), then `fence(SeqCst)`, then re-check the channel state. Notifier:
//!   update the channel state (the slot stamp, the queue), then
//!   [`WaitList::notify_one`], which starts with `fence(SeqCst)` and then loads
//!   `waiting`. The two SeqCst fences order the two store→load pairs
//!   (Dekker), so either the waiter's re-check sees the new state or the
//!   notifier sees `waiting > 0`, takes the lock and wakes someone.
//! - [`Signal::Flag`]: a bit in the very word the notifier's claim moves (the
//!   bounded ring's head or tail). `register` raises it under the lock after
//!   linking the waiter; the notifier's claim (an RMW of that word) returns
//!   it, and only then does the notifier call `notify_one`, which skips the
//!   fence. The list lowers the bit, under the lock, whenever it becomes
//!   empty; so while any waiter is linked the bit is up. Coherence of the
//!   one word replaces the fences (see `flavors/array/mod.rs`).
//!
//! A waiter that was notified but is dropped before it could use the
//! notification (a losing `select!` arm, a timed-out blocking call) passes the
//! notification on to the next waiter in [`WaitList::cancel`], so that a
//! message never sits in a channel while a waiter sleeps.
//!
//! # Wake-ups in flight (lists made with [`WaitList::limited`])
//! A list may cap its `Notified` entries (`pending`) at `limit`: a notify
//! finding `pending == limit` wakes nobody, because the waiters already woken
//! will pass the baton. Each of them, when it leaves `Notified`, either
//! re-registers (and re-checks the channel, as every registration does) or
//! completes or gives up its operation, and the channel then wakes the next
//! waiter if messages (or room) remain (`Chan::recv_done`, `send_done`,
//! [`WaitList::cancel`]). So a producer that fills a channel read by a
//! hundred parked receivers wakes `limit` of them, not a hundred, and those
//! it does not wake stay off the run queues where other workers would steal
//! them and split the channel's traffic across cores (fanout's case,
//! `docs/chan.md`).
//! - Only [`Signal::Flag`] lists are limited. The flag's invariant becomes:
//!   up exactly while a waiter is linked *and* `pending < limit`. It is
//!   lowered when the last wake-up slot is taken and raised again, under the
//!   lock and before its owner re-checks the channel, by the entry whose
//!   leaving frees a slot while waiters are linked.
//! - An entry that re-registers from `Notified` keeps a *baton*: its
//!   re-check may take one message while notifies absorbed at the limit
//!   left more, and nobody else was woken for those. So its completion (or
//!   cancellation) passes the wake-up on as a notified one's would
//!   (`complete` returns `true`). Without it, a receiver woken, beaten to
//!   its message, and parking again while two sends landed would take the
//!   first in its re-check and leave the second beside a sleeping waiter
//!   (`tests/chan_waiters.rs`).
//! - The cost: a woken operation that is neither polled nor dropped holds
//!   its slot; with `limit` of them the list stays saturated and its other
//!   waiters are woken only by the valve: a waiter about to park on the
//!   *other* side (a sender finding the ring full, a receiver finding it
//!   empty) wakes one waiter past the limit ([`WaitList::nudge`]). So
//!   messages cannot pile up to a full ring beside sleeping receivers, but
//!   fewer than a ringful can sit there while those operations stay
//!   unpolled and no sender parks (without the cap, one message per such
//!   operation could).
//!
//! Locking contract: the mutex protects the slab only; wakers are always
//! woken after the lock is released (a waker may run arbitrary code).

use std::task::Waker;

use crate::chan::flavors::bias::ClaimWord;
use crate::loom::{fence, lock, AtomicBool, AtomicUsize, Mutex, Ordering};

#[cfg(all(test, loom))]
mod loom_model;
mod slab;
#[cfg(all(test, not(loom)))]
mod tests;

use crate::linked_slab::NIL;
use slab::{Slab, State};

/// How notifiers learn that a waiter may be parked; see the module docs.
#[derive(Clone, Copy)]
pub(crate) enum Signal<'a> {
    /// The `waiting` count, read by notifiers after a SeqCst fence.
    Fence,
    /// A bit of a word that every notifier moves with an RMW that returns it.
    Flag(&'a ClaimWord, u64),
}

impl Signal<'_> {
    fn raise(self) {
        if let Signal::Flag(word, bit) = self {
            // Relaxed: only the word's modification order matters (a claim
            // after this RMW sees the bit); the waiter's links are published
            // to the notifier by the lock it takes before unlinking them.
            // (A word another thread owns is taken from it first: `bias.rs`.)
            word.raise(bit, Ordering::Relaxed);
        }
    }

    fn lower(self) {
        if let Signal::Flag(word, bit) = self {
            word.lower(bit, Ordering::Relaxed);
        }
    }
}

/// A FIFO of parked operations; see the module docs.
#[derive(Debug)]
pub(crate) struct WaitList {
    /// Number of `Waiting` entries. Written under `inner`'s lock; read without
    /// it by [`WaitList::notify_one`] after a SeqCst fence (the fast path that
    /// avoids the lock when nobody waits).
    waiting: AtomicUsize,
    /// The most `Notified` entries before a notify wakes nobody (module docs;
    /// `usize::MAX`: no limit).
    limit: usize,
    /// `pending >= limit` (written under the lock; read without it by
    /// [`WaitList::nudge`], a best-effort check).
    saturated: AtomicBool,
    inner: Mutex<Slab>,
}

/// The wake-up limit of [`WaitList::limited`] lists: one per CPU (more
/// woken tasks than CPUs cannot run at once); one under loom, where the
/// models then reach the absorbed notifications.
fn default_limit() -> usize {
    #[cfg(loom)]
    {
        1
    }
    #[cfg(not(loom))]
    {
        static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *LIMIT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

impl WaitList {
    /// A list with no limit on wake-ups in flight.
    pub(crate) fn new() -> Self {
        Self::with_limit(usize::MAX)
    }

    /// A list whose wake-ups in flight are capped (module docs); only for
    /// lists notified through a [`Signal::Flag`].
    pub(crate) fn limited() -> Self {
        Self::with_limit(default_limit())
    }

    fn with_limit(limit: usize) -> Self {
        WaitList {
            waiting: AtomicUsize::new(0),
            limit,
            saturated: AtomicBool::new(false),
            inner: Mutex::new(Slab::new()),
        }
    }

    /// Marks `k` (just unlinked) `Notified` and takes its waker.
    fn notify_entry(&self, s: &mut Slab, k: usize) -> Option<Waker> {
        s[k].state = State::Notified;
        s.pending += 1;
        if s.pending == self.limit {
            self.saturated.store(true, Ordering::Relaxed);
        }
        s[k].waker.take()
    }

    /// An entry leaves `Notified`; returns whether that frees the last
    /// taken wake-up slot (the list was saturated and is no longer).
    fn unnotify(&self, s: &mut Slab) -> bool {
        let ends_saturation = s.pending == self.limit;
        if ends_saturation {
            self.saturated.store(false, Ordering::Relaxed);
        }
        s.pending -= 1;
        ends_saturation
    }

    /// Whether a notify would wake someone now: a waiter is linked and a
    /// wake-up slot is free (what the flag of a limited list shows).
    fn wakeable(&self, s: &Slab) -> bool {
        !s.is_empty() && s.pending < self.limit
    }

    /// Number of parked waiters (a snapshot).
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Parks `waker` under `key` (allocating a key when `None`), or refreshes
    /// the waker of an entry still waiting. The caller must re-check the
    /// channel after this returns: with [`Signal::Fence`] the trailing SeqCst
    /// fence pairs with the one at the start of [`WaitList::notify_one`]; with
    /// [`Signal::Flag`] the flag is up before this returns.
    pub(crate) fn register(&self, key: &mut Option<usize>, waker: &Waker, signal: Signal<'_>) {
        {
            let mut s = lock(&self.inner);
            let k = match *key {
                Some(k) => k,
                None => {
                    let k = s.alloc();
                    *key = Some(k);
                    k
                }
            };
            match s[k].state {
                State::Waiting => {
                    let e = &mut s[k];
                    if !e.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                        e.waker = Some(waker.clone());
                    }
                }
                State::Free | State::Notified => {
                    if s[k].state == State::Notified {
                        self.unnotify(&mut s);
                        s[k].baton = true;
                    }
                    s[k].state = State::Waiting;
                    s[k].waker = Some(waker.clone());
                    s.link_back(k);
                    let n = self.waiting.load(Ordering::Relaxed);
                    self.waiting.store(n + 1, Ordering::Relaxed);
                    // Unless every wake-up slot is taken: then the flag
                    // stays down until one is freed (module docs).
                    if self.wakeable(&s) {
                        signal.raise();
                    }
                }
            }
        }
        if let Signal::Fence = signal {
            // Pairs with the fence in `notify_one`: orders our store to
            // `waiting` before the caller's re-check of the channel state.
            fence(Ordering::SeqCst);
        }
    }

    /// Releases `key` after the operation completed. Returns whether the
    /// waiter had been notified, now or before it parked again (its
    /// `baton`): the caller then passes the wake-up on if the channel still
    /// has what waiters wait for.
    #[inline]
    pub(crate) fn complete(&self, key: &mut Option<usize>, signal: Signal<'_>) -> bool {
        match key.take() {
            None => false,
            Some(k) => self.release_key(k, signal),
        }
    }

    fn release_key(&self, k: usize, signal: Signal<'_>) -> bool {
        let mut s = lock(&self.inner);
        let notified = s[k].state == State::Notified || s[k].baton;
        if s[k].state == State::Waiting {
            s.unlink(k);
            let n = self.waiting.load(Ordering::Relaxed);
            self.waiting.store(n - 1, Ordering::Relaxed);
            if s.is_empty() {
                signal.lower();
            }
        } else if notified {
            let slot_freed = self.unnotify(&mut s);
            if slot_freed && !s.is_empty() {
                // A slot is free again while waiters are linked: the flag
                // goes up before our caller re-checks the channel (the
                // baton in `Chan::recv_done`), so a claim either sees the
                // flag or is seen by that re-check.
                signal.raise();
            }
        }
        s.release(k);
        notified
    }

    /// Releases `key` of an operation abandoned before completion; a
    /// notification it had received is passed on to the next waiter.
    pub(crate) fn cancel(&self, key: &mut Option<usize>, signal: Signal<'_>) {
        if self.complete(key, signal) {
            self.wake_oldest(signal);
        }
    }

    /// With [`Signal::Fence`]: whether anyone may wait, read after the fence
    /// that pairs with the one in `register` (orders the caller's channel
    /// update before our load of `waiting`). With [`Signal::Flag`] the
    /// caller's claim already saw the flag up: yes.
    fn may_have_waiters(&self, signal: Signal<'_>) -> bool {
        match signal {
            Signal::Fence => {
                fence(Ordering::SeqCst);
                self.waiting.load(Ordering::Relaxed) != 0
            }
            Signal::Flag(..) => true,
        }
    }

    /// Wakes the oldest waiter, if any. Call after the channel state change
    /// that the waiter may be waiting for; with [`Signal::Flag`], only when
    /// the claim that made that change saw the flag up.
    pub(crate) fn notify_one(&self, signal: Signal<'_>) {
        if self.may_have_waiters(signal) {
            self.wake_oldest(signal);
        }
    }

    /// Wakes the oldest waiter, if any, whatever the signal says: also how a
    /// notification its waiter did not use is passed on.
    pub(crate) fn wake_oldest(&self, signal: Signal<'_>) {
        let waker = {
            let mut s = lock(&self.inner);
            let k = s.head();
            if k == NIL {
                // A flag raised by a waiter that has since left.
                signal.lower();
                return;
            }
            if s.pending >= self.limit {
                // Every wake-up slot is taken (the flag is down already):
                // the waiters woken pass it on.
                return;
            }
            s.unlink(k);
            let n = self.waiting.load(Ordering::Relaxed);
            self.waiting.store(n - 1, Ordering::Relaxed);
            let waker = self.notify_entry(&mut s, k);
            if !self.wakeable(&s) {
                signal.lower();
            }
            waker
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// The valve of a limited list (module docs): wakes the oldest waiter
    /// past the limit when every wake-up slot is taken. Called by an
    /// operation of the other side about to park (a sender on a full ring
    /// nudges the receivers), which shows that the ones woken are not
    /// keeping up. A best-effort check first: a nudge missed by a stale
    /// read costs nothing the protocol relies on.
    pub(crate) fn nudge(&self) {
        if !self.saturated.load(Ordering::Relaxed) {
            return;
        }
        let waker = {
            let mut s = lock(&self.inner);
            let k = s.head();
            if k == NIL || s.pending < self.limit {
                return;
            }
            s.unlink(k);
            let n = self.waiting.load(Ordering::Relaxed);
            self.waiting.store(n - 1, Ordering::Relaxed);
            // Saturated: the flag is down, and stays down.
            self.notify_entry(&mut s, k)
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Wakes every waiter (close). Always takes the lock, so a waiter that
    /// registers after this released it observes whatever the caller did
    /// before calling (the mutex orders them).
    pub(crate) fn notify_all(&self, signal: Signal<'_>) {
        let wakers: Vec<Waker> = {
            let mut s = lock(&self.inner);
            let mut out = Vec::new();
            while !s.is_empty() {
                let k = s.head();
                s.unlink(k);
                if let Some(w) = self.notify_entry(&mut s, k) {
                    out.push(w);
                }
            }
            self.waiting.store(0, Ordering::Relaxed);
            signal.lower();
            out
        };
        for w in wakers {
            w.wake();
        }
    }
}

impl WaitList {
    /// Wakes up to `n` of the oldest waiters (after a batch of `n` items).
    pub(crate) fn notify_many(&self, n: usize, signal: Signal<'_>) {
        if n <= 1 {
            if n == 1 {
                self.notify_one(signal);
            }
            return;
        }
        if !self.may_have_waiters(signal) {
            return;
        }
        let wakers: Vec<Waker> = {
            let mut s = lock(&self.inner);
            let mut out = Vec::new();
            let mut woken = 0;
            while woken < n && self.wakeable(&s) {
                let k = s.head();
                s.unlink(k);
                let w = self.waiting.load(Ordering::Relaxed);
                self.waiting.store(w - 1, Ordering::Relaxed);
                woken += 1;
                if let Some(w) = self.notify_entry(&mut s, k) {
                    out.push(w);
                }
            }
            if !self.wakeable(&s) {
                signal.lower();
            }
            out
        };
        for w in wakers {
            w.wake();
        }
    }
}
