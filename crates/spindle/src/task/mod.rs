//! Tasks: one allocation each (`raw.rs`, its typed vtable entries in
//! `harness.rs`, cut from a slab by `alloc.rs`), a state word deciding who
//! owns what (`state.rs`), wakers that are references (`waker.rs`), join
//! handles (`join.rs`), and the registry that lets shutdown find idle tasks
//! (`registry.rs`). `task` reaches its scheduler only through the
//! `Schedule` trait; `JoinSet`, which spawns, is re-exported here from the
//! crate root (`join_set.rs`).

mod alloc;
pub mod coop;
pub(crate) mod error;
mod harness;
pub(crate) mod id;
mod join;
pub(crate) mod names;
pub(crate) mod raw;
pub(crate) mod registry;
#[cfg(not(any(loom, spindle_malloc_cells)))]
mod slab;
pub(crate) mod span;
pub(crate) mod state;
mod waker;

pub use waker::wake_queued;
pub(crate) use waker::{abort_handle_of, is_task_waker, notify_in_place, wake_all, InPlace};

/// Where Tokio has it (`tokio::task::JoinSet`); it lives with the other
/// user-level joins (`scope`, `join_all`), above the schedulers.
pub use crate::join_set::JoinSet;
/// Spawning with options (a name); at the crate root, above the
/// schedulers (`task_builder.rs`).
pub use crate::task_builder::Builder;
/// Task-local values ([`task_local!`](crate::task_local)); like
/// `JoinSet`, they live above the schedulers, at the crate root
/// (`task_local.rs`).
pub use crate::task_local::{AccessError, LocalKey, TaskLocalFuture};
/// Where Tokio has them (`tokio::task::unconstrained`,
/// `tokio::task::consume_budget`); the budget itself is `coop/`.
pub use coop::{consume_budget, unconstrained, Unconstrained};
pub(crate) use error::panic_message;
pub use error::JoinError;
pub use id::{id, try_id, Id};
pub(crate) use join::Inline;
pub use join::{AbortHandle, AbortOnDrop, Fork, JoinHandle};
pub use names::NamedTask;
pub(crate) use raw::{Notified, RawTask, Schedule, Submit};

/// Tasks for unit tests that are never run: their `Notified` is dropped
/// (cancelling them) wherever a scheduler would queue it.
#[cfg(all(test, not(loom)))]
pub(crate) mod inert {
    use super::registry::Key;
    use super::{Notified, RawTask, Schedule};

    pub(crate) struct Inert;

    impl Schedule for Inert {
        fn schedule(&self, task: Notified) {
            drop(task)
        }
        fn yield_now(&self, task: Notified) {
            drop(task)
        }
        fn register(&self, _: RawTask) -> Option<Key> {
            None
        }
        fn unregister(&self, _: RawTask, _: Key) -> bool {
            false
        }
    }

    /// A task that returns at once: its `Notified` and its join handle's reference.
    pub(crate) fn task() -> (Notified, RawTask) {
        RawTask::allocate(async {}, Inert)
    }
}
