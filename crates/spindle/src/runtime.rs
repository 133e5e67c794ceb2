//! `Runtime` and `Builder`: start a scheduler, run a future on it, stop it.
//!
//! Dropping a `Runtime` (or `shutdown_timeout`) stops the workers, then
//! cancels every task still alive — queued, idle on a channel or timer, or
//! spawned afterwards through a surviving `Handle` — so that each future is
//! dropped exactly once and every task allocation is freed.

use crate::sched::metrics::RuntimeMetrics;
use crate::sched::{self, current_thread, multi_thread, EnterGuard, Handle, HandleInner};
use std::fmt;
use std::future::Future;
use std::time::Duration;

/// Which scheduler a [`Builder`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Work-stealing over N worker threads.
    MultiThread,
    /// Everything on the thread that calls `block_on`.
    CurrentThread,
}

/// Configures and starts a [`Runtime`].
#[derive(Debug, Clone)]
pub struct Builder {
    flavor: Flavor,
    workers: Option<usize>,
    thread_name: String,
    stack_size: Option<usize>,
}

/// Why a runtime could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// `workers(0)`, or `SPINDLE_WORKERS` not a positive integer.
    InvalidWorkers(String),
    /// The OS refused a worker thread.
    Spawn(std::io::Error),
    /// The I/O driver (epoll) could not be created.
    Driver(std::io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::InvalidWorkers(why) => write!(f, "invalid worker count: {why}"),
            BuildError::Spawn(e) => write!(f, "could not start a worker thread: {e}"),
            BuildError::Driver(e) => write!(f, "could not create the I/O driver: {e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Spawn(e) | BuildError::Driver(e) => Some(e),
            BuildError::InvalidWorkers(_) => None,
        }
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new_multi_thread()
    }
}

impl Builder {
    /// A work-stealing runtime; workers default to `SPINDLE_WORKERS`, else
    /// the cores this process may use (`available_parallelism`).
    pub fn new_multi_thread() -> Builder {
        Builder {
            flavor: Flavor::MultiThread,
            workers: None,
            thread_name: "spindle-worker".into(),
            stack_size: None,
        }
    }

    /// A runtime that runs every task on the thread calling `block_on`.
    pub fn new_current_thread() -> Builder {
        Builder {
            flavor: Flavor::CurrentThread,
            ..Builder::new_multi_thread()
        }
    }

    /// Number of worker threads (multi-thread flavour). Overrides
    /// `SPINDLE_WORKERS`. Zero is an error at `build`.
    pub fn workers(mut self, n: usize) -> Builder {
        self.workers = Some(n);
        self
    }

    /// Worker thread name (default `spindle-worker`; a `-N` suffix is added).
    pub fn thread_name(mut self, name: impl Into<String>) -> Builder {
        self.thread_name = name.into();
        self
    }

    /// Worker thread stack size in bytes.
    pub fn thread_stack_size(mut self, bytes: usize) -> Builder {
        self.stack_size = Some(bytes);
        self
    }

    /// The worker count `build` will use.
    pub fn resolved_workers(&self) -> Result<usize, BuildError> {
        match self.workers {
            Some(0) => Err(BuildError::InvalidWorkers(
                "workers(0): a multi-thread runtime needs at least one worker \
                 (use Builder::new_current_thread() to run on the calling thread)"
                    .into(),
            )),
            Some(n) => Ok(n),
            None => match std::env::var("SPINDLE_WORKERS") {
                Ok(v) => match v.trim().parse::<usize>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(BuildError::InvalidWorkers(format!(
                        "SPINDLE_WORKERS={v:?} is not a positive integer"
                    ))),
                },
                Err(_) => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
            },
        }
    }

    /// Starts the runtime.
    pub fn build(self) -> Result<Runtime, BuildError> {
        match self.flavor {
            Flavor::CurrentThread => Ok(Runtime {
                handle: Handle {
                    inner: HandleInner::Current(
                        current_thread::Shared::new().map_err(BuildError::Driver)?,
                    ),
                },
                threads: Vec::new(),
            }),
            Flavor::MultiThread => {
                let workers = self.resolved_workers()?;
                let (shared, cores) = multi_thread::build(workers).map_err(BuildError::Driver)?;
                let external = multi_thread::external_spawner(&shared);
                let mut rt = Runtime {
                    handle: Handle {
                        inner: HandleInner::Multi(external.clone()),
                    },
                    threads: Vec::new(),
                };
                for (index, core) in cores.into_iter().enumerate() {
                    let mut b =
                        std::thread::Builder::new().name(format!("{}-{index}", self.thread_name));
                    if let Some(s) = self.stack_size {
                        b = b.stack_size(s);
                    }
                    let external = external.clone();
                    match b.spawn(move || multi_thread::run_worker(external, index, Box::new(core)))
                    {
                        Ok(t) => rt.threads.push(t),
                        Err(e) => return Err(BuildError::Spawn(e)), // `rt` drops: started workers stop
                    }
                }
                Ok(rt)
            }
        }
    }
}

/// A running scheduler. See the crate docs for an example.
pub struct Runtime {
    handle: Handle,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("handle", &self.handle)
            .field("workers", &self.threads.len())
            .finish()
    }
}

impl Runtime {
    /// A multi-thread runtime with the default worker count.
    pub fn new() -> Result<Runtime, BuildError> {
        Builder::new_multi_thread().build()
    }

    /// A multi-thread [`Builder`] (see [`Builder::new_current_thread`] for the other flavour).
    pub fn builder() -> Builder {
        Builder::new_multi_thread()
    }

    /// Runs `future` to completion on this thread, with `spindle::spawn`
    /// going to this runtime. On the multi-thread flavour the future is
    /// polled on the calling thread while spawned tasks run on the workers;
    /// on the current-thread flavour the calling thread runs everything.
    ///
    /// # Panics
    /// When called from inside a runtime (a worker thread or another
    /// `block_on`): blocking there would stall tasks. Use `.await` instead.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        sched::assert_not_in_runtime("Runtime::block_on");
        match &self.handle.inner {
            HandleInner::Multi(_) => {
                let _enter = self.enter();
                sched::park::block_on_thread(future)
            }
            HandleInner::Current(shared) => current_thread::block_on(shared, future),
        }
    }

    /// Spawns a task (see [`Handle::spawn`]).
    pub fn spawn<F>(&self, future: F) -> crate::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// A handle for spawning from other threads.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Makes `spindle::spawn` on this thread use this runtime until the guard drops.
    pub fn enter(&self) -> EnterGuard {
        self.handle.enter()
    }

    /// Counters per worker and for the runtime (see [`RuntimeMetrics`]).
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Number of worker threads (1 for current-thread).
    pub fn workers(&self) -> usize {
        self.threads.len().max(1)
    }

    /// Stops the runtime, waiting at most `timeout` for the workers to finish
    /// the poll they are in; a worker stuck longer (a task blocking its
    /// thread) is left behind. Returns whether every worker stopped.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> bool {
        self.shutdown(Some(timeout))
    }

    fn shutdown(&mut self, timeout: Option<Duration>) -> bool {
        match &self.handle.inner {
            HandleInner::Multi(spawner) => {
                let shared = spawner.shared().clone();
                shared.begin_shutdown();
                let deadline = timeout.map(|t| std::time::Instant::now() + t);
                let mut all_stopped = true;
                for t in self.threads.drain(..) {
                    match deadline {
                        None => {
                            let _ = t.join();
                        }
                        Some(d) => {
                            while !t.is_finished() && std::time::Instant::now() < d {
                                std::thread::sleep(Duration::from_millis(1));
                            }
                            if t.is_finished() {
                                let _ = t.join();
                            } else {
                                all_stopped = false; // detached: it exits after its poll
                            }
                        }
                    }
                }
                shared.cancel_all();
                all_stopped
            }
            HandleInner::Current(shared) => {
                shared.shutdown();
                true
            }
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown(None);
    }
}

#[cfg(test)]
#[test]
fn runtime_and_handle_are_send_and_sync() {
    fn is<T: Send + Sync>() {}
    is::<Runtime>();
    is::<Handle>();
}
