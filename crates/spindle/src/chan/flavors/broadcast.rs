//! Broadcast channel: every receiver sees every message.
//!
//! A ring of `cap` slots under one mutex; message number `seq` lives in slot
//! `seq % cap` until message `seq + cap` overwrites it. Each receiver keeps
//! its own `next` sequence number and clones what it reads (`T: Clone`).
//!
//! # Lagging receivers (as tokio does)
//! Senders never wait for slow receivers. A receiver whose `next` has been
//! overwritten (`next < tail - cap`) gets `RecvError::Lagged(k)` once, with
//! `k` the number of messages it missed, and is moved to the oldest message
//! still held; its following receives continue from there.
//!
//! # Invariants (under `ring`'s mutex)
//! - `tail` is the number of messages ever sent; slots hold messages
//!   `tail.saturating_sub(cap)..tail`.
//! - A receiver's `next` only advances in the poll that returns `Ready`
//!   (cancel-safe).
//! - Each message is dropped exactly once: when overwritten, or with the
//!   channel; receivers only get clones.
//! - A send with no receiver left fails and returns the value (Go's rule for
//!   the last receiver dropped); close from either side, or the last sender
//!   dropped, lets receivers drain what they have not seen, then `Closed`.
//!
//! # Wake-ups
//! A receiver registers in the wait list *while holding the ring lock*; a
//! sender publishes under the ring lock and wakes all waiters after releasing
//! it. The ring mutex orders the two, so no wake-up is lost. Lock order:
//! ring, then the wait list's own lock; never the reverse.

use std::fmt;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};

use crate::chan::blocking;
use crate::chan::error::SendError;
use crate::chan::waiters::{Signal, WaitList};
use crate::loom::{lock, Arc, AtomicUsize, Mutex, Ordering};

/// Why a broadcast `recv` produced no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvError {
    /// Closed, and this receiver has seen everything.
    Closed,
    /// This receiver fell behind and missed this many messages; it now
    /// continues from the oldest message still held.
    Lagged(u64),
}

/// Why a broadcast `try_recv` produced no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryRecvError {
    /// Nothing new yet.
    Empty,
    /// Closed, and this receiver has seen everything.
    Closed,
    /// See [`RecvError::Lagged`].
    Lagged(u64),
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvError::Closed => f.write_str("broadcast channel closed"),
            RecvError::Lagged(k) => write!(f, "receiver lagged by {k} messages"),
        }
    }
}
impl std::error::Error for RecvError {}

struct Ring<T> {
    slots: Vec<Option<T>>,
    tail: u64,
    closed: bool,
}

struct Shared<T> {
    ring: Mutex<Ring<T>>,
    waiters: WaitList,
    senders: AtomicUsize,
    receivers: AtomicUsize,
}

/// Sending half of a broadcast channel.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// Receiving half of a broadcast channel; a clone continues from the same
/// position as its original.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    next: u64,
    /// `Stream` state: the wait key of `poll_next`.
    stream_key: Option<usize>,
}

/// A broadcast channel holding the last `cap` messages (`cap > 0`).
pub fn channel<T: Clone>(cap: usize) -> (Sender<T>, Receiver<T>) {
    assert!(cap > 0, "broadcast capacity must be at least 1");
    let shared = Arc::new(Shared {
        ring: Mutex::new(Ring {
            slots: (0..cap).map(|_| None).collect(),
            tail: 0,
            closed: false,
        }),
        waiters: WaitList::new(),
        senders: AtomicUsize::new(1),
        receivers: AtomicUsize::new(1),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver {
            shared,
            next: 0,
            stream_key: None,
        },
    )
}

impl<T> Sender<T> {
    /// Sends to every current receiver; never waits. Fails when closed or when
    /// no receiver is left, returning the value.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        let old = {
            let mut r = lock(&self.shared.ring);
            // Relaxed: the count is only a hint racing with drops anyway; a
            // receiver dropped right after we looked sees nothing.
            if r.closed || self.shared.receivers.load(Ordering::Relaxed) == 0 {
                return Err(SendError(value));
            }
            let cap = r.slots.len() as u64;
            let i = (r.tail % cap) as usize;
            r.tail += 1;
            // Read under the ring lock: a receiver registers under it too,
            // so one that registered before us is counted here, and one that
            // registers after us sees the new message.
            (r.slots[i].replace(value), self.shared.waiters.waiting() > 0)
        };
        drop(old.0);
        if old.1 {
            self.shared.waiters.notify_all(Signal::Fence);
        }
        Ok(())
    }

    /// A new receiver that sees messages sent from now on.
    pub fn subscribe(&self) -> Receiver<T> {
        self.shared.receivers.fetch_add(1, Ordering::Relaxed);
        let next = lock(&self.shared.ring).tail;
        Receiver {
            shared: self.shared.clone(),
            next,
            stream_key: None,
        }
    }

    /// Closes for everyone; receivers drain what they have not seen.
    /// Returns whether this call closed it.
    pub fn close(&self) -> bool {
        close(&self.shared)
    }

    /// Number of live receivers.
    pub fn receiver_count(&self) -> usize {
        self.shared.receivers.load(Ordering::Relaxed)
    }
}

fn close<T>(shared: &Shared<T>) -> bool {
    let did = {
        let mut r = lock(&shared.ring);
        !std::mem::replace(&mut r.closed, true)
    };
    if did {
        shared.waiters.notify_all(Signal::Fence);
    }
    did
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        // AcqRel: pairs with the other senders' decrements.
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            close(&self.shared);
        }
    }
}

impl<T: Clone> Receiver<T> {
    /// Receives the next message this receiver has not seen. Cancel-safe.
    pub fn recv(&mut self) -> Recv<'_, T> {
        Recv {
            rx: self,
            key: None,
        }
    }

    /// Receives without waiting.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let r = lock(&self.shared.ring);
        take(&mut self.next, &r)
    }

    /// Waits for the next message from a plain thread.
    pub fn recv_blocking(&mut self) -> Result<T, RecvError> {
        blocking::block_on(pin!(self.recv()))
    }

    fn poll_recv(
        &mut self,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<T, RecvError>> {
        let shared = &*self.shared;
        let r = lock(&shared.ring);
        let out = match take(&mut self.next, &r) {
            Ok(v) => Ok(v),
            Err(TryRecvError::Closed) => Err(RecvError::Closed),
            Err(TryRecvError::Lagged(k)) => Err(RecvError::Lagged(k)),
            Err(TryRecvError::Empty) => {
                // Registered under the ring lock: see the module docs.
                shared.waiters.register(key, cx.waker(), Signal::Fence);
                return Poll::Pending;
            }
        };
        drop(r);
        shared.waiters.complete(key, Signal::Fence);
        Poll::Ready(out)
    }
}

/// One receive for the receiver at `next`; advances `next` only on success
/// or lag.
fn take<T: Clone>(next: &mut u64, r: &Ring<T>) -> Result<T, TryRecvError> {
    let cap = r.slots.len() as u64;
    let oldest = r.tail.saturating_sub(cap);
    if *next < oldest {
        let missed = oldest - *next;
        *next = oldest;
        return Err(TryRecvError::Lagged(missed));
    }
    if *next < r.tail {
        let v = r.slots[(*next % cap) as usize]
            .clone()
            .expect("slots below tail hold messages");
        *next += 1;
        return Ok(v);
    }
    Err(if r.closed {
        TryRecvError::Closed
    } else {
        TryRecvError::Empty
    })
}

impl<T> Receiver<T> {
    /// Closes for everyone (as [`Sender::close`]); returns whether this
    /// call closed it.
    pub fn close(&self) -> bool {
        close(&self.shared)
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.shared.receivers.fetch_add(1, Ordering::Relaxed);
        Receiver {
            shared: self.shared.clone(),
            next: self.next,
            stream_key: None,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.shared
            .waiters
            .complete(&mut self.stream_key, Signal::Fence);
        self.shared.receivers.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Future of [`Receiver::recv`].
#[must_use = "futures do nothing unless polled"]
pub struct Recv<'a, T> {
    rx: &'a mut Receiver<T>,
    key: Option<usize>,
}

impl<T: Clone> Future for Recv<'_, T> {
    type Output = Result<T, RecvError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            this.rx.poll_recv(&mut this.key, cx)
        })
    }
}

impl<T> Drop for Recv<'_, T> {
    fn drop(&mut self) {
        // No pass-on needed: every send wakes every waiter.
        self.rx
            .shared
            .waiters
            .complete(&mut self.key, Signal::Fence);
    }
}

/// Lagged receivers skip ahead silently in the stream view; use
/// [`Receiver::recv`] to observe `Lagged`.
impl<T: Clone> futures_core::Stream for Receiver<T> {
    type Item = T;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            let mut key = this.stream_key.take();
            let out = loop {
                match this.poll_recv(&mut key, cx) {
                    Poll::Ready(Ok(v)) => break Poll::Ready(Some(v)),
                    Poll::Ready(Err(RecvError::Closed)) => break Poll::Ready(None),
                    Poll::Ready(Err(RecvError::Lagged(_))) => continue,
                    Poll::Pending => break Poll::Pending,
                }
            };
            this.stream_key = key;
            out
        })
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("broadcast::Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("broadcast::Receiver")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}
