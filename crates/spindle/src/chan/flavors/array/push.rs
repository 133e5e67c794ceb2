//! The bounded ring's sends: [`Channel::try_push`], its inlined fast path
//! (a claim by guessed word, by the word itself, or a plain claim on an
//! owned word), the slow path, and [`Channel::push_run`], a run of sends
//! with one claim. Claims, stamps and flags follow the invariants in
//! `mod.rs`.

use crate::chan::backoff::Backoff;
use crate::chan::error::TrySendError;
use crate::chan::flavors::bias::{Owned, BIASED};
use crate::loom::Ordering;

use super::slots::Slot;
use super::{Channel, CLOSED, FLAGS, SHIFT, WAITING};

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

impl<T> Channel<T> {
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
}
