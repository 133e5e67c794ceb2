//! [`Id`]: a task's identity, as Tokio's `task::Id`, and [`id`] /
//! [`try_id`] for the task being polled.
//!
//! A task's id is the address of its one allocation (`raw.rs`), so making
//! one costs nothing at spawn and the runtime's own reports (slow polls,
//! stall reports) name tasks by the same number. The allocation lives as
//! long as anything refers to the task (a poller, a waker, a join or abort
//! handle), so two tasks that exist at the same time never share an id;
//! once a task is freed its id may be given to a new one, as Tokio allows.
//!
//! Invariant: `CURRENT` holds the id of the task whose future this thread
//! is polling, or 0. `Harness::poll_future` sets it around each poll and
//! restores what was there before, so a task run inline inside another's
//! poll (a `Fork`, the current-thread runtime's awaits) sees its own id,
//! and its parent sees its own again after.

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroUsize;

/// A task's identity: unique among the tasks that exist at one time.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let h = spindle::spawn(async { spindle::task::id() });
/// let id = h.id();
/// assert_eq!(h.await.unwrap(), id);
/// # });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroUsize);

impl Id {
    /// The id of the task whose allocation is at `addr` (never 0).
    pub(crate) fn from_addr(addr: usize) -> Id {
        Id(NonZeroUsize::new(addr).expect("a task's address is never 0"))
    }

    /// The task's address.
    pub(crate) fn addr(self) -> usize {
        self.0.get()
    }
}

impl fmt::Display for Id {
    /// As the runtime's reports write a task: `0x55d0c1a2b3c0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({self})")
    }
}

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

/// The id of the task being polled on this thread.
///
/// # Panics
/// Outside a task (in `block_on`'s own future, on a plain thread, in a
/// blocking-pool closure): use [`try_id`] where that may happen.
#[track_caller]
pub fn id() -> Id {
    try_id().expect(
        "spindle::task::id() called outside a task: only a spawned task's future has one \
         (spindle::task::try_id() returns None elsewhere)",
    )
}

/// The id of the task being polled on this thread; `None` outside a task.
pub fn try_id() -> Option<Id> {
    NonZeroUsize::new(CURRENT.with(Cell::get)).map(Id)
}

/// While it lives, this thread is polling task `addr` (module invariant).
pub(crate) struct Polling(usize);

impl Polling {
    #[inline(always)]
    pub(crate) fn enter(addr: usize) -> Polling {
        Polling(CURRENT.with(|c| c.replace(addr)))
    }
}

impl Drop for Polling {
    #[inline(always)]
    fn drop(&mut self) {
        // `try_with`: a task may be polled while the thread's locals are
        // being torn down.
        let _ = CURRENT.try_with(|c| c.set(self.0));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn outside_a_task_there_is_no_id() {
        assert_eq!(try_id(), None);
        let r = std::panic::catch_unwind(id);
        let msg = crate::task::panic_message(&*r.unwrap_err());
        assert!(msg.contains("outside a task"), "{msg}");
    }

    #[test]
    fn polling_nests_and_restores() {
        let outer = Polling::enter(0x1000);
        assert_eq!(try_id(), Some(Id::from_addr(0x1000)));
        {
            let _inner = Polling::enter(0x2000);
            assert_eq!(id().to_string(), "0x2000");
        }
        assert_eq!(try_id(), Some(Id::from_addr(0x1000)));
        drop(outer);
        assert_eq!(try_id(), None);
    }
}
