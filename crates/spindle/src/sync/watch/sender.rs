//! [`Sender`]: writes the value and wakes the receivers waiting for it.

use super::error::SendError;
use super::{Receiver, Ref, Shared};
use crate::loom::{lock, read_lock, write_lock, Ordering};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// The sending half of a watch channel; clones write the same value, and
/// the channel closes for the receivers when the last one is dropped.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// A sender of a channel holding `init`, with no receiver yet: `send`
    /// fails until [`subscribe`](Sender::subscribe) makes one.
    pub fn new(init: T) -> Sender<T> {
        Sender::from_shared(Arc::new(Shared::new(init, 0)))
    }

    pub(super) fn from_shared(shared: Arc<Shared<T>>) -> Sender<T> {
        Sender { shared }
    }

    /// Replaces the value and wakes every waiting receiver.
    ///
    /// # Errors
    /// [`SendError`] with `value` when no receiver is left; the channel's
    /// value is then left as it was.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        if self.receiver_count() == 0 {
            return Err(SendError(value));
        }
        self.send_replace(value);
        Ok(())
    }

    /// Replaces the value, whether or not any receiver is left, wakes every
    /// waiting receiver, and returns the value it replaced.
    pub fn send_replace(&self, value: T) -> T {
        let mut old = None;
        self.update(|v| {
            old = Some(std::mem::replace(v, value));
            true
        });
        old.expect("the update ran its closure")
    }

    /// Changes the value in place, whether or not any receiver is left,
    /// and wakes every waiting receiver.
    ///
    /// # Panics
    /// If `modify` panics; then no receiver is told, and what it changed
    /// before the panic stays.
    pub fn send_modify<F: FnOnce(&mut T)>(&self, modify: F) {
        self.update(|v| {
            modify(v);
            true
        });
    }

    /// Changes the value in place; if `modify` returns `true` the change
    /// is published (receivers woken, their `has_changed` true), and if it
    /// returns `false` no receiver is told. Returns what `modify` returned.
    ///
    /// # Panics
    /// If `modify` panics; then no receiver is told, and what it changed
    /// before the panic stays.
    pub fn send_if_modified<F: FnOnce(&mut T) -> bool>(&self, modify: F) -> bool {
        self.update(modify)
    }

    /// Runs `modify` under the value's write lock; if it returns `true`,
    /// moves the version on and wakes the waiting receivers.
    fn update(&self, modify: impl FnOnce(&mut T) -> bool) -> bool {
        {
            let mut value = write_lock(&self.shared.value);
            if !modify(&mut value) {
                return false;
            }
            // With the write lock held (module docs); Release pairs with
            // the receivers' Acquire loads.
            self.shared.version.fetch_add(1, Ordering::Release);
        }
        let wakers = self.shared.take_changed();
        wakers.into_iter().for_each(Waker::wake);
        true
    }

    /// The value now; a read lock that holds back every sender while it
    /// lives.
    pub fn borrow(&self) -> Ref<'_, T> {
        Ref {
            value: read_lock(&self.shared.value),
            has_changed: false,
        }
    }

    /// A new receiver, which counts the value now as seen.
    pub fn subscribe(&self) -> Receiver<T> {
        let version = {
            let mut st = lock(&self.shared.state);
            st.receivers += 1;
            self.shared.version()
        };
        Receiver::new(self.shared.clone(), version)
    }

    /// How many receivers there are.
    pub fn receiver_count(&self) -> usize {
        lock(&self.shared.state).receivers
    }

    /// How many senders there are, this one included.
    pub fn sender_count(&self) -> usize {
        lock(&self.shared.state).senders
    }

    /// Whether no receiver is left (until [`subscribe`](Sender::subscribe)
    /// makes one).
    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }

    /// Completes when no receiver is left; at once if none is. Cancel-safe.
    pub async fn closed(&self) {
        Closed {
            shared: &self.shared,
            ticket: None,
        }
        .await
    }

    /// Whether `other` sends on the same channel.
    pub fn same_channel(&self, other: &Sender<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Sender<T> {
        lock(&self.shared.state).senders += 1;
        Sender::from_shared(self.shared.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        {
            let mut st = lock(&self.shared.state);
            st.senders -= 1;
            if st.senders > 0 {
                return;
            }
            // Under the state lock, so that no clone races it (the count
            // only rises from a live sender).
            self.shared.no_senders.store(true, Ordering::Release);
        }
        let wakers = self.shared.take_changed();
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl<T: Default> Default for Sender<T> {
    /// [`Sender::new`] of `T::default()`.
    fn default() -> Sender<T> {
        Sender::new(T::default())
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.shared.state);
        f.debug_struct("Sender")
            .field("version", &self.shared.version())
            .field("senders", &st.senders)
            .field("receivers", &st.receivers)
            .finish()
    }
}

/// The future of [`Sender::closed`].
struct Closed<'a, T> {
    shared: &'a Shared<T>,
    /// Its place among the `closed()` waiters, once queued.
    ticket: Option<usize>,
}

impl<T> Future for Closed<'_, T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let mut st = lock(&this.shared.state);
        if st.receivers == 0 {
            st.closed.leave(&mut this.ticket);
            return Poll::Ready(());
        }
        st.closed.park(&mut this.ticket, cx.waker());
        Poll::Pending
    }
}

impl<T> Drop for Closed<'_, T> {
    fn drop(&mut self) {
        if self.ticket.is_some() {
            lock(&self.shared.state).closed.leave(&mut self.ticket);
        }
    }
}
