//! Wakers are task references: clone takes one, drop releases one, wake
//! schedules the task through the state word (`state.rs`).

use super::join::AbortHandle;
use super::raw::{Header, RawTask, Submit};
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

// # Safety, for the four entries: `ptr` is the header of a live task, from a
// waker of this vtable, which holds one reference to it (`wake` and
// `drop_waker` consume it, `clone` adds one, `wake_by_ref` uses it).

fn raw(ptr: *const ()) -> RawTask {
    // SAFETY: every waker of this vtable was made from a live header pointer.
    RawTask::from_header(unsafe { NonNull::new_unchecked(ptr as *mut Header) })
}

unsafe fn clone(ptr: *const ()) -> RawWaker {
    raw(ptr).ref_inc();
    RawWaker::new(ptr, &VTABLE)
}

unsafe fn wake(ptr: *const ()) {
    raw(ptr).wake_by_val();
}

unsafe fn wake_by_ref(ptr: *const ()) {
    raw(ptr).wake_by_ref();
}

unsafe fn drop_waker(ptr: *const ()) {
    raw(ptr).drop_ref();
}

/// A waker that borrows the caller's reference: it must be wrapped in
/// `ManuallyDrop` and never dropped (clones of it are ordinary wakers).
pub(crate) fn borrowed(task: RawTask) -> Waker {
    let ptr = task.header_ptr().as_ptr() as *const ();
    // The vtable keeps the RawWaker contract: clone/drop manage references.
    // SAFETY: wake consumes one reference; the pointer is valid while any exists.
    unsafe { Waker::from_raw(RawWaker::new(ptr, &VTABLE)) }
}

/// An abort handle for the spindle task that `waker` wakes (a new
/// reference), or `None` for a waker that is not a spindle task's. A task
/// finds its own handle this way from inside its poll (`scope/mod.rs`).
pub(crate) fn abort_handle_of(waker: &Waker) -> Option<AbortHandle> {
    is_task_waker(waker).then(|| {
        let task = raw(waker.data());
        task.ref_inc();
        AbortHandle::from_raw(task)
    })
}

/// What [`notify_in_place`] did.
pub(crate) enum InPlace {
    /// Not a spindle task's waker: wake it the ordinary way.
    Foreign,
    /// Woken; nothing to schedule (running, already notified, or done).
    Done,
    /// The task was idle: schedule it with `Submit::submit` (out of any lock).
    Submit(Submit),
}

/// Wakes `waker`'s task by reference, keeping `waker` where it is, with its
/// scheduling left to the caller: the wake's state transition (one CAS that
/// also takes the `Notified`'s reference) can run under a lock, and the
/// scheduling after it. A channel that keeps a parked task's waker for that
/// task's next wait saves the clone and the drop (`chan/flavors/zero/`).
#[inline]
pub(crate) fn notify_in_place(waker: &Waker) -> InPlace {
    if !is_task_waker(waker) {
        return InPlace::Foreign;
    }
    match raw(waker.data()).notify_by_ref() {
        Some(submit) => InPlace::Submit(submit),
        None => InPlace::Done,
    }
}

/// Whether `waker` is a spindle task's: its vtable is `VTABLE`, by
/// address (a `static` has one; comparing the tables' four function
/// pointers instead cost a dozen instructions at every wake in place).
#[inline]
pub(crate) fn is_task_waker(waker: &Waker) -> bool {
    std::ptr::eq(waker.vtable(), &VTABLE)
}

/// Wakes `waker`'s task at the back of the current worker's run queue
/// instead of in its LIFO slot, so that an idle worker can steal it and run
/// it beside the waker.
///
/// An ordinary wake from a task puts the woken task in the waker's LIFO
/// slot: it runs on the same worker as soon as the waker's poll ends, which
/// keeps message-passing pairs on one warm core — and which also means it
/// waits for that poll to end. A producer that publishes a large batch and
/// goes on computing the next one wants the opposite: its consumer running
/// now, on another core. Wake it with this (spindle-actor's channels do).
///
/// A waker that is not a spindle task's (or a wake from outside a worker)
/// is simply woken.
pub fn wake_queued(waker: Waker) {
    if !is_task_waker(&waker) {
        return waker.wake();
    }
    let task = raw(waker.data());
    std::mem::forget(waker); // its reference moves into the wake
    task.wake_queued_by_val();
}

/// Wakes every waker in `wakers` (draining it) for a driver (timers, I/O):
/// a foreign waker that panics has its panic caught, so that the others
/// are still woken and the driver's own bookkeeping goes on (a spindle
/// task's waker never panics; the catch costs nothing on that path).
pub(crate) fn wake_all(wakers: &mut Vec<Waker>) {
    for w in wakers.drain(..) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.wake()));
    }
}
