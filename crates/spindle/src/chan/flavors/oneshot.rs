//! Oneshot channel: one value, sent at most once, received at most once.
//!
//! Both halves share a small mutex-protected cell. A oneshot is used once per
//! request, so an uncontended mutex (two atomic RMWs) costs nothing that
//! matters and keeps the protocol obviously right.
//!
//! # Invariants (under the mutex)
//! - `value` is `Some` from a successful `send` until the receiver takes it in
//!   the poll that returns `Ready` (cancel-safe) or the receiver is dropped.
//! - `rx_closed`: the receiver closed or was dropped; a later `send` fails and
//!   returns its value. A value already sent stays receivable after `close`.
//! - `tx_gone`: the sender sent or was dropped; a receiver finding no value
//!   then gets `RecvError`.
//! - Wakers are woken after the mutex is released.
//!
//! The handles are not `Clone`: a second sender or receiver of a one-value
//! channel has nothing to do (use `bounded(1)` for that).

use std::fmt;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
#[cfg(not(loom))]
use std::time::Duration;

use crate::chan::blocking;
#[cfg(not(loom))]
use crate::chan::error::RecvTimeoutError;
use crate::chan::error::{RecvError, SendError, TryRecvError};
use crate::loom::{lock, Arc, Mutex};

struct Inner<T> {
    value: Option<T>,
    rx_waker: Option<Waker>,
    rx_closed: bool,
    tx_gone: bool,
}

/// Sending half of a [`oneshot`](crate::chan::oneshot()) channel.
pub struct Sender<T> {
    inner: Arc<Mutex<Inner<T>>>,
}

/// Receiving half of a [`oneshot`](crate::chan::oneshot()) channel; a future
/// of the value. Cancel-safe: polling it only takes the value when `Ready`.
pub struct Receiver<T> {
    inner: Arc<Mutex<Inner<T>>>,
}

/// A one-value channel.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let inner = Arc::new(Mutex::new(Inner {
        value: None,
        rx_waker: None,
        rx_closed: false,
        tx_gone: false,
    }));
    (
        Sender {
            inner: inner.clone(),
        },
        Receiver { inner },
    )
}

impl<T> Sender<T> {
    /// Sends the value; fails, giving it back, if the receiver is closed or
    /// gone.
    pub fn send(self, value: T) -> Result<(), SendError<T>> {
        let waker = {
            let mut g = lock(&self.inner);
            if g.rx_closed {
                return Err(SendError(value));
            }
            g.value = Some(value);
            g.tx_gone = true;
            g.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Whether the receiver closed or was dropped.
    pub fn is_closed(&self) -> bool {
        lock(&self.inner).rx_closed
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut g = lock(&self.inner);
            if g.tx_gone {
                return;
            }
            g.tx_gone = true;
            g.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Receiver<T> {
    /// Takes the value if it is there.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut g = lock(&self.inner);
        match g.value.take() {
            Some(v) => Ok(v),
            None if g.tx_gone => Err(TryRecvError::Closed),
            None => Err(TryRecvError::Empty),
        }
    }

    /// Waits for the value from a plain thread.
    pub fn recv_blocking(&mut self) -> Result<T, RecvError> {
        blocking::block_on(pin!(self))
    }

    /// Waits for the value from a plain thread, at most `timeout`.
    #[cfg(not(loom))]
    pub fn recv_timeout_blocking(&mut self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        match blocking::block_on_until(pin!(self), crate::chan::blocking::deadline_after(timeout)) {
            Some(Ok(v)) => Ok(v),
            Some(Err(RecvError)) => Err(RecvTimeoutError::Closed),
            None => Err(RecvTimeoutError::Timeout),
        }
    }

    /// Refuses any further send; a value already sent stays receivable.
    /// Returns whether this call closed it.
    pub fn close(&mut self) -> bool {
        !std::mem::replace(&mut lock(&self.inner).rx_closed, true)
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let mut g = lock(&self.inner);
            if let Some(v) = g.value.take() {
                return Poll::Ready(Ok(v));
            }
            if g.tx_gone {
                return Poll::Ready(Err(RecvError));
            }
            if !g.rx_waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                g.rx_waker = Some(cx.waker().clone());
            }
            Poll::Pending
        })
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let v = {
            let mut g = lock(&self.inner);
            g.rx_closed = true;
            g.rx_waker = None;
            g.value.take()
        };
        drop(v);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("oneshot::Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("oneshot::Receiver").finish_non_exhaustive()
    }
}
