//! One allocation per task: header, scheduler reference, future-or-output,
//! join waker.
//!
//! ```text
//! Cell<F, S> (repr C, one block from `alloc.rs`)
//!   Header     state word, vtable, registry key
//!   S          the scheduler reference (where `schedule` sends a Notified)
//!   Stage<F>   Running(F) | Finished(Result<F::Output, Cause>) | Consumed
//!   Option<Waker>  the JoinHandle's waker
//! ```
//!
//! Ownership of the parts (the state word, `state.rs`, decides who is who):
//! - the **stage** belongs to the poller while RUNNING; after COMPLETE, to the
//!   JoinHandle while JOIN_INTEREST is set, otherwise to the task (which drops
//!   the output at completion, or the handle drops it when it goes second);
//! - the **join waker slot** belongs to the JoinHandle while JOIN_WAKER is
//!   clear and the task is not COMPLETE; otherwise it is read-only;
//! - `registered` is read and written only by the poller (while RUNNING),
//!   and by the spawner before the task is first scheduled (spawn tracking).
//!
//! Everything is type-erased behind `RawTask` (a pointer to the header) and
//! a per-`(F, S)` vtable, so queues, wakers and handles need no generics.
//! This file holds the layout and the type-erased handles; the vtable's
//! typed entries are in `harness.rs`.

use super::error::Cause;
use super::harness::vtable;
use super::join::Inline;
use super::registry::Key;
use super::state::{Snapshot, State, ToRunning, Wake};
use crate::loom::UnsafeCell;
use std::alloc::Layout;
use std::future::Future;
use std::ptr::NonNull;
use std::task::Waker;

/// How a task reaches its scheduler. Implemented by each scheduler flavour.
///
/// Implementors are handles: all their state is behind pointers that stay
/// valid while the runtime runs (a `SchedRef`, an `Arc`). `schedule` and
/// `yield_now` are called on a bitwise copy taken out of the task's cell
/// (`Harness::scheduler_for_hand_over`), because the `Notified` they are
/// given may be run and its cell freed by another thread before they
/// return; such a call must not touch the task's copy afterwards, and
/// keeps what it needs of the runtime alive itself (`SchedRef::hold`).
pub(crate) trait Schedule: Send + Sync + Sized + 'static {
    /// A waker or an abort made the task runnable.
    fn schedule(&self, task: Notified);
    /// The task woke itself while running (`yield_now`, a spent budget):
    /// run others first.
    fn yield_now(&self, task: Notified);
    /// A waker asked for the task to be queued where an idle worker can
    /// take it at once (`wake_queued`); where there is none, a yield.
    fn schedule_queued(&self, task: Notified) {
        self.yield_now(task)
    }
    /// The task is about to go idle for the first time: keep it findable so
    /// shutdown can cancel it. Returns where it is held on success, and the
    /// poller's reference then passes to the registry as the task goes idle
    /// (`State::transition_to_idle`); `None` when the runtime is shutting
    /// down (the poller then cancels the task).
    fn register(&self, task: RawTask) -> Option<Key>;
    /// The task completed; `true` if the registry still held its reference
    /// (which the caller then drops).
    fn unregister(&self, task: RawTask, key: Key) -> bool;
    /// `JoinHandle::poll` awaits `task`, one of this scheduler's, on this
    /// thread: runs it here and now when the scheduler core this thread
    /// runs would run it next anyway and `inline` allows it
    /// (`sched/inline.rs`); `true` once it ran and its output is in `dst`.
    /// The default never runs a task inline.
    ///
    /// # Safety
    /// Only `JoinHandle::poll` calls this, for its own task, with `dst` a
    /// `Poll<Result<T, Cause>>` of the task's output type; on `true` the
    /// handle's reference is gone.
    unsafe fn run_inline_if_next(task: RawTask, dst: *mut (), inline: Inline) -> bool {
        let _ = (task, dst, inline);
        false
    }
}

pub(crate) struct Vtable {
    /// Run a `Notified` (consumes its reference).
    pub(super) poll: unsafe fn(NonNull<Header>),
    /// Send a `Notified` to the scheduler (consumes its reference).
    pub(super) schedule: unsafe fn(NonNull<Header>),
    /// Send a `Notified` to the back of the run queue, where idle workers
    /// can steal it (consumes its reference; `wake_queued`).
    pub(super) schedule_queued: unsafe fn(NonNull<Header>),
    /// Free the cell: the last reference is gone.
    pub(super) dealloc: unsafe fn(NonNull<Header>),
    /// `JoinHandle::poll`: write `Poll<Result<T, Cause>>` to `dst`.
    pub(super) try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    /// Drop the output when the handle goes after completion.
    pub(super) drop_output: unsafe fn(NonNull<Header>),
    /// Drop the joiner's waker when the handle goes before completion.
    pub(super) drop_join_waker: unsafe fn(NonNull<Header>),
    /// Cancel in place a task claimed by `transition_to_shutdown`.
    pub(super) shutdown: unsafe fn(NonNull<Header>),
    /// Run a `Notified` whose `JoinHandle` is awaiting it on this thread
    /// (`Notified::run_joined`).
    pub(super) run_joined: unsafe fn(NonNull<Header>, *mut ()) -> bool,
    /// The scheduler's `Schedule::run_inline_if_next`.
    pub(super) run_inline_if_next: unsafe fn(RawTask, *mut (), Inline) -> bool,
}

/// The part of a task every queue and waker can see.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) state: State,
    pub(crate) vtable: &'static Vtable,
    /// Where the registry holds this task, if it does (owned by the poller).
    pub(super) registered: UnsafeCell<Option<Key>>,
}

pub(super) enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, Cause>),
    Consumed,
}

#[repr(C)]
pub(super) struct Cell<F: Future, S> {
    pub(super) header: Header,
    pub(super) scheduler: S,
    pub(super) stage: UnsafeCell<Stage<F>>,
    pub(super) join_waker: UnsafeCell<Option<Waker>>,
}

/// A type-erased pointer to a task. Owns nothing by itself; the types that
/// wrap it (`Notified`, `JoinHandle`, wakers) each own one reference.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct RawTask(pub(super) NonNull<Header>);

// SAFETY: a task is shared between threads only through its atomic state
// word and parts whose ownership that word hands over (module docs); the
// future and output are `Send` (enforced at `allocate`).
unsafe impl Send for RawTask {}
// SAFETY: as for `Send`: `&RawTask` only reaches the header's atomics.
unsafe impl Sync for RawTask {}

impl RawTask {
    /// The task's address: its [`Id`](super::Id), and its name in the
    /// runtime's reports.
    pub(crate) fn addr(self) -> usize {
        self.0.as_ptr() as usize
    }
}

/// A task notified by `RawTask::notify_by_ref` and not yet scheduled: it
/// holds the `Notified`'s reference. Scheduled by `submit`, or when
/// dropped, so that a notification taken is never lost.
#[must_use = "a notified task is scheduled when this is submitted or dropped"]
pub(crate) struct Submit(RawTask);

impl Submit {
    pub(crate) fn submit(self) {
        drop(self);
    }
}

impl Drop for Submit {
    fn drop(&mut self) {
        // SAFETY: the transition that made this took a reference for the
        // `Notified` (state.rs), which scheduling consumes, once.
        unsafe { (self.0.header().vtable.schedule)(self.0 .0) }
    }
}

/// A reference that is also the one permission to run the task: it is in a
/// run queue, a LIFO slot or the injector (NOTIFIED is set while it exists).
pub(crate) struct Notified(pub(super) RawTask);

impl RawTask {
    /// Its scheduler's `Schedule::run_inline_if_next` for this task.
    ///
    /// # Safety
    /// As `Schedule::run_inline_if_next`.
    #[inline]
    pub(crate) unsafe fn run_inline_if_next(self, dst: *mut (), inline: Inline) -> bool {
        // SAFETY: the caller's contract, forwarded.
        unsafe { (self.header().vtable.run_inline_if_next)(self, dst, inline) }
    }

    /// Allocates a task: returns the `Notified` to schedule and the raw
    /// task for the `JoinHandle` (two references, `state.rs`).
    #[inline]
    pub(crate) fn allocate<F, S>(future: F, scheduler: S) -> (Notified, RawTask)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
        S: Schedule,
    {
        let cell = Cell {
            header: Header {
                state: State::new(),
                vtable: vtable::<F, S>(),
                registered: UnsafeCell::new(None),
            },
            scheduler,
            stage: UnsafeCell::new(Stage::Running(future)),
            join_waker: UnsafeCell::new(None),
        };
        let mem = super::alloc::alloc(Layout::new::<Cell<F, S>>()).cast::<Cell<F, S>>();
        // SAFETY: `mem` is a fresh block with the layout of a Cell<F, S>.
        unsafe { mem.as_ptr().write(cell) };
        let ptr = mem.cast::<Header>();
        (Notified(RawTask(ptr)), RawTask(ptr))
    }

    pub(crate) fn from_header(ptr: NonNull<Header>) -> RawTask {
        RawTask(ptr)
    }

    pub(crate) fn header_ptr(self) -> NonNull<Header> {
        self.0
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: a RawTask is only made from a live cell, and is used only
        // while its holder owns a reference (module docs).
        unsafe { self.0.as_ref() }
    }

    pub(crate) fn state(&self) -> Snapshot {
        self.header().state.load()
    }

    /// Drops one reference, freeing the cell if it was the last.
    pub(crate) fn drop_ref(self) {
        if self.header().state.ref_dec(1) {
            // SAFETY: that was the last reference; nobody can reach the cell.
            unsafe { (self.header().vtable.dealloc)(self.0) }
        }
    }

    pub(crate) fn ref_inc(self) {
        self.header().state.ref_inc();
    }

    /// `wake` by value: consumes one reference.
    pub(crate) fn wake_by_val(self) {
        match self.header().state.transition_to_notified_by_val() {
            // SAFETY: our reference became the Notified (state.rs).
            Wake::Submit => unsafe { (self.header().vtable.schedule)(self.0) },
            Wake::Nothing => self.drop_ref(),
        }
    }

    /// `wake` by value, queued behind this worker's other work rather than in
    /// its LIFO slot (see `waker::wake_queued`): consumes one reference.
    pub(crate) fn wake_queued_by_val(self) {
        match self.header().state.transition_to_notified_by_val() {
            // SAFETY: our reference became the Notified (state.rs).
            Wake::Submit => unsafe { (self.header().vtable.schedule_queued)(self.0) },
            Wake::Nothing => self.drop_ref(),
        }
    }

    /// `wake_by_ref`: takes a new reference when it must schedule.
    pub(crate) fn wake_by_ref(self) {
        if let Some(notified) = self.notify_by_ref() {
            notified.submit();
        }
    }

    /// The first half of `wake_by_ref`: the state transition. `Some`: the
    /// task was idle, a reference was taken for its `Notified`, and the
    /// caller must `submit` it (perhaps later, once out of a lock).
    #[inline]
    pub(crate) fn notify_by_ref(self) -> Option<Submit> {
        (self.header().state.transition_to_notified_by_ref() == Wake::Submit).then(|| Submit(self))
    }

    /// Asks for cancellation (abort): an idle task is scheduled so that a
    /// worker drops its future; a running one is cancelled by its poller.
    pub(crate) fn cancel(self) {
        if self.header().state.transition_to_cancelled() == Wake::Submit {
            // SAFETY: the transition took a reference for the Notified.
            unsafe { (self.header().vtable.schedule)(self.0) }
        }
    }

    /// Shutdown: cancel the task in place if it is idle. Returns whether it
    /// was cancelled here.
    pub(crate) fn shutdown(self) -> bool {
        if self.header().state.transition_to_shutdown() {
            // SAFETY: the transition made us the poller (RUNNING, one ref).
            unsafe { (self.header().vtable.shutdown)(self.0) };
            true
        } else {
            false
        }
    }

    /// `JoinHandle::poll`.
    ///
    /// # Safety
    /// Only the JoinHandle calls this, and `dst` points to a
    /// `Poll<Result<T, Cause>>` of the task's output type.
    pub(crate) unsafe fn try_read_output(self, dst: *mut (), waker: &Waker) {
        // SAFETY: forwarded from the caller's contract.
        unsafe { (self.header().vtable.try_read_output)(self.0, dst, waker) }
    }

    /// The JoinHandle is dropped: give up interest in the output, dropping it
    /// if the task already completed, then drop the handle's reference.
    pub(crate) fn drop_join_handle(self) {
        if self.header().state.unset_join_interest().is_err() {
            // SAFETY: COMPLETE with JOIN_INTEREST: the output is the handle's.
            unsafe { (self.header().vtable.drop_output)(self.0) };
        } else {
            // Not complete, and JOIN_WAKER went with the interest: the task
            // will never read the slot, so the waker goes now rather than
            // with the cell (it may hold a whole joiner alive).
            // SAFETY: the slot is the handle's (state.rs: unset_join_interest).
            unsafe { (self.header().vtable.drop_join_waker)(self.0) };
        }
        self.drop_ref();
    }
}

impl Notified {
    /// Whether this is `task`'s Notified.
    pub(crate) fn is(&self, task: RawTask) -> bool {
        self.0 == task
    }

    /// The task this is the permission to run.
    pub(crate) fn raw(&self) -> RawTask {
        self.0
    }

    /// Records that the registry holds the task (spawn tracking registers a
    /// task at spawn). Only before the `Notified` is first scheduled: its
    /// holder is then the only one who can reach `registered` (no poller yet).
    pub(crate) fn set_registered(&self, key: Key) {
        self.0.header().registered.with_mut(|p| {
            // SAFETY: no poller exists before the task is first scheduled,
            // and the JoinHandle and wakers never touch `registered`.
            unsafe { *p = Some(key) }
        })
    }

    /// The task's address: its identity in diagnostics (and models).
    pub(crate) fn addr(&self) -> usize {
        self.0.addr()
    }

    /// Turns a raw pointer taken out of a queue back into the `Notified` it was.
    ///
    /// # Safety
    /// `raw` must come from `into_raw` of a `Notified` not yet restored.
    pub(crate) unsafe fn from_raw(raw: RawTask) -> Notified {
        Notified(raw)
    }

    /// Gives up the wrapper without dropping the reference (for queues that
    /// store raw pointers).
    pub(crate) fn into_raw(self) -> RawTask {
        let raw = self.0;
        std::mem::forget(self);
        raw
    }

    /// Polls the task (consumes the Notified).
    pub(crate) fn run(self) {
        let raw = self.into_raw();
        // SAFETY: we held the Notified, which is the permission `poll` needs.
        unsafe { (raw.header().vtable.poll)(raw.0) }
    }

    /// Runs the task for its `JoinHandle`, which is awaiting it on this
    /// thread (an inline run). When the handle and this `Notified` are the
    /// only references and the poll finishes with nothing else asked of the
    /// task (`State::claim_alone`), the output goes straight to `dst` and
    /// the cell is freed here: `true`, and the handle's reference is gone
    /// with it. Otherwise this is `run`: `false`, and the handle reads the
    /// output (or waits for it) as usual.
    ///
    /// # Safety
    /// The caller holds the task's `JoinHandle` (not used while this runs),
    /// and `dst` points to a `Poll<Result<T, Cause>>` of the task's
    /// output type `T`.
    pub(crate) unsafe fn run_joined(self, dst: *mut ()) -> bool {
        let raw = self.into_raw();
        // SAFETY: we held the Notified; the rest is the caller's contract.
        unsafe { (raw.header().vtable.run_joined)(raw.0, dst) }
    }

    /// The runtime is gone: cancel the task instead of running it (the same
    /// as dropping the `Notified`, spelled out where it is meant).
    pub(crate) fn cancel_now(self) {
        drop(self)
    }
}

impl Drop for Notified {
    /// A `Notified` dropped unrun (a queue drained at shutdown) cancels its
    /// task, so the future is dropped and the JoinHandle sees `Cancelled`.
    fn drop(&mut self) {
        let raw = self.0;
        match raw.header().state.transition_to_running() {
            ToRunning::Done => raw.drop_ref(),
            // SAFETY: we are now the poller (RUNNING, our reference).
            ToRunning::Poll | ToRunning::Cancel => unsafe { (raw.header().vtable.shutdown)(raw.0) },
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_small() {
        // Three words of header; a task whose future and output are a u64
        // takes 72 bytes with its scheduler reference and waker.
        assert_eq!(std::mem::size_of::<Header>(), 24);
        assert_eq!(std::mem::size_of::<Cause>(), 8);
        type Tiny = std::future::Ready<u64>;
        assert!(std::mem::size_of::<Cell<Tiny, std::sync::Arc<()>>>() <= 72);
        // A handle is one pointer (it lets go of it once the output is taken).
        assert_eq!(std::mem::size_of::<super::super::JoinHandle<u64>>(), 8);
    }
}
