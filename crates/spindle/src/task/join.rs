//! `JoinHandle<T>`: await a task's output; `abort` it; ask if it finished.
//!
//! Awaiting a `JoinHandle` suspends the caller until the task finishes; the
//! task runs concurrently, on whichever worker gets to it first. Only where
//! nobody could tell the difference (the current-thread runtime, where the
//! awaiting task could not run anyway) does the await run a task that has
//! not started right there, inside the await (`sched/inline.rs`). A [`Fork`]
//! (`crate::fork`, [`JoinHandle::join_here`]) asks for that inline run on
//! every runtime: the fork–join trade-off, by name. The
//! poll that returns `Ready` also lets go of the handle's reference (the
//! output is taken; nothing else is left to read), so dropping a joined
//! handle costs nothing. Each completed await spends a unit of the task's
//! cooperative budget (`coop/`).
//!
//! **Dropping a `JoinHandle` detaches the task** (as in Tokio and
//! `std::thread`): it runs on to completion and its output is dropped. Use
//! [`JoinHandle::abort`] to cancel, [`JoinHandle::abort_on_drop`] to tie the
//! task's life to a value, or [`crate::scope`] for structured lifetimes.

use super::error::{Cause, JoinError};
use super::id::Id;
use super::raw::{Header, RawTask};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

/// An owned permission to await a task's output (see the module docs for the
/// drop rule: dropping detaches).
#[must_use = "dropping a JoinHandle detaches the task; await it, or call `abort`"]
pub struct JoinHandle<T> {
    /// Released once the output was taken: the handle's reference went
    /// with it.
    task: Held,
    _output: PhantomData<T>,
}

// SAFETY: the handle only moves the output (which is `Send`) out of the task.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` only reads the atomic state or cancels.
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> Unpin for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    pub(crate) fn new(raw: RawTask) -> JoinHandle<T> {
        JoinHandle {
            task: Held::new(raw),
            _output: PhantomData,
        }
    }

    /// Asks the task to stop: if it is idle its future is dropped promptly on
    /// the runtime; if it is running, right after the current poll. Awaiting
    /// the handle then gives `Err(e)` with `e.is_cancelled()`, unless the task
    /// finished first. Idempotent.
    pub fn abort(&self) {
        if let Some(raw) = self.task.get() {
            raw.cancel();
        }
    }

    /// Whether the task has finished (output ready, panicked or cancelled).
    pub fn is_finished(&self) -> bool {
        self.task
            .get()
            .is_none_or(|raw| raw.state().is(super::state::COMPLETE))
    }

    /// The task's id (what [`task::id`](super::id) returns inside it).
    pub fn id(&self) -> Id {
        self.task.id()
    }

    /// A handle that can abort the task but not await it.
    pub fn abort_handle(&self) -> AbortHandle {
        if let Some(raw) = self.task.get() {
            raw.ref_inc();
        }
        AbortHandle { task: self.task }
    }

    /// Wraps the handle so that dropping it aborts the task.
    pub fn abort_on_drop(self) -> AbortOnDrop<T> {
        AbortOnDrop(self)
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_join(cx, Inline::WhereUnseen)
    }
}

impl<T> JoinHandle<T> {
    /// Awaits the task the way a [`Fork`] does: if it has not started and
    /// is still among this worker's fresh tasks, it runs here, inline, on
    /// the caller's stack (see [`crate::fork`] for the trade-off).
    pub fn join_here(self) -> Fork<T> {
        Fork(self)
    }

    /// A poll that takes the output if the task has finished, and never
    /// runs it inline (`Inline::Never`).
    pub(crate) fn poll_finished(&mut self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>> {
        Pin::new(self).poll_join(cx, Inline::Never)
    }

    /// One poll of the join, running the task inline first where `inline`
    /// allows (`Schedule::run_inline_if_next`).
    fn poll_join(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        inline: Inline,
    ) -> Poll<Result<T, JoinError>> {
        let raw = self
            .task
            .get()
            .expect("JoinHandle polled after it returned Ready");
        let progress = std::task::ready!(super::coop::poll_proceed(cx));
        let mut out: Poll<Result<T, Cause>> = Poll::Pending;
        if inline != Inline::Never && !raw.state().is(super::state::COMPLETE) {
            // Awaiting a task that this thread would run soon anyway: run
            // it here and now, saving a suspension of the caller and a trip
            // through the queue. When nobody else holds the task, that run
            // hands the output over and frees the cell.
            let dst = &mut out as *mut _ as *mut ();
            // The common case (no `unconstrained` section) checked here,
            // keeping the closure and the call out of every fork.
            let ran = match super::coop::set_aside() {
                // SAFETY: this is the task's handle, and `out` has its output type.
                0 => unsafe { raw.run_inline_if_next(dst, inline) },
                units => super::coop::with_own_budget(units, || {
                    // SAFETY: as above.
                    unsafe { raw.run_inline_if_next(dst, inline) }
                }),
            };
            if ran {
                self.task.release();
                progress.made_progress();
                return out.map_err(|cause| cause.with_id(self.task.id()));
            }
        }
        // SAFETY: `out` has the task's output type `T` (this handle was made
        // for a task whose future outputs `T`).
        unsafe { raw.try_read_output(&mut out as *mut _ as *mut (), cx.waker()) };
        if out.is_ready() {
            // The output is taken and the task complete: nothing is left for
            // this handle to do but let go of the cell.
            self.task.release();
            raw.drop_ref();
            progress.made_progress();
        }
        out.map_err(|cause| cause.with_id(self.task.id()))
    }
}

/// When awaiting a task may run it inline (`Schedule::run_inline_if_next`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Inline {
    /// Only where nobody could see the difference: on the current-thread
    /// runtime, where nothing else runs while the awaiting task waits.
    WhereUnseen,
    /// Wherever the task is still this thread's fresh task: the caller
    /// asked for it by name (`fork`, `join_here`).
    Asked,
    /// Never: a poll that only looks for the output
    /// (`JoinSet::try_join_next`, which never waits; a run would be one).
    Never,
}

/// A fork–join child's handle ([`crate::fork`], [`JoinHandle::join_here`]):
/// a [`JoinHandle`] whose await runs the child inline, on the caller's
/// stack, if no worker has started it yet.
#[must_use = "dropping a Fork detaches the task; await it, or call `abort`"]
#[derive(Debug)]
pub struct Fork<T>(JoinHandle<T>);

impl<T> Fork<T> {
    /// See [`JoinHandle::abort`].
    pub fn abort(&self) {
        self.0.abort()
    }

    /// See [`JoinHandle::is_finished`].
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// The plain handle, whose await never runs the task inline.
    pub fn into_handle(self) -> JoinHandle<T> {
        self.0
    }
}

impl<T> Future for Fork<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll_join(cx, Inline::Asked)
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if let Some(raw) = self.task.get() {
            raw.drop_join_handle();
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("JoinHandle");
        match self.task.get() {
            Some(raw) => d.field("state", &raw.state()),
            None => d.field("state", &"output taken"),
        }
        .finish()
    }
}

/// A handle's task: its pointer, which is also its [`Id`], and whether
/// the handle still holds a reference to it (a join handle lets go of its
/// reference when it takes the output, and keeps the pointer for `id`).
/// The flag is the pointer's bit 0, which a header's alignment leaves
/// clear, so that a handle stays one word.
#[derive(Clone, Copy)]
struct Held(RawTask);

/// `Held`'s flag: the reference was let go.
const RELEASED: usize = 1;
const _: () = assert!(std::mem::align_of::<Header>() > RELEASED);

impl Held {
    fn new(raw: RawTask) -> Held {
        Held(raw)
    }

    /// The task, while the handle holds a reference to it.
    fn get(self) -> Option<RawTask> {
        (self.0.addr() & RELEASED == 0).then_some(self.0)
    }

    /// The handle let go of its reference.
    fn release(&mut self) {
        self.0 = RawTask(self.0 .0.map_addr(|a| a | RELEASED));
    }

    fn id(self) -> Id {
        Id::from_addr(self.0.addr() & !RELEASED)
    }
}

/// Aborts a task without owning its output; cheap to keep many of.
pub struct AbortHandle {
    /// Released: made from a handle whose task had finished and been joined.
    task: Held,
}

impl AbortHandle {
    /// Wraps a reference the caller took for this handle.
    pub(crate) fn from_raw(raw: RawTask) -> AbortHandle {
        AbortHandle {
            task: Held::new(raw),
        }
    }

    /// See [`JoinHandle::abort`].
    pub fn abort(&self) {
        if let Some(raw) = self.task.get() {
            raw.cancel();
        }
    }

    /// See [`JoinHandle::is_finished`].
    pub fn is_finished(&self) -> bool {
        self.task
            .get()
            .is_none_or(|raw| raw.state().is(super::state::COMPLETE))
    }

    /// See [`JoinHandle::id`].
    pub fn id(&self) -> Id {
        self.task.id()
    }
}

impl Clone for AbortHandle {
    fn clone(&self) -> Self {
        if let Some(raw) = self.task.get() {
            raw.ref_inc();
        }
        AbortHandle { task: self.task }
    }
}

impl Drop for AbortHandle {
    fn drop(&mut self) {
        if let Some(raw) = self.task.get() {
            raw.drop_ref();
        }
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("AbortHandle");
        match self.task.get() {
            Some(raw) => d.field("state", &raw.state()),
            None => d.field("state", &"joined"),
        }
        .finish()
    }
}

/// A `JoinHandle` that aborts its task when dropped (from
/// [`JoinHandle::abort_on_drop`]): the loser of a [`crate::race`] over such
/// handles is cancelled, not detached.
#[must_use = "dropping it aborts the task"]
#[derive(Debug)]
pub struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    /// Gives the plain (detaching) handle back.
    pub fn detach(self) -> JoinHandle<T> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so the handle is moved out once.
        unsafe { std::ptr::read(&me.0) }
    }

    /// See [`JoinHandle::abort`].
    pub fn abort(&self) {
        self.0.abort()
    }
}

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, JoinError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
