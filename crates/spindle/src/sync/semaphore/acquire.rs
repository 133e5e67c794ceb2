//! [`Acquire`], the future of every async acquire: a lock-free first try,
//! then the queue.
//!
//! Invariants:
//! - A queued `Acquire` is pinned and holds its queue key; the queue holds
//!   a pointer to its `granted` flag (`queue.rs`, `GrantFlag`).
//! - `granted` is set only under the queue's lock, in the same hold that
//!   frees the entry; after that the key is stale and never used again.
//!   Every use of the key (a re-poll, the drop) reads `granted` first under
//!   the lock, so it never touches an entry that was freed or reused.
//! - The drop of a queued `Acquire` takes its entry out (or, if it was
//!   served, gives its permits back) under the lock, before its memory is
//!   freed: the queue never sets a flag that is gone.

use super::queue::{Check, Enqueue, GrantFlag};
use super::{AcquireError, Semaphore};
use crate::loom::{lock, AtomicBool, Ordering};
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A pending acquire of `n` permits; its permits belong to the caller once
/// it returns `Ready(Ok)`. Dropped before that, it gives back what it held.
pub(in crate::sync) struct Acquire<'a> {
    sem: &'a Semaphore,
    n: usize,
    /// Its key in the queue, once queued.
    key: Option<usize>,
    /// Set by the queue when it served this acquire in full (module
    /// invariants); read by later polls without the lock.
    granted: AtomicBool,
    /// The queue points at `granted`: the future must not move once queued.
    _pinned: PhantomPinned,
}

impl<'a> Acquire<'a> {
    pub(in crate::sync) fn new(sem: &'a Semaphore, n: usize) -> Acquire<'a> {
        Acquire {
            sem,
            n,
            key: None,
            granted: AtomicBool::new(false),
            _pinned: PhantomPinned,
        }
    }

    /// The first poll: take the permits, or queue with those free now.
    fn start(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
        if self.n > Semaphore::MAX_PERMITS {
            return Poll::Ready(Err(AcquireError {
                too_many: Some(self.n),
            }));
        }
        match self.sem.try_take(self.n) {
            Ok(()) => return Poll::Ready(Ok(())),
            Err(super::TryAcquireError::Closed) => return Poll::Ready(Err(AcquireError::closed())),
            Err(super::TryAcquireError::NoPermits) => {}
        }
        // SAFETY: nothing is moved out; `key` is plain data.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: `this` is pinned, so `granted` stays in place; the drop
        // takes the entry out under the lock first (module invariants).
        let flag = unsafe { GrantFlag::new(&this.granted) };
        let mut q = lock(&this.sem.queue);
        match q.enqueue(&this.sem.word, this.n, cx.waker(), flag) {
            Enqueue::Taken => Poll::Ready(Ok(())),
            Enqueue::Closed => Poll::Ready(Err(AcquireError::closed())),
            Enqueue::Queued(key) => {
                this.key = Some(key);
                Poll::Pending
            }
        }
    }

    /// Whether the queue has served this acquire; if so its key, now
    /// stale, is dropped.
    fn take_if_served(&mut self) -> bool {
        let served = self.granted.load(Ordering::Acquire);
        if served {
            self.key = None;
        }
        served
    }

    /// A later poll: served, closed, or still waiting.
    fn check(&mut self, key: usize, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
        if self.take_if_served() {
            return Poll::Ready(Ok(()));
        }
        let mut q = lock(&self.sem.queue);
        // Served since the look above: the key is stale.
        if self.take_if_served() {
            return Poll::Ready(Ok(()));
        }
        match q.check(&self.sem.word, key, cx.waker()) {
            Check::Waiting => Poll::Pending,
            Check::Closed => {
                self.key = None;
                Poll::Ready(Err(AcquireError::closed()))
            }
        }
    }
}

impl Acquire<'_> {
    /// One poll that spends no cooperative budget: for a future that
    /// spends its own unit around it (the mutex's `Lock`).
    pub(in crate::sync) fn poll_unbudgeted(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), AcquireError>> {
        match self.key {
            None => self.start(cx),
            // SAFETY: `check` moves nothing out of the pinned future.
            Some(key) => unsafe { self.get_unchecked_mut() }.check(key, cx),
        }
    }
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    /// Spends a unit of the task's budget when it completes, as a channel
    /// operation does, so that a loop of acquires that are always ready
    /// still yields (`task/coop/`).
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| self.poll_unbudgeted(cx))
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let Some(key) = self.key else {
            return; // never queued, or finished
        };
        let wakers = {
            let mut q = lock(&self.sem.queue);
            if self.granted.load(Ordering::Acquire) {
                // Served but never told: its entry is gone, its permits
                // go on to the next waiters.
                q.hand_out(&self.sem.word, self.n)
            } else {
                q.cancel(&self.sem.word, key)
            }
        };
        wakers.wake();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// More than `MAX_PERMITS` fails at once (reachable from `acquire_many`
    /// only where `usize` is 32 bits, so checked here on the inner future).
    #[test]
    fn acquire_of_more_than_the_maximum_fails_at_once() {
        let sem = Semaphore::new(0);
        let mut acquire = std::pin::pin!(Acquire::new(&sem, Semaphore::MAX_PERMITS + 1));
        let poll = acquire
            .as_mut()
            .poll(&mut Context::from_waker(std::task::Waker::noop()));
        match poll {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("MAX_PERMITS"), "{e}"),
            _ => panic!("an impossible acquire did not fail"),
        }
    }
}
