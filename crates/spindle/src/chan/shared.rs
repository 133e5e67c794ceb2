//! The state a bounded, unbounded or rendezvous channel's handles share:
//! the flavor, the handle counts and the two wait lists, with the
//! non-blocking operations (`try_*`, close, registration on the wait
//! lists). The polls that wait are in `poll.rs`.

use std::task::Waker;

use super::error::{TryRecvError, TrySendError};
use super::flavors::{array, list, zero};
use super::waiters::{Signal, WaitList};
use super::Policy;
use crate::loom::AtomicUsize;

pub(super) enum Flavor<T> {
    Array(array::Channel<T>),
    List(list::Channel<T>),
    Zero(zero::Channel<T>),
}

pub(super) struct Chan<T> {
    pub(super) flavor: Flavor<T>,
    pub(super) policy: Policy,
    pub(super) senders: AtomicUsize,
    pub(super) receivers: AtomicUsize,
    /// Senders waiting for room (array flavor only).
    pub(super) send_waiters: WaitList,
    /// Receivers waiting for a message (every flavor).
    pub(super) recv_waiters: WaitList,
}

/// What a future's inlined fast path learned before it called the
/// out-of-line poll, so that the poll does not repeat it (each repeated load
/// or claim is also one more step for the loom models to interleave).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum FastPath {
    /// Nothing tried: a later poll, or no fast path for this flavor/policy.
    NotTried,
    /// The ring was empty (receive) or full (send), and open: register
    /// first, then re-check.
    Idle,
    /// The fast path lost a claim race, met a slot mid-write or mid-read, or
    /// a close: start at the ring's slow path.
    Busy,
}

impl<T> Chan<T> {
    /// After a claim on the ring `a` that placed a message: wakes a parked
    /// receiver when the claimed word said one may wait.
    #[inline(always)]
    pub(super) fn wake_receiver_if(&self, a: &array::Channel<T>, receivers_parked: bool) {
        if receivers_parked {
            self.recv_waiters.notify_one(a.recv_signal());
        }
    }

    /// [`Chan::wake_receiver_if`] after a claim that took a message.
    #[inline(always)]
    pub(super) fn wake_sender_if(&self, a: &array::Channel<T>, senders_parked: bool) {
        if senders_parked {
            self.send_waiters.notify_one(a.send_signal());
        }
    }

    /// The inlined first step of every send future: a blocking-policy ring
    /// with a free slot takes the value out of `value` (one copy). `Err`:
    /// nothing done, and what was seen.
    #[inline(always)]
    pub(super) fn send_fast(&self, value: &mut Option<T>) -> Result<(), FastPath> {
        match (&self.flavor, self.policy) {
            (Flavor::Array(a), Policy::Block) => match a.push_fast(value) {
                array::PushFast::Done(receivers_parked) => {
                    self.wake_receiver_if(a, receivers_parked);
                    Ok(())
                }
                array::PushFast::Full => Err(FastPath::Idle),
                array::PushFast::Slow => Err(FastPath::Busy),
            },
            _ => Err(FastPath::NotTried),
        }
    }

    /// The inlined first step of every receive future, as
    /// [`Chan::send_fast`]: a ring with a message ready, claimed (the
    /// caller takes the value straight into `Ready`: `array::Claim`);
    /// `Err`: nothing taken, and what was seen.
    #[inline(always)]
    pub(super) fn recv_fast(&self) -> Result<array::Claim<'_, T>, FastPath> {
        match &self.flavor {
            Flavor::Array(a) => match a.pop_fast() {
                array::PopFast::Got(claim) => Ok(claim),
                array::PopFast::Empty => Err(FastPath::Idle),
                array::PopFast::Slow => Err(FastPath::Busy),
            },
            _ => Err(FastPath::NotTried),
        }
    }

    /// A send's try in `poll_send`: from the ring's slow path when the fast
    /// path saw [`FastPath::Busy`], else the whole [`Chan::try_send`].
    pub(super) fn try_send_after(&self, v: T, fast: FastPath) -> Result<(), TrySendError<T>> {
        match (&self.flavor, fast) {
            (Flavor::Array(a), FastPath::Busy) => {
                self.wake_receiver_if(a, a.push_slow(v)?);
                Ok(())
            }
            _ => self.try_send(v),
        }
    }

    /// A receive's try in `poll_recv`, as [`Chan::try_send_after`].
    pub(super) fn try_recv_after(&self, fast: FastPath) -> Result<T, TryRecvError> {
        match (&self.flavor, fast) {
            (Flavor::Array(a), FastPath::Busy) => {
                let (v, senders_parked) = a.pop_slow()?;
                self.wake_sender_if(a, senders_parked);
                Ok(v)
            }
            _ => self.try_recv(),
        }
    }

    #[inline]
    pub(super) fn try_send(&self, v: T) -> Result<(), TrySendError<T>> {
        match &self.flavor {
            Flavor::Array(a) => {
                // The common policy inline; the dropping ones out of line, so
                // this stays small enough to inline into `poll_send`.
                let receivers_parked = match self.policy {
                    Policy::Block => a.try_push(v)?,
                    _ => return self.try_send_dropping(a, v),
                };
                self.wake_receiver_if(a, receivers_parked);
                Ok(())
            }
            Flavor::List(l) => {
                l.try_push(v)?;
                self.recv_waiters.notify_one(Signal::Fence);
                Ok(())
            }
            Flavor::Zero(z) => match z.try_give(v) {
                Ok(()) => Ok(()),
                Err((v, true)) => Err(TrySendError::Closed(v)),
                Err((v, false)) => Err(TrySendError::Full(v)),
            },
        }
    }

    /// [`Chan::try_send`] on a `DropNewest` or `DropOldest` ring.
    #[inline(never)]
    pub(super) fn try_send_dropping(
        &self,
        a: &array::Channel<T>,
        v: T,
    ) -> Result<(), TrySendError<T>> {
        let receivers_parked = match self.policy {
            Policy::Block => unreachable!("a blocking channel drops nothing"),
            Policy::DropNewest => match a.try_push(v) {
                Err(TrySendError::Full(v)) => {
                    drop(v);
                    return Ok(());
                }
                r => r?,
            },
            Policy::DropOldest => {
                let mut v = v;
                loop {
                    match a.try_push(v) {
                        Err(TrySendError::Full(back)) => {
                            v = back;
                            // Make room; the dropped message counts as
                            // received by nobody. (No sender parks on
                            // a drop-oldest channel, so none is woken.)
                            drop(a.try_pop());
                        }
                        r => break r?,
                    }
                }
            }
        };
        self.wake_receiver_if(a, receivers_parked);
        Ok(())
    }

    #[inline]
    pub(super) fn try_recv(&self) -> Result<T, TryRecvError> {
        match &self.flavor {
            Flavor::Array(a) => {
                let (v, senders_parked) = a.try_pop()?;
                self.wake_sender_if(a, senders_parked);
                Ok(v)
            }
            Flavor::List(l) => l.try_pop(),
            Flavor::Zero(z) => z.try_pop(),
        }
    }

    pub(super) fn try_recv_batch(
        &self,
        out: &mut Vec<T>,
        max: usize,
    ) -> Result<usize, TryRecvError> {
        match &self.flavor {
            Flavor::Array(a) => {
                let (n, senders_parked) = a.pop_batch(out, max)?;
                if senders_parked {
                    self.send_waiters.notify_many(n, a.send_signal());
                }
                Ok(n)
            }
            Flavor::List(l) => l.pop_batch(out, max),
            Flavor::Zero(z) => {
                if max == 0 {
                    return Ok(0);
                }
                out.push(z.try_pop()?);
                let mut n = 1;
                while n < max {
                    match z.try_pop() {
                        Ok(v) => {
                            out.push(v);
                            n += 1;
                        }
                        Err(_) => break,
                    }
                }
                Ok(n)
            }
        }
    }

    pub(super) fn close(&self) -> bool {
        let did = match &self.flavor {
            Flavor::Array(a) => a.close(),
            Flavor::List(l) => l.close(),
            Flavor::Zero(z) => z.close(),
        };
        if did {
            self.send_waiters.notify_all(self.send_signal());
            self.recv_waiters.notify_all(self.recv_signal());
        }
        did
    }

    /// Ends a receive that is done (a value, or closed). A wake-up it got
    /// but did not need — it took an earlier message in its own re-check
    /// after registering — is passed on while messages remain: otherwise a
    /// receiver could stay parked beside a buffered message (the race that
    /// `loom_chan::two_parked_receivers_pass_unneeded_wakeups_on` found).
    #[inline]
    pub(super) fn recv_done(&self, key: &mut Option<usize>) {
        if key.is_some() && self.recv_waiters.complete(key, self.recv_signal()) && !self.is_empty()
        {
            self.recv_waiters.wake_oldest(self.recv_signal());
        }
    }

    /// [`Chan::recv_done`] for a send: a wake-up for room it did not need is
    /// passed on while room remains.
    #[inline]
    pub(super) fn send_done(&self, key: &mut Option<usize>) {
        if key.is_some()
            && self.send_waiters.complete(key, self.send_signal())
            && self.capacity().is_some_and(|cap| self.len() < cap)
        {
            self.send_waiters.wake_oldest(self.send_signal());
        }
    }

    /// Parks a receive (the ring was empty), after nudging the senders:
    /// if every wake-up slot of theirs is taken while the ring is empty,
    /// those woken are not running (`waiters/`, the valve).
    pub(super) fn park_recv(&self, key: &mut Option<usize>, waker: &Waker) {
        self.send_waiters.nudge();
        self.recv_waiters.register(key, waker, self.recv_signal());
    }

    /// Parks a send (the ring was full), after nudging the receivers as
    /// [`Chan::park_recv`] nudges the senders.
    pub(super) fn park_send(&self, key: &mut Option<usize>, waker: &Waker) {
        self.recv_waiters.nudge();
        self.send_waiters.register(key, waker, self.send_signal());
    }

    /// Gives up a receive that has not completed (its future dropped).
    pub(super) fn abandon_recv(&self, key: &mut Option<usize>) {
        match &self.flavor {
            Flavor::Zero(z) => {
                if let Some(k) = key.take() {
                    z.cancel_take(k);
                }
            }
            _ => self.recv_waiters.cancel(key, self.recv_signal()),
        }
    }

    /// How senders learn of parked receivers (see `waiters/`).
    pub(super) fn recv_signal(&self) -> Signal<'_> {
        match &self.flavor {
            Flavor::Array(a) => a.recv_signal(),
            Flavor::List(_) | Flavor::Zero(_) => Signal::Fence,
        }
    }

    /// How receivers learn of parked senders (array only: nobody else parks
    /// in `send_waiters`).
    pub(super) fn send_signal(&self) -> Signal<'_> {
        match &self.flavor {
            Flavor::Array(a) => a.send_signal(),
            Flavor::List(_) | Flavor::Zero(_) => Signal::Fence,
        }
    }

    pub(super) fn is_closed(&self) -> bool {
        match &self.flavor {
            Flavor::Array(a) => a.is_closed(),
            Flavor::List(l) => l.is_closed(),
            Flavor::Zero(z) => z.is_closed(),
        }
    }

    pub(super) fn len(&self) -> usize {
        match &self.flavor {
            Flavor::Array(a) => a.len(),
            Flavor::List(l) => l.len(),
            Flavor::Zero(z) => z.len(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        match &self.flavor {
            Flavor::Array(a) => a.is_empty(),
            _ => self.len() == 0,
        }
    }

    pub(super) fn capacity(&self) -> Option<usize> {
        match &self.flavor {
            Flavor::Array(a) => Some(a.capacity()),
            Flavor::List(_) => None,
            Flavor::Zero(_) => Some(0),
        }
    }
}
