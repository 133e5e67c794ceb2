//! The writing end of a channel, locked for one actor run ([`Tx`]).
//!
//! # Invariants
//! - A `Tx` owns the channel's producer until it is dropped, when it goes
//!   back to its [`TxHandle`](crate::TxHandle). Dropping a `Tx` does not
//!   close the channel (the next run of the actor locks it again): the
//!   channel closes with [`Tx::mark_closed`] or when the writing actor
//!   stops.
//! - Every batch operation publishes with one store; zero-copy writes
//!   ([`Tx::poke_slots`]) publish exactly the slots committed.
//! - [`Tx::wait_vacant`] also returns, once, when a shutdown request
//!   reaches the writing actor; [`Tx::send`], [`Tx::send_slice`] and
//!   [`Tx::send_batch`] do not (they end when everything is placed or the
//!   reader is gone), so a batch already taken from upstream is never lost
//!   to a shutdown.

use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::port::ChannelShared;
use crate::ring::Producer;

/// The writing end of a graph channel, locked by
/// [`TxHandle::lock`](crate::TxHandle::lock).
pub struct Tx<T> {
    shared: Arc<ChannelShared<T>>,
    prod: Option<Producer<T>>,
}

impl<T> Tx<T> {
    pub(crate) fn new(shared: Arc<ChannelShared<T>>, prod: Producer<T>) -> Tx<T> {
        Tx {
            shared,
            prod: Some(prod),
        }
    }

    #[inline]
    fn p(&mut self) -> &mut Producer<T> {
        self.prod
            .as_mut()
            .expect("a Tx holds its producer until dropped")
    }

    /// The channel's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The channel's capacity.
    pub fn capacity(&self) -> usize {
        self.shared.ring.capacity()
    }

    /// The batch size the graph declared for this channel.
    pub fn batch_hint(&self) -> usize {
        self.shared.batch
    }

    /// Free slots now.
    pub fn vacant(&mut self) -> usize {
        self.p().vacant()
    }

    /// Messages sent on this channel so far, by every run.
    pub fn sent(&self) -> u64 {
        self.shared.ring.sent()
    }

    /// Whether the reader is gone (its actor stopped): sends fail.
    pub fn is_reader_gone(&self) -> bool {
        self.shared.ring.is_consumer_gone()
    }

    /// Closes the channel: the reader drains what was sent, then sees it
    /// closed. Returns `true`, so it reads well in a shutdown vote:
    /// `ctx.is_running(|| tx.mark_closed())`.
    pub fn mark_closed(&mut self) -> bool {
        self.p().close();
        true
    }

    /// Waits until at least `n` slots are free (`n` capped at the capacity)
    /// or a shutdown request reaches this actor: `Some(free)` (possibly
    /// fewer than `n` in the second case), or `None` once the reader is
    /// gone.
    pub fn wait_vacant(&mut self, n: usize) -> WaitVacant<'_, T> {
        WaitVacant { tx: self, want: n }
    }

    /// Sends one message if there is room; gives it back otherwise.
    pub fn try_send(&mut self, value: T) -> Result<(), T> {
        if self.is_reader_gone() {
            return Err(value);
        }
        self.p().try_push(value)
    }

    /// Sends one message, waiting for room; gives it back if the reader is
    /// gone. Not interrupted by a shutdown request.
    pub async fn send(&mut self, value: T) -> Result<(), T> {
        let mut value = value;
        loop {
            match self.try_send(value) {
                Ok(()) => return Ok(()),
                Err(v) => value = v,
            }
            if poll_fn(|cx| self.p().poll_vacant(1, cx)).await.is_none() {
                return Err(value);
            }
        }
    }

    /// Moves every message of `items` into the channel in order, waiting for
    /// room as needed (one publish per run of free slots); `items` is left
    /// empty with its capacity, so a reused buffer allocates nothing.
    /// Returns how many were sent: fewer only if the reader went away (the
    /// rest stay in `items`).
    pub async fn send_batch(&mut self, items: &mut Vec<T>) -> usize {
        let mut sent = 0;
        while !items.is_empty() {
            if self.is_reader_gone() {
                break;
            }
            let n = self.p().push_from(items);
            sent += n;
            if n == 0 && poll_fn(|cx| self.p().poll_vacant(1, cx)).await.is_none() {
                break;
            }
        }
        sent
    }

    /// Moves as many messages of `items` as fit now; never waits.
    pub fn try_send_batch(&mut self, items: &mut Vec<T>) -> usize {
        if self.is_reader_gone() {
            return 0;
        }
        self.p().push_from(items)
    }
}

impl<T> Tx<T> {
    /// One poll of "at least `want` free" without the shutdown notice (for
    /// `TxLanes::wait_any_vacant`).
    pub(crate) fn poll_vacant_raw(
        &mut self,
        want: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Option<usize>> {
        self.p().poll_vacant(want, cx)
    }

    /// Consumes a shutdown notice of the writing actor.
    pub(crate) fn take_writer_notice(&self) -> bool {
        self.shared.writer.get().is_some_and(|c| c.take_notice())
    }
}

impl<T: Copy> Tx<T> {
    /// Copies as much of `src` as fits now (one publish, two copies at most
    /// when the ring wraps); never waits. Returns how many.
    pub fn try_send_slice(&mut self, src: &[T]) -> usize {
        if self.is_reader_gone() {
            return 0;
        }
        self.p().push_slice(src)
    }

    /// Copies all of `src` into the channel, waiting for room as needed.
    /// Returns how many were sent: fewer only if the reader went away.
    pub async fn send_slice(&mut self, src: &[T]) -> usize {
        let mut off = 0;
        while off < src.len() {
            if self.is_reader_gone() {
                break;
            }
            let n = self.p().push_slice(&src[off..]);
            off += n;
            if n == 0 && poll_fn(|cx| self.p().poll_vacant(1, cx)).await.is_none() {
                break;
            }
        }
        off
    }
}

#[cfg(not(loom))]
impl<T: Copy + Default> Tx<T> {
    /// Up to `max` free slots of the channel's memory, to write messages in
    /// place (zero-copy; see [`SlotsMut::slices`]). Nothing is sent until
    /// [`SlotsMut::commit`]; unwritten slots hold stale or default values.
    pub fn poke_slots(&mut self, max: usize) -> SlotsMut<'_, T> {
        let p = self.p();
        let len = p.poke(max);
        SlotsMut { p, len }
    }
}

/// Free slots to write in place (see [`Tx::poke_slots`]).
#[cfg(not(loom))]
pub struct SlotsMut<'a, T: Copy + Default> {
    p: &'a mut Producer<T>,
    len: usize,
}

#[cfg(not(loom))]
impl<T: Copy + Default> SlotsMut<'_, T> {
    /// Slots reserved.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no slot is free.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The reserved slots as two runs, in order: the second is non-empty
    /// only when the ring wraps.
    pub fn slices(&mut self) -> (&mut [T], &mut [T]) {
        self.p.poked()
    }

    /// Sends the first `n` reserved slots (one store). Panics if `n`
    /// exceeds [`SlotsMut::len`].
    pub fn commit(self, n: usize) {
        self.p.publish_poked(n);
    }
}

impl<T> Drop for Tx<T> {
    fn drop(&mut self) {
        if let Some(p) = self.prod.take() {
            self.shared.release_producer(p);
        }
    }
}

impl<T> fmt::Debug for Tx<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tx")
            .field("channel", &self.shared.name)
            .finish_non_exhaustive()
    }
}

/// Future of [`Tx::wait_vacant`].
#[must_use = "futures do nothing unless polled"]
pub struct WaitVacant<'a, T> {
    tx: &'a mut Tx<T>,
    want: usize,
}

impl<T> Future for WaitVacant<'_, T> {
    type Output = Option<usize>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let this = self.get_mut();
        let want = this.want;
        let tx = &mut *this.tx;
        let p = tx.prod.as_mut().expect("held");
        if let Poll::Ready(v) = p.poll_vacant(want, cx) {
            return Poll::Ready(v);
        }
        if tx.shared.writer.get().is_some_and(|c| c.take_notice()) {
            return Poll::Ready(Some(p.vacant()));
        }
        Poll::Pending
    }
}
