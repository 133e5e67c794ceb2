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
//! Invariants:
//! - `live` is `CHILD` (2) for each child whose task future still exists
//!   plus `BODY` (1) while the body does; each guard takes its units back
//!   when its future is dropped (finished or cancelled), and the decrement
//!   to zero wakes the scope. The body's unit keeps `live` above zero
//!   while it spawns: children that finish as fast as they are spawned
//!   would otherwise move it to 0 and back at every child, each time with
//!   a wake (the waker's lock) and the strong count below taken and given
//!   back. An odd count means the body is still running.
//! - The guards hold the scope's state through `live`, not an `Arc`
//!   clone each: together they hold one strong count, taken by the guard
//!   that moves `live` from 0 (the body's, with the scope's own `Arc`
//!   keeping the state alive meanwhile) and given up by the guard that
//!   moves it back to 0, after its wake. A child's spawn and its end then
//!   cost one atomic read-modify-write each on the scope's line, which
//!   children finishing on another worker would otherwise bounce twice as
//!   often.
//! - The body's spawns take their children's units from units taken ahead
//!   (`PollStock`): a poll of the body gives this thread a stock of units
//!   for that scope, refilled from `live` in doubling steps (1, 2, 4, ...
//!   up to 64 children's) and given back, what is left of it, when the
//!   poll returns or unwinds. A body spawning a million children then writes `live`
//!   once per 64 of them instead of at every spawn, on a line that the
//!   children ending on the other worker keep taking away. The body's own
//!   unit is held meanwhile, so neither a refill nor the give-back moves
//!   `live` from or to 0. A spawn from anywhere else (a child, a nested
//!   scope's body) takes its units from `live` directly.
//! - The scope returns by moving `live` from 0 to `CLOSED` in one
//!   compare-and-swap; a spawn outside the body's stock adds its units
//!   and gives them back if it finds `CLOSED`. So a spawn through a
//!   `Scope` that escaped either holds units before the scope returns
//!   (which then waits for it) or panics: never a child running after the
//!   scope returned.
//! - Every child that could wait for cancellation is reachable by it: a
//!   child lists its task's abort handle in `children` when its future
//!   first returns `Pending` (then re-reads `cancelled`), and checks
//!   `cancelled` before every poll. A child that finishes in its first
//!   poll, the common case for small tasks, never takes the list's lock or
//!   a reference for it. `cancel_all` raises `cancelled` before it takes
//!   the list under its lock, so a child listed too late for it sees the
//!   flag when it re-reads it.
//!
//! `sched_ref.rs` counts a runtime's task references the same way
//! (units out holding one strong count, some taken ahead) but not with
//! these types: `live` also carries `CLOSED` and wakes the scope at 0, and
//! the stock here lives for one poll of the body, refilled in doubling
//! steps, where a scheduler thread's lives as long as the thread runs it.

#[cfg(all(test, loom))]
mod loom_model;
mod stock;

use stock::PollStock;

use crate::loom::{lock, Arc, AtomicBool, AtomicUsize, Mutex, Ordering::*};
use crate::task::{abort_handle_of, panic_message, AbortHandle, Id, JoinError, JoinHandle};
use std::any::Any;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
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
    /// The payload of the first child that panicked, and that child's id.
    Panic(Box<dyn Any + Send>, Id),
    Failed(E),
}

struct Inner<E> {
    /// Abort handles of the children that have suspended (module docs);
    /// finished ones are pruned lazily.
    children: Mutex<Vec<AbortHandle>>,
    live: AtomicUsize,
    waker: Mutex<Option<Waker>>,
    /// Set by the first failure; cancels the body and every child.
    cancelled: AtomicBool,
    failure: Mutex<Option<Failure<E>>>,
    /// Set when the scope's future was dropped unfinished; later spawns
    /// are refused (a scope that returned says so in `live`: `CLOSED`).
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
            .field("live", &((self.inner.live.load(Relaxed) & !CLOSED) / CHILD))
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
        // A failure racing with this spawn is seen by the child's first poll.
        let guard = match PollStock::take_child(&self.inner) {
            Some(guard) => guard, // the body is running: not closed
            None => Guard::try_new(&self.inner, CHILD)
                .filter(|_| !self.inner.closed.load(Acquire))
                .expect("Scope::spawn after the scope returned"),
        };
        crate::spawn(Child::new(future, guard))
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

    /// Cancels every child and the body, as a failure would (without one):
    /// the scope returns once they are gone, with `Err(Cancelled)`.
    pub fn cancel(&self) {
        self.inner.cancel_all();
    }

    /// Children not finished yet. Exact on the thread polling the body;
    /// elsewhere it may count up to 63 more while the body is being polled
    /// (units taken ahead for its spawns).
    pub fn live(&self) -> usize {
        (self.inner.live.load(Acquire) & !CLOSED) / CHILD - PollStock::held(&self.inner)
    }
}

impl<E> Inner<E> {
    fn new() -> Inner<E> {
        Inner {
            children: Mutex::new(Vec::new()),
            live: AtomicUsize::new(0),
            waker: Mutex::new(None),
            cancelled: AtomicBool::new(false),
            failure: Mutex::new(None),
            closed: AtomicBool::new(false),
        }
    }

    /// Returns the scope: moves `live` from 0 to `CLOSED`; `false` while a
    /// unit is out.
    fn close(&self) -> bool {
        self.live
            .compare_exchange(0, CLOSED, AcqRel, Acquire)
            .is_ok()
    }

    /// The scope's own id, for an error that no single task caused: its
    /// allocation's address, which no task shares while the scope lives.
    fn id(&self) -> Id {
        Id::from_addr(self as *const Inner<E> as usize)
    }

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
        // Before the list is taken (module docs): a child listed after that
        // sees the flag.
        self.cancelled.store(true, Release);
        let handles = std::mem::take(&mut *lock(&self.children));
        for h in handles {
            h.abort();
        }
        self.wake();
    }

    /// Lists the child task that `waker` wakes, at its first suspension.
    fn list(&self, waker: &Waker) {
        let Some(handle) = abort_handle_of(waker) else {
            return;
        };
        let mut children = lock(&self.children);
        let live = self.live.load(Relaxed) / CHILD;
        if children.len() >= 2 * live.max(16) {
            children.retain(|h| !h.is_finished());
        }
        children.push(handle);
    }

    fn wake(&self) {
        if let Some(w) = lock(&self.waker).take() {
            w.wake();
        }
    }
}

/// A child's units of `live` (module docs).
const CHILD: usize = 2;
/// `live`'s top bit: the scope returned. Set only by moving `live` from 0
/// (`Inner::close`), so no unit is out when it is; a spawn that finds it
/// gives its units straight back and panics. One atomic word for both, so
/// a spawn through an escaped `Scope` cannot slip in between the scope's
/// "no child left" and its return.
const CLOSED: usize = 1 << (usize::BITS - 1);
/// The body's unit of `live`: the count is odd while the body runs.
const BODY: usize = 1;

/// A hold on a scope's `live` count: a child's (`CHILD`), given back when
/// the child's future is dropped, however that happens, or the body's
/// (`BODY`), given back when the body has finished or is dropped (module
/// docs).
struct Guard<E> {
    scope: NonNull<Inner<E>>,
    units: usize,
}

// SAFETY: the guard stands for a share of an `Arc<Inner<E>>`'s strong count
// and only reaches what such an `Arc` would: `Send` when the `Arc` is.
unsafe impl<E: Send> Send for Guard<E> {}

impl<E> Guard<E> {
    /// Takes `units` of `inner`'s `live` count (the scope has not returned:
    /// its body is running, or this is the body's own guard).
    fn new(inner: &Arc<Inner<E>>, units: usize) -> Guard<E> {
        Guard::try_new(inner, units).expect("a guard taken in a scope that returned")
    }

    /// As `new`, or `None` if the scope returned (`CLOSED`).
    fn try_new(inner: &Arc<Inner<E>>, units: usize) -> Option<Guard<E>> {
        let before = inner.live.fetch_add(units, AcqRel);
        if before & CLOSED != 0 {
            // Nobody holds units once it is closed: give ours back as if
            // never taken (the count stays at CLOSED for every other reader).
            inner.live.fetch_sub(units, Relaxed);
            return None;
        }
        if before == 0 {
            // The holders' strong count (module docs); `inner` keeps the
            // state alive until it is taken.
            // SAFETY: `inner` is a live `Arc` of this state.
            unsafe { Arc::increment_strong_count(Arc::as_ptr(inner)) };
        }
        // From `Arc::as_ptr`: the pointer reaches the whole allocation, whose
        // count the last guard gives back.
        let scope = NonNull::new(Arc::as_ptr(inner).cast_mut()).expect("an Arc is never at null");
        Some(Guard { scope, units })
    }

    fn scope(&self) -> &Inner<E> {
        // SAFETY: while this guard's units of `live` are out, the holders'
        // strong count keeps the state alive (module docs).
        unsafe { self.scope.as_ref() }
    }
}

impl<E> Drop for Guard<E> {
    fn drop(&mut self) {
        if self.scope().live.fetch_sub(self.units, AcqRel) == self.units {
            self.scope().wake();
            // The last holder out gives up the holders' strong count: only
            // the guard that moves `live` to 0 does, once per move from 0.
            // SAFETY: so that count is still held; the pointer is this
            // state's, from `Arc::as_ptr`.
            unsafe { Arc::decrement_strong_count(self.scope.as_ptr().cast_const()) };
        }
    }
}

/// A child task's future: the user's future plus the scope guard.
struct Child<F, E> {
    future: F,
    guard: Guard<E>,
    /// The task is in the scope's `children` list.
    listed: bool,
}

impl<F, E> Child<F, E> {
    /// A child of the scope that `guard` holds a child's units of.
    fn new(future: F, guard: Guard<E>) -> Child<F, E> {
        Child {
            future,
            guard,
            listed: false,
        }
    }
}

/// Cancels the task whose poll is running with `cx` (a scope's child: a
/// spindle task, polled with its own waker), which drops its future once
/// this poll returns `Pending`. `false` for a waker of anything else.
fn cancel_own_task(cx: &Context<'_>) -> bool {
    abort_handle_of(cx.waker()).map(|h| h.abort()).is_some()
}

impl<F: Future, E> Future for Child<F, E> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned (never moved out of the
        // pinned `Child`); `guard` is not pinned and only read.
        let this = unsafe { self.get_unchecked_mut() };
        let scope = this.guard.scope();
        if scope.cancelled.load(Acquire) && cancel_own_task(cx) {
            return Poll::Pending;
        }
        // SAFETY: as above.
        let fut = unsafe { Pin::new_unchecked(&mut this.future) };
        match catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
            Ok(Poll::Pending) => {
                if !this.listed {
                    this.listed = true;
                    scope.list(cx.waker());
                    // Cancelled before the list was ours to join: its
                    // taker may have missed us (module docs).
                    if scope.cancelled.load(Acquire) {
                        cancel_own_task(cx);
                    }
                }
                Poll::Pending
            }
            Ok(ready) => ready,
            Err(payload) => {
                // The scope keeps the payload; this child's handle gets the message.
                let message = panic_message(&*payload);
                // A child is polled as its own task, so it has an id; the
                // scope's own would stand in for one polled any other way.
                let id = crate::task::try_id().unwrap_or_else(|| scope.id());
                scope.fail(Failure::Panic(payload, id));
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
    let inner = Arc::new(Inner::new());
    let scope = Scope {
        inner: inner.clone(),
    };
    ScopeFuture {
        body_guard: Some(Guard::new(&inner, BODY)),
        body: Some(body(scope)),
        output: None,
        inner,
        done: false,
    }
    .await
}

struct ScopeFuture<Fut: Future, E> {
    body: Option<Fut>,
    /// The body's unit of `live`, given back once `body` is gone.
    body_guard: Option<Guard<E>>,
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
            let polled = {
                let _stock = PollStock::open(&this.inner);
                body.poll(cx)
            };
            if let Poll::Ready(v) = polled {
                this.output = Some(v);
                this.body = None;
            } else if !this.inner.cancelled.load(Acquire) {
                return Poll::Pending;
            } else {
                this.body = None;
            }
        }
        if this.body.is_none() {
            // Its wake (when the last child had gone already) only wakes
            // this task, which is about to return.
            this.body_guard = None;
        }
        if !this.inner.close() {
            // A unit is out: the guard that gives the last one back wakes us.
            return Poll::Pending;
        }
        this.done = true;
        let failure = lock(&this.inner.failure).take();
        Poll::Ready(match failure {
            Some(Failure::Panic(p, id)) => Err(ScopeError::Task(JoinError::panic(p, id))),
            Some(Failure::Failed(e)) => Err(ScopeError::Failed(e)),
            // A cancel gives `Cancelled` even when the body had finished:
            // children were cut short all the same.
            None => match this.output.take() {
                Some(v) if !this.inner.cancelled.load(Acquire) => Ok(v),
                _ => Err(ScopeError::Task(JoinError::cancelled(this.inner.id()))),
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
