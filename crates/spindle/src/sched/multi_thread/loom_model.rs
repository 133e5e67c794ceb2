//! Loom models of the multi-thread scheduler, run on the real worker loop
//! pieces: a retake racing a spawn, the sleep/wake protocol (`idle.rs`,
//! `docs/sleep-wake.md`): a task pushed while workers go to sleep is run,
//! and a visit taking fresh tasks (`steal_hidden`) racing the owner's
//! inline run of one of them.

use super::shared::test_build;
use super::{external_spawner, spawn, Core, Shared, Spawner, WorkerCtx};
use crate::loom::{lock, Arc, AtomicUsize, Ordering::SeqCst};
use crate::sched::{CoreGuard, CoreRef};
use loom::thread;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Runs one worker's real loop pieces until it has run `want` tasks.
fn worker(
    external: Arc<Spawner>,
    index: usize,
    core: Box<Core>,
    ran: Arc<AtomicUsize>,
    want: usize,
) {
    let ctx = WorkerCtx::new(external, index);
    let _g = CoreGuard::enter(CoreRef::Multi(&ctx));
    let mut core = core;
    while ran.load(SeqCst) < want && !ctx.shared().is_shutdown() {
        match ctx
            .next_task(&mut core)
            .or_else(|| ctx.steal_work(&mut core))
        {
            Some(t) => core = ctx.run_task(core, t).expect("no hand-off in this model"),
            None => core = ctx.park(core).expect("no hand-off in this model"),
        }
    }
}

/// A two-worker runtime with a `worker` thread per core, each running
/// until `want` tasks ran (counted in the returned `ran`).
#[allow(clippy::type_complexity)]
fn two_workers(
    want: usize,
) -> (
    Arc<Shared>,
    Arc<Spawner>,
    Arc<AtomicUsize>,
    Vec<thread::JoinHandle<()>>,
) {
    let (shared, cores) = test_build(2);
    let external = external_spawner(&shared);
    let ran = Arc::new(AtomicUsize::new(0));
    // The last core's thread first, as the models were first written.
    let workers = cores
        .into_iter()
        .enumerate()
        .rev()
        .map(|(i, c)| {
            let (e, r) = (external.clone(), ran.clone());
            thread::spawn(move || worker(e, i, Box::new(c), r, want))
        })
        .collect();
    (shared, external, ran, workers)
}

/// The monitor retakes a core while the task running on it spawns:
/// exactly one side ends up owning the core, and the spawned task is
/// queued exactly once (on the core, or in the injector).
#[test]
fn retake_races_a_local_spawn() {
    loom::model(|| {
        let (shared, mut cores) = test_build(1);
        let ctx = WorkerCtx::new(external_spawner(&shared), 0);
        *lock(&shared.remotes[0].active) = ctx.lent.clone();
        ctx.lent.lend(Box::new(cores.pop().unwrap())); // a task is running
        let lent = lock(&shared.remotes[0].active).clone();
        let monitor = thread::spawn(move || lent.take_away());
        {
            let _g = CoreGuard::enter(CoreRef::Multi(&ctx));
            drop(ctx.spawn(async {}));
        }
        let taken = monitor.join().unwrap();
        let kept = ctx.lent.take();
        assert!(taken.is_some() != kept.is_some(), "one owner of the core");
        let mut core = taken.or(kept).unwrap();
        let mut queued = 0;
        while let Some(t) = core.fresh.pop().or_else(|| core.queue.pop()) {
            queued += 1;
            drop(t);
        }
        queued += shared.inject.pop_n(8).len();
        assert_eq!(queued, 1, "the spawned task is queued exactly once");
        shared.begin_shutdown();
        shared.cancel_all();
    });
}

/// A task injected from outside while the only worker goes to sleep
/// is run: the wake-up is not lost (else: loom reports a deadlock).
#[test]
fn park_remote_schedule_wakes_the_sleeper() {
    loom::model(|| {
        let (shared, mut cores) = test_build(1);
        let external = external_spawner(&shared);
        let ran = Arc::new(AtomicUsize::new(0));
        let w = {
            let (e, r, c) = (
                external.clone(),
                ran.clone(),
                Box::new(cores.pop().unwrap()),
            );
            thread::spawn(move || worker(e, 0, c, r, 1))
        };
        let r = ran.clone();
        drop(spawn(&external, async move {
            r.fetch_add(1, SeqCst);
        }));
        w.join().unwrap();
        assert_eq!(ran.load(SeqCst), 1);
        shared.begin_shutdown();
        shared.cancel_all();
    });
}

/// Two workers, a task injected from outside while both go to sleep:
/// one of them runs it. A stranded task shows as the main thread
/// spinning forever while both workers sleep (loom fails the model).
#[test]
fn park_two_workers_injected_task_is_run() {
    // Three threads: one preemption already covers the interleavings of
    // the notify/park handshake, in about a minute.
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(1);
    model.check(|| {
        let (shared, external, ran, workers) = two_workers(1);
        let r = ran.clone();
        drop(spawn(&external, async move {
            r.fetch_add(1, SeqCst);
        }));
        while ran.load(SeqCst) == 0 {
            thread::yield_now();
        }
        shared.begin_shutdown();
        for w in workers {
            w.join().unwrap();
        }
        shared.cancel_all();
    });
}

/// A task spawns two children; the newer (its worker's LIFO slot, run
/// next there) blocks that worker until the older has run, which only
/// the other worker can then do: the older must leave the fresh tasks
/// for the ring and a sleeping worker must be woken for it. Were it left
/// hidden, every thread would block and loom would report the deadlock.
/// Nothing spins (a spinning model outgrows loom's branch limit); the
/// last task to finish begins the shutdown that lets both workers return.
#[test]
fn fresh_tasks_reach_another_worker() {
    use crate::loom::{Condvar, Mutex};
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(1);
    model.check(|| {
        let (shared, external, ran, workers) = two_workers(3);
        let finish = {
            let (shared, ran) = (shared.clone(), ran.clone());
            move || {
                if ran.fetch_add(1, SeqCst) + 1 == 3 {
                    shared.begin_shutdown();
                }
            }
        };
        let older_ran = Arc::new((Mutex::new(false), Condvar::new()));
        drop(spawn(&external, async move {
            let (gate, done) = (older_ran.clone(), finish.clone());
            drop(crate::spawn(async move {
                *gate.0.lock().unwrap() = true;
                gate.1.notify_all();
                done();
            }));
            let done = finish.clone();
            drop(crate::spawn(async move {
                let mut open = older_ran.0.lock().unwrap();
                while !*open {
                    open = older_ran.1.wait(open).unwrap();
                }
                drop(open);
                done();
            }));
            finish();
        }));
        for w in workers {
            w.join().unwrap();
        }
        shared.cancel_all();
    });
}

/// While a task runs on worker 0 (its core lent) it forks two children,
/// which stay hidden in its fresh tasks, and awaits the newer, as a fork
/// loop does; the monitor has named the poll, and worker 1 visits the core
/// (`steal_hidden`), running what it takes. Each child runs exactly once:
/// inline in the await, or on worker 1; and the await gets the output
/// either way. That the visit and the owner's borrows never use the core
/// at once is `core_slot.rs`'s models' to check (loom sees no race on the
/// real core's plain fields); this one checks what the real code does
/// with the fresh tasks on either side of that exclusion.
#[test]
fn a_visit_and_an_inline_run_share_out_the_fresh_tasks() {
    loom::model(|| {
        let (shared, mut cores) = test_build(2);
        let external = external_spawner(&shared);
        let thief_core = Box::new(cores.pop().unwrap());
        let owner = WorkerCtx::new(external.clone(), 0);
        *lock(&shared.remotes[0].active) = owner.lent.clone();
        owner.lent.lend(Box::new(cores.pop().unwrap())); // a task is running
        let ran = Arc::new(AtomicUsize::new(0));
        let child = |out: usize| {
            let ran = ran.clone();
            async move {
                ran.fetch_add(1, SeqCst);
                out
            }
        };
        let guard = CoreGuard::enter(CoreRef::Multi(&owner));
        let older = crate::fork(child(1));
        let newer = crate::fork(child(2));
        let remote = &shared.remotes[0];
        remote.want_visit(remote.counters.polls.load(SeqCst));
        let thief = thread::spawn(move || {
            let ctx = WorkerCtx::new(external, 1);
            let _g = CoreGuard::enter(CoreRef::Multi(&ctx));
            let mut core = thief_core;
            if let Some(t) = ctx.steal_hidden(&mut core) {
                core = ctx.run_task(core, t).expect("no hand-off in this model");
            }
            core
        });
        let mut cx = Context::from_waker(Waker::noop());
        let mut newer = pin!(newer);
        let first = newer.as_mut().poll(&mut cx);
        let thief_core = thief.join().unwrap();
        let got = match first {
            Poll::Ready(out) => out,
            // Taken by the visit, and run by the thief by now.
            Poll::Pending => match newer.as_mut().poll(&mut cx) {
                Poll::Ready(out) => out,
                Poll::Pending => panic!("the visit took the child and did not run it"),
            },
        };
        assert_eq!(got.unwrap(), 2, "the await gets the newer child's output");
        // The older child: run by the thief, or still on worker 0's core.
        let mut older = pin!(older);
        let older_out = match older.as_mut().poll(&mut cx) {
            Poll::Ready(out) => out.unwrap(),
            Poll::Pending => panic!("the older child is neither run nor runnable inline"),
        };
        assert_eq!(older_out, 1);
        assert_eq!(ran.load(SeqCst), 2, "each child ran exactly once");
        drop(guard);
        drop(owner.lent.take());
        drop(thief_core);
        shared.begin_shutdown();
        shared.cancel_all();
    });
}
