//! [`Sender`]: the sending half of a bounded, unbounded or rendezvous
//! channel, with its `Sink` implementation.

use std::fmt;
#[cfg(not(loom))]
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
#[cfg(not(loom))]
use std::time::{Duration, Instant};

use super::blocking;
#[cfg(not(loom))]
use super::blocking::deadline_after;
#[cfg(not(loom))]
use super::error::SendTimeoutError;
use super::error::{SendError, TrySendError};
use super::send::{Send, SendBatch};
use super::shared::{Chan, FastPath};
use crate::loom::{Arc, AtomicBool, Ordering};

/// The sending half of a bounded, unbounded or rendezvous channel.
pub struct Sender<T> {
    pub(super) chan: Arc<Chan<T>>,
    /// Sink state: a value accepted by `start_send`, not yet placed.
    pub(super) sink_pending: Option<T>,
    pub(super) sink_key: Option<usize>,
    /// Set once `Sink::poll_close` released this handle.
    pub(super) detached: AtomicBool,
}

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
        let deadline = crate::time::deadline_after(timeout);
        self.send_deadline(value, deadline).await
    }

    /// Like [`Sender::send`], giving up at `deadline` on the runtime's
    /// clock ([`crate::time::Instant`]).
    #[cfg(not(loom))]
    pub async fn send_deadline(
        &self,
        value: T,
        deadline: crate::time::Instant,
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

impl<T> Sender<T> {
    /// Places the item `start_send` holds, if any: a send, which spends a
    /// unit of the task's budget as `send` does (`task::coop`).
    fn poll_flush_pending(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), SendError<T>>> {
        if self.sink_pending.is_none() && self.sink_key.is_none() {
            return Poll::Ready(Ok(()));
        }
        let r = crate::task::coop::spend(cx, |cx| {
            self.chan.poll_send(
                &mut self.sink_pending,
                &mut self.sink_key,
                cx,
                FastPath::NotTried,
            )
        });
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
