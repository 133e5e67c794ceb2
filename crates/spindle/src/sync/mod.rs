//! Async synchronisation for tasks, with Tokio's names and signatures so
//! that code ports by changing the path (`tokio::sync` to `spindle::sync`).
//!
//! What exists:
//! - [`Semaphore`]: fair (FIFO, no barging), cancel-safe, `acquire_many`,
//!   owned permits, `close`, `add_permits`; an uncontended acquire or
//!   release is one compare-exchange (`docs/sync.md`).
//! - [`Mutex`]: on a one-permit semaphore, so fair and cancel-safe as it
//!   is; `lock_owned`, `try_lock`, `blocking_lock` for plain threads.
//! - [`Notify`]: `notified`, `notify_one` (stores one permit when nobody
//!   waits), `notify_waiters`.
//! - [`RwLock`]: on a semaphore of `MAX_READS` permits (a reader takes
//!   one, a writer all), so writer-preferring: a queued writer holds back
//!   the readers behind it, and no writer starves. Owned guards,
//!   `downgrade`, `blocking_read`/`blocking_write` for plain threads.
//! - [`Barrier`]: `wait` until `n` tasks arrive, one leader per round,
//!   reusable; on `Notify::notify_waiters`.
//! - [`OnceCell`]: `get_or_init` async; one initializer at a time (a
//!   one-permit semaphore), and a cancelled one hands over to the next.
//! - [`WaitGroup`]: Go's `sync.WaitGroup` (`add`, `done`, `wait`), an
//!   atomic count and `Notify::notify_waiters`.
//! - [`watch`]: a channel that keeps only the latest value; each receiver
//!   waits for a value newer than the one it last saw (`changed`,
//!   `wait_for`, both cancel-safe), senders can wait for the last receiver
//!   to go (`closed`). The value has a `RwLock` of its own, so that
//!   readers share it.
//!
//! Every primitive here keeps its waiters under a lock
//! (`crate::loom::Mutex`, so that the loom models in each file explore the
//! real code), the semaphore's and `watch`'s in the crate's `LinkedSlab`,
//! and wakes them after releasing it; the semaphore keeps its count in an
//! atomic word beside its queue, and `watch` its version beside shards of
//! waiters. A waiter dropped after it was handed a permit or a
//! notification passes it on to the next waiter.

mod barrier;
#[cfg(all(test, loom))]
mod loom_support;
mod mutex;
mod notify;
mod once_cell;
mod rwlock;
mod semaphore;
mod wait_group;
pub mod watch;

pub use barrier::{Barrier, BarrierWaitResult};
pub use mutex::{Lock, Mutex, MutexGuard, OwnedMutexGuard, TryLockError};
pub use notify::{Notified, Notify};
pub use once_cell::{OnceCell, SetError};
pub use rwlock::{
    OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
pub use semaphore::{
    AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError,
};
pub use wait_group::WaitGroup;
