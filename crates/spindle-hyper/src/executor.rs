//! [`SpindleExecutor`]: hyper's `Executor`, spawning on spindle.
//!
//! Invariants: every future handed to `execute` is spawned as a detached
//! spindle task (its `JoinHandle` is dropped at once), so it runs to its
//! end or until its runtime shuts down; nothing here waits for it. hyper
//! hands it the background work of a connection (HTTP/2's connection and
//! stream tasks).

use hyper::rt::Executor;
use std::fmt;
use std::future::Future;

/// Spawns hyper's background futures as spindle tasks.
///
/// [`new`](Self::new) spawns on the runtime `execute` is called from
/// (`spindle::spawn`: on a worker, into that worker's own queue), which is
/// where hyper calls it: inside a connection future or a request that a
/// spindle task polls. [`with_handle`](Self::with_handle) spawns on a
/// given runtime from anywhere.
///
/// # Panics
/// `execute` on an executor made by `new` panics when called outside any
/// spindle runtime (as `spindle::spawn` does).
#[derive(Clone, Default)]
pub struct SpindleExecutor {
    /// `None`: the runtime of the calling thread.
    handle: Option<spindle::Handle>,
}

impl SpindleExecutor {
    /// An executor spawning on the runtime it is called from.
    pub fn new() -> SpindleExecutor {
        SpindleExecutor { handle: None }
    }

    /// An executor spawning on `handle`'s runtime, wherever it is called.
    pub fn with_handle(handle: spindle::Handle) -> SpindleExecutor {
        SpindleExecutor {
            handle: Some(handle),
        }
    }
}

impl<F> Executor<F> for SpindleExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        // Dropping the handle detaches the task.
        drop(match &self.handle {
            Some(handle) => handle.spawn(future),
            None => spindle::spawn(future),
        });
    }
}

impl fmt::Debug for SpindleExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpindleExecutor")
            .field("with_handle", &self.handle.is_some())
            .finish()
    }
}
