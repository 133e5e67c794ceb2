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
    /// Set when the entry went from `Notified` back to `Waiting` (its
    /// operation found nothing and parked again), cleared when it is
    /// released: it still holds the wake-up it was given, which notifies
    /// absorbed at the limit may have counted on (module docs), so it is
    /// passed on like a notification when the operation ends.
    baton: bool,
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
    /// Entries in state `Notified`.
    pending: usize,
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
                baton: false,
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
        e.baton = false;
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
            inner: Mutex::new(Slab {
                entries: Vec::new(),
                free: NIL,
                head: NIL,
                tail: NIL,
                pending: 0,
            }),
        }
    }

    /// Marks `k` (just unlinked) `Notified` and takes its waker.
    fn notify_entry(&self, s: &mut Slab, k: usize) -> Option<Waker> {
        s.entries[k].state = State::Notified;
        s.pending += 1;
        if s.pending == self.limit {
            self.saturated.store(true, Ordering::Relaxed);
        }
        s.entries[k].waker.take()
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
        s.head != NIL && s.pending < self.limit
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
                    if s.entries[k].state == State::Notified {
                        self.unnotify(&mut s);
                        s.entries[k].baton = true;
                    }
                    s.entries[k].state = State::Waiting;
                    s.entries[k].waker = Some(waker.clone());
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
        let notified = s.entries[k].state == State::Notified || s.entries[k].baton;
        if s.entries[k].state == State::Waiting {
            s.unlink(k);
            let n = self.waiting.load(Ordering::Relaxed);
            self.waiting.store(n - 1, Ordering::Relaxed);
            if s.head == NIL {
                signal.lower();
            }
        } else if notified {
            let slot_freed = self.unnotify(&mut s);
            if slot_freed && s.head != NIL {
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
            let k = s.head;
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
            let k = s.head;
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
            while s.head != NIL {
                let k = s.head;
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
                let k = s.head;
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as Count;
    use std::sync::Arc;
    use std::task::Wake;

    /// A waker that counts its wake-ups.
    struct Counter(Count);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    const FLAG: u64 = 2;

    /// A list capped at one wake-up in flight, its flag word, and waiters
    /// `0..n` registered in that order, each with a counting waker.
    struct Fixture {
        word: ClaimWord,
        list: WaitList,
        counters: Vec<Arc<Counter>>,
        wakers: Vec<Waker>,
        keys: Vec<Option<usize>>,
    }

    impl Fixture {
        fn new(n: usize) -> Fixture {
            let counters: Vec<_> = (0..n).map(|_| Arc::new(Counter(Count::new(0)))).collect();
            let mut f = Fixture {
                word: ClaimWord::new(),
                list: WaitList::with_limit(1),
                wakers: counters.iter().map(|c| Waker::from(c.clone())).collect(),
                counters,
                keys: vec![None; n],
            };
            for i in 0..n {
                f.register(i);
            }
            f
        }

        fn signal(&self) -> Signal<'_> {
            Signal::Flag(&self.word, FLAG)
        }

        fn flag_up(&self) -> bool {
            self.word.load(Ordering::Relaxed) & FLAG != 0
        }

        /// Wake-ups each waiter got so far.
        fn woken(&self) -> Vec<usize> {
            self.counters
                .iter()
                .map(|c| c.0.load(Ordering::Relaxed))
                .collect()
        }

        fn register(&mut self, i: usize) {
            let signal = Signal::Flag(&self.word, FLAG);
            self.list
                .register(&mut self.keys[i], &self.wakers[i], signal);
        }

        /// Waiter `i` completes its operation: whether it had been notified.
        fn complete(&mut self, i: usize) -> bool {
            let signal = Signal::Flag(&self.word, FLAG);
            self.list.complete(&mut self.keys[i], signal)
        }

        fn cancel(&mut self, i: usize) {
            let signal = Signal::Flag(&self.word, FLAG);
            self.list.cancel(&mut self.keys[i], signal);
        }
    }

    #[test]
    fn a_limited_list_wakes_at_most_limit_and_the_woken_pass_it_on() {
        let mut f = Fixture::new(2);
        assert!(f.flag_up(), "a waiter is linked");
        f.list.notify_one(f.signal());
        assert_eq!(f.woken(), [1, 0]);
        assert!(!f.flag_up(), "saturated: the flag is down");
        // Absorbed: the one woken passes it on.
        f.list.notify_one(f.signal());
        f.list.notify_many(3, f.signal());
        assert_eq!(f.woken(), [1, 0]);

        // 0 completes its operation: its slot frees while 1 is linked, so
        // the flag is up again before the caller's re-check.
        assert!(f.complete(0));
        assert!(f.flag_up());
        f.list.wake_oldest(f.signal());
        assert_eq!(f.woken(), [1, 1]);
        assert!(!f.flag_up(), "nobody is linked");
        assert!(f.complete(1));
        assert_eq!(f.list.waiting(), 0);
    }

    #[test]
    fn a_woken_waiter_that_registers_again_frees_its_slot() {
        let mut f = Fixture::new(2);
        f.list.notify_one(f.signal());
        // 0 found nothing and parks again, behind 1: 1 is wakeable now.
        f.register(0);
        assert!(f.flag_up());
        f.list.notify_one(f.signal());
        assert_eq!(f.woken(), [1, 1]);
        f.cancel(1);
        // 1's unused wake-up goes to 0.
        assert_eq!(f.woken(), [2, 1]);
        f.complete(0);
    }

    #[test]
    fn a_woken_waiter_that_parks_again_keeps_the_baton() {
        let mut f = Fixture::new(2);
        f.list.notify_one(f.signal());
        f.register(0);
        // Its re-check then finds a message: the wake-up it held is
        // reported, for the caller to pass on; 1 was never woken.
        assert!(f.complete(0), "the baton is reported");
        assert!(!f.complete(1));
    }

    #[test]
    fn a_nudge_wakes_past_the_limit_only_when_saturated() {
        let mut f = Fixture::new(3);
        f.list.nudge();
        assert_eq!(f.woken(), [0, 0, 0], "a free slot: notifies do the waking");
        f.list.notify_one(f.signal());
        // 0 was woken and is never polled: a nudge wakes 1 past the limit.
        f.list.nudge();
        assert_eq!(f.woken(), [1, 1, 0]);
        assert!(!f.flag_up());
        // Two woken, limit one: 1's completion frees no slot (2 stays down).
        f.complete(1);
        assert!(!f.flag_up());
        f.complete(0);
        assert!(f.flag_up(), "2 linked, a slot free");
        f.list.notify_one(f.signal());
        assert_eq!(f.woken(), [1, 1, 1]);
        f.complete(2);
    }

    #[test]
    fn close_wakes_everyone_whatever_the_limit() {
        let mut f = Fixture::new(2);
        f.list.notify_one(f.signal());
        f.list.notify_all(f.signal());
        assert_eq!(f.woken(), [1, 1]);
        assert!(!f.flag_up());
        f.complete(0);
        f.complete(1);
        assert!(!f.flag_up());
    }
}

/// Loom models of the capped wake-ups on a stand-in for the bounded ring:
/// one word holding the message count and the flag, moved by one RMW per
/// send or receive, as the ring's claims move `tail` and `head`. (The real
/// ring cannot be modelled with two parked receivers: they spin, one yield
/// a step, on a preempted sender's claim, and loom's branches run out; the
/// wait-list logic is the same.)
#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::loom::Arc;
    use loom::thread;
    use std::task::Wake;

    const FLAG: u64 = 2;
    const ONE: u64 = 8; // above the flag bits of a claim word (`bias.rs`: BIASED is 4)

    struct Ring {
        word: ClaimWord,
        receivers: WaitList,
    }

    impl Ring {
        fn signal(&self) -> Signal<'_> {
            Signal::Flag(&self.word, FLAG)
        }

        fn send(&self) {
            if self.word.raw().fetch_add(ONE, Ordering::AcqRel) & FLAG != 0 {
                self.receivers.notify_one(self.signal());
            }
        }

        fn try_recv(&self) -> bool {
            let mut w = self.word.raw().load(Ordering::Acquire);
            while w >= ONE {
                match self.word.raw().compare_exchange(
                    w,
                    w - ONE,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return true,
                    Err(now) => w = now,
                }
            }
            false
        }

        /// `Chan::poll_recv` and `recv_done`: try, register, re-check.
        fn poll_recv(&self, key: &mut Option<usize>, waker: &Waker) -> bool {
            let mut registered = false;
            loop {
                if self.try_recv() {
                    if key.is_some()
                        && self.receivers.complete(key, self.signal())
                        && self.word.raw().load(Ordering::Acquire) >= ONE
                    {
                        self.receivers.wake_oldest(self.signal());
                    }
                    return true;
                }
                if registered {
                    return false;
                }
                self.receivers.register(key, waker, self.signal());
                registered = true;
            }
        }
    }

    struct Unpark(loom::thread::Thread);

    impl Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }

    /// `recv_blocking`: poll, park until woken, poll again.
    fn recv_blocking(ring: &Ring) {
        let waker = Waker::from(std::sync::Arc::new(Unpark(thread::current())));
        let mut key = None;
        while !ring.poll_recv(&mut key, &waker) {
            thread::park();
        }
    }

    /// Two parked receivers, two messages, one wake-up in flight: the
    /// second message's notify is absorbed (or its claim sees the flag
    /// down), so the receiver woken first must pass it on. A receiver left
    /// asleep beside a message shows as a loom deadlock.
    #[test]
    fn capped_wakeups_are_passed_on() {
        loom::model(|| {
            let ring = Arc::new(Ring {
                word: ClaimWord::new(),
                receivers: WaitList::with_limit(1),
            });
            let rs: Vec<_> = (0..2)
                .map(|_| {
                    let ring = ring.clone();
                    thread::spawn(move || recv_blocking(&ring))
                })
                .collect();
            ring.send();
            ring.send();
            for r in rs {
                r.join().unwrap();
            }
            assert_eq!(ring.word.raw().load(Ordering::Relaxed) & !FLAG, 0);
        });
    }
}
