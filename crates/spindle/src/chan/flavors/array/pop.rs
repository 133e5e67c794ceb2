//! The bounded ring's receives: [`Channel::try_pop`], its inlined fast path
//! and the [`Claim`] it returns, the slow path, and [`Channel::pop_batch`],
//! a run of receives with one claim. Claims, stamps and flags follow the
//! invariants in `mod.rs`.

use crate::chan::backoff::Backoff;
use crate::chan::error::TryRecvError;
use crate::chan::flavors::bias::{Owned, BIASED};
use crate::loom::Ordering;

use super::slots::Slot;
use super::{Channel, CLOSED, FLAGS, SHIFT, WAITING};

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

impl<T> Channel<T> {
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
}
