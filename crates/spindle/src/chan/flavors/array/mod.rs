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
//!
//! # The fast-path set
//! Each side is the two phases crossbeam's ring has (an inlined first try,
//! a cold loop) plus what the two mechanisms above need, and nothing
//! else:
//! - `try_push` / `try_pop`: the operation, the inlined try then the loop;
//! - `push_fast` / `pop_fast`: the inlined try, which the futures call
//!   directly so that a full or empty ring can register at once;
//! - `push_owned` / `pop_owned`: the try on an owned word (a plain claim);
//!   `pop_cas`: the try by guessed, then loaded, CAS (the send's is the
//!   loop inside `push_fast`);
//! - `push_missed` / `pop_missed`: what a failed try reports, one copy for
//!   both kinds of try;
//! - `push_slow` / `pop_slow`: the loop;
//! - `push_run` / `pop_batch`: the batch operations, one claim for a run.
//!
//! Dropping a mechanism (owned words, guessed claims) would drop its pair
//! of functions; `docs/profiles.md` ("chan_single") has what each saves.
//!
//! # Files
//! - `slots.rs`: the slots and their layout (messages of 128 bytes or more
//!   start on a cache line).
//! - `push.rs`: sends (`try_push`, its inlined fast path, the slow path, a
//!   run of sends with one claim).
//! - `pop.rs`: receives, likewise, and the [`Claim`] a fast receive returns.

use crate::chan::flavors::bias::{ClaimWord, BIASED};
use crate::chan::waiters::Signal;
use crate::loom::{CachePadded, Ordering};

mod pop;
mod push;
mod slots;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use pop::{Claim, PopFast};
pub(crate) use push::PushFast;
use slots::{Slot, Slots};

/// Tail only: the channel is closed.
const CLOSED: u64 = 1;
/// Someone may be parked waiting for this word to move (see module docs).
const WAITING: u64 = 2;
/// A thread owns the word and claims with plain stores (`bias.rs`).
const FLAGS: u64 = CLOSED | WAITING | BIASED;
const SHIFT: u32 = 3;

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
