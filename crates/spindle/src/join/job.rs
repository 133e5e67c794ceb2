//! `StackJob`: a closure on its caller's stack that another thread may run,
//! and `JobRef`, the untyped pointer to it that the job deques hold.
//!
//! Protocol (one job, one writer of each field at a time):
//! - the owner builds the job and publishes its `JobRef` on its deque;
//! - exactly one thread takes it back: the owner (`pop`, then
//!   `run_inline`) or a thief (`steal`, then `JobRef::execute`), as the
//!   deque guarantees;
//! - a thief runs the closure, writes the result, then sets `done`
//!   (Release) as its last access: after that the owner may return and
//!   the job's stack frame may be gone;
//! - an owner whose job was stolen reads the result only after seeing
//!   `done` (Acquire), which orders the thief's write before its read.
//!
//! The loom model `a_stolen_job_s_result_is_seen_once_done` checks the
//! last two; it fails when the thief's store is weakened to Relaxed.

use crate::loom::{AtomicBool, Ordering::*, UnsafeCell};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// What a job's closure gave: its value, or the payload of its panic.
pub(super) type Outcome<R> = Result<R, Box<dyn Any + Send>>;

/// A type-erased pointer to a `StackJob` and the function that runs it.
#[derive(Clone, Copy)]
pub(crate) struct JobRef {
    job: *const (),
    execute: unsafe fn(*const ()),
}

// SAFETY: a `JobRef` is run by one thread, once (the deque hands it to the
// owner or to one thief); the closure it points to is `Send`.
unsafe impl Send for JobRef {}

/// The same job: the same `StackJob` (a live job has one address).
impl PartialEq for JobRef {
    fn eq(&self, other: &JobRef) -> bool {
        std::ptr::eq(self.job, other.job)
    }
}

impl JobRef {
    /// Runs the job on this thread (a thief, or an owner waiting for
    /// another job of its own).
    ///
    /// # Safety
    /// `self` was taken from a deque (so no other thread runs it), and its
    /// owner has not returned since it was pushed.
    pub(crate) unsafe fn execute(self) {
        // SAFETY: as the caller promises.
        unsafe { (self.execute)(self.job) }
    }
}

/// A closure `F` returning `R`, on its owner's stack while it waits to be
/// run here or by a thief. It is told which (`true`: a thief runs it).
pub(super) struct StackJob<F, R> {
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<Outcome<R>>>,
    done: AtomicBool,
}

impl<F: FnOnce(bool) -> R + Send, R: Send> StackJob<F, R> {
    pub(super) fn new(func: F) -> StackJob<F, R> {
        StackJob {
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(None),
            done: AtomicBool::new(false),
        }
    }

    /// The pointer a deque holds. The job must stay where it is until it
    /// is taken back and run, here or by a thief (`is_done`).
    pub(super) fn as_job_ref(&self) -> JobRef {
        JobRef {
            job: (self as *const Self).cast(),
            execute: Self::execute,
        }
    }

    /// Owner, having taken its own job back from the deque: runs the
    /// closure here; a panic unwinds into the caller. (Under loom `join`
    /// runs sequentially and never pushes a job.)
    #[cfg(not(loom))]
    pub(super) fn run_inline(&self) -> R {
        // SAFETY: taken back from the deque, so no thief has it; the owner
        // is the only thread touching the job.
        let func = self.func.with_mut(|f| unsafe { (*f).take() });
        (func.expect("a job runs once"))(false)
    }

    /// Whether a thief has run the job (Acquire: its result is visible).
    pub(super) fn is_done(&self) -> bool {
        self.done.load(Acquire)
    }

    /// Owner, once `is_done`: the thief's outcome.
    pub(super) fn take_outcome(&self) -> Outcome<R> {
        debug_assert!(self.is_done());
        // SAFETY: `done` was seen (Acquire) after the thief's write and its
        // Release store, the thief's last access.
        let outcome = self.result.with_mut(|r| unsafe { (*r).take() });
        outcome.expect("a done job has an outcome")
    }

    /// # Safety
    /// `this` points to a live `StackJob<F, R>` that this thread alone runs.
    unsafe fn execute(this: *const ()) {
        // SAFETY: as the caller promises.
        let this = unsafe { &*this.cast::<Self>() };
        // SAFETY: only this thread touches the closure now.
        let func = this.func.with_mut(|f| unsafe { (*f).take() });
        let func = func.expect("a job runs once");
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| func(true)));
        // SAFETY: the owner reads the result only after `done`.
        this.result.with_mut(|r| unsafe { *r = Some(outcome) });
        // The last access: the owner may return once it sees this.
        this.done.store(true, Release);
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::StackJob;
    use crate::loom::Arc;
    use loom::thread;

    /// A thief runs the job while its owner waits: the owner reads the
    /// result only once done, and sees the thief's value.
    #[test]
    fn a_stolen_job_s_result_is_seen_once_done() {
        loom::model(|| {
            let job = Arc::new(StackJob::new(|stolen| if stolen { 7u32 } else { 0 }));
            let thief = {
                let job = job.clone();
                thread::spawn(move || {
                    // SAFETY: this thread alone runs it; `job` outlives it.
                    unsafe { job.as_job_ref().execute() }
                })
            };
            while !job.is_done() {
                thread::yield_now();
            }
            assert_eq!(job.take_outcome().ok(), Some(7));
            thief.join().unwrap();
        });
    }
}
