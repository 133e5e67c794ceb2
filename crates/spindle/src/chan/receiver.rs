//! [`Receiver`]: the receiving half of a bounded, unbounded or rendezvous
//! channel, with its `Stream` implementation.

use std::fmt;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
#[cfg(not(loom))]
use std::time::{Duration, Instant};

use super::blocking;
#[cfg(not(loom))]
use super::blocking::{deadline_after, timed_recv};
#[cfg(not(loom))]
use super::error::RecvTimeoutError;
use super::error::{RecvError, TryRecvError};
use super::recv::{Recv, RecvBatch};
use super::shared::{Chan, FastPath, Flavor};
use crate::loom::{Arc, Ordering};

/// The receiving half of a bounded, unbounded or rendezvous channel.
pub struct Receiver<T> {
    pub(super) chan: Arc<Chan<T>>,
    /// `Stream` state: the wait key of `poll_next`.
    pub(super) stream_key: Option<usize>,
}

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
        self.recv_deadline(crate::time::deadline_after(timeout))
            .await
    }

    /// Like [`Receiver::recv`], giving up at `deadline` on the runtime's
    /// clock ([`crate::time::Instant`]).
    #[cfg(not(loom))]
    pub async fn recv_deadline(
        &self,
        deadline: crate::time::Instant,
    ) -> Result<T, RecvTimeoutError> {
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

impl<T> futures_core::Stream for Receiver<T> {
    type Item = T;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            this.chan
                .poll_recv(&mut this.stream_key, cx, FastPath::NotTried)
                .map(Result::ok)
        })
    }
}

impl<T> futures_core::FusedStream for Receiver<T> {
    fn is_terminated(&self) -> bool {
        self.chan.is_closed() && self.chan.is_empty()
    }
}
