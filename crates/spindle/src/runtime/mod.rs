//! `Runtime` and `Builder`: start a scheduler, run a future on it, stop it.
//!
//! Dropping a `Runtime` (or `shutdown_timeout`) stops the workers, then
//! cancels every task still alive — queued, idle on a channel or timer, or
//! spawned afterwards through a surviving `Handle` — so that each future is
//! dropped exactly once and every task allocation is freed.

use crate::sched::blocking::Pool;
use crate::sched::diagnostics::{self, OnStall, StallReport};
use crate::sched::metrics::RuntimeMetrics;
use crate::sched::{self, current_thread, multi_thread, EnterGuard, Handle, HandleInner};
use std::fmt;
use std::future::Future;
use std::time::{Duration, Instant};

mod build_error;
pub use build_error::BuildError;

/// Which scheduler a [`Builder`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Work-stealing over N worker threads.
    MultiThread,
    /// Everything on the thread that calls `block_on`.
    CurrentThread,
}

/// Configures and starts a [`Runtime`].
#[derive(Clone)]
pub struct Builder {
    flavor: Flavor,
    workers: Option<usize>,
    thread_name: String,
    stack_size: Option<usize>,
    max_blocking_threads: usize,
    blocking_keep_alive: Duration,
    handoff_after: Option<Duration>,
    yield_before_park: bool,
    slow_poll: Option<Duration>,
    stall_after: Option<Duration>,
    on_stall: OnStall,
    dump_on_sigquit: bool,
    /// `None`: from `SPINDLE_TRACK_SPAWNS`.
    track_spawns: Option<bool>,
    coop_budget: u32,
    start_paused: bool,
    /// A deterministic runtime's seed (`new_deterministic`).
    seed: Option<u64>,
}

/// The usual slow-poll threshold (see [`Builder::slow_poll_threshold`]).
pub const DEFAULT_SLOW_POLL: Duration = Duration::from_micros(50);

/// Default [`Builder::handoff_after`].
pub const DEFAULT_HANDOFF_AFTER: Duration = Duration::from_millis(1);

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("flavor", &self.flavor)
            .field("workers", &self.workers)
            .field("handoff_after", &self.handoff_after)
            .field("yield_before_park", &self.yield_before_park)
            .field("slow_poll", &self.slow_poll)
            .field("stall_after", &self.stall_after)
            .finish_non_exhaustive()
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
            max_blocking_threads: 512,
            blocking_keep_alive: Duration::from_secs(10),
            handoff_after: Some(DEFAULT_HANDOFF_AFTER),
            yield_before_park: true,
            slow_poll: None,
            stall_after: Some(Duration::from_secs(1)),
            on_stall: std::sync::Arc::new(diagnostics::print_stall),
            dump_on_sigquit: false,
            track_spawns: None,
            coop_budget: crate::task::coop::DEFAULT_BUDGET,
            start_paused: false,
            seed: None,
        }
    }

    /// A deterministic runtime for tests: one thread, its clock paused
    /// (timers follow virtual time, `crate::time::pause`), and the next
    /// task to run picked at random from `seed` instead of in FIFO order,
    /// so that a test can run under many schedules
    /// ([`crate::test::explore`]) and any run replays exactly from its
    /// seed. When every task waits and nothing can wake one, `block_on`
    /// panics instead of hanging, naming the seed and where each waiting
    /// task was spawned. Work must stay on the
    /// runtime (other threads' wake-ups come in an order of their own).
    pub fn new_deterministic(seed: u64) -> Builder {
        Builder {
            seed: Some(seed),
            start_paused: true,
            ..Builder::new_current_thread()
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

    /// Most threads the blocking pool (`spawn_blocking`) may run at once
    /// (default 512; zero is taken as one). Past it, jobs wait in a queue.
    pub fn max_blocking_threads(mut self, n: usize) -> Builder {
        self.max_blocking_threads = n;
        self
    }

    /// How long an idle blocking-pool thread waits for a job before it
    /// exits (default 10 s).
    pub fn blocking_keep_alive(mut self, d: Duration) -> Builder {
        self.blocking_keep_alive = d;
        self
    }

    /// Multi-thread flavour: when one poll has run this long, the monitor
    /// hands that worker's queued tasks (its core) to a new thread, so they
    /// are not stuck behind a task that blocks (default 1 ms; `None`: never,
    /// the monitor then only serves timers and I/O).
    pub fn handoff_after(mut self, after: Option<Duration>) -> Builder {
        self.handoff_after = after;
        self
    }

    /// Multi-thread flavour: whether a worker out of work yields its CPU
    /// once (`sched_yield`) before it parks (default: yes). A thread that
    /// feeds the runtime from the same CPU (a load generator, a producer
    /// thread) then queues its batch first, and the worker takes it whole
    /// instead of being woken, and preempting the feeder, item by item. A
    /// neighbour that keeps yields running long (a CPU-bound process) makes
    /// the workers yield rarely, on their own; turn it off where even those
    /// rare yields' latency (a time slice now and then) matters more.
    pub fn yield_before_park(mut self, on: bool) -> Builder {
        self.yield_before_park = on;
        self
    }

    /// Multi-thread flavour: time every poll and count those longer than
    /// `threshold` per worker, keeping the longest (`RuntimeMetrics`). Off by
    /// default: two cycle-counter reads per poll are a visible cost to
    /// spawn-heavy work such as `skynet`, whose polls are short.
    /// `SPINDLE_SLOW_POLL_US=50` turns it on
    /// without a code change; [`DEFAULT_SLOW_POLL`] is the usual threshold.
    /// Polls stuck past `handoff_after` are always seen (as hand-offs).
    pub fn slow_poll_threshold(mut self, threshold: Option<Duration>) -> Builder {
        self.slow_poll = threshold;
        self
    }

    /// Multi-thread flavour: report a possible deadlock when every worker
    /// has been idle this long while tasks wait with no timer, I/O or
    /// blocking job that could wake them (default 1 s; `None`: off).
    pub fn stall_detection(mut self, after: Option<Duration>) -> Builder {
        self.stall_after = after;
        self
    }

    /// What a detected stall does (default: print the report on stderr).
    /// To fail a run on a deadlock: `.on_stall(|r| { eprintln!("{r}"); std::process::exit(3) })`.
    pub fn on_stall(mut self, f: impl Fn(&StallReport) + Send + Sync + 'static) -> Builder {
        self.on_stall = std::sync::Arc::new(f);
        self
    }

    /// Print [`Runtime::dump`] on stderr at every `SIGQUIT` (`kill -QUIT
    /// <pid>`, or Ctrl-\ in a terminal), as Go prints its goroutines. Off by default: it
    /// replaces the signal's default action (quit with a core dump).
    pub fn dump_on_sigquit(mut self, on: bool) -> Builder {
        self.dump_on_sigquit = on;
        self
    }

    /// Records where every task was spawned (multi-thread flavour), so that
    /// the stall report and [`Runtime::dump`] say where the waiting tasks
    /// came from. Costs a registry insert per spawn (a short lock), so it
    /// is off by default; `SPINDLE_TRACK_SPAWNS=1` turns it on when this is
    /// not called.
    pub fn track_spawns(mut self, on: bool) -> Builder {
        self.track_spawns = Some(on);
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

    /// Units of cooperative budget a task poll starts with and is refilled
    /// with ([`crate::task::coop`]; 128 by default): each completed
    /// channel, join, timer or I/O operation spends one, and a spent budget
    /// makes the task yield once its poll has run a slice (50 µs). Fewer
    /// units look at the clock more often. Zero is an error at `build`; to
    /// run a section without a budget, wrap it in
    /// [`crate::task::unconstrained`].
    pub fn coop_budget(mut self, units: u32) -> Builder {
        self.coop_budget = units;
        self
    }

    /// Starts a current-thread runtime with its clock paused
    /// ([`crate::time::pause`]): timers fire only when the clock is
    /// advanced, or when every task is idle and the clock jumps to the
    /// next timer. `build` refuses it on a multi-thread runtime.
    pub fn start_paused(mut self, paused: bool) -> Builder {
        self.start_paused = paused;
        self
    }

    /// Starts the runtime.
    pub fn build(self) -> Result<Runtime, BuildError> {
        if self.start_paused && self.flavor == Flavor::MultiThread {
            return Err(BuildError::PausedMultiThread);
        }
        if self.coop_budget == 0 {
            return Err(BuildError::InvalidBudget(
                "coop_budget(0) would refuse every operation; use at least 1, \
                 or `spindle::task::unconstrained` for a section without a budget"
                    .into(),
            ));
        }
        let pool = Pool::new(
            self.max_blocking_threads,
            self.blocking_keep_alive,
            format!("{}-blocking", self.thread_name),
        );
        let rt = match self.flavor {
            Flavor::CurrentThread => Runtime {
                handle: Handle {
                    inner: HandleInner::Current(
                        current_thread::Shared::new(
                            pool.clone(),
                            self.coop_budget,
                            self.start_paused,
                            self.seed,
                        )
                        .map_err(BuildError::Driver)?,
                    ),
                },
                workers: 1,
                shut_down: false,
            },
            Flavor::MultiThread => self.build_multi_thread(&pool)?,
        };
        pool.set_handle(rt.handle.clone());
        #[cfg(not(any(loom, miri)))]
        if self.dump_on_sigquit {
            diagnostics::dump_on_sigquit(&rt.handle).map_err(BuildError::Spawn)?;
        }
        Ok(rt)
    }

    /// The multi-thread runtime: its workers and its monitor started.
    fn build_multi_thread(&self, pool: &crate::loom::Arc<Pool>) -> Result<Runtime, BuildError> {
        let workers = self.resolved_workers()?;
        let (shared, cores) =
            multi_thread::build(workers, self.multi_thread_config()?, pool.clone())
                .map_err(BuildError::Driver)?;
        let rt = Runtime {
            handle: Handle {
                inner: HandleInner::Multi(multi_thread::external_spawner(&shared)),
            },
            workers,
            shut_down: false,
        };
        // On an error `rt` drops: the threads started so far stop.
        for (index, core) in cores.into_iter().enumerate() {
            multi_thread::Shared::start_worker(&shared, index, Box::new(core))
                .map_err(BuildError::Spawn)?;
        }
        // Not under miri: a thread waking every millisecond of real
        // time would swamp its interpreter (the monitor is timing,
        // not memory safety; its protocol has a loom model).
        #[cfg(not(miri))]
        let monitor = shared.clone();
        #[cfg(not(miri))]
        shared
            .start_thread(&format!("{}-monitor", self.thread_name), move || {
                sched::monitor::run(monitor)
            })
            .map_err(BuildError::Spawn)?;
        Ok(rt)
    }

    /// The multi-thread scheduler's settings, environment variables read
    /// where the builder left a setting unset.
    fn multi_thread_config(&self) -> Result<multi_thread::Config, BuildError> {
        Ok(multi_thread::Config {
            thread_name: self.thread_name.clone(),
            stack_size: self.stack_size,
            handoff_after: self.handoff_after,
            yield_before_park: self.yield_before_park,
            slow_poll: match self.slow_poll {
                Some(t) => Some(t),
                None => slow_poll_from_env()?,
            },
            stall_after: self.stall_after,
            on_stall: self.on_stall.clone(),
            track_spawns: match self.track_spawns {
                Some(on) => on,
                None => track_spawns_from_env()?,
            },
            coop_budget: self.coop_budget,
        })
    }
}

/// A running scheduler. See the crate docs for an example.
pub struct Runtime {
    handle: Handle,
    workers: usize,
    /// `shutdown` ran (by `shutdown_timeout`; `Drop` then has nothing to do).
    shut_down: bool,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("handle", &self.handle)
            .field("workers", &self.workers)
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
            HandleInner::Multi(spawner) => {
                let _enter = self.enter();
                let _inside = sched::BlockOnGuard::enter();
                // Polled as a task is: with a budget for each poll, so that
                // a loop of ready operations here yields (to the local
                // tasks of a `LocalSet::block_on`).
                let units = spawner.shared().config.coop_budget;
                let mut future = std::pin::pin!(future);
                crate::driver::park::block_on_thread(std::future::poll_fn(|cx| {
                    crate::task::coop::with_own_budget(units, || future.as_mut().poll(cx))
                }))
            }
            // In a set of its own, so that `spawn_local` works here.
            HandleInner::Current(shared) => {
                let local = crate::LocalSet::new();
                current_thread::block_on(shared, local.run_until(future))
            }
        }
    }

    /// Spawns a task (see [`Handle::spawn`]).
    #[track_caller]
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
    ///
    /// On a thread that runs a runtime's tasks (inside a task, or inside a
    /// current-thread `block_on`), that runtime stays the current one:
    /// spawn onto another through its [`Handle`] instead.
    pub fn enter(&self) -> EnterGuard {
        self.handle.enter()
    }

    /// Counters per worker and for the runtime (see [`RuntimeMetrics`]).
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// A text dump of the runtime's state: workers, queues, timers, the
    /// blocking pool, slow polls (the `Display` of [`RuntimeMetrics`]), and
    /// with [`Builder::track_spawns`], the waiting tasks by spawn site.
    pub fn dump(&self) -> String {
        self.handle.dump()
    }

    /// Number of worker threads (1 for current-thread).
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Stops the runtime, waiting at most `timeout` for the workers to finish
    /// the poll they are in; a worker stuck longer (a task blocking its
    /// thread) is left behind. Returns whether every worker stopped.
    ///
    /// When one was left behind, the tasks still alive are cancelled (and
    /// freed) once it has returned from its poll and stopped, by a thread
    /// that waits for it, never while it may still poll one; a worker that
    /// never returns keeps them alive for good.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> bool {
        self.shutdown(Some(timeout))
    }

    fn shutdown(&mut self, timeout: Option<Duration>) -> bool {
        if std::mem::replace(&mut self.shut_down, true) {
            return true;
        }
        // No deadline: none given, or one past what `Instant` holds.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        match &self.handle.inner {
            HandleInner::Multi(spawner) => Self::shutdown_multi_thread(spawner, deadline),
            HandleInner::Current(shared) => {
                // Blocking jobs first here: one may be inside the runtime's
                // `block_on` (`Handle::block_on` from a job drives the core
                // and polls tasks), and tasks are not cancelled under a
                // poller. So a job that waits on a task of this runtime
                // (a `recv_blocking` whose sender an idle task holds) keeps
                // the drop waiting; the multi-thread flavour has no such case.
                let stopped = shared.blocking.shut_down(deadline);
                shared.shutdown();
                stopped
            }
        }
    }

    /// The multi-thread flavour's shutdown: its threads joined by
    /// `deadline`, then its tasks cancelled (by a reaper thread once a
    /// worker stuck in a poll stops); `true` if every thread stopped.
    fn shutdown_multi_thread(spawner: &multi_thread::Spawner, deadline: Option<Instant>) -> bool {
        let shared = spawner.shared().clone();
        shared.begin_shutdown();
        // Workers, their replacements and the monitor; a hand-off in
        // flight may add one more thread, hence the loop.
        let mut left = Vec::new();
        loop {
            let threads = shared.take_threads();
            if threads.is_empty() {
                break;
            }
            left.extend(
                threads
                    .into_iter()
                    .filter_map(|t| crate::sched::blocking::join_until(t, deadline)),
            );
        }
        if left.is_empty() {
            // Tasks go before the blocking jobs are waited for: a
            // job may wait on a task (a `recv_blocking` on a channel
            // an idle task holds the sender of), which only its
            // cancellation ends. No job polls a task here (a
            // multi-thread `block_on` runs its own future only).
            shared.cancel_all();
            return shared.blocking.shut_down(deadline);
        }
        // A worker is stuck in a poll: not every thread stopped,
        // whatever the pool's threads do.
        shared.blocking.shut_down(deadline);
        // Cancelling the tasks left while it may still poll one
        // would race it (a task going idle for the first time hands
        // its poller's reference to the registry, which closing
        // would drop); the tasks are cancelled once every thread
        // has stopped, by a reaper.
        let reaper = std::thread::Builder::new()
            .name("spindle-reaper".into())
            .spawn(move || {
                let mut threads = left;
                while !threads.is_empty() {
                    threads.into_iter().for_each(|t| drop(t.join()));
                    threads = shared.take_threads();
                }
                shared.cancel_all();
            });
        // No thread for it: the tasks left are leaked, not raced.
        drop(reaper);
        false
    }
}

/// `SPINDLE_SLOW_POLL_US`: a slow-poll threshold in microseconds.
fn slow_poll_from_env() -> Result<Option<Duration>, BuildError> {
    match std::env::var("SPINDLE_SLOW_POLL_US") {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(us) if us > 0 => Ok(Some(Duration::from_micros(us))),
            _ => Err(BuildError::InvalidEnv(format!(
                "SPINDLE_SLOW_POLL_US={v:?} is not a positive number of microseconds"
            ))),
        },
    }
}

/// `SPINDLE_TRACK_SPAWNS`: `1`/`true` or `0`/`false`.
fn track_spawns_from_env() -> Result<bool, BuildError> {
    match std::env::var("SPINDLE_TRACK_SPAWNS") {
        Err(_) => Ok(false),
        Ok(v) => match v.trim() {
            "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            _ => Err(BuildError::InvalidEnv(format!(
                "SPINDLE_TRACK_SPAWNS={v:?} is not 1, 0, true or false"
            ))),
        },
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
