//! [`Acquire`], the future of every async acquire: a lock-free first try,
//! then the queue.

use super::queue::{Check, Enqueue};
use super::{AcquireError, Semaphore};
use crate::loom::lock;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A pending acquire of `n` permits; its permits belong to the caller once
/// it returns `Ready(Ok)`. Dropped before that, it gives back what it held.
pub(in crate::sync) struct Acquire<'a> {
    sem: &'a Semaphore,
    n: usize,
    /// Its key in the queue, once queued.
    key: Option<usize>,
}

impl<'a> Acquire<'a> {
    pub(in crate::sync) fn new(sem: &'a Semaphore, n: usize) -> Acquire<'a> {
        Acquire { sem, n, key: None }
    }

    /// The first poll: take the permits, or queue with those free now.
    fn start(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
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
        let mut q = lock(&self.sem.queue);
        match q.enqueue(&self.sem.word, self.n, cx.waker()) {
            Enqueue::Taken => Poll::Ready(Ok(())),
            Enqueue::Closed => Poll::Ready(Err(AcquireError::closed())),
            Enqueue::Queued(key) => {
                self.key = Some(key);
                Poll::Pending
            }
        }
    }

    /// A later poll: served, closed, or still waiting.
    fn check(&mut self, key: usize, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
        let mut q = lock(&self.sem.queue);
        match q.check(&self.sem.word, key, cx.waker()) {
            Check::Waiting => Poll::Pending,
            Check::Granted => {
                self.key = None;
                Poll::Ready(Ok(()))
            }
            Check::Closed => {
                self.key = None;
                Poll::Ready(Err(AcquireError::closed()))
            }
        }
    }
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.key {
            None => self.start(cx),
            Some(key) => self.check(key, cx),
        }
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let Some(key) = self.key else {
            return; // never queued, or finished
        };
        let wakers = lock(&self.sem.queue).cancel(&self.sem.word, key, self.n);
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
