//! Wakers are task references: clone takes one, drop releases one, wake
//! schedules the task through the state word (`state.rs`).

use super::join::AbortHandle;
use super::raw::{Header, RawTask};
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

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
/// finds its own handle this way from inside its poll (`scope.rs`).
pub(crate) fn abort_handle_of(waker: &Waker) -> Option<AbortHandle> {
    (waker.vtable() == &VTABLE).then(|| {
        let task = raw(waker.data());
        task.ref_inc();
        AbortHandle::from_raw(task)
    })
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
    if waker.vtable() != &VTABLE {
        return waker.wake();
    }
    let task = raw(waker.data());
    std::mem::forget(waker); // its reference moves into the wake
    task.wake_queued_by_val();
}
