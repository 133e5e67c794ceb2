//! [`Receiver`]: reads the value and waits for it to change.

use super::error::RecvError;
use super::{Ref, Shared};
use crate::loom::lock;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// The receiving half of a watch channel. Each receiver keeps the version
/// of the value it last saw; a clone starts from the same one.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The version this receiver last marked seen.
    seen: u64,
    /// Its shard of the `changed()` waiters.
    pub(super) shard: usize,
}

impl<T> Receiver<T> {
    /// A receiver already counted in `shared`, having seen `seen`.
    pub(super) fn new(shared: Arc<Shared<T>>, seen: u64) -> Receiver<T> {
        let shard = shared.pick_shard();
        Receiver {
            shared,
            seen,
            shard,
        }
    }

    /// The value now, without marking it seen; its
    /// [`has_changed`](Ref::has_changed) says whether it is new to this
    /// receiver. A read lock that holds back every sender while it lives.
    pub fn borrow(&self) -> Ref<'_, T> {
        let (value, version) = self.shared.read();
        Ref {
            value,
            has_changed: version != self.seen,
        }
    }

    /// The value now, marked seen: a later [`changed`](Receiver::changed)
    /// waits for a newer one.
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        let (value, version) = self.shared.read();
        let has_changed = version != self.seen;
        self.seen = version;
        Ref { value, has_changed }
    }

    /// Whether a value newer than the one last seen is there.
    ///
    /// # Errors
    /// [`RecvError`] once every sender is gone, whether or not the last
    /// value is seen (as Tokio's; [`changed`](Receiver::changed) still
    /// returns an unseen one first).
    pub fn has_changed(&self) -> Result<bool, RecvError> {
        if !self.shared.has_senders() {
            return Err(RecvError(()));
        }
        Ok(self.shared.version() != self.seen)
    }

    /// Whether every sender is gone.
    pub fn is_closed(&self) -> bool {
        !self.shared.has_senders()
    }

    /// Counts the value as not seen: `has_changed` is true and `changed`
    /// returns at once, until the value is marked seen again.
    pub fn mark_changed(&mut self) {
        // Versions only grow, so one below the last seen is none that
        // the channel can hold now.
        self.seen = self.seen.wrapping_sub(1);
    }

    /// Counts the value now as seen, without borrowing it.
    pub fn mark_unchanged(&mut self) {
        self.seen = self.shared.version();
    }

    /// Waits for a value newer than the one last seen, and marks it seen;
    /// returns at once if there is one already.
    ///
    /// Cancel-safe: the value is marked seen only when this returns, so a
    /// dropped `changed()` leaves the next one to find the change.
    ///
    /// # Errors
    /// [`RecvError`] when every sender is gone and the last value they
    /// sent is seen.
    pub async fn changed(&mut self) -> Result<(), RecvError> {
        Changed::new(&self.shared, self.shard, &mut self.seen).await
    }

    /// Waits until `pred` holds for the value, checking the value now
    /// first and then each newer one, and returns it borrowed and marked
    /// seen. Values sent between two checks are skipped: only the latest
    /// is checked. The `Ref`'s [`has_changed`](Ref::has_changed) says
    /// whether the value was unseen when it was checked (so it is true for
    /// any value checked after a wait).
    ///
    /// # Errors
    /// [`RecvError`] when every sender is gone and `pred` did not hold for
    /// the last value they sent.
    pub async fn wait_for(
        &mut self,
        mut pred: impl FnMut(&T) -> bool,
    ) -> Result<Ref<'_, T>, RecvError> {
        // Split the borrows: the `Ref` returned borrows `shared` alone,
        // while the loop goes on marking `seen`.
        let (shared, shard, seen) = (&*self.shared, self.shard, &mut self.seen);
        let mut waited = false;
        loop {
            {
                let (value, version) = shared.read();
                // After a wait, `Changed` marked the version it saw, which
                // this value is, or is newer than.
                let has_changed = waited || version != *seen;
                *seen = version;
                if pred(&value) {
                    return Ok(Ref { value, has_changed });
                }
            }
            Changed::new(shared, shard, seen).await?;
            waited = true;
        }
    }

    /// Whether `other` receives from the same channel.
    pub fn same_channel(&self, other: &Receiver<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Receiver<T> {
        lock(&self.shared.state).receivers += 1;
        Receiver::new(self.shared.clone(), self.seen)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let wakers = {
            let mut st = lock(&self.shared.state);
            st.receivers -= 1;
            if st.receivers > 0 {
                return;
            }
            st.closed.take_all()
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.shared.state);
        f.debug_struct("Receiver")
            .field("seen", &self.seen)
            .field("version", &self.shared.version())
            .field("senders", &st.senders)
            .finish()
    }
}

/// The future of [`Receiver::changed`], and of each wait of
/// [`Receiver::wait_for`].
struct Changed<'a, T> {
    shared: &'a Shared<T>,
    /// The receiver's shard of the `changed()` waiters.
    shard: usize,
    /// The receiver's last seen version, written only on `Ready(Ok)`.
    seen: &'a mut u64,
    /// Its key in its shard, once queued.
    key: Option<usize>,
}

impl<'a, T> Changed<'a, T> {
    fn new(shared: &'a Shared<T>, shard: usize, seen: &'a mut u64) -> Changed<'a, T> {
        Changed {
            shared,
            shard,
            seen,
            key: None,
        }
    }

    fn poll_changed(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), RecvError>> {
        let version = self.shared.version();
        if version != *self.seen && self.key.is_none() {
            *self.seen = version; // moved: no lock, nothing queued to leave
            return Poll::Ready(Ok(()));
        }
        let mut waiters = lock(&self.shared.changed[self.shard]);
        let version = self.shared.version();
        let out = if version != *self.seen {
            *self.seen = version;
            Ok(())
        } else if !self.shared.has_senders() {
            Err(RecvError(()))
        } else {
            // Queued in the same hold of the shard's lock as the
            // comparison, so a change after it finds this waker there.
            waiters.park(&mut self.key, cx.waker());
            return Poll::Pending;
        };
        waiters.leave(&mut self.key);
        Poll::Ready(out)
    }
}

impl<T> Future for Changed<'_, T> {
    type Output = Result<(), RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        crate::task::coop::spend(cx, |cx| this.poll_changed(cx))
    }
}

impl<T> Drop for Changed<'_, T> {
    fn drop(&mut self) {
        if self.key.is_some() {
            lock(&self.shared.changed[self.shard]).leave(&mut self.key);
        }
    }
}
