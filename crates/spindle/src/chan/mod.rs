//! Channels: bounded, unbounded, rendezvous, oneshot, broadcast and SPSC
//! rings, plus [`select!`](crate::select).
//!
//! # Flavors
//! - [`bounded`]`(n)`: a ring of `n` slots with per-slot stamps (Vyukov).
//! - [`unbounded`]`()`: linked blocks of 32 slots.
//! - [`rendezvous`]`()` (also `bounded(0)`): zero capacity; a send completes
//!   when it hands the value straight to a parked receiver, or when a
//!   receiver takes it out of the sender's parked offer.
//! - [`oneshot()`](fn@oneshot): one value, once.
//! - [`broadcast(n)`](fn@broadcast): every receiver sees every message; a receiver more
//!   than `n` messages behind gets [`broadcast::RecvError::Lagged`] and skips
//!   ahead to the oldest message still held.
//! - [`spsc(n)`](fn@spsc): a single-producer single-consumer ring with zero-copy
//!   slot access (reserve/commit, peek/release).
//!
//! The first three share the handle types [`Sender`] and [`Receiver`]; both
//! are `Clone` (MPMC) and each message is delivered to exactly one receiver.
//!
//! # Close semantics (Go's)
//! - [`Sender::close`] or [`Receiver::close`], or dropping the last `Sender`,
//!   closes the channel: receivers drain what is buffered and then get
//!   [`RecvError`] / [`TryRecvError::Closed`]; sends fail, handing the value
//!   back in the error.
//! - Dropping the last `Receiver` closes the channel and drops the buffered
//!   messages; every later send fails with its value inside the error.
//! - Every task or thread blocked in a send or receive wakes on close.
//! - No message is lost or dropped twice: each is received, handed back in a
//!   send error, or dropped exactly once with the channel.
//!
//! # Cancel safety
//! A [`Recv`] future takes a message from the channel only in the poll that
//! returns `Ready`; dropping it earlier loses nothing (and a wake-up it had
//! received is passed on to another waiter). A [`Send`] future keeps its value
//! until it is placed; dropping it drops the value, never a channel message.
//! (Rendezvous: a parked offer can be taken by a receiver while the send
//! future waits; it then counts as sent even if the future is dropped before
//! it is polled again — see `docs/chan.md`.)
//!
//! # Executors
//! The channels only use [`std::task::Waker`]: they work under any executor,
//! and the `*_blocking` / `*_timeout` methods let plain threads take part.
//!
//! The wake-up protocol and its proof sketch are in `docs/chan.md`; the
//! per-flavor invariants at the top of each file in `flavors/`.

mod backoff;
pub(crate) mod blocking;
mod error;
mod flavors;
#[doc(hidden)]
pub mod select;
mod spin;
mod waiters;

use std::fmt;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
#[cfg(not(loom))]
use std::time::{Duration, Instant};

use crate::loom::{Arc, AtomicBool, AtomicUsize, Ordering};
use backoff::Backoff;
use flavors::{array, list, zero};
use waiters::{Signal, WaitList};

pub use error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};

/// Oneshot channel types; see [`oneshot()`](fn@oneshot).
pub mod oneshot {
    pub use super::flavors::oneshot::{Receiver, Sender};
}

/// Broadcast channel types; see [`broadcast()`](fn@broadcast).
pub mod broadcast {
    pub use super::flavors::broadcast::{Receiver, Recv, RecvError, Sender, TryRecvError};
}

/// SPSC ring types; see [`spsc()`](fn@spsc).
pub mod spsc {
    pub use super::flavors::spsc::{Consumer, Pop, Producer, Push};
    #[cfg(not(loom))]
    pub use super::flavors::spsc::{ReadSlice, WriteSlice};
}

/// Loom models only: a bounded ring's claim words are owned by a thread
/// after `n` claims in a row by it (`flavors/bias.rs`; never by default
/// under loom). Applies to models run on this thread.
#[cfg(loom)]
#[doc(hidden)]
pub fn __loom_own_words_after(n: u64) {
    flavors::bias::loom_own_words_after(n);
}

/// Loom models only: plain claims (by an owner) made on this thread so far.
#[cfg(loom)]
#[doc(hidden)]
pub fn __loom_plain_claims() -> u64 {
    flavors::bias::loom_plain_claims()
}

pub use flavors::broadcast::channel as broadcast;
pub use flavors::oneshot::channel as oneshot;
pub use flavors::spsc::channel as spsc;

/// What a bounded channel does with a send when it is full.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Policy {
    /// Wait for room (`send`), or fail with `Full` (`try_send`). The default.
    #[default]
    Block,
    /// Drop the value being sent; the send reports success.
    DropNewest,
    /// Drop the oldest buffered message to make room.
    DropOldest,
}

enum Flavor<T> {
    Array(array::Channel<T>),
    List(list::Channel<T>),
    Zero(zero::Channel<T>),
}

struct Chan<T> {
    flavor: Flavor<T>,
    policy: Policy,
    senders: AtomicUsize,
    receivers: AtomicUsize,
    /// Senders waiting for room (array flavor only).
    send_waiters: WaitList,
    /// Receivers waiting for a message (every flavor).
    recv_waiters: WaitList,
}

/// The sending half of a bounded, unbounded or rendezvous channel.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
    /// Sink state: a value accepted by `start_send`, not yet placed.
    sink_pending: Option<T>,
    sink_key: Option<usize>,
    /// Set once `Sink::poll_close` released this handle.
    detached: AtomicBool,
}

/// The receiving half of a bounded, unbounded or rendezvous channel.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
    /// `Stream` state: the wait key of `poll_next`.
    stream_key: Option<usize>,
}

/// A bounded channel of capacity `cap` (`0` gives a [`rendezvous`] channel).
pub fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    bounded_with_policy(cap, Policy::Block)
}

/// A bounded channel with a full-queue [`Policy`]. A policy other than
/// `Block` needs `cap > 0`.
pub fn bounded_with_policy<T>(cap: usize, policy: Policy) -> (Sender<T>, Receiver<T>) {
    if cap == 0 {
        assert_eq!(
            policy,
            Policy::Block,
            "a rendezvous channel has no room to drop from"
        );
        return new(Flavor::Zero(zero::Channel::new()), policy);
    }
    new(Flavor::Array(array::Channel::new(cap)), policy)
}

/// An unbounded channel.
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    new(Flavor::List(list::Channel::new()), Policy::Block)
}

/// A zero-capacity channel: each send waits for a receiver to take its value.
pub fn rendezvous<T>() -> (Sender<T>, Receiver<T>) {
    new(Flavor::Zero(zero::Channel::new()), Policy::Block)
}

fn new<T>(flavor: Flavor<T>, policy: Policy) -> (Sender<T>, Receiver<T>) {
    // The ring's wait lists are signalled through flags, which lets them
    // cap the wake-ups in flight (`waiters.rs`).
    let waiters = || match flavor {
        Flavor::Array(_) => WaitList::limited(),
        Flavor::List(_) | Flavor::Zero(_) => WaitList::new(),
    };
    let (send_waiters, recv_waiters) = (waiters(), waiters());
    let chan = Arc::new(Chan {
        flavor,
        policy,
        senders: AtomicUsize::new(1),
        receivers: AtomicUsize::new(1),
        send_waiters,
        recv_waiters,
    });
    (
        Sender {
            chan: chan.clone(),
            sink_pending: None,
            sink_key: None,
            detached: AtomicBool::new(false),
        },
        Receiver {
            chan,
            stream_key: None,
        },
    )
}

/// What a future's inlined fast path learned before it called the
/// out-of-line poll, so that the poll does not repeat it (each repeated load
/// or claim is also one more step for the loom models to interleave).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Seen {
    /// Nothing tried: a later poll, or no fast path for this flavor/policy.
    Nothing,
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
    fn wake_receiver_if(&self, a: &array::Channel<T>, receivers_parked: bool) {
        if receivers_parked {
            self.recv_waiters.notify_one(a.recv_signal());
        }
    }

    /// [`Chan::wake_receiver_if`] after a claim that took a message.
    #[inline(always)]
    fn wake_sender_if(&self, a: &array::Channel<T>, senders_parked: bool) {
        if senders_parked {
            self.send_waiters.notify_one(a.send_signal());
        }
    }

    /// The inlined first step of every send future: a blocking-policy ring
    /// with a free slot takes the value out of `value` (one copy). `Err`:
    /// nothing done, and what was seen.
    #[inline(always)]
    fn send_fast(&self, value: &mut Option<T>) -> Result<(), Seen> {
        match (&self.flavor, self.policy) {
            (Flavor::Array(a), Policy::Block) => match a.push_fast(value) {
                array::PushFast::Done(receivers_parked) => {
                    self.wake_receiver_if(a, receivers_parked);
                    Ok(())
                }
                array::PushFast::Full => Err(Seen::Idle),
                array::PushFast::Slow => Err(Seen::Busy),
            },
            _ => Err(Seen::Nothing),
        }
    }

    /// The inlined first step of every receive future, as
    /// [`Chan::send_fast`]: a ring with a message ready, claimed (the
    /// caller takes the value straight into `Ready`: `array::Claim`);
    /// `Err`: nothing taken, and what was seen.
    #[inline(always)]
    fn recv_fast(&self) -> Result<array::Claim<'_, T>, Seen> {
        match &self.flavor {
            Flavor::Array(a) => match a.pop_fast() {
                array::PopFast::Got(claim) => Ok(claim),
                array::PopFast::Empty => Err(Seen::Idle),
                array::PopFast::Slow => Err(Seen::Busy),
            },
            _ => Err(Seen::Nothing),
        }
    }

    /// A send's try in `poll_send`: from the ring's slow path when the fast
    /// path saw [`Seen::Busy`], else the whole [`Chan::try_send`].
    fn try_send_after(&self, v: T, seen: Seen) -> Result<(), TrySendError<T>> {
        match (&self.flavor, seen) {
            (Flavor::Array(a), Seen::Busy) => {
                self.wake_receiver_if(a, a.push_slow(v)?);
                Ok(())
            }
            _ => self.try_send(v),
        }
    }

    /// A receive's try in `poll_recv`, as [`Chan::try_send_after`].
    fn try_recv_after(&self, seen: Seen) -> Result<T, TryRecvError> {
        match (&self.flavor, seen) {
            (Flavor::Array(a), Seen::Busy) => {
                let (v, senders_parked) = a.pop_slow()?;
                self.wake_sender_if(a, senders_parked);
                Ok(v)
            }
            _ => self.try_recv(),
        }
    }

    #[inline]
    fn try_send(&self, v: T) -> Result<(), TrySendError<T>> {
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
    fn try_send_dropping(&self, a: &array::Channel<T>, v: T) -> Result<(), TrySendError<T>> {
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
    fn try_recv(&self) -> Result<T, TryRecvError> {
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

    fn try_recv_batch(&self, out: &mut Vec<T>, max: usize) -> Result<usize, TryRecvError> {
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

    fn close(&self) -> bool {
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
    fn recv_done(&self, key: &mut Option<usize>) {
        if key.is_some() && self.recv_waiters.complete(key, self.recv_signal()) && !self.is_empty()
        {
            self.recv_waiters.wake_oldest(self.recv_signal());
        }
    }

    /// [`Chan::recv_done`] for a send: a wake-up for room it did not need is
    /// passed on while room remains.
    #[inline]
    fn send_done(&self, key: &mut Option<usize>) {
        if key.is_some()
            && self.send_waiters.complete(key, self.send_signal())
            && self.capacity().is_some_and(|cap| self.len() < cap)
        {
            self.send_waiters.wake_oldest(self.send_signal());
        }
    }

    /// Parks a receive (the ring was empty), after nudging the senders:
    /// if every wake-up slot of theirs is taken while the ring is empty,
    /// those woken are not running (`waiters.rs`, the valve).
    fn park_recv(&self, key: &mut Option<usize>, waker: &Waker) {
        self.send_waiters.nudge();
        self.recv_waiters.register(key, waker, self.recv_signal());
    }

    /// Parks a send (the ring was full), after nudging the receivers as
    /// [`Chan::park_recv`] nudges the senders.
    fn park_send(&self, key: &mut Option<usize>, waker: &Waker) {
        self.recv_waiters.nudge();
        self.send_waiters.register(key, waker, self.send_signal());
    }

    /// Gives up a receive that has not completed (its future dropped).
    fn abandon_recv(&self, key: &mut Option<usize>) {
        match &self.flavor {
            Flavor::Zero(z) => {
                if let Some(k) = key.take() {
                    z.cancel_take(k);
                }
            }
            _ => self.recv_waiters.cancel(key, self.recv_signal()),
        }
    }

    /// How senders learn of parked receivers (see `waiters.rs`).
    fn recv_signal(&self) -> Signal<'_> {
        match &self.flavor {
            Flavor::Array(a) => a.recv_signal(),
            Flavor::List(_) | Flavor::Zero(_) => Signal::Fence,
        }
    }

    /// How receivers learn of parked senders (array only: nobody else parks
    /// in `send_waiters`).
    fn send_signal(&self) -> Signal<'_> {
        match &self.flavor {
            Flavor::Array(a) => a.send_signal(),
            Flavor::List(_) | Flavor::Zero(_) => Signal::Fence,
        }
    }

    fn is_closed(&self) -> bool {
        match &self.flavor {
            Flavor::Array(a) => a.is_closed(),
            Flavor::List(l) => l.is_closed(),
            Flavor::Zero(z) => z.is_closed(),
        }
    }

    fn len(&self) -> usize {
        match &self.flavor {
            Flavor::Array(a) => a.len(),
            Flavor::List(l) => l.len(),
            Flavor::Zero(z) => z.len(),
        }
    }

    fn is_empty(&self) -> bool {
        match &self.flavor {
            Flavor::Array(a) => a.is_empty(),
            _ => self.len() == 0,
        }
    }

    fn capacity(&self) -> Option<usize> {
        match &self.flavor {
            Flavor::Array(a) => Some(a.capacity()),
            Flavor::List(_) => None,
            Flavor::Zero(_) => Some(0),
        }
    }

    /// One poll of a receive: try, spin briefly, park, re-check. Out of
    /// line: the futures inline only their fast paths, and pass on what
    /// theirs saw: after [`Seen::Idle`] the first try is skipped (the
    /// re-check after registering still comes), after [`Seen::Busy`] it
    /// starts at the ring's slow path.
    #[inline(never)]
    fn poll_recv(
        &self,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
        mut seen: Seen,
    ) -> Poll<Result<T, RecvError>> {
        if let Flavor::Zero(z) = &self.flavor {
            return z.poll_take(key, cx.waker(), !select::probing(cx));
        }
        let mut backoff: Option<Backoff> = None;
        let mut registered = false;
        loop {
            let seen = std::mem::replace(&mut seen, Seen::Nothing);
            if seen != Seen::Idle {
                let done = match self.try_recv_after(seen) {
                    Ok(v) => Some(Ok(v)),
                    Err(TryRecvError::Closed) => Some(Err(RecvError)),
                    Err(TryRecvError::Empty) => None,
                };
                if let Some(got) = done {
                    self.recv_done(key);
                    return Poll::Ready(got);
                }
            }
            if registered || select::probing(cx) {
                return Poll::Pending;
            }
            registered = wait_step(&mut backoff, || self.park_recv(key, cx.waker()));
        }
    }

    fn poll_recv_batch(
        &self,
        key: &mut Option<usize>,
        out: &mut Vec<T>,
        max: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<usize, RecvError>> {
        if max == 0 {
            return Poll::Ready(Ok(0));
        }
        if let Flavor::Zero(z) = &self.flavor {
            // The first value as a single receive (it may park), then
            // whatever other offers are already queued.
            return z.poll_take(key, cx.waker(), true).map(|r| {
                out.push(r?);
                let mut n = 1;
                while n < max {
                    match z.try_pop() {
                        Ok(v) => out.push(v),
                        Err(_) => break,
                    }
                    n += 1;
                }
                Ok(n)
            });
        }
        for round in 0..2 {
            match self.try_recv_batch(out, max) {
                Ok(n) => {
                    self.recv_done(key);
                    return Poll::Ready(Ok(n));
                }
                Err(TryRecvError::Closed) => {
                    self.recv_done(key);
                    return Poll::Ready(Err(RecvError));
                }
                Err(TryRecvError::Empty) if round == 0 => self.park_recv(key, cx.waker()),
                Err(TryRecvError::Empty) => {}
            }
        }
        Poll::Pending
    }

    /// One poll of a send. `value` is `Some` until the value is placed or
    /// handed back; `key` is the wait key (array), or the offer key (zero).
    /// Out of line, and `seen` as in [`Chan::poll_recv`].
    #[inline(never)]
    fn poll_send(
        &self,
        value: &mut Option<T>,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
        mut seen: Seen,
    ) -> Poll<Result<(), SendError<T>>> {
        if let Flavor::Zero(z) = &self.flavor {
            return self.poll_send_zero(z, value, key, cx);
        }
        let mut backoff: Option<Backoff> = None;
        let mut registered = false;
        loop {
            let seen = std::mem::replace(&mut seen, Seen::Nothing);
            if seen != Seen::Idle {
                let v = value.take().expect("send polled after completion");
                match self.try_send_after(v, seen) {
                    Ok(()) => {
                        self.send_done(key);
                        return Poll::Ready(Ok(()));
                    }
                    Err(TrySendError::Closed(v)) => {
                        self.send_done(key);
                        return Poll::Ready(Err(SendError(v)));
                    }
                    Err(TrySendError::Full(v)) => *value = Some(v),
                }
            }
            if registered || select::probing(cx) {
                return Poll::Pending;
            }
            registered = wait_step(&mut backoff, || self.park_send(key, cx.waker()));
        }
    }

    /// A rendezvous send's poll. Inlined into the futures: a parked send
    /// whose offer was taken learns it from one load (`zero.rs`, "Taken
    /// without the lock") without the call; the rest is out of line.
    #[inline(always)]
    fn poll_send_zero(
        &self,
        z: &zero::Channel<T>,
        value: &mut Option<T>,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<T>>> {
        if let Some(t) = *key {
            if z.taken(t) {
                *key = None;
                return Poll::Ready(Ok(()));
            }
        }
        self.poll_send_zero_slow(z, value, key, cx)
    }

    #[inline(never)]
    fn poll_send_zero_slow(
        &self,
        z: &zero::Channel<T>,
        value: &mut Option<T>,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<T>>> {
        match *key {
            None => {
                let v = value.take().expect("send polled after completion");
                // A probing select does not offer: an offer may be taken
                // at once, which would commit this arm before the others
                // ran. Handing to a parked receiver completes it, fine.
                match z.send(v, cx.waker(), !select::probing(cx)) {
                    zero::SendState::Given => Poll::Ready(Ok(())),
                    zero::SendState::Offered(k) => {
                        *key = Some(k);
                        Poll::Pending
                    }
                    zero::SendState::NotNow(v) => {
                        *value = Some(v);
                        Poll::Pending
                    }
                    zero::SendState::Closed(v) => Poll::Ready(Err(SendError(v))),
                }
            }
            Some(k) => match z.poll_offer(k, cx.waker()) {
                zero::OfferState::Taken => {
                    *key = None;
                    Poll::Ready(Ok(()))
                }
                zero::OfferState::Closed(v) => {
                    *key = None;
                    Poll::Ready(Err(SendError(v)))
                }
                zero::OfferState::Pending => Poll::Pending,
            },
        }
    }

    /// Gives up a send: returns the value if it was not delivered.
    fn abandon_send(&self, value: &mut Option<T>, key: &mut Option<usize>) -> Option<T> {
        match &self.flavor {
            Flavor::Zero(z) => match key.take() {
                Some(k) => z.withdraw(k),
                None => value.take(),
            },
            _ => {
                self.send_waiters.cancel(key, self.send_signal());
                value.take()
            }
        }
    }

    fn poll_send_batch(
        &self,
        items: &mut std::collections::VecDeque<T>,
        key: &mut Option<usize>,
        zero_value: &mut Option<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<Vec<T>>>> {
        let registered = &mut false;
        loop {
            // A rendezvous batch is a run of single offers.
            if let Flavor::Zero(_) = &self.flavor {
                if zero_value.is_none() && key.is_none() {
                    match items.pop_front() {
                        Some(v) => *zero_value = Some(v),
                        None => return Poll::Ready(Ok(())),
                    }
                }
                match self.poll_send(zero_value, key, cx, Seen::Nothing) {
                    Poll::Ready(Ok(())) => continue,
                    Poll::Ready(Err(SendError(v))) => {
                        items.push_front(v);
                        return Poll::Ready(Err(SendError(std::mem::take(items).into())));
                    }
                    Poll::Pending => return Poll::Pending,
                }
            }
            if items.is_empty() {
                self.send_done(key);
                return Poll::Ready(Ok(()));
            }
            // How many were placed, and whether parked receivers need waking;
            // `Err`: closed.
            let placed: Result<(usize, bool), ()> = match &self.flavor {
                Flavor::List(l) => l.push_all(items).map(|n| (n, n > 0)),
                Flavor::Array(_) if self.policy != Policy::Block => {
                    // Drop policies never leave an item waiting; `try_send`
                    // notifies per item.
                    let mut r = Ok((0, false));
                    while let Some(v) = items.pop_front() {
                        if let Err(e) = self.try_send(v) {
                            items.push_front(e.into_inner());
                            r = Err(());
                            break;
                        }
                    }
                    r
                }
                Flavor::Array(a) => {
                    let (mut n, mut receivers_parked) = (0, false);
                    let mut closed = false;
                    loop {
                        match a.push_run(items) {
                            Err(()) => closed = true,
                            Ok((0, _)) => {
                                // Full, or a slot mid-read: one precise try.
                                let Some(v) = items.pop_front() else { break };
                                match a.try_push(v) {
                                    Ok(parked) => {
                                        n += 1;
                                        receivers_parked |= parked;
                                    }
                                    Err(TrySendError::Full(v)) => {
                                        items.push_front(v);
                                        break;
                                    }
                                    Err(TrySendError::Closed(v)) => {
                                        items.push_front(v);
                                        closed = true;
                                    }
                                }
                            }
                            Ok((k, parked)) => {
                                n += k;
                                receivers_parked |= parked;
                            }
                        }
                        if closed || items.is_empty() {
                            break;
                        }
                    }
                    // When closed, the close woke every parked receiver.
                    if closed {
                        Err(())
                    } else {
                        Ok((n, receivers_parked))
                    }
                }
                Flavor::Zero(_) => unreachable!(),
            };
            let pushed = match placed {
                Err(()) => {
                    self.send_done(key);
                    return Poll::Ready(Err(SendError(std::mem::take(items).into())));
                }
                Ok((n, wake)) => {
                    if wake {
                        self.recv_waiters.notify_many(n, self.recv_signal());
                    }
                    n
                }
            };
            if items.is_empty() {
                self.send_done(key);
                return Poll::Ready(Ok(()));
            }
            if pushed == 0 {
                if *registered {
                    return Poll::Pending;
                }
                // Register, then re-check on the next round.
                self.park_send(key, cx.waker());
                *registered = true;
            }
        }
    }
}

/// One step of waiting after a try that failed: spin a little (never on a
/// scheduler thread, see `Backoff::for_poll`), and once that is done,
/// `register` and return `true`. The caller then re-checks once more: from
/// registration on, a change either shows in that re-check or wakes the
/// waiter (`waiters.rs`).
fn wait_step(backoff: &mut Option<Backoff>, register: impl FnOnce()) -> bool {
    let b = backoff.get_or_insert_with(Backoff::for_poll);
    if b.is_done() {
        register();
        true
    } else {
        b.snooze();
        false
    }
}

/// `now + timeout`, or, where that is past what `Instant` holds (a timeout
/// of `Duration::MAX`, meaning "no limit"), a deadline a century away: the
/// `*_timeout` calls then wait as their plain forms do, where adding it to
/// `Instant::now()` would panic.
#[cfg(not(loom))]
pub(crate) fn deadline_after(timeout: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    let now = Instant::now();
    now.checked_add(timeout).unwrap_or(now + CENTURY)
}

/// A receive with a deadline: `None` is the timeout.
#[cfg(not(loom))]
fn timed_recv<T>(got: Option<Result<T, RecvError>>) -> Result<T, RecvTimeoutError> {
    match got {
        Some(Ok(v)) => Ok(v),
        Some(Err(RecvError)) => Err(RecvTimeoutError::Closed),
        None => Err(RecvTimeoutError::Timeout),
    }
}

// ---------------------------------------------------------------- Sender

impl<T> Sender<T> {
    /// Sends `value`, waiting for room. Fails (value inside) when closed.
    pub fn send(&self, value: T) -> Send<'_, T> {
        Send {
            sender: self,
            value: Some(value),
            key: None,
        }
    }

    /// Sends without waiting.
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        if self.detached.load(Ordering::Relaxed) {
            return Err(TrySendError::Closed(value));
        }
        self.chan.try_send(value)
    }

    /// Sends from a plain thread, parking it while the channel is full.
    pub fn send_blocking(&self, value: T) -> Result<(), SendError<T>> {
        blocking::block_on(pin!(self.send(value)))
    }

    /// Like [`Sender::send_blocking`], giving up after `timeout`.
    #[cfg(not(loom))]
    pub fn send_timeout_blocking(
        &self,
        value: T,
        timeout: Duration,
    ) -> Result<(), SendTimeoutError<T>> {
        self.send_deadline_blocking(value, deadline_after(timeout))
    }

    /// Like [`Sender::send_blocking`], giving up at `deadline`.
    #[cfg(not(loom))]
    pub fn send_deadline_blocking(
        &self,
        value: T,
        deadline: Instant,
    ) -> Result<(), SendTimeoutError<T>> {
        let mut fut = self.send(value);
        let sent = blocking::block_on_until(Pin::new(&mut fut), deadline);
        self.finish_timed_send(fut, sent)
    }

    /// Like [`Sender::send`], giving up after `timeout` (a `spindle::time`
    /// timer: call it inside a runtime). On timeout the value comes back in
    /// `SendTimeoutError::Timeout`.
    #[cfg(not(loom))]
    pub async fn send_timeout(
        &self,
        value: T,
        timeout: Duration,
    ) -> Result<(), SendTimeoutError<T>> {
        self.send_deadline(value, deadline_after(timeout)).await
    }

    /// Like [`Sender::send`], giving up at `deadline`.
    #[cfg(not(loom))]
    pub async fn send_deadline(
        &self,
        value: T,
        deadline: Instant,
    ) -> Result<(), SendTimeoutError<T>> {
        let mut fut = self.send(value);
        let mut sleep = crate::time::sleep_until(deadline);
        let sent = std::future::poll_fn(|cx| match Pin::new(&mut fut).poll(cx) {
            Poll::Ready(r) => Poll::Ready(Some(r)),
            Poll::Pending => Pin::new(&mut sleep).poll(cx).map(|()| None),
        })
        .await;
        self.finish_timed_send(fut, sent)
    }

    /// The end of a send with a deadline: `sent` is `None` on timeout, and
    /// the value is then taken back (unless a receiver got it meanwhile).
    #[cfg(not(loom))]
    fn finish_timed_send(
        &self,
        mut fut: Send<'_, T>,
        sent: Option<Result<(), SendError<T>>>,
    ) -> Result<(), SendTimeoutError<T>> {
        match sent {
            Some(Ok(())) => Ok(()),
            Some(Err(SendError(v))) => Err(SendTimeoutError::Closed(v)),
            None => match self.chan.abandon_send(&mut fut.value, &mut fut.key) {
                Some(v) => Err(SendTimeoutError::Timeout(v)),
                // A receiver took it at the last moment (rendezvous).
                None => Ok(()),
            },
        }
    }

    /// Sends every item, placing as many as fit under one synchronisation and
    /// waiting for room for the rest. On close, the unsent items come back.
    ///
    /// Not cancel-safe: dropped before it completes (a losing `select!` arm,
    /// an expired timeout), it has sent the items placed so far and drops
    /// the rest.
    pub fn send_batch(&self, items: Vec<T>) -> SendBatch<'_, T> {
        SendBatch {
            sender: self,
            items: items.into(),
            key: None,
            zero_value: None,
        }
    }

    /// [`Sender::send_batch`] for plain threads.
    pub fn send_batch_blocking(&self, items: Vec<T>) -> Result<(), SendError<Vec<T>>> {
        blocking::block_on(pin!(self.send_batch(items)))
    }

    /// Closes the channel for everyone: receivers drain, then see closed.
    /// Returns whether this call closed it.
    pub fn close(&self) -> bool {
        self.chan.close()
    }

    /// Whether the channel is closed.
    pub fn is_closed(&self) -> bool {
        self.chan.is_closed()
    }

    /// Messages buffered (for rendezvous: offers waiting).
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// Whether nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.chan.is_empty()
    }

    /// `Some(n)` for bounded (`0` for rendezvous), `None` for unbounded.
    pub fn capacity(&self) -> Option<usize> {
        self.chan.capacity()
    }

    /// Whether both handles belong to the same channel.
    pub fn same_channel(&self, other: &Sender<T>) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }

    fn release(&self) {
        // AcqRel: the last sender's decrement must see every other sender's
        // work before it closes (pairs with the other decrements).
        if self.chan.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.chan.close();
        }
    }
}

// The only `T` a `Sender` holds outright is `sink_pending`, touched
// exclusively through `&mut self` (the `Sink` methods and `Drop`); every
// `&self` method works on the shared channel, which is `Sync` for `T: Send`.
// SAFETY: so sharing `&Sender<T>` never shares a `&T`: `T: Sync` is not needed.
unsafe impl<T: std::marker::Send> Sync for Sender<T> {}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.senders.fetch_add(1, Ordering::Relaxed);
        Sender {
            chan: self.chan.clone(),
            sink_pending: None,
            sink_key: None,
            detached: AtomicBool::new(false),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.sink_key.is_some() {
            drop(
                self.chan
                    .abandon_send(&mut self.sink_pending, &mut self.sink_key),
            );
        }
        if !self.detached.load(Ordering::Relaxed) {
            self.release();
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

/// Future of [`Sender::send`].
#[must_use = "futures do nothing unless polled"]
pub struct Send<'a, T> {
    sender: &'a Sender<T>,
    value: Option<T>,
    key: Option<usize>,
}

// The value is never pinned: it is moved out by value when placed.
impl<T> Unpin for Send<'_, T> {}

impl<T> Future for Send<'_, T> {
    type Output = Result<(), SendError<T>>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The closure is inlined: this poll is the send's fast path.
        crate::task::coop::spend(
            cx,
            #[inline(always)]
            |cx| {
                let this = self.get_mut();
                if this.sender.detached.load(Ordering::Relaxed) {
                    if let Some(v) = this.value.take() {
                        return Poll::Ready(Err(SendError(v)));
                    }
                }
                // First poll, room in a ring: done here, inlined into the caller;
                // otherwise the out-of-line poll starts where the fast path stopped.
                // One call per `Seen` variant, each with a constant: one call taking
                // the variant as a value adds instructions to every message (the
                // callee branches on what the caller knew). The same on the
                // receive side.
                let chan = &this.sender.chan;
                if this.key.is_none() {
                    match chan.send_fast(&mut this.value) {
                        Ok(()) => return Poll::Ready(Ok(())),
                        Err(Seen::Idle) => {
                            return chan.poll_send(&mut this.value, &mut this.key, cx, Seen::Idle)
                        }
                        Err(Seen::Busy) => {
                            return chan.poll_send(&mut this.value, &mut this.key, cx, Seen::Busy)
                        }
                        Err(Seen::Nothing) => {}
                    }
                }
                if let Flavor::Zero(z) = &chan.flavor {
                    return chan.poll_send_zero(z, &mut this.value, &mut this.key, cx);
                }
                chan.poll_send(&mut this.value, &mut this.key, cx, Seen::Nothing)
            },
        )
    }
}

impl<T> Drop for Send<'_, T> {
    fn drop(&mut self) {
        if self.key.is_some() {
            drop(
                self.sender
                    .chan
                    .abandon_send(&mut self.value, &mut self.key),
            );
        }
    }
}

/// Future of [`Sender::send_batch`].
#[must_use = "futures do nothing unless polled"]
pub struct SendBatch<'a, T> {
    sender: &'a Sender<T>,
    items: std::collections::VecDeque<T>,
    key: Option<usize>,
    zero_value: Option<T>,
}

impl<T> Unpin for SendBatch<'_, T> {}

impl<T> Future for SendBatch<'_, T> {
    type Output = Result<(), SendError<Vec<T>>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            // Released by `Sink::poll_close` (which needs `&mut Sender`, so not
            // while this batch borrows it): closed for this handle, as `send`.
            if this.sender.detached.load(Ordering::Relaxed) {
                return Poll::Ready(Err(SendError(std::mem::take(&mut this.items).into())));
            }
            this.sender.chan.poll_send_batch(
                &mut this.items,
                &mut this.key,
                &mut this.zero_value,
                cx,
            )
        })
    }
}

impl<T> Drop for SendBatch<'_, T> {
    fn drop(&mut self) {
        if self.key.is_some() {
            drop(
                self.sender
                    .chan
                    .abandon_send(&mut self.zero_value, &mut self.key),
            );
        }
    }
}

// -------------------------------------------------------------- Receiver

impl<T> Receiver<T> {
    /// Receives the next message, waiting for one; fails once the channel is
    /// closed and drained. Cancel-safe.
    pub fn recv(&self) -> Recv<'_, T> {
        Recv {
            chan: &self.chan,
            key: None,
        }
    }

    /// Receives without waiting.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.chan.try_recv()
    }

    /// Receives from a plain thread, parking it while the channel is empty.
    pub fn recv_blocking(&self) -> Result<T, RecvError> {
        blocking::block_on(pin!(self.recv()))
    }

    /// Like [`Receiver::recv_blocking`], giving up after `timeout`.
    #[cfg(not(loom))]
    pub fn recv_timeout_blocking(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_deadline_blocking(deadline_after(timeout))
    }

    /// Like [`Receiver::recv_blocking`], giving up at `deadline`.
    #[cfg(not(loom))]
    pub fn recv_deadline_blocking(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        timed_recv(blocking::block_on_until(pin!(self.recv()), deadline))
    }

    /// Like [`Receiver::recv`], giving up after `timeout` (a `spindle::time`
    /// timer: call it inside a runtime). Cancel-safe: a timeout takes nothing.
    #[cfg(not(loom))]
    pub async fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_deadline(deadline_after(timeout)).await
    }

    /// Like [`Receiver::recv`], giving up at `deadline`.
    #[cfg(not(loom))]
    pub async fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        timed_recv(crate::time::timeout_at(deadline, self.recv()).await.ok())
    }

    /// Waits for at least one message, then appends up to `max` messages to
    /// `out` under one synchronisation. Returns how many. Cancel-safe.
    pub fn recv_batch<'a>(&'a self, out: &'a mut Vec<T>, max: usize) -> RecvBatch<'a, T> {
        RecvBatch {
            chan: &self.chan,
            out,
            max,
            key: None,
        }
    }

    /// Appends up to `max` available messages to `out` without waiting.
    pub fn try_recv_batch(&self, out: &mut Vec<T>, max: usize) -> Result<usize, TryRecvError> {
        self.chan.try_recv_batch(out, max)
    }

    /// [`Receiver::recv_batch`] for plain threads.
    pub fn recv_batch_blocking(&self, out: &mut Vec<T>, max: usize) -> Result<usize, RecvError> {
        blocking::block_on(pin!(self.recv_batch(out, max)))
    }

    /// Closes the channel for everyone; buffered messages stay receivable.
    /// Returns whether this call closed it.
    pub fn close(&self) -> bool {
        self.chan.close()
    }

    /// Whether the channel is closed (there may still be messages to drain).
    pub fn is_closed(&self) -> bool {
        self.chan.is_closed()
    }

    /// Messages buffered (for rendezvous: offers waiting).
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// Whether nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.chan.is_empty()
    }

    /// `Some(n)` for bounded (`0` for rendezvous), `None` for unbounded.
    pub fn capacity(&self) -> Option<usize> {
        self.chan.capacity()
    }

    /// Whether both handles belong to the same channel.
    pub fn same_channel(&self, other: &Receiver<T>) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.chan.receivers.fetch_add(1, Ordering::Relaxed);
        Receiver {
            chan: self.chan.clone(),
            stream_key: None,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.abandon_recv(&mut self.stream_key);
        // AcqRel: pairs with the other receivers' decrements.
        if self.chan.receivers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.chan.close();
            // Nobody can receive any more: drop what is buffered now rather
            // than when the last sender goes. Sends fail from here on. A
            // rendezvous channel has no buffer: its parked senders, woken by
            // the close, take their values back (orphan offers of
            // `try_send` go with the channel).
            if !matches!(self.chan.flavor, Flavor::Zero(_)) {
                while let Ok(v) = self.chan.try_recv() {
                    drop(v);
                }
            }
        }
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

/// A ring slot whose message a receive future is returning: dropped after
/// the return value is built (`array::Claim`), it frees the slot, then
/// wakes a parked sender if the claim saw one.
struct Taking<'a, T> {
    claim: array::Claim<'a, T>,
    chan: &'a Chan<T>,
}

impl<T> Drop for Taking<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        self.claim.release();
        self.chan
            .wake_sender_if(self.claim.channel(), self.claim.senders_parked());
    }
}

/// Future of [`Receiver::recv`]. Cancel-safe: see the module docs.
#[must_use = "futures do nothing unless polled"]
pub struct Recv<'a, T> {
    chan: &'a Chan<T>,
    key: Option<usize>,
}

impl<T> Future for Recv<'_, T> {
    type Output = Result<T, RecvError>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The closure is inlined: this poll is the receive's fast path.
        crate::task::coop::spend(
            cx,
            #[inline(always)]
            |cx| {
                let this = self.get_mut();
                // First poll, a message in a ring: done here, inlined into the caller.
                // A `select!` probe of an empty ring stops here too (`poll_recv`
                // would return the same `Pending`, registering nothing); otherwise an
                // empty ring goes straight to registering.
                if this.key.is_none() {
                    match this.chan.recv_fast() {
                        Ok(claim) => {
                            let taking = Taking {
                                claim,
                                chan: this.chan,
                            };
                            // SAFETY: the one read of this claim; `taking` frees the
                            // slot when dropped, after this return value is built.
                            return Poll::Ready(Ok(unsafe { taking.claim.read() }));
                        }
                        Err(Seen::Idle) if select::probing(cx) => return Poll::Pending,
                        Err(Seen::Idle) => {
                            return this.chan.poll_recv(&mut this.key, cx, Seen::Idle)
                        }
                        Err(Seen::Busy) => {
                            return this.chan.poll_recv(&mut this.key, cx, Seen::Busy)
                        }
                        Err(Seen::Nothing) => {}
                    }
                }
                match &this.chan.flavor {
                    Flavor::Zero(z) => z.poll_take(&mut this.key, cx.waker(), !select::probing(cx)),
                    _ => this.chan.poll_recv(&mut this.key, cx, Seen::Nothing),
                }
            },
        )
    }
}

impl<T> Drop for Recv<'_, T> {
    fn drop(&mut self) {
        // Nothing to give up unless a waiter or taker slot is held.
        if self.key.is_some() {
            self.chan.abandon_recv(&mut self.key);
        }
    }
}

/// Future of [`Receiver::recv_batch`].
#[must_use = "futures do nothing unless polled"]
pub struct RecvBatch<'a, T> {
    chan: &'a Chan<T>,
    out: &'a mut Vec<T>,
    max: usize,
    key: Option<usize>,
}

impl<T> Future for RecvBatch<'_, T> {
    type Output = Result<usize, RecvError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            this.chan
                .poll_recv_batch(&mut this.key, this.out, this.max, cx)
        })
    }
}

impl<T> Drop for RecvBatch<'_, T> {
    fn drop(&mut self) {
        self.chan.abandon_recv(&mut self.key);
    }
}

// ------------------------------------------------------ Stream and Sink

impl<T> futures_core::Stream for Receiver<T> {
    type Item = T;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            this.chan
                .poll_recv(&mut this.stream_key, cx, Seen::Nothing)
                .map(Result::ok)
        })
    }
}

impl<T> futures_core::FusedStream for Receiver<T> {
    fn is_terminated(&self) -> bool {
        self.chan.is_closed() && self.chan.is_empty()
    }
}

impl<T> Sender<T> {
    fn poll_flush_pending(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), SendError<T>>> {
        if self.sink_pending.is_none() && self.sink_key.is_none() {
            return Poll::Ready(Ok(()));
        }
        let r = self.chan.poll_send(
            &mut self.sink_pending,
            &mut self.sink_key,
            cx,
            Seen::Nothing,
        );
        if r.is_ready() {
            self.sink_pending = None;
        }
        r
    }
}

/// `poll_ready` waits until the previously started item is placed;
/// `start_send` holds one item; `poll_close` flushes it and releases this
/// handle (as if dropped: the channel closes once every sender is released).
impl<T> futures_sink::Sink<T> for Sender<T> {
    type Error = SendError<T>;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.get_mut().poll_flush_pending(cx)
    }

    fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
        let this = self.get_mut();
        if this.detached.load(Ordering::Relaxed) || this.chan.is_closed() {
            return Err(SendError(item));
        }
        assert!(this.sink_pending.is_none(), "start_send without poll_ready");
        this.sink_pending = Some(item);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.get_mut().poll_flush_pending(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let this = self.get_mut();
        let r = std::task::ready!(this.poll_flush_pending(cx));
        if !this.detached.swap(true, Ordering::Relaxed) {
            this.release();
        }
        Poll::Ready(r)
    }
}

impl<T> Unpin for Receiver<T> {}
impl<T> Unpin for Sender<T> {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::task::Waker;

    fn poll_once<F: Future>(f: F) -> Poll<F::Output> {
        pin!(f).poll(&mut Context::from_waker(Waker::noop()))
    }

    /// A select that finds no arm ready joins the wait lists only in its
    /// second pass; with an `else` arm it never gets there, so it leaves no
    /// waiter behind. Without `else`, it registers on every channel while
    /// pending and unregisters when it completes or is dropped.
    #[test]
    fn probing_select_registers_nothing_until_its_second_pass() {
        let (tx, rx) = bounded::<u32>(1);
        let (_tx2, rx2) = bounded::<u32>(1);
        let r = poll_once(async {
            crate::select! {
                v = rx.recv() => v.ok(),
                v = rx2.recv() => v.ok(),
                else => None,
            }
        });
        assert_eq!(r, Poll::Ready(None));
        assert_eq!(rx.chan.recv_waiters.waiting(), 0);

        // Without `else`: the second pass registers on both channels while
        // the select is pending, and the select (dropped) unregisters.
        let mut pending = Box::pin(async {
            crate::select! {
                v = rx.recv() => v.ok(),
                v = rx2.recv() => v.ok(),
            }
        });
        assert!(pending
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending());
        assert_eq!(rx.chan.recv_waiters.waiting(), 1);
        assert_eq!(rx2.chan.recv_waiters.waiting(), 1);
        tx.try_send(5).unwrap();
        assert_eq!(
            pending
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop())),
            Poll::Ready(Some(5))
        );
        drop(pending);
        assert_eq!(rx.chan.recv_waiters.waiting(), 0);
        assert_eq!(rx2.chan.recv_waiters.waiting(), 0);
    }

    /// The ring caps its wake-ups in flight (`waiters.rs`). Receives that
    /// were woken but are never polled again hold every slot: later sends
    /// wake nobody, until a send that finds the ring full nudges the next
    /// parked receiver past the cap. That receiver (a thread here) then
    /// drains the ring; without the nudge it would sleep beside a full ring
    /// and the sender beside it.
    #[test]
    fn woken_receives_set_aside_do_not_strand_a_full_ring() {
        let limit = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Room for more messages than the cap: the first `limit` sends
        // wake the set-aside receives, the next ones wake nobody.
        let cap = limit + 4;
        let (tx, rx) = bounded::<usize>(cap);
        let mut held: Vec<_> = (0..limit).map(|_| Box::pin(rx.recv())).collect();
        for r in &mut held {
            assert!(poll_once(r.as_mut()).is_pending());
        }
        let rx2 = rx.clone();
        let receiver = std::thread::spawn(move || {
            // No deadline here: a receive that times out takes what it
            // finds on the way out, which would hide a stranded ring.
            (0..cap)
                .map(|_| rx2.recv_blocking().unwrap())
                .sum::<usize>()
        });
        while rx.chan.recv_waiters.waiting() < limit + 1 {
            std::thread::yield_now();
        }
        for v in 0..cap {
            tx.try_send(v).unwrap();
        }
        assert_eq!(
            rx.chan.recv_waiters.waiting(),
            1,
            "only the thread is still parked"
        );
        // The ring is full: this send parks, nudging the thread first.
        let sent = tx.send_timeout_blocking(cap, Duration::from_secs(60));
        assert!(sent.is_ok(), "the send stranded beside a full ring");
        assert_eq!(receiver.join().unwrap(), (0..cap).sum());
        assert_eq!(rx.try_recv(), Ok(cap));
        drop(held);
    }

    /// Rendezvous, as Go's: a send that finds a parked receiver hands the
    /// value straight into it and completes in the same poll; one that finds
    /// none parks an offer. `try_send` succeeds only in the first case.
    #[test]
    fn rendezvous_send_to_a_parked_receiver_completes_at_once() {
        let (tx, rx) = rendezvous::<u32>();
        assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
        let mut recv = Box::pin(rx.recv());
        assert!(poll_once(recv.as_mut()).is_pending());
        assert_eq!(poll_once(tx.send(2)), Poll::Ready(Ok(())));
        assert_eq!(poll_once(recv.as_mut()), Poll::Ready(Ok(2)));

        let mut recv = Box::pin(rx.recv());
        assert!(poll_once(recv.as_mut()).is_pending());
        assert_eq!(tx.try_send(3), Ok(()));
        assert_eq!(poll_once(recv.as_mut()), Poll::Ready(Ok(3)));

        // No receiver parked: the send parks its offer until one comes.
        let mut send = Box::pin(tx.send(4));
        assert!(poll_once(send.as_mut()).is_pending());
        assert_eq!(rx.try_recv(), Ok(4));
        assert_eq!(poll_once(send.as_mut()), Poll::Ready(Ok(())));
    }
}
