//! The runtime's shared state (`Shared`): what every worker and the
//! monitor reach, the injector, the sleep/wake counters (`idle.rs`), the
//! task registry, the driver and the threads to join; per worker, what
//! other threads may touch of it (`Remote`: its ring's stealer, parker,
//! counters and lending slot). `build` makes it with one `Core` per worker.
//!
//! Tasks hold the shared state through a `SchedRef` (`sched_ref.rs`):
//! each worker keeps a stock of them taken ahead (`RefCounted for Shared`),
//! so spawning and freeing tasks costs no atomic read-modify-write on a reference count.

use super::Core;
use crate::driver::clock::Clock;
use crate::driver::park::Parker;
use crate::driver::Driver;
#[cfg(not(loom))]
use crate::join::JobStealers;
use crate::loom::{Arc, AtomicBool, AtomicU64, CachePadded, Mutex, Ordering::*};
use crate::sched::blocking::Pool;
use crate::sched::core_slot::CoreSlot;
use crate::sched::diagnostics::{OnStall, SlowPolls};
use crate::sched::hidden_watch::Watching;
use crate::sched::idle::Idle;
use crate::sched::inject::Inject;
use crate::sched::metrics::{RuntimeMetrics, WorkerCounters};
use crate::sched::monitor_sleep::MonitorSleep;
use crate::sched::queue::{self, Stealer};
use crate::sched::{current_core, CoreRef};
use crate::sched_ref::{RefCount, RefCounted, RefStock};
use crate::task::registry::Registry;
use std::time::Duration;

/// The state of a runtime that every worker, the monitor and the tasks'
/// `SchedRef`s share.
pub(crate) struct Shared {
    pub(super) remotes: Box<[Remote]>,
    pub(crate) inject: Inject,
    pub(super) idle: Idle,
    pub(crate) registry: Registry,
    pub(crate) driver: Arc<Driver>,
    pub(crate) blocking: Arc<Pool>,
    shutdown: AtomicBool,
    pub(super) remote_schedules: AtomicU64,
    pub(crate) config: Config,
    /// Worker threads (replacements included) and the monitor, to join at shutdown.
    pub(super) threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// Cores handed to a fresh thread (by the monitor or `block_in_place`).
    pub(crate) handoffs: AtomicU64,
    /// The monitor sleeps on this between rounds (woken at shutdown, and
    /// from a long round by a worker waking up: `monitor_sleep`).
    pub(crate) monitor: Parker,
    pub(crate) monitor_sleep: MonitorSleep,
    /// Whether the monitor's hidden-task watch is armed (`hidden_watch.rs`).
    pub(crate) watching: Watching,
    /// Set after a driver turn of the monitor's (taken because every worker
    /// was inside a poll for a whole round) that left tasks in the
    /// injector: a busy worker takes them at its next tick, rather than up
    /// to `GLOBAL_POLL_INTERVAL` long polls later (`worker.rs`). A hint:
    /// read stale, the tasks wait for the interval as before.
    pub(crate) inject_soon: AtomicBool,
    /// The thieves' ends of the worker threads' job deques (`join/`).
    #[cfg(not(loom))]
    pub(super) jobs: JobStealers,
    pub(crate) slow_polls: SlowPolls,
    pub(crate) stalls: AtomicU64,
    /// How many `SchedRef`s of this state are out (`sched_ref.rs`).
    refs_out: RefCount,
}

/// Settings from the `Builder` that outlive `build`.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) thread_name: String,
    pub(crate) stack_size: Option<usize>,
    /// A poll running longer than this has its core handed to a new thread
    /// (`None`: never).
    pub(crate) handoff_after: Option<Duration>,
    /// Whether an idle worker yields its CPU once before parking (`spin.rs`).
    pub(crate) yield_before_park: bool,
    /// Polls longer than this are counted (`None`: polls are not timed).
    pub(crate) slow_poll: Option<Duration>,
    /// All idle with parked tasks this long is reported (`None`: never).
    pub(crate) stall_after: Option<Duration>,
    pub(crate) on_stall: OnStall,
    /// Register every task at spawn with where it was spawned (for the
    /// stall report and the dump).
    pub(crate) track_spawns: bool,
    /// Units of cooperative budget per poll (`task/coop/`).
    pub(crate) coop_budget: u32,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("handoff_after", &self.handoff_after)
            .field("yield_before_park", &self.yield_before_park)
            .field("slow_poll", &self.slow_poll)
            .field("stall_after", &self.stall_after)
            .field("track_spawns", &self.track_spawns)
            .finish_non_exhaustive()
    }
}

/// What other threads may touch of a worker. Aligned as `CachePadded`,
/// so that two workers' parkers and visit hints never share a line.
#[repr(align(128))]
pub(crate) struct Remote {
    pub(super) stealer: Stealer,
    pub(super) parker: Parker,
    /// Shared with the worker's context, which reaches it without an index.
    pub(crate) counters: Arc<CachePadded<WorkerCounters>>,
    /// The lending slot of the thread running this core now (`core_slot.rs`).
    pub(crate) active: Mutex<Arc<CoreSlot>>,
    /// Set by the monitor to one more than the poll count of a poll that
    /// has hidden fresh tasks for a whole round (0: none): an idle worker
    /// then takes them (`WorkerCtx::steal_hidden`), if that poll is still
    /// the one running.
    visit_at: AtomicU64,
}

impl Remote {
    /// The core's ring as others see it: tasks waiting, and how many have
    /// left it so far (`Stealer::taken`).
    pub(crate) fn ring(&self) -> (usize, u32) {
        (self.stealer.len(), self.stealer.taken())
    }

    /// The monitor: the poll numbered `polls` has hidden fresh tasks for a
    /// round; an idle worker may take them while it lasts.
    pub(crate) fn want_visit(&self, polls: u64) {
        self.visit_at.store(polls + 1, Relaxed);
    }

    /// Whether the poll the monitor named is still running (and the ask
    /// is cleared: one visit per ask).
    pub(super) fn visit_wanted(&self) -> bool {
        if self.visit_at.load(Relaxed) == 0 {
            return false;
        }
        let at = self.visit_at.swap(0, Relaxed);
        at != 0 && self.counters.polls.load(Relaxed) + 1 == at
    }
}

/// What a `Handle` holds of this flavour. Its own allocation, not the
/// shared state's: a `Weak` of it (the SIGQUIT dump's) dies with the
/// runtime and its handles, where the tasks' `SchedRef`s may keep the shared
/// state itself alive a while longer.
pub(crate) struct Spawner {
    pub(super) shared: Arc<Shared>,
}

impl Spawner {
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Shared {
    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Acquire)
    }

    pub(crate) fn remotes(&self) -> &[Remote] {
        &self.remotes
    }

    /// Every worker asleep and nothing queued anywhere (the stall
    /// detector's first test; racy, so it is required to hold for a while).
    pub(crate) fn is_quiescent(&self) -> bool {
        self.idle.num_sleeping() == self.remotes.len()
            && self.inject.is_empty()
            && self.remotes.iter().all(|r| r.stealer.is_empty())
    }

    /// Where the registered tasks were spawned (`file:line:column`), with
    /// their counts, most first; empty unless spawn tracking is on.
    pub(crate) fn spawn_sites(&self) -> Vec<(String, usize)> {
        let sites = self.registry.spawn_sites();
        sites.into_iter().map(|(s, n)| (s.to_string(), n)).collect()
    }

    /// The named tasks the registry holds (idle ones), as the reports
    /// write them.
    pub(crate) fn named_waiting(&self) -> Vec<String> {
        if !crate::task::names::any() {
            return Vec::new(); // no walk over every idle task for nothing
        }
        crate::task::names::named_among(&self.registry.held())
    }

    /// Wakes a sleeping worker unless one is searching already.
    pub(crate) fn notify_parked(&self) {
        if let Some(i) = self.idle.worker_to_notify() {
            self.remotes[i].parker.unpark();
        }
    }

    /// After a turn at the driver by the monitor, which never parks on it:
    /// a worker that went to sleep meanwhile found the driver taken and
    /// sleeps on its own parker. With every worker asleep, nobody then waits
    /// for the next timer or I/O event until the monitor's next round (up to
    /// its longest, with timers late by as much), so one is
    /// woken, and parks on the driver. (A spurious wake-up at worst, when
    /// one parked on the driver after the monitor let it go.)
    pub(crate) fn after_monitor_turn(&self) {
        // SeqCst fence between the driver's release (a Release store of its
        // lock word) and the read of the sleepers: a worker going to sleep
        // counts itself asleep, fences, then tries the driver's lock. With
        // both fences, either it finds the lock free or this sees it asleep;
        // without this one, the store could still sit in this CPU's store
        // buffer while the read runs, and each side miss the other (timers
        // then late until the monitor's next round).
        crate::loom::fence(SeqCst);
        if self.idle.num_sleeping() == self.remotes.len() {
            self.notify_parked();
        } else if !self.inject.is_empty() {
            self.inject_soon.store(true, Relaxed);
        }
    }

    /// After a worker counted itself asleep: is there work anybody should
    /// wake for?
    pub(super) fn notify_if_work_pending(&self) {
        // SeqCst fence: the other half of the notifier's (`worker_to_notify`):
        // the sleeper's RMW in `worker_to_parked`, then this fence, then the
        // reads below. SeqCst RMW and loads alone give the same order in the
        // C++ model, but loom models only the fences' (it found a sleeper
        // reading an empty injector after the push it missed, once the
        // steal loop's last pause, a loom yield, was gone).
        crate::loom::fence(SeqCst);
        let pending = !self.inject.is_empty() || self.remotes.iter().any(|r| !r.stealer.is_empty());
        // Jobs (`jobs.rs`): a join that saw a worker idle fenced (in
        // `notify_parked`) after its push, so this sees it.
        #[cfg(not(loom))]
        let pending = pending || self.jobs.any_waiting();
        if pending {
            self.notify_parked();
        }
    }

    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        RuntimeMetrics {
            flavor: "multi_thread",
            workers: self
                .remotes
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut m = r.counters.snapshot(i, r.stealer.len());
                    m.worst_polls = self.slow_polls.worst(i);
                    m
                })
                .collect(),
            remote_schedules: self.remote_schedules.load(Relaxed),
            injector_depth: self.inject.len(),
            stalls_detected: self.stalls.load(Relaxed),
            registered_tasks: self.registry.len(),
            sleeping_workers: self.idle.num_sleeping(),
            timers: self.driver.timers.armed(),
            handoffs: self.handoffs.load(Relaxed),
            blocking: self.blocking.metrics(),
            // `Handle::metrics` lists them: one table for every runtime.
            named_tasks: Vec::new(),
        }
    }

    /// A poll hid its first fresh task (`any_idle`: is a worker idle to
    /// take it?), or a worker falls asleep beside such a poll: wakes the
    /// monitor to watch it, unless it watches already
    /// (`hidden_watch.rs`).
    pub(super) fn poke_watch(&self, any_idle: impl FnOnce() -> bool) {
        if self.watching.take(any_idle) {
            self.monitor.unpark();
        }
    }

    /// Whether a worker other than `index` hides fresh tasks now (its
    /// `hides_fresh` hint). A worker about to sleep then skips its yield
    /// (`spin.rs`): it is to be woken for them within a look or two
    /// (`hidden_watch.rs`), and its CPU, yielded, may go to that very
    /// poll for a whole time slice.
    pub(super) fn hides_from(&self, index: usize) -> bool {
        self.remotes
            .iter()
            .enumerate()
            .any(|(i, r)| i != index && r.counters.hides_fresh.load(Relaxed))
    }

    /// Workers asleep now (a snapshot).
    pub(crate) fn sleeping_workers(&self) -> usize {
        self.idle.num_sleeping()
    }

    /// Monitor: may it sleep a long round? (`monitor_sleep.rs`: only while every
    /// worker sleeps.)
    pub(crate) fn monitor_may_sleep_long(&self) -> bool {
        self.monitor_sleep
            .begin(|| self.idle.num_sleeping() == self.remotes.len())
    }

    /// A worker back from `park`: counts it awake (`Idle::worker_from_parked`,
    /// whose answer it returns), then wakes a dozing monitor, which must
    /// watch it again (`monitor_sleep.rs`: in this order).
    pub(super) fn worker_from_parked(&self, index: usize) -> bool {
        let searching = self.idle.worker_from_parked(index);
        if self.monitor_sleep.wake() {
            self.monitor.unpark();
        }
        searching
    }

    /// Stops the workers (they drain and cancel their own queues on exit).
    pub(crate) fn begin_shutdown(&self) {
        self.shutdown.store(true, SeqCst);
        for r in self.remotes.iter() {
            r.parker.unpark();
        }
        self.monitor.unpark();
    }

    /// Cancels every task still alive: registered (idle) ones and queued ones.
    /// Call after the workers have stopped.
    pub(crate) fn cancel_all(&self) {
        self.driver.shut_down();
        crate::sched::cancel_remaining(&self.registry, &self.inject);
    }
}

impl RefCounted for Shared {
    fn ref_count(&self) -> &RefCount {
        &self.refs_out
    }

    fn with_local_stock<R>(this: *const Self, f: impl FnOnce(&RefStock<Self>) -> R) -> Option<R> {
        match current_core() {
            CoreRef::Multi(w) => {
                // SAFETY: CORE points to a live context (set by its guard).
                let stock = &unsafe { &*w }.refs;
                std::ptr::eq(Arc::as_ptr(stock.owner()), this).then(|| f(stock))
            }
            _ => None,
        }
    }
}

/// Builds the shared state and one core per worker.
pub(crate) fn build(
    workers: usize,
    config: Config,
    blocking: Arc<Pool>,
) -> std::io::Result<(Arc<Shared>, Vec<Core>)> {
    let driver = Arc::new(Driver::new(workers, Clock::new(false, false))?);
    // Before any worker borrows its core (`core_slot.rs`).
    crate::asym_fence::register();
    let mut remotes = Vec::with_capacity(workers);
    let mut cores = Vec::with_capacity(workers);
    for i in 0..workers {
        let (local, stealer) = queue::local();
        remotes.push(Remote {
            stealer,
            parker: Parker::with_driver(driver.clone()),
            counters: Arc::new(CachePadded(WorkerCounters::default())),
            active: Mutex::new(Arc::new(CoreSlot::new())),
            visit_at: AtomicU64::new(0),
        });
        cores.push(Core::new(i, local, config.yield_before_park));
    }
    let shared = Arc::new(Shared {
        remotes: remotes.into_boxed_slice(),
        inject: Inject::new(),
        idle: Idle::new(workers),
        registry: Registry::new(workers * 4),
        driver,
        blocking,
        shutdown: AtomicBool::new(false),
        remote_schedules: AtomicU64::new(0),
        threads: Mutex::new(Vec::new()),
        handoffs: AtomicU64::new(0),
        monitor: Parker::new(),
        monitor_sleep: MonitorSleep::default(),
        watching: Watching::default(),
        inject_soon: AtomicBool::new(false),
        #[cfg(not(loom))]
        jobs: JobStealers::default(),
        slow_polls: SlowPolls::new(workers, config.slow_poll),
        stalls: AtomicU64::new(0),
        refs_out: RefCount::default(),
        config,
    });
    Ok((shared, cores))
}

/// The spawner outside threads use (`Handle::spawn`, `block_on`).
pub(crate) fn external_spawner(shared: &Arc<Shared>) -> Arc<Spawner> {
    Arc::new(Spawner {
        shared: shared.clone(),
    })
}

/// A runtime's shared state and cores, no thread started (unit tests and
/// loom models drive them by hand).
#[cfg(test)]
pub(super) fn test_build(workers: usize) -> (Arc<Shared>, Vec<Core>) {
    let config = Config {
        thread_name: "test".into(),
        stack_size: None,
        handoff_after: None,
        // A no-op under loom (`spin.rs`); on, as by default.
        yield_before_park: true,
        slow_poll: None,
        stall_after: None,
        on_stall: std::sync::Arc::new(crate::sched::diagnostics::print_stall),
        track_spawns: false,
        coop_budget: crate::task::coop::DEFAULT_BUDGET,
    };
    let pool = Pool::new(1, Duration::from_secs(1), "test-blocking".into());
    build(workers, config, pool).unwrap()
}
