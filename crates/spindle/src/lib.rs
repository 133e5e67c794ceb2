//! spindle: an M:N work-stealing runtime for millions of lightweight tasks.
//!
//! ```
//! let rt = spindle::Runtime::new().unwrap();
//! let sum = rt.block_on(async {
//!     let handles: Vec<_> = (0..1000u64).map(|i| spindle::spawn(async move { i })).collect();
//!     let mut sum = 0;
//!     for h in handles {
//!         sum += h.await.unwrap();
//!     }
//!     sum
//! });
//! assert_eq!(sum, 499_500);
//! ```
//!
//! - Tasks are stackless futures in one allocation each (`task/`), scheduled
//!   by a work-stealing scheduler (`sched/multi_thread/`) or on the calling
//!   thread (`sched/current_thread.rs`). Task memory comes from a slab that
//!   keeps what it took for later tasks: a process that once held a
//!   million small tasks at once keeps ~72 MB for them, never returned to
//!   the system allocator (`task/slab/mod.rs`).
//! - [`JoinHandle`]: await the output as `Result<T, JoinError>`; panics are
//!   caught there. Dropping a handle **detaches** the task. [`JoinSet`]:
//!   many tasks, joined in the order they finish.
//! - [`scope`]: structured concurrency; [`join_all`], [`race`], [`when_n`];
//!   [`CancellationToken`].

#![deny(unsafe_op_in_unsafe_fn)]
// Under miri the monitor thread is not started (runtime/mod.rs says why), so it
// and what only it calls are unused there.
#![cfg_attr(miri, allow(dead_code))]

mod asym_fence;
mod cancel;
pub mod chan;
mod combinators;
mod driver;
// Files: real syscalls on the blocking pool, which loom and miri cannot run.
#[cfg(not(any(loom, miri)))]
pub mod fs;
mod join;
mod join_set;
mod linked_slab;
mod local_set;
// Sockets and signals need the OS reactor, which loom and miri cannot run.
#[cfg(not(any(loom, miri)))]
pub mod io;
#[cfg(not(any(loom, miri)))]
mod io_error;
pub(crate) mod loom;
#[cfg(all(test, loom))]
mod loom_models;
#[cfg(not(any(loom, miri)))]
pub mod net;
// Child processes: their pipes and exits are on the OS reactor.
#[cfg(not(any(loom, miri)))]
pub mod process;
mod rand;
pub mod report;
mod runtime;
mod sched;
mod sched_ref;
mod scope;
#[cfg(not(any(loom, miri)))]
pub mod signal;
pub mod sync;
pub mod task;
mod task_builder;
mod task_local;
pub mod test;
pub mod time;
mod yield_now;

pub use cancel::{CancellationToken, Cancelled};
pub use combinators::{join_all, race, when_n, JoinAll, Race, WhenN};
pub use join::{join, join_context, JoinContext};
pub use local_set::{spawn_local, LocalJoinHandle, LocalSet, RunUntil};
pub use runtime::{BuildError, Builder, Flavor, Runtime, DEFAULT_HANDOFF_AFTER, DEFAULT_SLOW_POLL};
pub use sched::blocking::spawn_blocking;
pub use sched::diagnostics::{SlowPoll, StallReport};
pub use sched::metrics::{BlockingMetrics, RuntimeMetrics, WorkerMetrics};
pub use sched::{block_in_place, fork, spawn, EnterGuard, Handle};
pub use scope::{scope, try_scope, Scope, ScopeError};
/// Runs `async fn main` on a spindle runtime: `#[spindle::main]`,
/// `#[spindle::main(workers = 4)]`, `#[spindle::main(flavor =
/// "current_thread")]`:
///
/// ```
/// #[spindle::main(workers = 2, flavor = "multi_thread")]
/// async fn main() {
///     assert_eq!(spindle::Handle::current().metrics().workers.len(), 2);
/// }
/// ```
///
/// Bad arguments are compile errors, in whatever order they are written:
///
/// ```compile_fail
/// #[spindle::main(flavor = "current_thread", workers = 2)] // workers need multi_thread
/// async fn main() {}
/// ```
///
/// ```compile_fail
/// #[spindle::main(workers = 2, workers = 3)] // given twice
/// async fn main() {}
/// ```
///
/// ```compile_fail
/// #[spindle::main(workers = 2 flavor = "multi_thread")] // no comma
/// async fn main() {}
/// ```
pub use spindle_macros::main;
/// Runs an `async fn` test on a fresh spindle runtime (current-thread by
/// default; `flavor = "multi_thread"` and `workers = N` as for `main`).
pub use spindle_macros::test;
pub use task::{AbortHandle, AbortOnDrop, Fork, JoinError, JoinHandle, JoinSet};
pub use yield_now::{yield_now, YieldNow};

/// Not API: what the exported macros expand to, and the loom models' hooks.
/// Public only because `select!` expands in the user's crate and names
/// these by path; nothing here is covered by semver.
#[doc(hidden)]
pub mod __private {
    pub use crate::chan::select::{budgeted, probe_waker, shuffle, yield_if_refused, Project};

    /// Loom models only: the bounded ring's claim-word ownership
    /// (`chan/flavors/bias.rs`).
    #[cfg(loom)]
    pub use crate::chan::flavors::bias::{loom_own_words_after, loom_plain_claims};
}
