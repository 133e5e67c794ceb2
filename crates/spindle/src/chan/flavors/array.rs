//! Bounded MPMC ring with per-slot stamps (Vyukov's algorithm), with the
//! "someone is parked" flags folded into the claim words.
//!
//! # Positions
//! A position is `lap * one_lap + index`, with `one_lap = cap.next_power_of_two()`
//! and `index < cap`: the slot of a position is a mask, never a division,
//! and positions still only grow (2^61 messages before a wrap; not a concern).
//! [`Channel::next`] steps from the last index of a lap to index 0 of the next.
//!
//! # Layout and invariants
//! - `tail` holds `(next send position << SHIFT) | BIASED | WAITING |
//!   CLOSED`; `head` holds `(next receive position << SHIFT) | BIASED |
//!   WAITING`. `BIASED`: a thread owns the word (below, "Owned words"). The channel holds
//!   `cap` messages exactly when `tail`'s position is `head`'s plus `one_lap`.
//! - `CLOSED` (tail only): set once by [`Channel::close`], never cleared; no
//!   send is claimed after it.
//! - `WAITING` in `tail`: receivers may be parked in the channel's receive
//!   wait list; in `head`: senders may be parked in its send wait list. It is
//!   raised and lowered only under that wait list's lock (raised when a
//!   waiter is linked, lowered when the list becomes empty), so while a
//!   waiter is linked its flag is up.
//! - A slot's `stamp` says what it is ready for: `2p` — empty, ready for the
//!   send at position `p`; `2p + 1` — holds the message of position `p`,
//!   ready for the receive at `p`; after that receive, `2(p + one_lap)`: ready
//!   for the send one lap later. (Doubling keeps "written at p" and "free for
//!   the next position" apart even when `cap == 1`.)
//! - A sender claims position `p` by a CAS on `tail` (which fails once
//!   `CLOSED` is set), writes the value and publishes it with a Release store
//!   of the stamp. A receiver claims by a CAS on `head`, reads, and frees the
//!   slot with a Release store.
//!
//! # Owned words
//! A thread that made 128 claims in a row on a word takes it
//! (`bias.rs`): its claims are then a plain load and store instead of a
//! CAS, and any other thread's write to the word takes it back first (a
//! membarrier). The fast paths try that first (`push_owned`, `pop_owned`);
//! a claim by CAS never expects `BIASED` unless it is the owner's
//! (`ClaimWord::writable`), and the flag RMWs go through
//! `ClaimWord::raise` and `lower`. Nothing else changes: a plain claim is the CAS it
//! replaces, made where no other thread can write the word.
//!
//! # Slot layout
//! A slot holds its message first, then its stamp. Messages of
//! [`LINED_FROM`] bytes or more get slots that start on a cache line
//! ([`Lined`]), so that each message does too: the copies in and out of the
//! ring then start on a line, and move whole aligned 64-byte vectors when
//! the message's size is a multiple of 64, which `memcpy` does faster than
//! unaligned ones (`docs/profiles.md`). The price is padding up to the next
//! line: a 128-byte message's slot takes 192 bytes instead of 136. Smaller
//! messages stay packed, a slot right after the other, where padding would
//! cost more lines than it saves.
//!
//! # Ordering contract
//! - `stamp` Release stores (after writing / after reading the value) pair with
//!   the `stamp` Acquire loads of the next claimant of that slot: the value
//!   write happens-before its read, the read happens-before the next write.
//! - The CASes on `head`/`tail` only arbitrate claims and may be Relaxed: all
//!   data is handed over through the stamps.
//!
//! # No lost wake-up, without a fence (proof sketch in `docs/chan.md`)
//! A claim returns whether the word it moved had `WAITING` up; if so, the
//! claimant wakes one waiter of the other side after publishing its stamp
//! (`chan/mod.rs`). A waiter links itself and raises the flag (one RMW on the
//! same word), then re-checks the ring, reading that word again. All of it
//! is on one atomic location, so coherence alone orders it: a claim that
//! comes after the raise in the word's modification order sees the flag
//! (and wakes someone); a claim that comes before it is visible to the
//! re-check, which then does not park. The flag cannot be lowered in
//! between, since the waiter stays linked until it is woken or leaves.
//! This replaces a SeqCst fence on every send and every receive.
//!
//! # Guessed claims
//! Beside each claim word, on its line, `guess` holds the value the last
//! successful claim CAS left in it (a Relaxed store after the CAS). The
//! fast paths first try a claim expecting that value, and load the word
//! itself only when the guess fails (its slot's stamp does not match, or
//! the CAS does: another claimant moved the word, or a waiter raised or
//! lowered `WAITING`). Nothing else changes: a CAS succeeds only where the
//! word held exactly the expected value, position and flags, so a claim
//! made through a guess is the claim the loaded word would have made, and
//! the flag it reports is the word's at the CAS (the wake-up argument above
//! holds as it is). What it saves: a CAS whose expected value comes from a
//! load of the word that the previous claim's locked instruction just
//! wrote waits for that load, a stall on every claim of a loop that sends
//! and receives on one thread, which the guess avoids (`docs/profiles.md`,
//! "Claims that guess").

use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};
use std::ptr::{self, NonNull};

use crate::chan::backoff::Backoff;
use crate::chan::error::{TryRecvError, TrySendError};
use crate::chan::flavors::bias::{ClaimWord, Owned, BIASED};
use crate::chan::waiters::Signal;
use crate::loom::{AtomicU64, CachePadded, Ordering, UnsafeCell};

/// Tail only: the channel is closed.
const CLOSED: u64 = 1;
/// Someone may be parked waiting for this word to move (see module docs).
const WAITING: u64 = 2;
/// A thread owns the word and claims with plain stores (`bias.rs`).
const FLAGS: u64 = CLOSED | WAITING | BIASED;
const SHIFT: u32 = 3;

/// What [`Channel::push_fast`] saw.
pub(crate) enum PushFast {
    /// Placed; `true`: receivers may be parked (wake one).
    Done(bool),
    /// The ring was full and open; the value is still the caller's.
    Full,
    /// Anything else (a lost claim, a slot mid-read, closed, no value): ask
    /// `push_slow`; the value is still the caller's.
    Slow,
}

/// What [`Channel::pop_fast`] saw.
pub(crate) enum PopFast<'a, T> {
    /// A message, claimed: [`Claim::read`] moves it out, [`Claim::release`] frees the slot.
    Got(Claim<'a, T>),
    /// Nothing sent and not closed.
    Empty,
    /// Anything else: ask `pop_slow`.
    Slow,
}

/// A written slot that `pop_fast` claimed: nobody else reads it, and no
/// sender reuses it until [`Claim::release`] frees it, after
/// [`Claim::read`] moved the message out.
///
/// Read and release are two steps so that the read can be the very
/// expression a receive future returns, with the release (and the wake of a
/// parked sender) in a guard dropped after it (`chan::recv::TakenSlot`): the message
/// then moves from the slot straight into the future's output. Returned
/// through `PopFast` and the receive future's layers, a message shaped like
/// `[u64; 2]` would be copied between stack slots of different layouts,
/// each copy a stalled load (several times the cost of a `(u64, u64)`
/// message); read first and released before returning, a 1 KiB message
/// would be copied three times on its way out (slot, temporary, value,
/// output).
#[must_use = "a claimed slot stays taken until `release` frees it"]
pub(crate) struct Claim<'a, T> {
    chan: &'a Channel<T>,
    slot: &'a Slot<T>,
    pos: u64,
    senders_parked: bool,
}

impl<'a, T> Claim<'a, T> {
    pub(crate) fn channel(&self) -> &'a Channel<T> {
        self.chan
    }

    /// Senders may be parked: wake one once the slot is free.
    pub(crate) fn senders_parked(&self) -> bool {
        self.senders_parked
    }

    /// Moves the message out of the slot.
    ///
    /// # Safety
    /// At most once per claim, and before [`Claim::release`].
    #[inline(always)]
    pub(crate) unsafe fn read(&self) -> T {
        // SAFETY: as in `pop_slow`: the head CAS in `pop_fast` made us the
        // only claimant of `pos`, whose stamp said written (Acquire there);
        // the caller reads it once, before the slot is freed.
        self.slot.msg.with(|p| unsafe { (*p).assume_init_read() })
    }

    /// Frees the slot for the next lap's sender. Call once, after
    /// [`Claim::read`] (else the message is never dropped: leaked).
    #[inline(always)]
    pub(crate) fn release(&self) {
        // Release: pairs with the next lap's sender Acquire load, so our
        // read of the message happened before its write.
        self.slot
            .stamp
            .store(2 * (self.pos + self.chan.one_lap), Ordering::Release);
    }
}

/// The message first, so that a slot on a cache line has its message there
/// too ("Slot layout").
#[repr(C)]
struct Slot<T> {
    msg: UnsafeCell<MaybeUninit<T>>,
    stamp: AtomicU64,
}

impl<T> Slot<T> {
    fn new(index: u64) -> Self {
        Slot {
            msg: UnsafeCell::new(MaybeUninit::uninit()),
            stamp: AtomicU64::new(2 * index),
        }
    }
}

/// Messages of this many bytes or more get [`Lined`] slots.
const LINED_FROM: usize = 128;

/// A slot that starts on a cache line ("Slot layout").
#[repr(C, align(64))]
struct Lined<T>(Slot<T>);

/// The ring's `cap` slots: a `Box<[Slot<T>]>`, or for messages of
/// [`LINED_FROM`] bytes or more a `Box<[Lined<T>]>`, held by a pointer to
/// the first slot (the choice is a constant of `T`).
struct Slots<T> {
    first: NonNull<Slot<T>>,
    cap: usize,
    /// Owns the slots, as the box it was made from did.
    _owns: PhantomData<Slot<T>>,
}

impl<T> Slots<T> {
    const LINED: bool = size_of::<T>() >= LINED_FROM;

    fn new(cap: usize) -> Self {
        let first = if Self::LINED {
            let b: Box<[Lined<T>]> = (0..cap as u64).map(|i| Lined(Slot::new(i))).collect();
            NonNull::from(Box::leak(b)).cast()
        } else {
            let b: Box<[Slot<T>]> = (0..cap as u64).map(Slot::new).collect();
            NonNull::from(Box::leak(b)).cast()
        };
        Slots {
            first,
            cap,
            _owns: PhantomData,
        }
    }

    /// Slot `index`, below `cap`.
    ///
    /// # Safety
    /// `index < cap`.
    #[inline(always)]
    unsafe fn get_unchecked(&self, index: usize) -> &Slot<T> {
        debug_assert!(index < self.cap);
        // A `Lined` is `repr(C)`, its slot at offset 0.
        // SAFETY: `first` points to `cap` live slots of the type `LINED`
        // picks (`new`); the caller keeps `index` below `cap`.
        unsafe {
            if Self::LINED {
                &(*self.first.cast::<Lined<T>>().as_ptr().add(index)).0
            } else {
                &*self.first.as_ptr().add(index)
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
impl<T> Slots<T> {
    /// Slot `index`, bounds checked.
    fn get(&self, index: usize) -> &Slot<T> {
        assert!(index < self.cap);
        // SAFETY: checked just above.
        unsafe { self.get_unchecked(index) }
    }
}

impl<T> Drop for Slots<T> {
    fn drop(&mut self) {
        // Frees the slots (their stamps; messages are the ring's to drop,
        // `MaybeUninit` drops nothing).
        // SAFETY: `first` and `cap` are the boxed slice `new` leaked, of the
        // type `LINED` picks; rebuilt and freed once, here.
        unsafe {
            if Self::LINED {
                let all =
                    ptr::slice_from_raw_parts_mut(self.first.cast::<Lined<T>>().as_ptr(), self.cap);
                drop(Box::from_raw(all));
            } else {
                let all = ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.cap);
                drop(Box::from_raw(all));
            }
        }
    }
}

pub(crate) struct Channel<T> {
    head: CachePadded<ClaimWord>,
    tail: CachePadded<ClaimWord>,
    buf: Slots<T>,
    cap: u64,
    one_lap: u64,
}

// SAFETY: values of type T move between threads through the slots (T: Send);
// every slot access is arbitrated by the stamp protocol described above.
unsafe impl<T: Send> Send for Channel<T> {}
// SAFETY: as above; shared access never hands out &T to two threads.
unsafe impl<T: Send> Sync for Channel<T> {}

impl<T> Channel<T> {
    pub(crate) fn new(cap: usize) -> Self {
        assert!(cap > 0, "array flavor needs a capacity of at least 1");
        let buf = Slots::new(cap);
        Channel {
            head: CachePadded(ClaimWord::new()),
            tail: CachePadded(ClaimWord::new()),
            buf,
            cap: cap as u64,
            one_lap: (cap as u64).next_power_of_two(),
        }
    }

    #[inline(always)]
    fn slot(&self, pos: u64) -> &Slot<T> {
        let index = (pos & (self.one_lap - 1)) as usize;
        // SAFETY: a position's index is below `cap` (`next` steps from index
        // `cap - 1` to the next lap's 0; positions start at 0), and `buf`
        // holds `cap` slots.
        unsafe { self.buf.get_unchecked(index) }
    }

    /// The position after `pos`.
    #[inline(always)]
    fn next(&self, pos: u64) -> u64 {
        if (pos & (self.one_lap - 1)) + 1 < self.cap {
            pos + 1
        } else {
            (pos | (self.one_lap - 1)) + 1
        }
    }

    /// How senders learn of parked receivers: the `WAITING` bit of `tail`.
    pub(crate) fn recv_signal(&self) -> Signal<'_> {
        Signal::Flag(&self.tail, WAITING)
    }

    /// How receivers learn of parked senders: the `WAITING` bit of `head`.
    pub(crate) fn send_signal(&self) -> Signal<'_> {
        Signal::Flag(&self.head, WAITING)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.cap as usize
    }

    /// Places `v`. `Ok(true)`: receivers may be parked — the caller must
    /// wake one (after this returns, the message is visible).
    #[inline(always)]
    #[must_use = "a parked receiver must be woken"]
    pub(crate) fn try_push(&self, v: T) -> Result<bool, TrySendError<T>> {
        let mut v = Some(v);
        match self.push_fast(&mut v) {
            PushFast::Done(parked) => Ok(parked),
            PushFast::Full => Err(TrySendError::Full(v.expect("push_fast left the value"))),
            PushFast::Slow => self.push_slow(v.expect("push_fast left the value")),
        }
    }

    /// The fast path of [`Channel::try_push`], small enough to inline: the
    /// next slot is free and the claim wins at the first try. Moves the
    /// value out of `value` straight into the slot (one copy, however large
    /// `T` is). [`PushFast::Full`] when the ring was seen full and open (a
    /// caller can register at once, or a `select!` probe stop there);
    /// otherwise nothing is done and the slow path tells the rest apart.
    #[inline(always)]
    #[must_use = "a parked receiver must be woken"]
    pub(crate) fn push_fast(&self, value: &mut Option<T>) -> PushFast {
        if value.is_none() {
            return PushFast::Slow;
        }
        if let Some(owned) = self.tail.enter() {
            return self.push_owned(owned, value);
        }
        // First with the guessed word, then with the word itself.
        let mut tail = self.tail.guess();
        let mut guessed = true;
        let (pos, stamp) = loop {
            let pos = tail >> SHIFT;
            let slot = self.slot(pos);
            // Acquire: as in `push_slow`.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if tail & CLOSED == 0 && stamp == 2 * pos {
                let new = (self.next(pos) << SHIFT) | (tail & FLAGS);
                if self.tail.cas(tail, new, true).is_ok() {
                    // `fill`'s obligation, `value` being checked `Some` above.
                    // SAFETY: the CAS made us the only claimant of `pos`,
                    // whose stamp said empty (Acquire).
                    unsafe { Self::fill(slot, pos, value) };
                    return PushFast::Done(tail & WAITING != 0);
                }
            }
            if !guessed {
                break (pos, stamp);
            }
            guessed = false;
            tail = self.tail.load(Ordering::Relaxed);
            if tail & BIASED != 0 {
                return PushFast::Slow; // another thread's: `push_slow` revokes
            }
        };
        self.push_missed(tail, pos, stamp)
    }

    /// `push_fast` as the owner of `tail` (`bias.rs`): a plain claim.
    #[inline(always)]
    fn push_owned(&self, owned: Owned<'_>, value: &mut Option<T>) -> PushFast {
        let tail = owned.word();
        let pos = tail >> SHIFT;
        let slot = self.slot(pos);
        // Acquire: as in `push_slow`.
        let stamp = slot.stamp.load(Ordering::Acquire);
        if tail & CLOSED == 0 && stamp == 2 * pos {
            owned.set((self.next(pos) << SHIFT) | (tail & FLAGS));
            owned.leave();
            // `fill`'s obligation, `push_fast` having checked `value` is `Some`.
            // SAFETY: the plain claim made us the only claimant of `pos`
            // (`bias.rs`, I3), whose stamp said empty (Acquire).
            unsafe { Self::fill(slot, pos, value) };
            return PushFast::Done(tail & WAITING != 0);
        }
        owned.leave();
        self.push_missed(tail, pos, stamp)
    }

    /// Moves the value out of `value` (`Some`) into the claimed `slot` and
    /// publishes it: one copy, however large `T` is. `value` is then
    /// overwritten with `None` without dropping: the slot owns the value.
    ///
    /// # Safety
    /// The caller claimed position `pos` of `slot` (a CAS or a plain claim
    /// on an owned word), whose stamp said empty (Acquire); `value` is `Some`.
    #[inline(always)]
    unsafe fn fill(slot: &Slot<T>, pos: u64, value: &mut Option<T>) {
        // SAFETY: the caller's claim makes us the slot's only writer, and
        // its last reader is done (the stamp, Acquire); `value` is `Some`.
        slot.msg.with_mut(|p| unsafe {
            let src: *const T = value.as_ref().unwrap_unchecked();
            std::ptr::copy_nonoverlapping(src, (*p).as_mut_ptr(), 1);
            std::ptr::write(value, None);
        });
        // Release: pairs with the receiver's Acquire stamp load.
        slot.stamp.store(2 * pos + 1, Ordering::Release);
    }

    /// What a `push_fast` that could not claim `pos` (its word `tail`, its
    /// slot's `stamp`) reports.
    #[inline(always)]
    fn push_missed(&self, tail: u64, pos: u64, stamp: u64) -> PushFast {
        if tail & CLOSED != 0 || stamp == 2 * pos {
            return PushFast::Slow; // closed, or a lost claim
        }
        // As in `push_slow`: the slot still holds the previous lap's message
        // and no receiver has claimed it.
        if stamp + 2 * self.one_lap == 2 * pos + 1
            && (self.head.load(Ordering::Relaxed) >> SHIFT) + self.one_lap <= pos
        {
            PushFast::Full
        } else {
            PushFast::Slow
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn push_slow(&self, v: T) -> Result<bool, TrySendError<T>> {
        let mut backoff = Backoff::new();
        let mut tail = self.tail.load(Ordering::Relaxed);
        loop {
            if tail & CLOSED != 0 {
                return Err(TrySendError::Closed(v));
            }
            let pos = tail >> SHIFT;
            let slot = self.slot(pos);
            // Acquire: pairs with the Release store of the receiver that
            // freed this slot, so its read of the old value happened before
            // our write.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == 2 * pos {
                if !self.tail.writable(tail) {
                    tail = self.tail.load(Ordering::Relaxed);
                    continue;
                }
                let new = (self.next(pos) << SHIFT) | (tail & FLAGS);
                match self.tail.cas(tail, new, true) {
                    Ok(()) => {
                        // The CAS made us the only claimant of position `pos`.
                        // SAFETY: the stamp says the slot is empty, its last
                        // reader done (Acquire above).
                        slot.msg.with_mut(|p| unsafe { (*p).write(v) });
                        // Release: pairs with the receiver's Acquire stamp load.
                        slot.stamp.store(2 * pos + 1, Ordering::Release);
                        return Ok(tail & WAITING != 0);
                    }
                    Err(now) => {
                        tail = now;
                        continue;
                    }
                }
            } else if stamp + 2 * self.one_lap == 2 * pos + 1 {
                // The slot still holds the message of the previous lap.
                let head = self.head.load(Ordering::Relaxed) >> SHIFT;
                if head + self.one_lap <= pos {
                    return Err(TrySendError::Full(v));
                }
                // A receiver has claimed it and is reading: wait for it.
                backoff.snooze();
            } else {
                // Another sender won the position; retry.
                backoff.snooze();
            }
            tail = self.tail.load(Ordering::Relaxed);
        }
    }

    /// Takes the oldest message. The `bool`: senders may be parked — the
    /// caller must wake one.
    #[inline(always)]
    #[must_use = "a parked sender must be woken"]
    pub(crate) fn try_pop(&self) -> Result<(T, bool), TryRecvError> {
        match self.pop_fast() {
            PopFast::Got(claim) => {
                // SAFETY: the one read of this claim, before its release.
                let v = unsafe { claim.read() };
                claim.release();
                Ok((v, claim.senders_parked()))
            }
            PopFast::Empty => Err(TryRecvError::Empty),
            PopFast::Slow => self.pop_slow(),
        }
    }

    /// The fast path of [`Channel::try_pop`], as [`Channel::push_fast`]: the
    /// next slot is written and the claim wins at the first try.
    /// [`PopFast::Empty`] when the ring was seen empty and open (a `select!`
    /// probe can stop there); [`PopFast::Slow`]: take the slow path.
    #[inline(always)]
    #[must_use = "a parked sender must be woken"]
    pub(crate) fn pop_fast(&self) -> PopFast<'_, T> {
        // One place builds the claim, whichever way it was made: with two,
        // the compiler read the message into a temporary before the
        // receive's output: one more copy of every message.
        let (head, pos) = match self.head.enter() {
            Some(owned) => match self.pop_owned(owned) {
                Ok(claimed) => claimed,
                Err(pos) => return self.pop_missed(pos),
            },
            None => match self.pop_cas() {
                Ok(claimed) => claimed,
                Err(missed) => return missed,
            },
        };
        PopFast::Got(Claim {
            chan: self,
            slot: self.slot(pos),
            pos,
            senders_parked: head & WAITING != 0,
        })
    }

    /// `pop_fast`'s claim by CAS: first with the guessed word, then with
    /// the word itself. `Ok`: the word it moved, and the position claimed.
    #[inline(always)]
    fn pop_cas(&self) -> Result<(u64, u64), PopFast<'_, T>> {
        let mut head = self.head.guess();
        let mut guessed = true;
        let pos = loop {
            let pos = head >> SHIFT;
            // Acquire: as in `pop_slow`.
            let written = self.slot(pos).stamp.load(Ordering::Acquire) == 2 * pos + 1;
            if written {
                let new = (self.next(pos) << SHIFT) | (head & FLAGS);
                if self.head.cas(head, new, true).is_ok() {
                    return Ok((head, pos));
                }
            }
            if !guessed {
                if written {
                    return Err(PopFast::Slow); // a lost claim
                }
                break pos;
            }
            guessed = false;
            head = self.head.load(Ordering::Relaxed);
            if head & BIASED != 0 {
                return Err(PopFast::Slow); // another thread's: `pop_slow` revokes
            }
        };
        Err(self.pop_missed(pos))
    }

    /// `pop_fast`'s claim as the owner of `head` (`bias.rs`): a plain
    /// store. `Err`: no message at the position.
    #[inline(always)]
    fn pop_owned(&self, owned: Owned<'_>) -> Result<(u64, u64), u64> {
        let head = owned.word();
        let pos = head >> SHIFT;
        // Acquire: as in `pop_slow`.
        let written = self.slot(pos).stamp.load(Ordering::Acquire) == 2 * pos + 1;
        if written {
            owned.set((self.next(pos) << SHIFT) | (head & FLAGS));
        }
        owned.leave();
        if written {
            Ok((head, pos))
        } else {
            Err(pos)
        }
    }

    /// What a `pop_fast` that found no message at `pos` reports.
    #[inline(always)]
    fn pop_missed(&self, pos: u64) -> PopFast<'_, T> {
        // As in `pop_slow`: no message at `pos`, and no send claimed it.
        let tail = self.tail.load(Ordering::Relaxed);
        if tail >> SHIFT <= pos && tail & CLOSED == 0 {
            PopFast::Empty
        } else {
            PopFast::Slow
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn pop_slow(&self) -> Result<(T, bool), TryRecvError> {
        let mut backoff = Backoff::new();
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            let pos = head >> SHIFT;
            let slot = self.slot(pos);
            // Acquire: pairs with the sender's Release stamp store, so its
            // write of the value happened before our read.
            let stamp = slot.stamp.load(Ordering::Acquire);
            if stamp == 2 * pos + 1 {
                if !self.head.writable(head) {
                    head = self.head.load(Ordering::Relaxed);
                    continue;
                }
                let new = (self.next(pos) << SHIFT) | (head & FLAGS);
                match self.head.cas(head, new, true) {
                    Ok(()) => {
                        // SAFETY: the CAS made us the only claimant of `pos`,
                        // whose stamp says its message is fully written.
                        let v = slot.msg.with(|p| unsafe { (*p).assume_init_read() });
                        // Release: pairs with the next lap's sender Acquire load.
                        slot.stamp
                            .store(2 * (pos + self.one_lap), Ordering::Release);
                        return Ok((v, head & WAITING != 0));
                    }
                    Err(now) => {
                        head = now;
                        continue;
                    }
                }
            } else if stamp == 2 * pos || stamp + 2 * self.one_lap == 2 * pos + 1 {
                // No message at `pos` yet: the slot is empty (nothing sent,
                // or a sender claimed `pos` and is writing), or it still holds
                // the previous lap's message, which a receiver claimed and is
                // reading. Either way `pos` holds nothing unless `tail` passed it.
                let tail = self.tail.load(Ordering::Relaxed);
                if tail >> SHIFT <= pos {
                    return Err(if tail & CLOSED != 0 {
                        TryRecvError::Closed
                    } else {
                        TryRecvError::Empty
                    });
                }
                backoff.snooze();
            } else {
                // Another receiver won the position; retry.
                backoff.snooze();
            }
            head = self.head.load(Ordering::Relaxed);
        }
    }

    /// Places a run of values from the front of `items` with a single claim
    /// (one CAS on `tail`) over consecutive free slots. Returns how many were
    /// placed (`0`: full, or the next slot is still being read — the caller
    /// falls back to [`Channel::try_push`]) and whether receivers may be
    /// parked, or `Err` when closed.
    pub(crate) fn push_run(
        &self,
        items: &mut std::collections::VecDeque<T>,
    ) -> Result<(usize, bool), ()> {
        loop {
            let tail = self.tail.load(Ordering::Relaxed);
            if tail & CLOSED != 0 {
                return Err(());
            }
            let (first, mut end, mut n) = (tail >> SHIFT, tail >> SHIFT, 0usize);
            while n < items.len() && (n as u64) < self.cap {
                // Acquire: as in `try_push`, for each slot of the run.
                if self.slot(end).stamp.load(Ordering::Acquire) != 2 * end {
                    break;
                }
                end = self.next(end);
                n += 1;
            }
            if n == 0 {
                return Ok((0, false));
            }
            if !self.tail.writable(tail) {
                continue;
            }
            let new = (end << SHIFT) | (tail & FLAGS);
            if self.tail.cas(tail, new, false).is_ok() {
                let mut p = first;
                for v in items.drain(..n) {
                    let slot = self.slot(p);
                    // SAFETY: the CAS claimed the run first..end, each of
                    // whose stamp we saw (Acquire) marking it free.
                    slot.msg.with_mut(|ptr| unsafe { (*ptr).write(v) });
                    // Release: pairs with the receiver's Acquire stamp load.
                    slot.stamp.store(2 * p + 1, Ordering::Release);
                    p = self.next(p);
                }
                return Ok((n, tail & WAITING != 0));
            }
        }
    }

    /// Takes up to `max` consecutive ready messages with a single claim (one
    /// CAS on `head`). Returns how many were appended and whether senders
    /// may be parked, or why none was taken.
    pub(crate) fn pop_batch(
        &self,
        out: &mut Vec<T>,
        max: usize,
    ) -> Result<(usize, bool), TryRecvError> {
        if max == 0 {
            return Ok((0, false));
        }
        loop {
            let head = self.head.load(Ordering::Relaxed);
            let (first, mut end, mut n) = (head >> SHIFT, head >> SHIFT, 0usize);
            while n < max && (n as u64) < self.cap {
                // Acquire: as in `try_pop`, for each slot of the run.
                if self.slot(end).stamp.load(Ordering::Acquire) != 2 * end + 1 {
                    break;
                }
                end = self.next(end);
                n += 1;
            }
            if n == 0 {
                return self.try_pop().map(|(v, flagged)| {
                    out.push(v);
                    (1, flagged)
                });
            }
            if !self.head.writable(head) {
                continue;
            }
            let new = (end << SHIFT) | (head & FLAGS);
            if self.head.cas(head, new, false).is_ok() {
                out.reserve(n);
                let mut p = first;
                for _ in 0..n {
                    let slot = self.slot(p);
                    // SAFETY: the CAS claimed the run first..end, each of
                    // whose stamp we saw (Acquire) marking it written.
                    let v = slot.msg.with(|ptr| unsafe { (*ptr).assume_init_read() });
                    // Release: pairs with the next lap's sender.
                    slot.stamp.store(2 * (p + self.one_lap), Ordering::Release);
                    out.push(v);
                    p = self.next(p);
                }
                return Ok((n, head & WAITING != 0));
            }
        }
    }

    /// Closes the channel; returns whether this call did it.
    pub(crate) fn close(&self) -> bool {
        // SeqCst only for simplicity: the mutex of the wait lists taken by
        // the caller right after is what orders close against waiters.
        self.tail.raise(CLOSED, Ordering::SeqCst) & CLOSED == 0
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.tail.load(Ordering::SeqCst) & CLOSED != 0
    }

    /// Whether nothing is buffered, cheaper than `len() == 0`: `head` is
    /// read first and never passes `tail`, so a message present at both loads
    /// makes the two positions differ (positions carry the lap: a full ring's
    /// differ too).
    pub(crate) fn is_empty(&self) -> bool {
        let head = self.head.load(Ordering::SeqCst) >> SHIFT;
        head == self.tail.load(Ordering::SeqCst) >> SHIFT
    }

    pub(crate) fn len(&self) -> usize {
        loop {
            let tail = self.tail.load(Ordering::SeqCst);
            let head = self.head.load(Ordering::SeqCst);
            if self.tail.load(Ordering::SeqCst) == tail {
                let (t, h) = (tail >> SHIFT, head >> SHIFT);
                let mask = self.one_lap - 1;
                let (ti, hi) = (t & mask, h & mask);
                let n = if hi < ti {
                    ti - hi
                } else if hi > ti {
                    self.cap - hi + ti
                } else if t == h {
                    0
                } else {
                    self.cap
                };
                return n as usize;
            }
        }
    }
}

impl<T> Drop for Channel<T> {
    fn drop(&mut self) {
        let mut pos = self.head.load(Ordering::Relaxed) >> SHIFT;
        let tail = self.tail.load(Ordering::Relaxed) >> SHIFT;
        while pos < tail {
            let slot = self.slot(pos);
            // With `&mut self` no operation is in flight, so every claimed
            // position below `tail` and at or above `head` was written.
            debug_assert_eq!(slot.stamp.load(Ordering::Relaxed), 2 * pos + 1);
            // SAFETY: the slot holds the initialised, unread message of
            // position `pos` (see above); it is dropped exactly once here.
            slot.msg.with_mut(|p| unsafe { (*p).assume_init_drop() });
            pos = self.next(pos);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Positions step through every index of a lap, then jump to the next
    /// lap; `len` follows across laps for capacities on and off a power of 2.
    #[test]
    fn positions_wrap_by_lap_and_len_follows() {
        for cap in [1usize, 2, 3, 5, 8] {
            let ch = Channel::<u32>::new(cap);
            let mut pos = 0;
            for i in 0..3 * cap as u64 {
                assert_eq!(pos & (ch.one_lap - 1), i % cap as u64, "cap {cap}");
                assert_eq!(pos / ch.one_lap, i / cap as u64, "cap {cap}");
                pos = ch.next(pos);
            }
            for round in 0..3u32 {
                for k in 0..cap as u32 {
                    assert_eq!(ch.len(), k as usize);
                    assert_eq!(ch.try_push(round * 100 + k), Ok(false));
                }
                assert_eq!(ch.len(), cap);
                assert!(matches!(ch.try_push(7), Err(TrySendError::Full(7))));
                for k in 0..cap as u32 {
                    assert_eq!(ch.try_pop().unwrap(), (round * 100 + k, false));
                }
                assert_eq!(ch.len(), 0);
                assert!(matches!(ch.try_pop(), Err(TryRecvError::Empty)));
            }
        }
    }

    /// Large messages get slots on cache lines, message first; small ones
    /// stay packed. Across laps every message comes out whole, and those
    /// left in the ring are dropped once with it.
    #[test]
    fn large_messages_sit_on_cache_lines_and_drop_once() {
        use std::sync::atomic::AtomicUsize;
        use std::sync::Arc;
        struct Big(Arc<AtomicUsize>, [u8; 200]);
        impl Drop for Big {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let drops = Arc::new(AtomicUsize::new(0));
        let ch = Channel::<Big>::new(5);
        for i in 0..5 {
            let at = ch.buf.get(i) as *const Slot<Big> as usize;
            assert_eq!(at % 64, 0, "slot {i} at {at:#x}");
        }
        for i in 0..12u8 {
            assert_eq!(ch.try_push(Big(drops.clone(), [i; 200])).ok(), Some(false));
            if i >= 2 {
                let (m, _) = ch.try_pop().ok().unwrap();
                assert!(m.1.iter().all(|&b| b == i - 2), "message {}", i - 2);
            }
        }
        assert_eq!(drops.load(Ordering::Relaxed), 10);
        drop(ch);
        assert_eq!(
            drops.load(Ordering::Relaxed),
            12,
            "the two left were dropped with the ring"
        );

        let small = Channel::<u64>::new(3);
        let (a, b) = (small.buf.get(0), small.buf.get(1));
        let stride = b as *const Slot<u64> as usize - a as *const Slot<u64> as usize;
        assert_eq!(stride, size_of::<Slot<u64>>(), "small messages stay packed");
    }

    /// A thread's run of claims makes it the owner of both words (its
    /// claims then plain stores, `bias.rs`); a claim from another thread
    /// takes each word back first, and nothing is lost or reordered; after
    /// `MAX_BIASES` ownerships the words stay shared.
    #[test]
    fn a_thread_owns_the_words_until_another_claims() {
        let owning = crate::chan::flavors::bias::worth_owning();
        let ch = std::sync::Arc::new(Channel::<u64>::new(4));
        let (mut next_in, mut next_out) = (0u64, 0u64);
        let runs = if cfg!(miri) { 130 } else { 200 };
        for round in 0..6 {
            for _ in 0..runs {
                assert_eq!(ch.try_push(next_in), Ok(false));
                next_in += 1;
                assert_eq!(ch.try_pop().unwrap(), (next_out, false));
                next_out += 1;
            }
            let owned = ch.head.is_owned() && ch.tail.is_owned();
            assert_eq!(owned, owning && round < 4, "round {round}");
            // [x]; the other thread pushes x + 1 and takes x.
            assert_eq!(ch.try_push(next_in), Ok(false));
            let (c, mine, theirs) = (ch.clone(), next_out, next_in + 1);
            std::thread::spawn(move || {
                assert_eq!(c.try_push(theirs), Ok(false));
                assert_eq!(c.try_pop().unwrap(), (mine, false));
            })
            .join()
            .unwrap();
            assert!(!ch.head.is_owned() && !ch.tail.is_owned(), "round {round}");
            assert_eq!(ch.try_pop().unwrap(), (theirs, false));
            (next_in, next_out) = (theirs + 1, theirs + 1);
        }
        if owning {
            assert!(ch.head.shared_for_good() && ch.tail.shared_for_good());
        }
    }

    /// A claim reports the `WAITING` flag of the word it moved, and leaves
    /// the flag in place.
    #[test]
    fn claims_report_the_waiting_flag() {
        let ch = Channel::<u32>::new(2);
        ch.tail.raise(WAITING, Ordering::Relaxed);
        assert_eq!(ch.try_push(1), Ok(true));
        assert_eq!(ch.try_push(2), Ok(true));
        assert_eq!(ch.try_pop().unwrap(), (1, false));
        ch.head.raise(WAITING, Ordering::Relaxed);
        assert_eq!(ch.try_pop().unwrap(), (2, true));
        assert!(ch.close());
        assert!(matches!(ch.try_pop(), Err(TryRecvError::Closed)));
        assert!(matches!(ch.try_push(3), Err(TrySendError::Closed(3))));
    }
}
