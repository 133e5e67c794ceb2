//! A worker: its thread's context (`WorkerCtx`, on the thread's stack,
//! which `CORE` points to) and its core (`Core`: fresh tasks, ring,
//! counters), and the run loop that finds the next task (the injector
//! first every `GLOBAL_POLL_INTERVAL` ticks, then the LIFO slot, the ring,
//! the injector), runs it and the tasks it leaves behind, takes turns at
//! the driver, and parks when stealing (`steal.rs`) finds nothing.
//!
//! The core stays lent (`core_slot.rs`) while a task runs, borrowed between
//! polls, so that the monitor can hand it to a new thread when a poll
//! blocks: every step that runs a task returns `None` when the core was
//! taken away meanwhile, and the thread then exits.

use super::{Shared, Spawner};
use crate::driver::Driver;
use crate::loom::{lock, Arc, CachePadded, Ordering::Relaxed};
use crate::sched::core_slot::CoreSlot;
use crate::sched::diagnostics;
use crate::sched::inline::InlineRuns;
use crate::sched::lifo_stack::LifoStack;
use crate::sched::metrics::{bump, WorkerCounters};
use crate::sched::queue::{self, Local};
use crate::sched::spin::{ParkYield, SpinBudget};
use crate::sched::{CoreGuard, CoreRef, Handle, HandleInner};
use crate::sched_ref::{RefStock, SchedRef};
use crate::task::coop;
use crate::task::{Notified, RawTask};

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

/// A worker thread's state, on its stack; `CORE` points here while it runs.
pub(crate) struct WorkerCtx {
    /// `SchedRef`s for the tasks spawned here (`sched_ref.rs`); its owner is the
    /// runtime's shared state.
    pub(super) refs: RefStock<Shared>,
    /// `SchedRef`s on the driver, for the timers and sockets armed here.
    driver_refs: RefStock<Driver>,
    /// The runtime's spawner for outside threads, for `Handle::current`.
    external: Arc<Spawner>,
    pub(super) index: usize,
    /// This worker's counters (its `Remote`'s).
    counters: Arc<CachePadded<WorkerCounters>>,
    /// The core, while a task runs (the run loop holds it otherwise).
    pub(super) lent: Arc<CoreSlot>,
    /// Nesting of inline runs (`run_inline_if_next`).
    inline: InlineRuns,
    /// A driver turn is waking tasks (`dispatch`): they go to the ring's
    /// back in the order they were woken (`schedule_local`).
    pub(super) dispatching: std::cell::Cell<bool>,
    /// `run_task` lent the core out for its polls: while this is set, a
    /// core not in the slot was taken away (`block_in_place`'s hand-off, the
    /// monitor's retake), and the thread only finishes its poll. (Outside
    /// `run_task` the thread holds its core itself: a stolen `join` job.)
    pub(super) lending: std::cell::Cell<bool>,
    /// This thread's job deque, for `join` (`jobs.rs`).
    #[cfg(not(loom))]
    pub(super) jobs: crate::join::JobDeque,
}

/// A worker's queues and scheduling state: held by one thread at a time,
/// lent while a task runs (`core_slot.rs`).
pub(crate) struct Core {
    pub(super) fresh: LifoStack,
    pub(super) queue: Local,
    tick: u32,
    lifo_polls: u32,
    pub(super) is_searching: bool,
    pub(super) rng: u32,
    /// Rounds of stealing before parking (`spin.rs`).
    pub(super) spin: SpinBudget,
    /// Whether to yield the CPU once before parking (`spin.rs`).
    park_yield: ParkYield,
}

impl Core {
    /// Worker `index`'s core, around its ring (`queue::local`).
    pub(super) fn new(index: usize, queue: Local, yield_before_park: bool) -> Core {
        Core {
            fresh: LifoStack::new(),
            queue,
            tick: 0,
            lifo_polls: 0,
            is_searching: false,
            rng: 0x9E37_79B9u32.wrapping_mul(index as u32 + 1) | 1,
            spin: SpinBudget::new(),
            park_yield: ParkYield::new(yield_before_park),
        }
    }
}

/// A worker thread's body.
pub(super) fn run_worker(external: Arc<Spawner>, index: usize, mut core: Box<Core>) {
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

impl WorkerCtx {
    pub(super) fn new(external: Arc<Spawner>, index: usize) -> WorkerCtx {
        let stack_size = external.shared.config.stack_size;
        #[cfg(not(loom))]
        let jobs = external.shared.jobs.register();
        WorkerCtx {
            #[cfg(not(loom))]
            jobs,
            refs: RefStock::new(external.shared.clone()),
            driver_refs: RefStock::new(external.shared.driver.clone()),
            counters: external.shared.remotes[index].counters.clone(),
            external,
            index,
            inline: InlineRuns::new(stack_size),
            dispatching: std::cell::Cell::new(false),
            lending: std::cell::Cell::new(false),
            lent: Arc::new(CoreSlot::new()),
        }
    }

    /// See `Schedule::run_inline_if_next`: only the fresh tasks are searched,
    /// which no other worker takes from while this borrow lasts (a visit
    /// waits for it: `core_slot.rs`), so holding one's `Notified` is holding the
    /// one permission to run it.
    ///
    /// # Safety
    /// As `Schedule::run_inline_if_next`.
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
    pub(crate) fn driver(&self) -> (SchedRef<Driver>, usize) {
        (self.driver_refs.take_ref(), self.index)
    }

    pub(crate) fn driver_refs(&self) -> &RefStock<Driver> {
        &self.driver_refs
    }

    pub(super) fn shared(&self) -> &Shared {
        self.refs.owner()
    }

    pub(super) fn counters(&self) -> &WorkerCounters {
        &self.counters
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
            #[cfg(not(loom))]
            if self.run_stolen_job(&mut core) {
                continue;
            }
            core = self.park(core)?;
        }
        Some(core)
    }

    pub(super) fn next_task(&self, core: &mut Core) -> Option<Notified> {
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

    /// The tasks a driver turn of the monitor's woke (`Shared::inject_soon`):
    /// taken ahead of the ring, so that a timer fires beside a busy task
    /// within a round of the monitor's, not `GLOBAL_POLL_INTERVAL` polls.
    fn take_monitor_wakes(&self, core: &mut Core) -> Option<Notified> {
        let soon = &self.shared().inject_soon;
        if !soon.load(Relaxed) {
            return None;
        }
        soon.store(false, Relaxed);
        self.take_from_inject(core)
    }

    /// Takes a fair share of the injector: one task to run, the rest into the ring.
    pub(super) fn take_from_inject(&self, core: &mut Core) -> Option<Notified> {
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
    /// (`core_slot.rs`), and is taken out once, at the end.
    pub(super) fn run_task(&self, mut core: Box<Core>, task: Notified) -> Option<Box<Core>> {
        self.found_work(&mut core);
        core.lifo_polls = 0;
        bump(&self.counters().polls, 1);
        self.lent.lend(core);
        self.lending.set(true);
        self.run_timed(task);
        loop {
            // Both count their poll inside their borrow.
            while let Some(task) = self.next_lifo()? {
                self.run_timed(task);
            }
            let Some(task) = self.next_queued()? else {
                self.lending.set(false);
                return self.lent.take();
            };
            self.run_timed(task);
        }
    }

    /// A searcher found something to run (a task, a stolen job): it leaves
    /// the search first, and the last searcher to leave wakes a sleeper,
    /// since there may be more (`docs/sleep-wake.md`, rule 3).
    pub(super) fn found_work(&self, core: &mut Core) {
        if core.is_searching {
            core.is_searching = false;
            if self.shared().idle.worker_from_searching() {
                self.shared().notify_parked();
            }
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
        let task = match self.take_monitor_wakes(&mut core) {
            Some(t) => Some(t),
            None => match core.queue.pop() {
                Some(t) => Some(t),
                None => self.take_from_inject(&mut core),
            },
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

    pub(super) fn park(&self, core: Box<Core>) -> Option<Box<Core>> {
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
        // Beside a poll that hides tasks, no yield (`Shared::hides_from`),
        // and once counted asleep, the monitor is woken to watch that poll.
        let beside_hidden = shared.hides_from(self.index);
        if !beside_hidden {
            core.park_yield.before_park();
        }
        // Every sleeper re-checks, not only the last searcher: a worker that
        // was refused the search (another searched then) and a push made
        // while it still counted as awake would otherwise both go unseen
        // (`docs/sleep-wake.md`, case C; found by the loom model
        // `fresh_tasks_reach_another_worker`).
        shared.idle.worker_to_parked(self.index);
        shared.notify_if_work_pending();
        if beside_hidden {
            shared.poke_watch(|| true);
        }
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
    /// The tasks a turn wakes go to the ring in the order they were woken
    /// (`schedule_local`): timers that fell due together run in deadline
    /// order, as from Tokio's driver (its wakes go to the injector, FIFO),
    /// not newest first as from the LIFO stack.
    ///
    /// Woken tasks wait for the end of what woke them (`schedule_local`),
    /// here the batch: one notify per batch, not one at its second task. An
    /// idle worker woken mid-batch takes a CPU from this thread while it is
    /// still dispatching, and the two then preempt each other several
    /// times as often as they do this way (counts in `docs/profiles.md`,
    /// echo). Tokio also notifies after its driver returns.
    pub(super) fn dispatch(&self, core: Box<Core>, f: impl FnOnce()) -> Option<Box<Core>> {
        self.lent.lend(core);
        self.dispatching.set(true);
        f();
        self.dispatching.set(false);
        let mut core = self.lent.take()?;
        if core.fresh.len() + core.queue.len() > 1 {
            self.publish_fresh(&mut core);
        }
        Some(core)
    }
}
