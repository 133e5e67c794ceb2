//! The current-thread scheduler: every task runs on the thread that calls
//! `block_on`, nothing runs between `block_on` calls (as Tokio's
//! `current_thread` and Coflux's `noop_executor`).
//!
//! The driving thread holds the `Core` (a plain FIFO: nobody steals) while it
//! is inside `block_on`. Wakes on that thread push to the core; wakes and
//! spawns from other threads go through the injector and unpark the driver.
//! A second thread calling `block_on` at the same time waits for the core.
//!
//! Every `EVENT_INTERVAL` tasks the driver polls the `block_on` future if it
//! was woken, and every `GLOBAL_POLL_INTERVAL` tasks it takes from the
//! injector first, so neither can starve behind a busy local queue.
//!
//! A deterministic runtime (`Builder::new_deterministic`) is this
//! scheduler with a paused clock and a seeded pick of the next task in
//! place of the FIFO (`deterministic.rs`); when nothing can ever run again
//! it panics with the seed and the runtime's dump instead of hanging.

use super::deterministic::SeededPick;
use super::inject::Inject;
use super::inline::InlineRuns;
use super::lifo_stack::CAPACITY as LIFO_CAPACITY;
use super::metrics::{bump, RuntimeMetrics, WorkerCounters};
use super::{current_core, CoreGuard, CoreRef, Handle, HandleInner};
use crate::driver::clock::Clock;
use crate::driver::park::Parker;
use crate::driver::Driver;
use crate::loom::{lock, Arc, AtomicBool, AtomicU64, Condvar, Mutex, Ordering::*};
use crate::sched::blocking::Pool;
use crate::sched_ref::{RefCount, RefCounted, RefStock, SchedRef};
use crate::task::coop;
use crate::task::registry::{Key, Registry};
use crate::task::{Inline, JoinHandle, Notified, RawTask, Schedule};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};

const EVENT_INTERVAL: u32 = 61;
const GLOBAL_POLL_INTERVAL: u32 = 31;

pub(crate) struct Shared {
    inject: Inject,
    registry: Registry,
    /// Unparked by remote schedules and by the `block_on` future's waker.
    parker: Arc<Parker>,
    pub(crate) driver: Arc<Driver>,
    pub(crate) blocking: Arc<Pool>,
    core: Mutex<Option<Box<Core>>>,
    core_free: Condvar,
    counters: WorkerCounters,
    /// Units of cooperative budget per poll (`task/coop/`).
    coop_budget: u32,
    remote_schedules: AtomicU64,
    /// How many `SchedRef`s of this state are out (`sched_ref.rs`).
    refs_out: RefCount,
    /// Registers every task at its spawn with the caller's location (a
    /// deterministic runtime's, for its deadlock report).
    track_spawns: bool,
}

pub(crate) struct Core {
    queue: VecDeque<Notified>,
    tick: u32,
    /// A deterministic runtime's schedule; `None`: FIFO.
    seeded: Option<SeededPick>,
}

/// The driving thread's state while inside `block_on`; `CORE` points here.
pub(crate) struct DriverCtx {
    /// `SchedRef`s for the tasks spawned here (`sched_ref.rs`); its owner is the
    /// runtime's shared state.
    refs: RefStock<Shared>,
    /// `SchedRef`s on the driver, for the timers and sockets armed here.
    driver_refs: RefStock<Driver>,
    core: RefCell<Option<Box<Core>>>,
    /// Nesting of inline runs (`run_inline_if_next`).
    inline: InlineRuns,
}

impl Shared {
    /// `seed`: a deterministic runtime (`deterministic.rs`), whose clock
    /// starts paused whatever `start_paused` says.
    pub(crate) fn new(
        blocking: Arc<Pool>,
        coop_budget: u32,
        start_paused: bool,
        seed: Option<u64>,
    ) -> std::io::Result<Arc<Shared>> {
        let paused = start_paused || seed.is_some();
        let driver = Arc::new(Driver::new(1, Clock::new(true, paused))?);
        Ok(Arc::new(Shared {
            inject: Inject::new(),
            registry: Registry::new(1),
            parker: Arc::new(Parker::with_driver(driver.clone())),
            driver,
            blocking,
            core: Mutex::new(Some(Box::new(Core {
                queue: VecDeque::with_capacity(256),
                tick: 0,
                seeded: seed.map(SeededPick::new),
            }))),
            core_free: Condvar::new(),
            counters: WorkerCounters::default(),
            remote_schedules: AtomicU64::new(0),
            refs_out: RefCount::default(),
            coop_budget,
            track_spawns: seed.is_some(),
        }))
    }

    /// Runs one poll (`poll`) with a fresh cooperative budget (inside
    /// `block_on`'s `coop::Scope`), counting a poll that ends in a forced
    /// yield.
    #[inline(always)]
    fn run_budgeted<R>(&self, poll: impl FnOnce() -> R) -> Budgeted<R> {
        coop::start_poll();
        let out = poll();
        let forced = coop::poll_forced_yield();
        if forced {
            bump(&self.counters.forced_yields, 1);
        }
        Budgeted { out, forced }
    }

    fn schedule_remote(&self, task: Notified) {
        self.remote_schedules.fetch_add(1, Relaxed);
        match self.inject.push(task) {
            Ok(()) => {
                #[cfg(all(test, not(loom)))]
                super::after_push::run();
                self.parker.unpark()
            }
            Err(task) => task.cancel_now(),
        }
    }

    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        let depth = lock(&self.core).as_ref().map_or(0, |c| c.queue.len());
        RuntimeMetrics {
            flavor: "current_thread",
            workers: vec![self.counters.snapshot(0, depth)],
            remote_schedules: self.remote_schedules.load(Relaxed),
            injector_depth: self.inject.len(),
            registered_tasks: self.registry.len(),
            sleeping_workers: 0,
            timers: self.driver.timers.armed(),
            handoffs: 0,
            blocking: self.blocking.metrics(),
            stalls_detected: 0,
            // `Handle::metrics` lists them: one table for every runtime.
            named_tasks: Vec::new(),
        }
    }

    /// Cancels everything: the queued tasks, the idle ones, the injected ones.
    pub(crate) fn shutdown(&self) {
        // Take the core out, so that wakes from destructors go to the injector.
        let core = lock(&self.core).take();
        if let Some(mut core) = core {
            while let Some(t) = core.queue.pop_front() {
                drop(t); // cancels it
            }
        }
        self.driver.shut_down();
        super::cancel_remaining(&self.registry, &self.inject);
    }
}

/// Queues `task` on this thread's core when it drives `shared`'s runtime
/// now; gives it back otherwise (for the injector).
fn schedule_here(shared: &Shared, task: Notified) -> Option<Notified> {
    if let CoreRef::Current(d) = current_core() {
        // SAFETY: CORE points to a live context (set by its guard).
        let d = unsafe { &*d };
        if std::ptr::eq(&**d.shared(), shared) {
            if let Ok(mut core) = d.core.try_borrow_mut() {
                if let Some(core) = core.as_mut() {
                    bump(&shared.counters.local_schedules, 1);
                    core.queue.push_back(task);
                    return None;
                }
            }
        }
    }
    Some(task)
}

/// A wake of `sched`'s task: here, or through the injector.
fn schedule(sched: &SchedRef<Shared>, task: Notified) {
    if let Some(task) = schedule_here(sched, task) {
        // Once in the injector the task may be cancelled by a shutdown on
        // the driving thread, and its `SchedRef` and the runtime's state freed,
        // before the unpark: our own hold keeps the state alive until then.
        sched.hold().schedule_remote(task);
    }
}

impl RefCounted for Shared {
    fn ref_count(&self) -> &RefCount {
        &self.refs_out
    }

    fn with_local_stock<R>(this: *const Self, f: impl FnOnce(&RefStock<Self>) -> R) -> Option<R> {
        match current_core() {
            CoreRef::Current(d) => {
                // SAFETY: CORE points to a live context (set by its guard).
                let stock = &unsafe { &*d }.refs;
                std::ptr::eq(Arc::as_ptr(stock.owner()), this).then(|| f(stock))
            }
            _ => None,
        }
    }
}

impl Schedule for SchedRef<Shared> {
    fn schedule(&self, task: Notified) {
        schedule(self, task);
    }

    fn yield_now(&self, task: Notified) {
        schedule(self, task);
    }

    fn register(&self, task: RawTask) -> Option<Key> {
        self.registry.insert(task, 0, None)
    }

    fn unregister(&self, task: RawTask, key: Key) -> bool {
        self.registry.remove(task, key)
    }

    /// Every await may: nothing else would run while the parent waits.
    /// Runs the task when it is among the newest entries of this thread's
    /// queue and has not started (`DriverCtx::run_inline_if_next`).
    ///
    /// # Safety
    /// As `Schedule::run_inline_if_next`.
    unsafe fn run_inline_if_next(task: RawTask, dst: *mut (), _inline: Inline) -> bool {
        match current_core() {
            // SAFETY: CORE points to a live context (set by its guard); the
            // rest is forwarded from the caller.
            CoreRef::Current(d) => unsafe { (*d).run_inline_if_next(task, dst) },
            _ => false,
        }
    }
}

// Always inline: LLVM otherwise keeps this out of line, and its
// `schedule` call with it, which adds calls to every fork.
#[inline(always)]
#[track_caller]
pub(crate) fn spawn<F>(shared: &Arc<Shared>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let sched = Shared::with_local_stock(Arc::as_ptr(shared), RefStock::take_ref)
        .unwrap_or_else(|| SchedRef::new(shared));
    spawn_with_ref(shared, sched, future)
}

#[inline(always)]
#[track_caller]
fn spawn_with_ref<F>(shared: &Shared, sched: SchedRef<Shared>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (notified, raw) = RawTask::allocate(crate::task::span::instrument(future), sched);
    bump(&shared.counters.spawns, 1);
    if shared.track_spawns {
        shared.registry.track(&notified, 0);
    }
    // The caller holds the state: no hold of our own needed.
    if let Some(task) = schedule_here(shared, notified) {
        shared.schedule_remote(task);
    }
    JoinHandle::new(raw)
}

impl DriverCtx {
    pub(crate) fn handle(&self) -> Handle {
        Handle {
            inner: HandleInner::Current(self.shared().clone()),
        }
    }

    pub(crate) fn driver(&self) -> (SchedRef<Driver>, usize) {
        (self.driver_refs.take_ref(), 0)
    }

    pub(crate) fn driver_refs(&self) -> &RefStock<Driver> {
        &self.driver_refs
    }

    fn shared(&self) -> &Arc<Shared> {
        self.refs.owner()
    }

    #[track_caller]
    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn_with_ref(self.shared(), self.refs.take_ref(), future)
    }

    /// See `Schedule::run_inline_if_next`: the newest `LIFO_CAPACITY` entries
    /// at the back of the queue are searched (nobody else pops this queue, and a
    /// task run early is only run sooner than its turn).
    ///
    /// # Safety
    /// As `Schedule::run_inline_if_next`.
    pub(crate) unsafe fn run_inline_if_next(&self, task: RawTask, dst: *mut ()) -> bool {
        if !self.inline.has_room() {
            return false;
        }
        let next = match self.core.try_borrow_mut() {
            Ok(mut core) => core.as_mut().and_then(|core| {
                let q = &mut core.queue;
                // Spawned, then awaited at once: `pop_back`, without the
                // general `VecDeque::remove`'s search and shift.
                if q.back()?.is(task) {
                    return q.pop_back();
                }
                let newest = q.len().saturating_sub(LIFO_CAPACITY);
                let i = q.range(newest..).rposition(|n| n.is(task))?;
                q.remove(newest + i)
            }),
            Err(_) => None,
        };
        let Some(next) = next else { return false };
        bump(&self.shared().counters.polls, 1);
        // SAFETY: forwarded from the caller.
        unsafe { self.inline.run_joined(next, dst) }
    }

    /// Runs up to `EVENT_INTERVAL` tasks; returns how many ran.
    fn run_batch(&self) -> u32 {
        let shared = self.shared();
        let mut ran = 0;
        while ran < EVENT_INTERVAL {
            let task = {
                let mut guard = self.core.borrow_mut();
                let core = guard.as_mut().expect("driver core went missing");
                core.tick = core.tick.wrapping_add(1);
                if let Some(seeded) = &mut core.seeded {
                    seeded.next(&mut core.queue, &shared.inject)
                } else if core.tick.is_multiple_of(GLOBAL_POLL_INTERVAL) {
                    shared.inject.pop().or_else(|| core.queue.pop_front())
                } else {
                    core.queue.pop_front().or_else(|| {
                        // Move a batch from the injector in one lock.
                        let mut batch = shared.inject.pop_n(128).into_iter();
                        let first = batch.next();
                        core.queue.extend(batch);
                        first
                    })
                }
            };
            let Some(task) = task else { break };
            bump(&shared.counters.polls, 1);
            let polled = shared.run_budgeted(|| task.run());
            ran += 1;
            if polled.forced {
                // A poll that ran its slice out: the driver's turn comes
                // now, not after a batch of such polls, so that a timer
                // fires beside a busy task within a poll or two.
                break;
            }
        }
        ran
    }
}

/// One poll under the budget (`Shared::run_budgeted`): what it returned,
/// and whether it ended in a forced yield.
struct Budgeted<R> {
    out: R,
    forced: bool,
}

struct MainWaker {
    woken: AtomicBool,
    parker: Arc<Parker>,
}

impl Wake for MainWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        // Release pairs with the driver's Acquire swap: whatever the waker
        // did before waking is visible to the next poll.
        self.woken.store(true, Release);
        self.parker.unpark();
    }
}

/// `Runtime::block_on` for this flavour.
pub(crate) fn block_on<F: Future>(shared: &Arc<Shared>, future: F) -> F::Output {
    let ctx = DriverCtx {
        refs: RefStock::new(shared.clone()),
        driver_refs: RefStock::new(shared.driver.clone()),
        core: RefCell::new(Some(take_core(shared))),
        // This thread may be any of the program's, with any stack.
        inline: InlineRuns::new(super::inline::stack_left()),
    };
    // Give the core back however we leave (a panic in the future included).
    struct Release<'a>(&'a DriverCtx);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            let core = self.0.core.borrow_mut().take();
            *lock(&self.0.shared().core) = core;
            self.0.shared().core_free.notify_one();
        }
    }
    let _release = Release(&ctx);
    let seed = ctx.seed();
    if let Some(seed) = seed {
        crate::rand::seed_thread(seed);
    }
    let _guard = CoreGuard::enter(CoreRef::Current(&ctx));
    // Seeded, the budget counts units only: with a look at the clock, where
    // a busy task yields would depend on how fast this run went.
    let _budget = match seed {
        Some(_) => coop::Scope::enter_counted(shared.coop_budget),
        None => coop::Scope::enter(shared.coop_budget),
    };

    let main = std::sync::Arc::new(MainWaker {
        woken: AtomicBool::new(true),
        parker: shared.parker.clone(),
    });
    let waker = Waker::from(main.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if main.woken.swap(false, Acquire) {
            if let Poll::Ready(v) = shared.run_budgeted(|| future.as_mut().poll(&mut cx)).out {
                return v;
            }
        }
        let ran = ctx.run_batch();
        let idle = ran == 0 && !main.woken.load(Acquire);
        // Between busy batches the driver is served only when it has work
        // (a clock read), not fired through on every batch.
        if idle || shared.driver.has_work() {
            turn_driver(shared, idle, seed);
        }
    }
}

/// Waits for the core (another thread's `block_on` may hold it).
fn take_core(shared: &Shared) -> Box<Core> {
    let mut slot = lock(&shared.core);
    loop {
        if let Some(core) = slot.take() {
            return core;
        }
        slot = shared
            .core_free
            .wait(slot)
            .unwrap_or_else(|e| e.into_inner());
    }
}

impl DriverCtx {
    /// A deterministic runtime's seed.
    fn seed(&self) -> Option<u64> {
        let core = self.core.borrow();
        core.as_ref()?.seeded.as_ref().map(SeededPick::seed)
    }
}

/// Serves the driver between batches: when `idle`, moves a paused clock
/// (or reports a deterministic runtime's deadlock) or parks until woken;
/// when busy, polls I/O without blocking. Then fires due timers and
/// dispatches I/O; the tasks woken land on this core's queue.
fn turn_driver(shared: &Shared, idle: bool, seed: Option<u64>) {
    let driver = shared.driver.try_lock();
    if idle && driver.as_ref().is_some_and(|d| auto_advance(shared, d)) {
        // Ready I/O served, or the paused clock jumped to the next timer:
        // fire it below and run what it woke.
    } else if let (true, Some(seed)) = (idle, seed) {
        if stuck_for_good(shared) {
            drop(driver);
            panic!("{}", deadlock_report(shared, seed));
        }
        park(shared, driver.as_ref());
    } else if idle {
        park(shared, driver.as_ref());
    } else if let Some(driver) = &driver {
        driver.poll_now();
    }
    if let Some(driver) = driver {
        driver.dispatch();
    }
}

/// Parks the thread: in the driver if this thread holds its lock.
fn park(shared: &Shared, driver: Option<&crate::driver::DriverGuard<'_>>) {
    bump(&shared.counters.parks, 1);
    match driver {
        Some(driver) => shared.parker.park_on_driver(driver),
        None => shared.parker.park(),
    }
}

/// With the clock paused and nothing to run: serves ready I/O first and,
/// if that woke nothing and no blocking call is in flight (its result may
/// be what the tasks wait for), moves the clock to the next timer's
/// deadline, as Tokio's paused clock does. Returns whether it made
/// progress (woke a task, or moved the clock for the caller to fire the
/// timer), so that the caller does not park.
fn auto_advance(shared: &Shared, driver: &crate::driver::DriverGuard<'_>) -> bool {
    let timers = &shared.driver.timers;
    if !timers.clock.is_paused() || shared.blocking.busy() > 0 {
        return false;
    }
    driver.poll_now();
    if driver.dispatch() > 0 {
        return true;
    }
    timers
        .next_deadline()
        .is_some_and(|at| timers.clock.advance_to(at))
}

/// A deterministic runtime with nothing to run: whether nothing can ever
/// wake a task again (no timer armed, no socket registered, no blocking
/// call in flight, no wake pending from another thread).
fn stuck_for_good(shared: &Shared) -> bool {
    shared.driver.timers.next_deadline().is_none()
        && !shared.driver.has_io()
        && shared.blocking.busy() == 0
        && shared.inject.is_empty()
        && !shared.parker.has_notification()
}

/// The panic message of a deterministic runtime that can never progress:
/// the seed, the tasks still waiting by where they were spawned, and the
/// runtime's metrics.
fn deadlock_report(shared: &Shared, seed: u64) -> String {
    let mut report = format!(
        "deterministic runtime (seed {seed}): every task is waiting and nothing can wake one \
         (no timer, no socket, no blocking call): a deadlock. Replay with SPINDLE_SEED={seed}.\n\
         tasks waiting, by spawn site:\n"
    );
    for (site, n) in shared.registry.spawn_sites() {
        report.push_str(&format!("  {n:>6}  {site}\n"));
    }
    report.push_str(&shared.metrics().to_string());
    report
}
