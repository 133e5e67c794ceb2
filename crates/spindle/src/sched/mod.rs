//! Schedulers: the multi-thread work-stealing one (`multi_thread/`) and the
//! current-thread one (`current_thread.rs`), with what they share: the local
//! ring (`queue.rs`), the injector (`inject.rs`), the sleep/wake protocol
//! (`idle.rs`; the parker is `driver/park.rs`) and metrics (`metrics.rs`).
//!
//! `sched` sits above `task`, `driver` and `sched_ref` and below `runtime`;
//! `time` and `io` reach the current runtime's driver through
//! [`current_driver`], and nothing below `sched` calls into it.
//!
//! Thread-local context: `CORE` says which scheduler core (if any) this
//! thread is running right now, so that spawns and wakes from a task go to
//! the local queue without any lock; `HANDLE` says which runtime `spawn`
//! talks to on a thread that runs no core (inside `block_on`, `Runtime::enter`).

pub(crate) mod blocking;
mod core_slot;
pub(crate) mod current_thread;
mod deterministic;
pub(crate) mod diagnostics;
mod hidden_watch;
mod idle;
mod inject;
mod inline;
mod lifo_stack;
pub(crate) mod metrics;
pub(crate) mod monitor;
mod monitor_sleep;
pub(crate) mod multi_thread;
mod queue;
mod spin;

use crate::loom::Arc;
use crate::task::JoinHandle;
use std::cell::{Cell, RefCell};
use std::future::Future;

/// Which scheduler core this thread runs now.
#[derive(Clone, Copy)]
pub(crate) enum CoreRef {
    None,
    Multi(*const multi_thread::WorkerCtx),
    Current(*const current_thread::DriverCtx),
}

#[cfg(not(loom))]
thread_local! {
    static CORE: Cell<CoreRef> = const { Cell::new(CoreRef::None) };
    static HANDLE: RefCell<Option<Handle>> = const { RefCell::new(None) };
    static IN_BLOCK_ON: Cell<bool> = const { Cell::new(false) };
}

// Loom runs its threads on one OS thread: their locals must be loom's.
#[cfg(loom)]
loom::thread_local! {
    static CORE: Cell<CoreRef> = Cell::new(CoreRef::None);
    static HANDLE: RefCell<Option<Handle>> = RefCell::new(None);
    static IN_BLOCK_ON: Cell<bool> = Cell::new(false);
}

pub(crate) fn current_core() -> CoreRef {
    CORE.try_with(|c| c.get()).unwrap_or(CoreRef::None)
}

/// Sets `CORE` for the guard's life, restoring the previous value after.
pub(crate) struct CoreGuard(CoreRef);

impl CoreGuard {
    pub(crate) fn enter(core: CoreRef) -> CoreGuard {
        CoreGuard(CORE.with(|c| c.replace(core)))
    }
}

impl Drop for CoreGuard {
    fn drop(&mut self) {
        let _ = CORE.try_with(|c| c.set(self.0));
    }
}

/// Marks this thread as inside a multi-thread `block_on` for the guard's
/// life, so that a nested one is refused (`assert_not_in_runtime`). Not
/// `HANDLE`: that one is also set by `Runtime::enter` and on blocking-pool
/// threads, where a `block_on` is fine.
pub(crate) struct BlockOnGuard(bool);

impl BlockOnGuard {
    pub(crate) fn enter() -> BlockOnGuard {
        BlockOnGuard(IN_BLOCK_ON.with(|b| b.replace(true)))
    }
}

impl Drop for BlockOnGuard {
    fn drop(&mut self) {
        let _ = IN_BLOCK_ON.try_with(|b| b.set(self.0));
    }
}

/// Sets `HANDLE` for the guard's life (see `Runtime::enter`).
pub struct EnterGuard {
    prev: Option<Handle>,
}

pub(crate) fn enter(handle: Handle) -> EnterGuard {
    EnterGuard {
        prev: HANDLE.with(|h| h.borrow_mut().replace(handle)),
    }
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        let prev = self.prev.take();
        let _ = HANDLE.try_with(|h| *h.borrow_mut() = prev);
    }
}

impl std::fmt::Debug for EnterGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EnterGuard")
    }
}

/// A cheap, cloneable reference to a runtime: spawn onto it from any thread.
#[derive(Clone)]
pub struct Handle {
    pub(crate) inner: HandleInner,
}

#[derive(Clone)]
pub(crate) enum HandleInner {
    Multi(Arc<multi_thread::Spawner>),
    Current(Arc<current_thread::Shared>),
}

impl Handle {
    /// The runtime this thread is inside (a worker, `block_on`, or
    /// `Runtime::enter`).
    ///
    /// # Panics
    /// Outside any runtime; see [`Handle::try_current`].
    pub fn current() -> Handle {
        Handle::try_current().unwrap_or_else(|| panic!("{}", NO_RUNTIME))
    }

    /// The runtime this thread is inside, if any.
    pub fn try_current() -> Option<Handle> {
        match current_core() {
            // SAFETY: CORE points to a context that outlives the guard that set it.
            CoreRef::Multi(w) => Some(unsafe { &*w }.handle()),
            // SAFETY: as above.
            CoreRef::Current(d) => Some(unsafe { &*d }.handle()),
            CoreRef::None => HANDLE.try_with(|h| h.borrow().clone()).ok().flatten(),
        }
    }

    /// Spawns a task onto this runtime, from any thread (inside it or not).
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.inner {
            HandleInner::Multi(s) => multi_thread::spawn(s, future),
            HandleInner::Current(s) => current_thread::spawn(s, future),
        }
    }

    pub(crate) fn driver(&self) -> Arc<crate::driver::Driver> {
        match &self.inner {
            HandleInner::Multi(s) => s.shared().driver.clone(),
            HandleInner::Current(s) => s.driver.clone(),
        }
    }

    /// A reference that does not keep the runtime's state alive.
    #[cfg(not(any(loom, miri)))]
    pub(crate) fn downgrade(&self) -> WeakHandle {
        match &self.inner {
            HandleInner::Multi(s) => WeakHandle::Multi(std::sync::Arc::downgrade(s)),
            HandleInner::Current(s) => WeakHandle::Current(std::sync::Arc::downgrade(s)),
        }
    }

    /// Runs `f` on this runtime's blocking pool (see [`crate::spawn_blocking`]).
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        match &self.inner {
            HandleInner::Multi(s) => crate::sched::blocking::Pool::spawn(&s.shared().blocking, f),
            HandleInner::Current(s) => crate::sched::blocking::Pool::spawn(&s.blocking, f),
        }
    }

    /// Runtime counters (see [`crate::RuntimeMetrics`]).
    pub fn metrics(&self) -> metrics::RuntimeMetrics {
        let mut m = match &self.inner {
            HandleInner::Multi(s) => s.shared().metrics(),
            HandleInner::Current(s) => s.metrics(),
        };
        m.named_tasks = crate::task::names::on_runtime(self.key());
        m
    }

    /// The same for every handle of one runtime, and different from every
    /// other runtime's while both exist: the address of its shared state.
    pub(crate) fn key(&self) -> usize {
        match &self.inner {
            HandleInner::Multi(s) => Arc::as_ptr(s.shared()).addr(),
            HandleInner::Current(s) => Arc::as_ptr(s).addr(),
        }
    }

    /// The text of [`crate::Runtime::dump`]: the metrics, and with spawn
    /// tracking on, the registered tasks by spawn site.
    pub(crate) fn dump(&self) -> String {
        let mut s = self.metrics().to_string();
        if let HandleInner::Multi(sp) = &self.inner {
            let shared = sp.shared();
            if shared.config.track_spawns {
                s.push_str("tasks by spawn site (registered now):\n");
                for (site, n) in shared.spawn_sites() {
                    s.push_str(&format!("  {n:>6}  {site}\n"));
                }
            }
        }
        s
    }

    /// Makes `spawn` on this thread go to this runtime until the guard drops.
    ///
    /// On a thread that runs a runtime's tasks (inside a task, or inside a
    /// current-thread `block_on`), that runtime stays the current one:
    /// spawn onto another through its `Handle` instead.
    pub fn enter(&self) -> EnterGuard {
        enter(self.clone())
    }
}

/// See [`Handle::downgrade`].
#[cfg(not(any(loom, miri)))]
pub(crate) enum WeakHandle {
    Multi(std::sync::Weak<multi_thread::Spawner>),
    Current(std::sync::Weak<current_thread::Shared>),
}

#[cfg(not(any(loom, miri)))]
impl WeakHandle {
    pub(crate) fn upgrade(&self) -> Option<Handle> {
        let inner = match self {
            WeakHandle::Multi(w) => HandleInner::Multi(w.upgrade()?),
            WeakHandle::Current(w) => HandleInner::Current(w.upgrade()?),
        };
        Some(Handle { inner })
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let flavor = match self.inner {
            HandleInner::Multi(_) => "multi_thread",
            HandleInner::Current(_) => "current_thread",
        };
        f.debug_struct("Handle").field("flavor", &flavor).finish()
    }
}

pub(crate) const NO_RUNTIME: &str = "spindle::spawn called outside a spindle runtime: \
     run this code inside `Runtime::block_on` (or `#[spindle::main]`), \
     or spawn through a `spindle::Handle` with `handle.spawn(..)`";

/// Spawns a task onto the runtime this code runs in.
///
/// On a worker the task goes to that worker's own queue (no lock); from
/// inside `block_on` or `Runtime::enter` it goes through the injector.
///
/// # Panics
/// Outside any runtime: use `Runtime::block_on` or `Handle::spawn`.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match current_core() {
        // SAFETY: CORE points to a context that outlives the guard that set it.
        CoreRef::Multi(w) => unsafe { &*w }.spawn(future),
        // SAFETY: as above.
        CoreRef::Current(d) => unsafe { &*d }.spawn(future),
        CoreRef::None => match HANDLE.try_with(|h| h.borrow().clone()).ok().flatten() {
            Some(h) => h.spawn(future),
            None => panic!("{}", NO_RUNTIME),
        },
    }
}

/// Spawns a fork–join child: a task like any [`spawn`]ed one (any worker
/// may run it, and an idle one takes it), whose handle's await runs it
/// right there, inline on the caller's stack, if no worker has started it
/// yet. So a tree of forks awaited in fork order runs depth first on one
/// worker, each child polled once, while idle workers steal subtrees
/// (rayon's `join`, Coflux's `fork`).
///
/// The trade-off, asked for by name: a child run inline runs inside the
/// parent's poll, so until it finishes the parent's other branches (a
/// `timeout` or `select!` arm around the await) wait for it. Use `spawn`
/// where they must not. Inline runs nest as deep as a stack budget allows
/// (an eighth of the worker's stack, or, on Linux, of what is left of the
/// stack of the thread in a current-thread `block_on`; at most 256 KiB,
/// as elsewhere for that thread); past it
/// the await suspends as for a plain `spawn`, and the child runs as a
/// queued task.
///
/// # Panics
/// Outside any runtime, as [`spawn`].
#[track_caller]
pub fn fork<F>(future: F) -> crate::task::Fork<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn(future).join_here()
}

/// `join` (`join/mod.rs`) on this thread's scheduler: a multi-thread
/// worker's job deque, or else `a` and then `b`. `b` is told whether a
/// thief runs it.
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    #[cfg(not(loom))]
    if let CoreRef::Multi(w) = current_core() {
        // SAFETY: CORE points to a live context (set by its guard).
        return unsafe { &*w }.join(a, b);
    }
    let ra = a();
    (ra, b(false))
}

/// A driver's refs come from the stock of the scheduler core this thread
/// runs, when that core's runtime owns the driver (`sched_ref.rs`).
impl crate::sched_ref::RefCounted for crate::driver::Driver {
    fn ref_count(&self) -> &crate::sched_ref::RefCount {
        &self.refs_out
    }

    fn with_local_stock<R>(
        this: *const Self,
        f: impl FnOnce(&crate::sched_ref::RefStock<Self>) -> R,
    ) -> Option<R> {
        let stock = match current_core() {
            // SAFETY: CORE points to a live context (set by its guard).
            CoreRef::Multi(w) => unsafe { &*w }.driver_refs(),
            // SAFETY: as above.
            CoreRef::Current(d) => unsafe { &*d }.driver_refs(),
            CoreRef::None => return None,
        };
        std::ptr::eq(crate::loom::Arc::as_ptr(stock.owner()), this).then(|| f(stock))
    }
}

/// The driver of the runtime this thread is in (a `SchedRef` on it:
/// `sched_ref.rs`), and the timer shard to arm on.
pub(crate) fn current_driver() -> Option<(crate::sched_ref::SchedRef<crate::driver::Driver>, usize)>
{
    match current_core() {
        // SAFETY: CORE points to a context that outlives the guard that set it.
        CoreRef::Multi(w) => Some(unsafe { &*w }.driver()),
        // SAFETY: as above.
        CoreRef::Current(d) => Some(unsafe { &*d }.driver()),
        CoreRef::None => HANDLE
            .try_with(|h| {
                let h = h.borrow();
                h.as_ref()
                    .map(|h| (crate::sched_ref::SchedRef::new(&h.driver()), 0))
            })
            .ok()
            .flatten(),
    }
}

/// Shutdown's last step, once no worker runs: closes the registry and
/// cancels the idle tasks it held, then cancels what the injector holds,
/// and closes the injector last.
///
/// Cancelling runs destructors that may wake other tasks (the last sender
/// of a channel dropped, a join waker). The injector is still open while
/// they run, so a woken task is queued there and cancelled by this loop,
/// one after the other. Were it closed, the wake would cancel the woken
/// task on the spot, inside the destructor that woke it, and a chain of
/// such tasks would recurse once per link (a stack overflow for a long
/// pipeline). Nothing runs queued tasks meanwhile: no
/// worker is left. Tasks woken after the close (from another thread) are
/// cancelled on the spot; one more round finds everything empty.
pub(crate) fn cancel_remaining(
    registry: &crate::task::registry::Registry,
    inject: &inject::Inject,
) {
    loop {
        let idle = registry.close();
        let mut cancelled = !idle.is_empty();
        for t in idle {
            t.shutdown(); // cancels it in place unless it sits in a queue
            t.drop_ref(); // the registry's reference
        }
        while let Some(t) = inject.pop() {
            cancelled = true;
            drop(t); // dropping a Notified cancels its task
        }
        let late = inject.close();
        if !cancelled && late.is_empty() {
            break;
        }
        drop(late);
    }
}

/// Whether this thread is running a spindle scheduler core right now (a
/// worker, or a current-thread driver inside `block_on`); not a worker
/// that gave its core away in `block_in_place`.
pub(crate) fn on_scheduler_thread() -> bool {
    match current_core() {
        CoreRef::None => false,
        CoreRef::Current(_) => true,
        // SAFETY: CORE points to a live context (set by its guard).
        CoreRef::Multi(w) => unsafe { &*w }.drives_tasks(),
    }
}

/// Runs blocking code on a worker without stalling the tasks queued
/// behind it: on a multi-thread worker, the worker's core (its queue and
/// LIFO slot) is first handed to a new thread, and this thread runs `f` and
/// finishes the current poll on its own, then retires. On the current-thread
/// flavour and outside a runtime, `f` simply runs here.
///
/// Once the core is handed off, this thread is no longer one that runs
/// the runtime's tasks: inside `f` the blocking calls that panic on a
/// worker (`Mutex::blocking_lock`, `RwLock::blocking_read`) may block it.
///
/// `f` runs without the task's cooperative budget (`task::coop`): it
/// blocks, so it has no other task to yield to, and a wait inside it
/// (a `recv_blocking`, another executor's `block_on`) refused by a spent
/// budget would only poll again, refused again, for ever.
pub fn block_in_place<F: FnOnce() -> R, R>(f: F) -> R {
    if let CoreRef::Multi(w) = current_core() {
        // SAFETY: CORE points to a live context (set by its guard).
        unsafe { &*w }.hand_off_core();
    }
    crate::task::coop::unlimited(f)
}

/// Panics if this thread runs a scheduler core or is inside `block_on`:
/// blocking it would stall every task queued behind it.
pub(crate) fn assert_not_in_runtime(what: &str) {
    let inside = !matches!(current_core(), CoreRef::None)
        || IN_BLOCK_ON.try_with(|b| b.get()).unwrap_or(false);
    if inside {
        panic!(
            "{what} called from inside a spindle runtime (a worker thread or another \
             block_on): it would block the thread that drives tasks. Use `.await` instead, \
             or call it from a plain thread."
        );
    }
}

/// Test-only: a step run once on this thread between a remote wake's push
/// to an injector and its wake-up of a sleeper, where a wake from outside
/// the runtime can lose its task (and the task's `SchedRef`) to a shutdown.
#[cfg(all(test, not(loom)))]
pub(crate) mod after_push {
    use std::cell::Cell;

    std::thread_local! {
        static STEP: Cell<Option<Box<dyn FnOnce()>>> = const { Cell::new(None) };
    }

    pub(crate) fn set(step: impl FnOnce() + 'static) {
        STEP.with(|s| s.set(Some(Box::new(step))));
    }

    pub(crate) fn run() {
        if let Some(step) = STEP.with(Cell::take) {
            step();
        }
    }

    /// A wake from a plain thread pushes the task; the runtime is dropped
    /// (its shutdown cancels and frees the task, its `SchedRef` and all)
    /// before the wake-up that follows the push, which must still find the runtime's
    /// state: the wake's own hold keeps it. Without it, that wake-up reads
    /// freed memory: ASan and miri, which run these tests in
    /// `scripts/test-all`, say so.
    #[test]
    fn a_remote_wake_outlives_a_runtime_dropped_between_push_and_wake_up() {
        use std::sync::{mpsc, Arc, Mutex};
        use std::task::{Poll, Waker};
        for multi in [false, true] {
            let rt = if multi {
                crate::Builder::new_multi_thread().workers(1).build()
            } else {
                crate::Builder::new_current_thread().build()
            }
            .unwrap();
            let slot = Arc::new(Mutex::new(None::<Waker>));
            let s = slot.clone();
            rt.block_on(async {
                drop(crate::spawn(std::future::poll_fn(move |cx| {
                    *s.lock().unwrap() = Some(cx.waker().clone());
                    Poll::<()>::Pending
                })));
                while slot.lock().unwrap().is_none() {
                    crate::yield_now().await;
                }
            });
            let waker = slot.lock().unwrap().take().unwrap();
            let (pushed, on_push) = mpsc::channel();
            let (dropped, on_drop) = mpsc::channel::<()>();
            let waking = std::thread::spawn(move || {
                set(move || {
                    pushed.send(()).unwrap();
                    on_drop.recv().unwrap();
                });
                waker.wake();
            });
            on_push.recv().unwrap();
            drop(rt);
            dropped.send(()).unwrap();
            waking.join().unwrap();
        }
    }
}
