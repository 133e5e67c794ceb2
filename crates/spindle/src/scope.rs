//! Structured concurrency: a scope returns only when every task spawned in it
//! has finished or been cancelled.
//!
//! ```
//! # spindle::Runtime::new().unwrap().block_on(async {
//! let total = spindle::scope(|s| async move {
//!     let a = s.spawn(async { 1 });
//!     let b = s.spawn(async { 2 });
//!     a.await.unwrap() + b.await.unwrap()
//! })
//! .await
//! .unwrap();
//! assert_eq!(total, 3);
//! # });
//! ```
//!
//! Rules:
//! - Children are `'static` tasks (as with `spawn`): an async scope cannot
//!   lend its stack to children soundly, because a future may be forgotten
//!   without being dropped. Share data with `Arc`, or move it in.
//! - The scope's future completes only after its body and every child have
//!   finished. Dropping a child's `JoinHandle` does not detach it from the scope.
//! - A child that panics (or, in [`try_scope`], returns `Err`) cancels the
//!   body and every sibling; once they are all gone the scope returns the
//!   panic as `Err(JoinError)` (or the child's error). The first failure wins.
//! - Dropping the scope's future before it completes aborts every child
//!   (they are dropped at their next suspension point; the drop cannot wait).
//! - Nested scopes nest: cancelling an outer scope cancels the inner scope's
//!   task, whose drop aborts the inner children.
//!
//! Invariant: `live` counts children whose task future still exists; each
//! child's guard decrements it when the future is dropped (finished or
//! cancelled), and the decrement to zero wakes the scope.

use crate::loom::{lock, Arc, AtomicBool, AtomicUsize, Mutex, Ordering::*};
use crate::task::{panic_message, AbortHandle, JoinError, JoinHandle};
use std::any::Any;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Why a [`try_scope`] failed.
#[derive(Debug)]
pub enum ScopeError<E> {
    /// A child (or the body) panicked — the payload is inside — or the scope
    /// was cancelled with [`Scope::cancel`].
    Task(JoinError),
    /// A child returned this error.
    Failed(E),
}

impl<E: fmt::Display> fmt::Display for ScopeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopeError::Task(e) => write!(f, "a scoped task failed: {e}"),
            ScopeError::Failed(e) => write!(f, "a scoped task returned an error: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for ScopeError<E> {}

enum Failure<E> {
    Panic(Box<dyn Any + Send>),
    Failed(E),
}

struct Inner<E> {
    /// Children's abort handles; finished ones are pruned lazily.
    children: Mutex<Vec<AbortHandle>>,
    live: AtomicUsize,
    waker: Mutex<Option<Waker>>,
    /// Set by the first failure; cancels the body and every child.
    cancelled: AtomicBool,
    failure: Mutex<Option<Failure<E>>>,
    /// Set when the scope returned; later spawns are refused.
    closed: AtomicBool,
}

/// A handle for spawning into a scope; cheap to clone into children (so
/// they can spawn siblings).
pub struct Scope<E = Infallible> {
    inner: Arc<Inner<E>>,
}

impl<E> Clone for Scope<E> {
    fn clone(&self) -> Self {
        Scope {
            inner: self.inner.clone(),
        }
    }
}

impl<E> fmt::Debug for Scope<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("live", &self.inner.live.load(Relaxed))
            .finish()
    }
}

impl<E: Send + 'static> Scope<E> {
    /// Spawns a child onto the current runtime. Awaiting the handle is
    /// optional: the scope waits for the child either way.
    ///
    /// # Panics
    /// If the scope has already returned (a `Scope` that escaped it).
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_child(future)
    }

    /// Spawns a child whose `Err` fails the scope: siblings and the body are
    /// cancelled and [`try_scope`] returns `ScopeError::Failed(e)`. The child's
    /// own handle then gives `Ok(Err(..))` with the error moved out (`None`).
    #[track_caller]
    pub fn spawn_try<F, T>(&self, future: F) -> JoinHandle<Result<T, Option<E>>>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: Send + 'static,
    {
        let scope = self.inner.clone();
        self.spawn(async move {
            match future.await {
                Ok(v) => Ok(v),
                Err(e) => {
                    scope.fail(Failure::Failed(e));
                    Err(None)
                }
            }
        })
    }

    #[track_caller]
    fn spawn_child<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let inner = &self.inner;
        assert!(
            !inner.closed.load(Acquire),
            "Scope::spawn after the scope returned"
        );
        inner.live.fetch_add(1, AcqRel);
        let child = Child {
            future,
            guard: Guard {
                scope: inner.clone(),
            },
        };
        let handle = crate::spawn(child);
        let mut children = lock(&inner.children);
        let live = inner.live.load(Relaxed);
        if children.len() >= 2 * live.max(16) {
            children.retain(|h| !h.is_finished());
        }
        children.push(handle.abort_handle());
        // A failure that raced with this spawn: make sure the newcomer goes too.
        if inner.cancelled.load(Acquire) {
            handle.abort();
        }
        handle
    }

    /// Cancels every child and the body, as a failure would (without one):
    /// the scope returns once they are gone, with `Err(Cancelled)`.
    pub fn cancel(&self) {
        self.inner.cancel_all();
    }

    /// Children not finished yet.
    pub fn live(&self) -> usize {
        self.inner.live.load(Acquire)
    }
}

impl<E> Inner<E> {
    fn fail(&self, f: Failure<E>) {
        {
            let mut slot = lock(&self.failure);
            if slot.is_none() {
                *slot = Some(f);
            }
        }
        self.cancel_all();
    }

    fn cancel_all(&self) {
        self.cancelled.store(true, Release);
        let handles: Vec<AbortHandle> = lock(&self.children).clone();
        for h in handles {
            h.abort();
        }
        self.wake();
    }

    fn wake(&self) {
        if let Some(w) = lock(&self.waker).take() {
            w.wake();
        }
    }
}

/// Decrements `live` when a child's future is dropped, however that happens.
struct Guard<E> {
    scope: Arc<Inner<E>>,
}

impl<E> Drop for Guard<E> {
    fn drop(&mut self) {
        if self.scope.live.fetch_sub(1, AcqRel) == 1 {
            self.scope.wake();
        }
    }
}

/// A child task's future: the user's future plus the scope guard.
struct Child<F, E> {
    future: F,
    guard: Guard<E>,
}

impl<F: Future, E> Future for Child<F, E> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned (never moved out of the
        // pinned `Child`); `guard` is not pinned and only read.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        let fut = unsafe { Pin::new_unchecked(&mut this.future) };
        match catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
            Ok(p) => p,
            Err(payload) => {
                // The scope keeps the payload; this child's handle gets the message.
                let message = panic_message(&*payload);
                this.guard.scope.fail(Failure::Panic(payload));
                resume_unwind(Box::new(message))
            }
        }
    }
}

/// Runs `body` with a [`Scope`] and returns its output once every child has
/// finished. A child's panic cancels the rest and comes back as
/// `Err(JoinError)` (`is_panic()`, payload in `into_panic`); a
/// [`Scope::cancel`] gives `Err` with `is_cancelled()`.
pub async fn scope<T, F, Fut>(body: F) -> Result<T, JoinError>
where
    F: FnOnce(Scope) -> Fut,
    Fut: Future<Output = T>,
{
    match try_scope::<T, Infallible, F, Fut>(body).await {
        Ok(v) => Ok(v),
        Err(ScopeError::Task(e)) => Err(e),
        Err(ScopeError::Failed(never)) => match never {},
    }
}

/// As [`scope`], for children spawned with [`Scope::spawn_try`]: the first
/// child error cancels the rest and is returned as `ScopeError::Failed`.
pub async fn try_scope<T, E, F, Fut>(body: F) -> Result<T, ScopeError<E>>
where
    E: Send + 'static,
    F: FnOnce(Scope<E>) -> Fut,
    Fut: Future<Output = T>,
{
    let inner = Arc::new(Inner {
        children: Mutex::new(Vec::new()),
        live: AtomicUsize::new(0),
        waker: Mutex::new(None),
        cancelled: AtomicBool::new(false),
        failure: Mutex::new(None),
        closed: AtomicBool::new(false),
    });
    let scope = Scope {
        inner: inner.clone(),
    };
    ScopeFuture {
        body: Some(body(scope)),
        output: None,
        inner,
        done: false,
    }
    .await
}

struct ScopeFuture<Fut: Future, E> {
    body: Option<Fut>,
    output: Option<Fut::Output>,
    inner: Arc<Inner<E>>,
    done: bool,
}

impl<Fut: Future, E> Future for ScopeFuture<Fut, E> {
    type Output = Result<Fut::Output, ScopeError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `body` is structurally pinned: it is only dropped in place
        // (`set(None)` through the pinned reference semantics below), never moved.
        let this = unsafe { self.get_unchecked_mut() };
        // Register first, so a child finishing or failing during the rest of
        // this poll wakes us.
        *lock(&this.inner.waker) = Some(cx.waker().clone());
        if this.inner.cancelled.load(Acquire) {
            this.body = None; // the body is cancelled too
        }
        if let Some(body) = this.body.as_mut() {
            // SAFETY: see above; the body is never moved while pinned.
            let body = unsafe { Pin::new_unchecked(body) };
            if let Poll::Ready(v) = body.poll(cx) {
                this.output = Some(v);
                this.body = None;
            } else if !this.inner.cancelled.load(Acquire) {
                return Poll::Pending;
            } else {
                this.body = None;
            }
        }
        if this.inner.live.load(Acquire) != 0 {
            return Poll::Pending;
        }
        this.done = true;
        this.inner.closed.store(true, Release);
        let failure = lock(&this.inner.failure).take();
        Poll::Ready(match failure {
            Some(Failure::Panic(p)) => Err(ScopeError::Task(JoinError::panic(p))),
            Some(Failure::Failed(e)) => Err(ScopeError::Failed(e)),
            // A cancel gives `Cancelled` even when the body had finished:
            // children were cut short all the same.
            None => match this.output.take() {
                Some(v) if !this.inner.cancelled.load(Acquire) => Ok(v),
                _ => Err(ScopeError::Task(JoinError::cancelled())),
            },
        })
    }
}

impl<Fut: Future, E> Drop for ScopeFuture<Fut, E> {
    fn drop(&mut self) {
        if !self.done {
            // Cancelled from outside (or unwinding from a body panic): the
            // children go too. They are 'static, so nothing dangles.
            self.inner.closed.store(true, Release);
            self.inner.cancel_all();
        }
    }
}
