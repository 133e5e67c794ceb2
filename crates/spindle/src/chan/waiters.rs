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
//!   one word replaces the fences (see `flavors/array.rs`).
//!
//! A waiter that was notified but is dropped before it could use the
//! notification (a losing `select!` arm, a timed-out blocking call) passes the
//! notification on to the next waiter in [`WaitList::cancel`], so that a
//! message never sits in a channel while a waiter sleeps.
//!
//! Locking contract: the mutex protects the slab only; wakers are always
//! woken after the lock is released (a waker may run arbitrary code).

use std::task::Waker;

use crate::loom::{fence, lock, AtomicU64, AtomicUsize, Mutex, Ordering};

/// How notifiers learn that a waiter may be parked; see the module docs.
#[derive(Clone, Copy)]
pub(crate) enum Signal<'a> {
    /// The `waiting` count, read by notifiers after a SeqCst fence.
    Fence,
    /// A bit of a word that every notifier moves with an RMW that returns it.
    Flag(&'a AtomicU64, u64),
}

impl Signal<'_> {
    fn raise(self) {
        if let Signal::Flag(word, bit) = self {
            // Relaxed: only the word's modification order matters (a claim
            // after this RMW sees the bit); the waiter's links are published
            // to the notifier by the lock it takes before unlinking them.
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    fn lower(self) {
        if let Signal::Flag(word, bit) = self {
            word.fetch_and(!bit, Ordering::Relaxed);
        }
    }
}

const NIL: usize = usize::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    Waiting,
    Notified,
}

#[derive(Debug)]
struct Entry {
    waker: Option<Waker>,
    state: State,
    prev: usize,
    /// Next in the FIFO while `Waiting`, next free entry while `Free`.
    next: usize,
}

#[derive(Debug)]
struct Slab {
    entries: Vec<Entry>,
    free: usize,
    head: usize,
    tail: usize,
}

impl Slab {
    fn alloc(&mut self) -> usize {
        if self.free != NIL {
            let k = self.free;
            self.free = self.entries[k].next;
            k
        } else {
            self.entries.push(Entry {
                waker: None,
                state: State::Free,
                prev: NIL,
                next: NIL,
            });
            self.entries.len() - 1
        }
    }

    fn release(&mut self, k: usize) {
        let e = &mut self.entries[k];
        e.state = State::Free;
        e.waker = None;
        e.next = self.free;
        self.free = k;
    }

    fn link_back(&mut self, k: usize) {
        self.entries[k].prev = self.tail;
        self.entries[k].next = NIL;
        if self.tail == NIL {
            self.head = k;
        } else {
            self.entries[self.tail].next = k;
        }
        self.tail = k;
    }

    fn unlink(&mut self, k: usize) {
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

/// A FIFO of parked operations; see the module docs.
#[derive(Debug)]
pub(crate) struct WaitList {
    /// Number of `Waiting` entries. Written under `inner`'s lock; read without
    /// it by [`WaitList::notify_one`] after a SeqCst fence (the fast path that
    /// avoids the lock when nobody waits).
    waiting: AtomicUsize,
    inner: Mutex<Slab>,
}

impl WaitList {
    pub(crate) fn new() -> Self {
        WaitList {
            waiting: AtomicUsize::new(0),
            inner: Mutex::new(Slab {
                entries: Vec::new(),
                free: NIL,
                head: NIL,
                tail: NIL,
            }),
        }
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
            match s.entries[k].state {
                State::Waiting => {
                    let e = &mut s.entries[k];
                    if !e.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                        e.waker = Some(waker.clone());
                    }
                }
                State::Free | State::Notified => {
                    s.entries[k].state = State::Waiting;
                    s.entries[k].waker = Some(waker.clone());
                    s.link_back(k);
                    let n = self.waiting.load(Ordering::Relaxed);
                    self.waiting.store(n + 1, Ordering::Relaxed);
                    signal.raise();
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
    /// waiter had been notified.
    #[inline]
    pub(crate) fn complete(&self, key: &mut Option<usize>, signal: Signal<'_>) -> bool {
        match key.take() {
            None => false,
            Some(k) => self.release_key(k, signal),
        }
    }

    fn release_key(&self, k: usize, signal: Signal<'_>) -> bool {
        let mut s = lock(&self.inner);
        let notified = s.entries[k].state == State::Notified;
        if s.entries[k].state == State::Waiting {
            s.unlink(k);
            let n = self.waiting.load(Ordering::Relaxed);
            self.waiting.store(n - 1, Ordering::Relaxed);
            if s.head == NIL {
                signal.lower();
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
            let k = s.head;
            if k == NIL {
                // A flag raised by a waiter that has since left.
                signal.lower();
                return;
            }
            s.unlink(k);
            let n = self.waiting.load(Ordering::Relaxed);
            self.waiting.store(n - 1, Ordering::Relaxed);
            s.entries[k].state = State::Notified;
            if s.head == NIL {
                signal.lower();
            }
            s.entries[k].waker.take()
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
            while s.head != NIL {
                let k = s.head;
                s.unlink(k);
                s.entries[k].state = State::Notified;
                if let Some(w) = s.entries[k].waker.take() {
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
            while out.len() < n && s.head != NIL {
                let k = s.head;
                s.unlink(k);
                let w = self.waiting.load(Ordering::Relaxed);
                self.waiting.store(w - 1, Ordering::Relaxed);
                s.entries[k].state = State::Notified;
                if let Some(w) = s.entries[k].waker.take() {
                    out.push(w);
                }
            }
            if s.head == NIL {
                signal.lower();
            }
            out
        };
        for w in wakers {
            w.wake();
        }
    }
}
