//! The multi-thread work-stealing scheduler.
//!
//! Each worker thread owns a `Core`: its fresh tasks (`fresh.rs`: those it
//! spawned or woke during the poll now running, which a `Fork`'s await can
//! run inline; the top one is the LIFO slot, the task run next for cache
//! warmth and to keep message-passing pairs on one worker), a fixed-size
//! local ring (`queue.rs`) and counters. When a poll returns, every fresh
//! task but the top goes to the ring, where other workers can steal it
//! (earlier, as soon as some worker is idle); a poll that lasts a monitor
//! round has all of them taken by an idle worker (`steal_hidden`). Every
//! poll runs with a cooperative budget (`task/coop.rs`). A worker looks
//! for work in this order:
//!
//! 1. every `GLOBAL_POLL_INTERVAL` ticks, the injector first (fairness: tasks
//!    scheduled from outside cannot starve behind a busy local queue);
//! 2. the LIFO slot, at most `MAX_LIFO_POLLS` times in a row (then the task
//!    goes to the back of the ring, so a ping-pong pair cannot starve the rest;
//!    an idle worker is woken for it only if the ring held other tasks);
//! 3. its ring; 4. a batch from the injector;
//! 5. stealing half of another worker's ring, as one of at most half the
//!    workers searching (`idle.rs`), spinning a few rounds, then the fresh
//!    tasks of a worker the monitor named (`steal_hidden`), before
//! 6. yielding its CPU once and parking (`spin.rs` has the policy, `idle.rs`
//!    the protocol, `docs/sleep-wake.md` the proof).
//!
//! Tasks hold the shared state through a `Hook` (`hook.rs`): each worker
//! keeps a purse of the state's units, so spawning and freeing tasks costs
//! no atomic read-modify-write on a reference count.

use super::diagnostics::{self, OnStall, SlowPolls};
use super::doze::Doze;
use super::driver::Driver;
use super::fresh::Fresh;
use super::hook::{Hook, Owner, Purse, Units};
use super::idle::Idle;
use super::inject::Inject;
use super::inline::InlineRuns;
use super::lent::Lent;
use super::metrics::{bump, RuntimeMetrics, WorkerCounters};
use super::park::Parker;
use super::queue::{self, Local, Stealer};
use super::spin::{ParkYield, SpinBudget};
use super::{current_core, CoreGuard, CoreRef, Handle, HandleInner};
use crate::blocking::Pool;
use crate::loom::{lock, Arc, AtomicBool, AtomicU64, CachePadded, Mutex, Ordering::*};
use crate::task::coop;
use crate::task::registry::Registry;
use crate::task::{Notified, RawTask};
use std::time::Duration;

mod schedule;
pub(crate) use schedule::spawn;
mod steal;
mod threads;

/// Ticks between injector-first polls (a prime, so it does not beat with
/// batch sizes).
const GLOBAL_POLL_INTERVAL: u32 = 61;
/// Consecutive LIFO-slot polls before the slot's task yields to the ring.
/// When the ring holds other tasks, an idle worker is then woken and may
/// steal the capped one, splitting a message-passing pair across cores (a
/// cross-core wake costs far more than a poll on the same worker; with a
/// cap as low as Tokio's, 3, a rendezvous pair is split so often that it
/// runs slower on 2 workers than on 1). At 16 a task in the ring still
/// waits only microseconds of LIFO polls. A lone pair wakes nobody at the
/// cap (`run_task`) and stays on its worker.
const MAX_LIFO_POLLS: u32 = 16;

pub(crate) struct Shared {
    remotes: Box<[Remote]>,
    pub(crate) inject: Inject,
    idle: Idle,
    pub(crate) registry: Registry,
    pub(crate) driver: Arc<Driver>,
    pub(crate) blocking: Arc<Pool>,
    shutdown: AtomicBool,
    remote_schedules: AtomicU64,
    pub(crate) config: Config,
    /// Worker threads (replacements included) and the monitor, to join at shutdown.
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// Cores handed to a fresh thread (by the monitor or `block_in_place`).
    pub(crate) handoffs: AtomicU64,
    /// The monitor sleeps on this between rounds (woken at shutdown, and
    /// from a long round by a worker waking up: `doze`).
    pub(crate) monitor: Parker,
    pub(crate) doze: Doze,
    pub(crate) slow_polls: SlowPolls,
    pub(crate) stalls: AtomicU64,
    /// The tasks' hooks (`hook.rs`).
    units: Units,
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
    /// Units of cooperative budget per poll (`task/coop.rs`).
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

/// What other threads may touch of a worker.
pub(crate) struct Remote {
    stealer: Stealer,
    parker: Parker,
    pub(crate) counters: CachePadded<WorkerCounters>,
    /// The lending slot of the thread running this core now (`lent.rs`).
    pub(crate) active: Mutex<Arc<Lent>>,
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
    fn visit_wanted(&self) -> bool {
        if self.visit_at.load(Relaxed) == 0 {
            return false;
        }
        let at = self.visit_at.swap(0, Relaxed);
        at != 0 && self.counters.polls.load(Relaxed) + 1 == at
    }
}

/// What a `Handle` holds of this flavour. Its own allocation, not the
/// shared state's: a `Weak` of it (the SIGQUIT dump's) dies with the
/// runtime and its handles, where the tasks' hooks may keep the shared
/// state itself alive a while longer.
pub(crate) struct Spawner {
    shared: Arc<Shared>,
}

/// A worker thread's state, on its stack; `CORE` points here while it runs.
pub(crate) struct WorkerCtx {
    /// Hooks for the tasks spawned here (`hook.rs`); its owner is the
    /// runtime's shared state.
    purse: Purse<Shared>,
    /// Hooks on the driver, for the timers and sockets armed here.
    driver_purse: Purse<Driver>,
    /// The runtime's spawner for outside threads, for `Handle::current`.
    external: Arc<Spawner>,
    index: usize,
    /// The core, while a task runs (the run loop holds it otherwise).
    lent: Arc<Lent>,
    /// Nesting of inline runs (`run_inline_if_next`).
    inline: InlineRuns,
}

pub(crate) struct Core {
    fresh: Fresh,
    queue: Local,
    tick: u32,
    lifo_polls: u32,
    is_searching: bool,
    rng: u32,
    /// Rounds of stealing before parking (`spin.rs`).
    spin: SpinBudget,
    /// Whether to yield the CPU once before parking (`spin.rs`).
    park_yield: ParkYield,
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
        }
    }

    /// After a worker counted itself asleep: is there work anybody should
    /// wake for?
    fn notify_if_work_pending(&self) {
        // SeqCst fence: the other half of the notifier's (`worker_to_notify`):
        // the sleeper's RMW in `worker_to_parked`, then this fence, then the
        // reads below. SeqCst RMW and loads alone give the same order in the
        // C++ model, but loom models only the fences' (it found a sleeper
        // reading an empty injector after the push it missed, once the
        // steal loop's last pause, a loom yield, was gone).
        crate::loom::fence(SeqCst);
        let pending = !self.inject.is_empty() || self.remotes.iter().any(|r| !r.stealer.is_empty());
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
        }
    }

    /// Workers asleep now (a snapshot).
    pub(crate) fn sleeping_workers(&self) -> usize {
        self.idle.num_sleeping()
    }

    /// Monitor: may it sleep a long round? (`doze.rs`: only while every
    /// worker sleeps.)
    pub(crate) fn monitor_may_doze(&self) -> bool {
        self.doze
            .begin(|| self.idle.num_sleeping() == self.remotes.len())
    }

    /// A worker back from `park`: counts it awake (`Idle::worker_from_parked`,
    /// whose answer it returns), then wakes a dozing monitor, which must
    /// watch it again (`doze.rs`: in this order).
    fn worker_from_parked(&self, index: usize) -> bool {
        let searching = self.idle.worker_from_parked(index);
        if self.doze.wake() {
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
        super::cancel_remaining(&self.registry, &self.inject);
    }
}

impl Owner for Shared {
    fn units(&self) -> &Units {
        &self.units
    }

    fn with_local_purse<R>(this: *const Self, f: impl FnOnce(&Purse<Self>) -> R) -> Option<R> {
        match current_core() {
            CoreRef::Multi(w) => {
                // SAFETY: CORE points to a live context (set by its guard).
                let purse = &unsafe { &*w }.purse;
                std::ptr::eq(Arc::as_ptr(purse.owner()), this).then(|| f(purse))
            }
            _ => None,
        }
    }
}

impl WorkerCtx {
    fn new(external: Arc<Spawner>, index: usize) -> WorkerCtx {
        let stack_size = external.shared.config.stack_size;
        WorkerCtx {
            purse: Purse::new(external.shared.clone()),
            driver_purse: Purse::new(external.shared.driver.clone()),
            external,
            index,
            inline: InlineRuns::new(stack_size),
            lent: Arc::new(Lent::new()),
        }
    }

    /// See `sched::run_inline_if_next`: only the fresh tasks are searched,
    /// which no other worker takes from while this borrow lasts (a visit
    /// waits for it: `lent.rs`), so holding one's `Notified` is holding the
    /// one permission to run it.
    ///
    /// # Safety
    /// As `sched::run_inline_if_next`.
    pub(crate) unsafe fn run_inline_if_next(&self, task: RawTask, dst: *mut ()) -> bool {
        if !self.inline.has_room() {
            return false;
        }
        let next = self.lent.borrow().and_then(|mut core| {
            let next = core.fresh.take(task)?;
            // Counted inside the borrow: the core's counters have one writer.
            bump(&self.counters().polls, 1);
            bump(&self.counters().lifo_hits, 1);
            Some(next)
        });
        let Some(next) = next else { return false };
        // SAFETY: forwarded from the caller.
        unsafe { self.inline.run_joined(next, dst) }
    }

    pub(crate) fn handle(&self) -> Handle {
        Handle {
            inner: HandleInner::Multi(self.external.clone()),
        }
    }

    /// This runtime's driver, and the timer shard this worker arms on.
    pub(crate) fn driver(&self) -> (Hook<Driver>, usize) {
        (self.driver_purse.hook(), self.index)
    }

    pub(crate) fn driver_purse(&self) -> &Purse<Driver> {
        &self.driver_purse
    }

    fn shared(&self) -> &Shared {
        self.purse.owner()
    }

    fn counters(&self) -> &WorkerCounters {
        &self.shared().remotes[self.index].counters
    }

    /// The run loop; returns the core at shutdown, or `None` once this
    /// thread lost it to a new thread (it then exits).
    fn run(&self, mut core: Box<Core>) -> Option<Box<Core>> {
        while !self.shared().is_shutdown() {
            core.tick = core.tick.wrapping_add(1);
            if core.tick.is_multiple_of(GLOBAL_POLL_INTERVAL) {
                core = self.maintenance(core)?;
            }
            if let Some(task) = self.next_task(&mut core) {
                core = self.run_task(core, task)?;
                continue;
            }
            if let Some(task) = self.steal_work(&mut core) {
                core = self.run_task(core, task)?;
                continue;
            }
            core = self.park(core)?;
        }
        Some(core)
    }

    fn next_task(&self, core: &mut Core) -> Option<Notified> {
        // Fresh tasks left by a poll that did not return here (a core taken
        // over from a blocked thread) or woken by the driver: before a poll
        // that may block, let other workers see them.
        if core.fresh.len() > 1 {
            self.publish_fresh(core);
        }
        if core.tick.is_multiple_of(GLOBAL_POLL_INTERVAL) {
            if let Some(t) = self.shared().inject.pop() {
                bump(&self.counters().injector_pops, 1);
                return Some(t);
            }
        }
        if let Some(t) = core.fresh.pop() {
            return Some(t);
        }
        if let Some(t) = core.queue.pop() {
            return Some(t);
        }
        self.take_from_inject(core)
    }

    /// Takes a fair share of the injector: one task to run, the rest into the ring.
    fn take_from_inject(&self, core: &mut Core) -> Option<Notified> {
        let inject = &self.shared().inject;
        if inject.is_empty() {
            return None;
        }
        let share = inject.len() / self.shared().remotes.len() + 1;
        let n = share.clamp(1, core.queue.remaining().clamp(1, queue::CAPACITY / 2));
        let mut batch = inject.pop_n(n).into_iter();
        let first = batch.next()?;
        bump(&self.counters().injector_pops, 1 + batch.len() as u64);
        for t in batch {
            core.queue.push_back(t, inject);
        }
        Some(first)
    }

    /// Runs `task`, then the LIFO slot's tasks (a few), publishing the fresh
    /// tasks below the top after each poll, then the tasks of the core's own
    /// ring (and its share of the injector) until it has none or the next
    /// tick is a maintenance tick; `None` if the core was taken away during
    /// a poll. The core stays lent throughout, borrowed between polls
    /// (`lent.rs`), and is taken out once, at the end.
    fn run_task(&self, mut core: Box<Core>, task: Notified) -> Option<Box<Core>> {
        if core.is_searching {
            core.is_searching = false;
            if self.shared().idle.worker_from_searching() {
                // The last searcher found work: there may be more.
                self.shared().notify_parked();
            }
        }
        core.lifo_polls = 0;
        bump(&self.counters().polls, 1);
        self.lent.lend(core);
        self.run_timed(task);
        loop {
            // Both count their poll inside their borrow.
            while let Some(task) = self.next_lifo()? {
                self.run_timed(task);
            }
            let Some(task) = self.next_queued()? else {
                return self.lent.take();
            };
            self.run_timed(task);
        }
    }

    /// After a LIFO chain: the next task of the core's own queues, as
    /// `next_task` would take it, unless the next tick is a maintenance
    /// tick (the run loop's: the driver's turn, the injector first, the
    /// shutdown check) or there is none. `None` if the core was taken away.
    fn next_queued(&self) -> Option<Option<Notified>> {
        let mut core = self.lent.borrow()?;
        let tick = core.tick.wrapping_add(1);
        if tick.is_multiple_of(GLOBAL_POLL_INTERVAL) {
            return Some(None);
        }
        let task = match core.queue.pop() {
            Some(t) => Some(t),
            None => self.take_from_inject(&mut core),
        };
        if task.is_some() {
            core.tick = tick;
            core.lifo_polls = 0;
            bump(&self.counters().polls, 1);
        }
        Some(task)
    }

    /// Between two polls of a LIFO chain: publishes the fresh tasks below
    /// the top and takes the top one, unless the chain reached its cap.
    /// `None` if the core was taken away during the poll.
    fn next_lifo(&self) -> Option<Option<Notified>> {
        let mut core = self.lent.borrow()?;
        if core.fresh.len() > 1 {
            self.publish_fresh(&mut core);
        }
        let Some(task) = core.fresh.pop() else {
            return Some(None);
        };
        Some(if core.lifo_polls >= MAX_LIFO_POLLS {
            // Behind the ring's tasks, for fairness. An idle worker is
            // woken only if the ring held others: alone there, the task
            // is this worker's very next one, and a thief would only
            // split a message-passing pair across cores.
            let others_waiting = !core.queue.is_empty();
            if core.queue.push_back(task, &self.shared().inject) {
                bump(&self.counters().overflows, 1);
            }
            if others_waiting {
                self.shared().notify_parked();
            }
            None
        } else {
            core.lifo_polls += 1;
            bump(&self.counters().lifo_hits, 1);
            bump(&self.counters().polls, 1);
            Some(task)
        })
    }

    /// Polls `task` with a fresh cooperative budget, counting the poll if
    /// it ends in a forced yield or is slow (`diagnostics.rs`).
    #[inline(always)]
    fn run_timed(&self, task: Notified) {
        coop::start_poll();
        let slow = &self.shared().slow_polls;
        let limit = slow.limit();
        let mut was_slow = false;
        if limit == u64::MAX {
            task.run();
        } else {
            let id = task.addr();
            let start = diagnostics::stamp();
            task.run();
            let took = diagnostics::stamp().wrapping_sub(start);
            if took > limit {
                slow.record(self.index, id, took);
                was_slow = true;
            }
        }
        let forced = coop::poll_forced_yield();
        // Counted only by the core's holder (one writer); a poll that lost
        // its core shows as a hand-off instead.
        if was_slow || forced {
            if let Some(_core) = self.lent.borrow() {
                bump(&self.counters().slow_polls, u64::from(was_slow));
                bump(&self.counters().forced_yields, u64::from(forced));
            }
        }
    }

    fn park(&self, core: Box<Core>) -> Option<Box<Core>> {
        let mut core = core;
        if !core.fresh.is_empty() || !core.queue.is_empty() {
            return Some(core);
        }
        let shared = self.shared();
        // Out of the search first: while a searcher is counted, nobody wakes
        // a sleeper for new work, and the yield may last a time slice. Still
        // counted awake: work pushed meanwhile is seen by the re-check below.
        if core.is_searching {
            core.is_searching = false;
            shared.idle.worker_from_searching();
        }
        core.park_yield.before_park();
        // Every sleeper re-checks, not only the last searcher: a worker that
        // was refused the search (another searched then) and a push made
        // while it still counted as awake would otherwise both go unseen
        // (`docs/sleep-wake.md`, case C; found by the loom model
        // `fresh_tasks_reach_another_worker`).
        shared.idle.worker_to_parked(self.index);
        shared.notify_if_work_pending();
        bump(&self.counters().parks, 1);
        let parker = &shared.remotes[self.index].parker;
        match shared.driver.try_lock() {
            Some(driver) => {
                parker.park_on_driver(&driver);
                core.is_searching = shared.worker_from_parked(self.index);
                self.dispatch(core, || {
                    driver.dispatch();
                })
            }
            None => {
                parker.park();
                core.is_searching = shared.worker_from_parked(self.index);
                Some(core)
            }
        }
    }

    /// Every `GLOBAL_POLL_INTERVAL` ticks: serve due timers and ready I/O
    /// if nobody is parked on the driver doing it.
    fn maintenance(&self, core: Box<Core>) -> Option<Box<Core>> {
        let driver = &self.shared().driver;
        if !driver.has_work() {
            return Some(core);
        }
        match driver.try_lock() {
            Some(driver) => self.dispatch(core, || {
                driver.poll_now();
                driver.dispatch();
            }),
            None => Some(core),
        }
    }

    /// Runs the driver dispatch `f` with the core lent, so that the tasks it
    /// wakes are queued on this worker, then publishes them and wakes one
    /// idle worker if more than one waits; `None` if the core was taken away
    /// meanwhile (the thread that has it runs or publishes them).
    ///
    /// Woken tasks wait for the end of what woke them (`schedule_local`),
    /// here the batch: one notify per batch, not one at its second task. An
    /// idle worker woken mid-batch takes a CPU from this thread while it is
    /// still dispatching (on 2 cores with the echo benchmark's load
    /// generator beside it, the two workers woke each other 3,400-4,400
    /// times a second and preempted each other 3,000-3,400 times; ~1,200 and
    /// 500-1,000 this way; Tokio also notifies after its driver returns).
    fn dispatch(&self, core: Box<Core>, f: impl FnOnce()) -> Option<Box<Core>> {
        self.lent.lend(core);
        f();
        let mut core = self.lent.take()?;
        if core.fresh.len() + core.queue.len() > 1 {
            self.publish_fresh(&mut core);
        }
        Some(core)
    }
}

/// Builds the shared state and one core per worker.
pub(crate) fn build(
    workers: usize,
    config: Config,
    blocking: Arc<Pool>,
) -> std::io::Result<(Arc<Shared>, Vec<Core>)> {
    let driver = Arc::new(Driver::new(workers)?);
    super::asym::register(); // before any worker borrows its core (`lent.rs`)
    let mut remotes = Vec::with_capacity(workers);
    let mut cores = Vec::with_capacity(workers);
    for i in 0..workers {
        let (local, stealer) = queue::local();
        remotes.push(Remote {
            stealer,
            parker: Parker::with_driver(driver.clone()),
            counters: CachePadded(WorkerCounters::default()),
            active: Mutex::new(Arc::new(Lent::new())),
            visit_at: AtomicU64::new(0),
        });
        cores.push(Core {
            fresh: Fresh::new(),
            queue: local,
            tick: 0,
            lifo_polls: 0,
            is_searching: false,
            rng: 0x9E37_79B9u32.wrapping_mul(i as u32 + 1) | 1,
            spin: SpinBudget::new(),
            park_yield: ParkYield::new(config.yield_before_park),
        });
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
        doze: Doze::default(),
        slow_polls: SlowPolls::new(workers, config.slow_poll),
        stalls: AtomicU64::new(0),
        units: Units::default(),
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

impl Spawner {
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

/// A worker thread's body.
pub(crate) fn run_worker(external: Arc<Spawner>, index: usize, mut core: Box<Core>) {
    let ctx = WorkerCtx::new(external, index);
    *lock(&ctx.shared().remotes[index].active) = ctx.lent.clone();
    // The first tick is a maintenance tick (driver turn, injector first):
    // a core arriving from a stuck thread has starved both.
    core.tick = GLOBAL_POLL_INTERVAL - 1;
    let _guard = CoreGuard::enter(CoreRef::Multi(&ctx));
    let _budget = coop::Scope::enter(ctx.shared().config.coop_budget);
    let Some(mut core) = ctx.run(core) else {
        return; // the core went on in another thread
    };
    // Shutdown: cancel what is left here. Cancelling runs destructors that
    // may wake other tasks; with the core out of `ctx`, those go to the
    // injector, which the runtime drains after every worker has stopped.
    while let Some(t) = core.fresh.pop() {
        drop(t);
    }
    while let Some(t) = core.queue.pop() {
        drop(t);
    }
}

/// A runtime's shared state and cores, no thread started (unit tests and
/// loom models drive them by hand).
#[cfg(test)]
fn test_build(workers: usize) -> (Arc<Shared>, Vec<Core>) {
    let config = Config {
        thread_name: "test".into(),
        stack_size: None,
        handoff_after: None,
        // A no-op under loom (`spin.rs`); on, as by default.
        yield_before_park: true,
        slow_poll: None,
        stall_after: None,
        on_stall: std::sync::Arc::new(diagnostics::print_stall),
        track_spawns: false,
        coop_budget: crate::task::coop::DEFAULT_BUDGET,
    };
    let pool = Pool::new(1, Duration::from_secs(1), "test-blocking".into());
    build(workers, config, pool).unwrap()
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_model;
