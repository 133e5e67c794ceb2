//! Where a spawned or woken task goes. On a worker of its runtime, to
//! that worker's core: a spawned or woken task onto the fresh tasks (the
//! top one is the LIFO slot, run next), whose oldest spill into the ring
//! when the stack is full; a yield to the back of the ring, waking nobody;
//! a `wake_queued` to the back of the ring, waking an idle worker to steal
//! it; a driver turn's wakes to the back of the ring, in the order they
//! were woken. The fresh tasks below the top are published to the ring
//! when the poll returns (`WorkerCtx::run_task`), or at once for a spawn
//! while a worker idles. From any other thread, or a thread that lost its
//! core, to the injector, waking a sleeper.

use super::{Core, Shared, Spawner, WorkerCtx};
use crate::loom::{Arc, Ordering::Relaxed};
use crate::sched::metrics::bump;
use crate::sched::queue::Local;
use crate::sched::{current_core, CoreRef};
use crate::sched_ref::SchedRef;
use crate::task::registry::Key;
use crate::task::{Inline, JoinHandle, Notified, RawTask, Schedule};
use std::future::Future;

impl Schedule for SchedRef<Shared> {
    fn schedule(&self, task: Notified) {
        schedule(self, task, Queued::Woken);
    }

    fn yield_now(&self, task: Notified) {
        schedule(self, task, Queued::Yielded);
    }

    fn schedule_queued(&self, task: Notified) {
        schedule(self, task, Queued::ForThieves);
    }

    fn register(&self, task: RawTask) -> Option<Key> {
        let hint = match current_core() {
            // SAFETY: CORE points to a live context (set by its guard).
            CoreRef::Multi(w) => unsafe { &*w }.index,
            _ => 0,
        };
        self.registry.insert(task, hint, None)
    }

    fn unregister(&self, task: RawTask, key: Key) -> bool {
        self.registry.remove(task, key)
    }

    /// Only when the caller asked for it (`Inline::Asked`: a `Fork`): a
    /// task awaited inline does not run concurrently with its parent, and a
    /// `timeout` or `select!` around the await could not fire until it
    /// finished. Runs it when it is this worker's fresh task and has not
    /// started (`WorkerCtx::run_inline_if_next`).
    ///
    /// # Safety
    /// As `Schedule::run_inline_if_next`.
    unsafe fn run_inline_if_next(task: RawTask, dst: *mut (), inline: Inline) -> bool {
        // Checked first: every plain `JoinHandle` await comes here, and
        // needs no look at the thread's context to be refused.
        if inline != Inline::Asked {
            return false;
        }
        match current_core() {
            // SAFETY: CORE points to a live context (set by its guard); the
            // rest is forwarded from the caller.
            CoreRef::Multi(w) => unsafe { (*w).run_inline_if_next(task, dst) },
            _ => false,
        }
    }
}

/// Why a task is being queued (where it goes differs: `schedule_local`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Queued {
    Spawned,
    Woken,
    /// The task woke itself (a yield, a spent budget): to the ring's back.
    Yielded,
    /// `wake_queued`: to the ring's back, and an idle worker woken for it.
    ForThieves,
}

/// Schedules on this thread's core when it is a worker of `sched`'s
/// runtime, otherwise through the injector.
fn schedule(sched: &SchedRef<Shared>, task: Notified, why: Queued) {
    if let CoreRef::Multi(w) = current_core() {
        // SAFETY: CORE points to a live context (set by its guard).
        let w = unsafe { &*w };
        if std::ptr::eq(w.shared(), sched.as_ptr()) {
            return w.schedule_here(task, why);
        }
    }
    // Once in the injector the task may be run and freed by a worker, or
    // cancelled by a shutdown, before the wake-up below; our own hold keeps
    // the state alive until it is done (the task's `SchedRef` may be gone).
    sched.hold().schedule_remote(task);
}

/// `Handle::spawn` for this flavour.
#[track_caller]
pub(crate) fn spawn<F>(spawner: &Arc<Spawner>, future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if let CoreRef::Multi(w) = current_core() {
        // SAFETY: CORE points to a live context (set by its guard).
        let w = unsafe { &*w };
        if std::ptr::eq(w.shared(), &*spawner.shared) {
            return w.spawn(future);
        }
    }
    let (notified, raw) = RawTask::allocate(
        crate::task::span::instrument(future),
        SchedRef::new(&spawner.shared),
    );
    spawner.shared.track(&notified, 0);
    spawner.shared.schedule_remote(notified);
    JoinHandle::new(raw)
}

impl Shared {
    /// Spawn tracking (`Builder::track_spawns`): `Registry::track`.
    #[track_caller]
    fn track(&self, task: &Notified, hint: usize) {
        if self.config.track_spawns {
            self.registry.track(task, hint);
        }
    }

    fn schedule_remote(&self, task: Notified) {
        self.remote_schedules.fetch_add(1, Relaxed);
        match self.inject.push(task) {
            Ok(()) => {
                #[cfg(all(test, not(loom)))]
                crate::sched::after_push::run();
                self.notify_parked()
            }
            Err(task) => task.cancel_now(), // shut down: nobody will run it
        }
    }
}

impl WorkerCtx {
    #[track_caller]
    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (notified, raw) =
            RawTask::allocate(crate::task::span::instrument(future), self.refs.take_ref());
        self.shared().track(&notified, self.index);
        // Counted by `schedule_local`, inside the borrow; without its core
        // this thread is no longer the worker, and its spawns go through
        // the injector uncounted, as from outside.
        self.schedule_here(notified, Queued::Spawned);
        JoinHandle::new(raw)
    }

    /// Schedules on this thread's core if it still has it, else remotely.
    pub(super) fn schedule_here(&self, task: Notified, why: Queued) {
        match self.lent.borrow() {
            Some(mut core) => self.schedule_local(&mut core, task, why),
            None => self.shared().schedule_remote(task),
        }
    }

    pub(super) fn schedule_local(&self, core: &mut Core, task: Notified, why: Queued) {
        bump(&self.counters().local_schedules, 1);
        if why == Queued::Spawned {
            bump(&self.counters().spawns, 1);
        }
        if why == Queued::ForThieves {
            self.push_to_ring(&mut core.queue, task);
            // Work others may steal: wake a sleeper if nobody is searching.
            self.shared().notify_parked();
            return;
        }
        if why == Queued::Yielded {
            // Behind the ring's tasks, waking nobody: a yield (the task's
            // own, or its budget's) asks for this worker's other tasks to
            // run first, and they are what runs next here. Woken for it, an
            // idle worker would take one of them and split a pair that
            // yields every slice across cores. Should this worker's poll
            // then last, the monitor wakes a sleeper for its ring
            // (`monitor.rs`).
            self.push_to_ring(&mut core.queue, task);
            return;
        }
        if why == Queued::Woken && self.dispatching.get() {
            // A driver turn's wakes (`WorkerCtx::dispatch`: timers in the
            // order they fell due, then ready I/O): to the ring's back,
            // which runs them in that order; the turn wakes an idle worker
            // after the batch.
            self.push_to_ring(&mut core.queue, task);
            return;
        }
        let mut spilled = false;
        let first = core.fresh.is_empty();
        let queue = &mut core.queue;
        core.fresh.push(task, |t| {
            self.push_to_ring(queue, t);
            spilled = true;
        });
        self.note_hidden(core);
        if first {
            let shared = self.shared();
            shared.poke_watch(|| shared.idle.any_idle());
        }
        if spilled {
            self.shared().notify_parked();
        } else if why == Queued::Spawned && core.fresh.len() > 1 && self.shared().idle.any_idle() {
            // Spawned, not woken: a poll that spawns may go on for long (a
            // fork loop whose children run inline), and its older fresh
            // tasks must not wait for its end while a worker idles. A
            // woken task waits for the poll's end (`run_task`): woken by a
            // message, it is usually its waker's partner, and published at
            // once the idle worker steals it and splits the pair across
            // cores (`docs/profiles.md`, select_2).
            self.publish_fresh(core);
        }
    }

    fn push_to_ring(&self, queue: &mut Local, task: Notified) {
        if queue.push_back(task, &self.shared().inject) {
            bump(&self.counters().overflows, 1);
        }
    }

    /// Moves every fresh task but the top one to the ring, where idle
    /// workers can steal them, and wakes one if nobody is searching.
    pub(super) fn publish_fresh(&self, core: &mut Core) {
        while let Some(task) = core.fresh.pop_below_top() {
            self.push_to_ring(&mut core.queue, task);
        }
        self.note_hidden(core);
        self.shared().notify_parked();
    }

    /// Tells the monitor whether fresh tasks are hidden from other workers
    /// now (`WorkerCounters::hides_fresh`; the top one too: it waits for
    /// the poll's end). Called wherever the LIFO stack grows or is
    /// published; where it shrinks otherwise, a stale `true` is harmless.
    fn note_hidden(&self, core: &Core) {
        self.counters()
            .hides_fresh
            .store(!core.fresh.is_empty(), Relaxed);
    }
}
