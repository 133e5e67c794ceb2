//! The typed side of a task: the vtable built for each `(F, S)` and the
//! `Harness` its entries run through, each entry doing what `raw.rs` and
//! the state word (`state.rs`) allow its caller at that point: poll, run
//! joined, schedule, cancel in place, read or drop the output, free.

use super::error::Cause;
use super::raw::{Cell, Header, Notified, RawTask, Schedule, Stage, Vtable};
use super::registry::Key;
use super::state::{Completed, State, ToIdle, ToRunning, COMPLETE, JOIN_INTEREST, JOIN_WAKER};
use super::waker;
use crate::loom::UnsafeCell;
use std::alloc::Layout;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

pub(super) fn vtable<F, S>() -> &'static Vtable
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    &Vtable {
        poll: poll::<F, S>,
        schedule: schedule::<F, S>,
        schedule_queued: schedule_queued::<F, S>,
        dealloc: dealloc::<F, S>,
        try_read_output: try_read_output::<F, S>,
        drop_output: drop_output::<F, S>,
        drop_join_waker: drop_join_waker::<F, S>,
        shutdown: shutdown::<F, S>,
        run_joined: run_joined::<F, S>,
        run_inline_if_next: S::run_inline_if_next,
    }
}

/// Typed view of a cell, valid while the caller holds a reference.
pub(super) struct Harness<F: Future, S> {
    cell: NonNull<Cell<F, S>>,
    _p: PhantomData<(F, S)>,
}

impl<F: Future, S: Schedule> Harness<F, S> {
    fn from(ptr: NonNull<Header>) -> Self {
        Harness {
            cell: ptr.cast(),
            _p: PhantomData,
        }
    }

    fn cell(&self) -> &Cell<F, S> {
        // SAFETY: the caller holds a reference, so the cell is alive; the
        // header is first in a repr(C) cell, so the cast is exact.
        unsafe { self.cell.as_ref() }
    }

    fn raw(&self) -> RawTask {
        RawTask(self.cell.cast())
    }

    fn state(&self) -> &State {
        &self.cell().header.state
    }

    /// The scheduler, copied out of the cell for a call that hands the task
    /// over. Once its `Notified` is queued another thread may run the task
    /// and free the cell, so the call must not be made through a reference
    /// into it (a reference argument must stay valid for its whole call;
    /// miri's Stacked Borrows caught the scheduler reference freed under
    /// `schedule`).
    fn scheduler_for_hand_over(&self) -> ManuallyDrop<S> {
        // SAFETY: a bitwise copy of a handle (the `Schedule` contract),
        // never dropped: the cell's own copy keeps owning what it holds.
        ManuallyDrop::new(unsafe { std::ptr::read(&self.cell().scheduler) })
    }

    /// Replaces the stage; the caller owns it (module docs).
    ///
    /// Always inlined, closure included: LLVM otherwise keeps the closure
    /// (its `catch_unwind` looks large) out of line, a call at every
    /// completion, inline runs' included.
    #[inline(always)]
    fn set_stage(&self, stage: Stage<F>) {
        self.cell().stage.with_mut(
            #[inline(always)]
            |p| {
                // The old stage (a future or an output) is dropped in place, not
                // moved out first; its destructor may panic, and the new stage
                // is written either way (a half-dropped value is never dropped twice).
                // SAFETY: the caller owns the stage; `p` is valid and initialised.
                let _ = catch_unwind(AssertUnwindSafe(|| unsafe { std::ptr::drop_in_place(p) }));
                // SAFETY: as above; the old value is gone, so this overwrites nothing live.
                unsafe { std::ptr::write(p, stage) };
            },
        );
    }

    /// Drops the future (if still there) and stores `Cancelled`, or the panic
    /// raised by the future's destructor.
    ///
    /// The future is dropped in place, never moved out first: it is pinned
    /// in the cell (`poll_future`), and a pinned value must be dropped where
    /// it lies (self-referential futures and intrusive waiter lists rely on
    /// it; `tests/cancel.rs` checks with a probe that notes its address).
    fn cancel_stage(&self) {
        self.cell().stage.with_mut(|p| {
            // SAFETY: the caller is the poller and owns the stage; `p` is
            // valid and initialised.
            let dropped = catch_unwind(AssertUnwindSafe(|| unsafe { std::ptr::drop_in_place(p) }));
            let result = match dropped {
                Ok(()) => Cause::Cancelled,
                Err(payload) => Cause::panic(payload),
            };
            // A destructor that panicked half-way is never run again.
            // SAFETY: as above; the old value is gone: nothing live is overwritten.
            unsafe { std::ptr::write(p, Stage::Finished(Err(result))) };
        });
    }

    fn registered(&self) -> Option<Key> {
        // SAFETY: only the poller touches `registered`, and we are it.
        self.cell().header.registered.with(|p| unsafe { *p })
    }

    /// The output is in the stage: publish it, wake the joiner, release.
    /// Usually one atomic step (`State::complete_and_release`).
    fn complete(&self) {
        let mut refs = 1; // the poller's
        if let Some(key) = self.registered() {
            if self.cell().scheduler.unregister(self.raw(), key) {
                refs += 1; // the registry's
            }
        }
        // JOIN_INTEREST, once clear, stays clear: the output is then ours.
        let unread = !self.state().load().is(JOIN_INTEREST);
        if unread {
            self.set_stage(Stage::Consumed);
        }
        let snapshot = match self.state().complete_and_release(refs, unread) {
            Completed::Released { last: false } => return,
            Completed::Released { last: true } => {
                // SAFETY: those were the last references.
                return unsafe { dealloc::<F, S>(self.cell.cast()) };
            }
            Completed::Kept(snapshot) => snapshot,
        };
        if !snapshot.is(JOIN_INTEREST) {
            // The handle went between our check and the completion.
            self.set_stage(Stage::Consumed);
        } else if snapshot.is(JOIN_WAKER) {
            // The slot is read-only from COMPLETE on (module docs).
            self.cell().join_waker.with(|p| {
                // SAFETY: read-only access, no writer can exist now.
                if let Some(w) = unsafe { &*p } {
                    // A foreign executor's waker may panic: the panic stays
                    // here, so that the reference below is still released
                    // and the worker goes on (the output stays readable).
                    let _ = catch_unwind(AssertUnwindSafe(|| w.wake_by_ref()));
                }
            });
        }
        if self.state().ref_dec(refs) {
            // SAFETY: that was the last reference.
            unsafe { dealloc::<F, S>(self.cell.cast()) }
        }
    }

    /// Polls the future once, as the poller; on `Ready` the output (or the
    /// panic) is in the stage. Left to LLVM to inline: forced, `poll` and
    /// `run_joined` would each carry an inlined copy of every task type's
    /// `Future::poll`.
    fn poll_future(&self) -> Poll<()> {
        // The waker borrows the poller's reference: never dropped, only cloned.
        let waker = ManuallyDrop::new(waker::borrowed(self.raw()));
        let mut cx = Context::from_waker(&waker);
        let _polling = super::id::Polling::enter(self.raw().addr());
        let res = catch_unwind(AssertUnwindSafe(|| {
            self.cell().stage.with_mut(|p| {
                // SAFETY: the poller owns the stage.
                match unsafe { &mut *p } {
                    // SAFETY: the future stays in the heap cell until dropped in place.
                    Stage::Running(f) => unsafe { Pin::new_unchecked(f) }.poll(&mut cx),
                    _ => unreachable!("polled a task that is not running"),
                }
            })
        }));
        match res {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => {
                self.set_stage(Stage::Finished(Ok(out)));
                Poll::Ready(())
            }
            Err(panic) => {
                self.set_stage(Stage::Consumed); // drops the future
                self.set_stage(Stage::Finished(Err(Cause::panic(panic))));
                Poll::Ready(())
            }
        }
    }

    /// After a `Pending` poll: registers the task on its first one (so that
    /// shutdown can find it idle), then goes idle, or re-submits it if it
    /// was woken meanwhile, or cancels it if that was asked for.
    fn settle_pending(&self) {
        let registered_now = self.registered().is_none();
        if registered_now {
            if let Some(key) = self.cell().scheduler.register(self.raw()) {
                self.cell().header.registered.with_mut(|p| {
                    // SAFETY: only the poller touches `registered`.
                    unsafe { *p = Some(key) }
                });
            } else {
                // Shutting down: nothing would ever find this task again.
                self.cancel_stage();
                return self.complete();
            }
        }
        match self.state().transition_to_idle(registered_now) {
            ToIdle::Idle => {}
            // SAFETY: the poller's reference became the Notified.
            ToIdle::Notified => self
                .scheduler_for_hand_over()
                .yield_now(Notified(self.raw())),
            ToIdle::Cancel => {
                if registered_now {
                    // Still the poller, whose reference the registry was to
                    // take over: one of its own, as `complete` counts.
                    self.raw().ref_inc();
                }
                self.cancel_stage();
                self.complete();
            }
        }
    }
}

// The vtable's entries, below. # Safety, for each: `ptr` is the header of
// a live task cell made for this `F` and `S` (the vtable is chosen by
// them), and the caller holds the reference the entry's field doc in
// `Vtable` says it consumes or uses (a `Notified`'s, a `JoinHandle`'s, the
// last one for `dealloc`).

unsafe fn poll<F, S>(ptr: NonNull<Header>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    let h = Harness::<F, S>::from(ptr);
    match h.state().transition_to_running() {
        ToRunning::Done => return h.raw().drop_ref(),
        ToRunning::Cancel => {
            h.cancel_stage();
            return h.complete();
        }
        ToRunning::Poll => {}
    }
    if h.poll_future().is_ready() {
        return h.complete();
    }
    h.settle_pending();
}

// SAFETY (contract): as `Notified::run_joined`'s, with `ptr` its task.
unsafe fn run_joined<F, S>(ptr: NonNull<Header>, dst: *mut ()) -> bool
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    let h = Harness::<F, S>::from(ptr);
    if !h.state().claim_alone() {
        // SAFETY: we hold the Notified, which is what `poll` consumes.
        unsafe { poll::<F, S>(ptr) };
        return false;
    }
    if h.poll_future().is_pending() {
        h.settle_pending();
        return false;
    }
    if !h.state().is_alone_running() {
        h.complete();
        return false;
    }
    // Alone (state.rs): the poller's reference and the handle's are the
    // only ones, so the cell is ours to empty and free, word untouched.
    debug_assert!(
        h.registered().is_none(),
        "a registered task has a third reference"
    );
    let stage = h.cell().stage.with_mut(|p| {
        // SAFETY: we own the cell outright.
        unsafe { std::ptr::replace(p, Stage::Consumed) }
    });
    let Stage::Finished(out) = stage else {
        unreachable!("a task polled to Ready holds its output")
    };
    // SAFETY: the caller passes a `Poll<Result<F::Output, Cause>>`.
    unsafe { *dst.cast::<Poll<Result<F::Output, Cause>>>() = Poll::Ready(out) };
    // SAFETY: nobody else holds a reference, and none will be made.
    unsafe { free_cell::<F, S>(ptr) };
    true
}

unsafe fn schedule<F, S>(ptr: NonNull<Header>)
where
    F: Future,
    S: Schedule,
{
    let h = Harness::<F, S>::from(ptr);
    h.scheduler_for_hand_over().schedule(Notified(h.raw()));
}

// SAFETY (contract): `ptr` is a live task of this `(F, S)`, and the caller
// hands over the reference that becomes its `Notified` (as for `schedule`).
unsafe fn schedule_queued<F, S>(ptr: NonNull<Header>)
where
    F: Future,
    S: Schedule,
{
    let h = Harness::<F, S>::from(ptr);
    h.scheduler_for_hand_over()
        .schedule_queued(Notified(h.raw()));
}

unsafe fn shutdown<F, S>(ptr: NonNull<Header>)
where
    F: Future,
    S: Schedule,
{
    let h = Harness::<F, S>::from(ptr);
    h.cancel_stage();
    h.complete();
}

unsafe fn dealloc<F, S>(ptr: NonNull<Header>)
where
    F: Future,
{
    // SAFETY: forwarded from the caller.
    unsafe { free_cell::<F, S>(ptr) }
}

/// `dealloc`'s body, forced inline where an inline run ends
/// (`run_joined`): a call less on every fork. Elsewhere callers go
/// through `dealloc` (the vtable's entry, `complete`), whose inlining is
/// left to LLVM.
///
/// # Safety
/// `ptr` is a cell allocated for this `(F, S)`, and the last reference to
/// it is gone.
#[inline(always)]
unsafe fn free_cell<F, S>(ptr: NonNull<Header>)
where
    F: Future,
{
    let cell = ptr.cast::<Cell<F, S>>();
    // SAFETY: the last reference is gone: nobody else can reach the cell,
    // which `allocate` initialised in a block of this layout.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        std::ptr::drop_in_place(cell.as_ptr())
    }));
    // SAFETY: the block came from `alloc::alloc` with this layout.
    unsafe { super::alloc::dealloc(cell.cast(), Layout::new::<Cell<F, S>>()) };
}

unsafe fn drop_output<F, S>(ptr: NonNull<Header>)
where
    F: Future,
    S: Schedule,
{
    Harness::<F, S>::from(ptr).set_stage(Stage::Consumed);
}

// SAFETY (contract): `ptr` is a live task of this `(F, S)` whose handle
// just cleared JOIN_INTEREST and JOIN_WAKER before completion
// (`RawTask::drop_join_handle`), so the waker slot is the caller's.
unsafe fn drop_join_waker<F, S>(ptr: NonNull<Header>)
where
    F: Future,
    S: Schedule,
{
    Harness::<F, S>::from(ptr).cell().join_waker.with_mut(|p| {
        // SAFETY: JOIN_INTEREST and JOIN_WAKER were cleared before COMPLETE:
        // nobody else reads or writes the slot again.
        drop(unsafe { (*p).take() })
    });
}

unsafe fn try_read_output<F, S>(ptr: NonNull<Header>, dst: *mut (), waker: &Waker)
where
    F: Future,
    S: Schedule,
{
    let h = Harness::<F, S>::from(ptr);
    if !can_read_output(&h.cell().header, &h.cell().join_waker, waker) {
        return;
    }
    let stage = h.cell().stage.with_mut(|p| {
        // SAFETY: COMPLETE with JOIN_INTEREST: the stage is the handle's.
        unsafe { std::ptr::replace(p, Stage::Consumed) }
    });
    let out = match stage {
        Stage::Finished(out) => out,
        _ => panic!("JoinHandle polled after it returned Ready"),
    };
    // SAFETY: the caller passes a `Poll<Result<F::Output, Cause>>`.
    unsafe { *dst.cast::<Poll<Result<F::Output, Cause>>>() = Poll::Ready(out) };
}

/// The join-waker protocol (state.rs): `true` when the output can be taken;
/// otherwise `waker` is registered to be woken at completion.
fn can_read_output(header: &Header, slot: &UnsafeCell<Option<Waker>>, waker: &Waker) -> bool {
    let snapshot = header.state.load();
    if snapshot.is(COMPLETE) {
        return true;
    }
    let write = |w: &Waker| {
        slot.with_mut(|p| {
            // SAFETY: JOIN_WAKER is clear and the task is not complete: the
            // slot belongs to the handle.
            unsafe { *p = Some(w.clone()) }
        })
    };
    if snapshot.is(JOIN_WAKER) {
        let same = slot.with(|p| {
            // SAFETY: read-only while JOIN_WAKER is set.
            unsafe { &*p }.as_ref().is_some_and(|w| w.will_wake(waker))
        });
        if same {
            return false;
        }
        // Take the slot back to replace the waker.
        if header.state.unset_join_waker().is_err() {
            return true;
        }
    }
    write(waker);
    header.state.set_join_waker().is_err()
}
