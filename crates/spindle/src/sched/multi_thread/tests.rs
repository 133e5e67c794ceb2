//! Unit tests of the multi-thread scheduler: hand-offs of a core to a new
//! thread, and which queuing wakes a sleeping worker.

use super::schedule::Queued;
use super::shared::test_build;
use super::{external_spawner, Shared, WorkerCtx};
use crate::loom::{Arc, Ordering::Relaxed};
use crate::sched::core_slot::CoreSlot;
use crate::sched::HandleInner;
use std::time::Duration;

thread_local! {
    /// Makes `Shared::worker_thread` fail on this thread, as when the
    /// OS refuses a thread.
    pub(super) static REFUSE_THREADS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A hand-off that cannot have a thread never takes the core: the
/// owner, inside a borrow of it here, keeps it and is not waited for.
#[test]
fn a_refused_hand_off_leaves_the_core_with_its_owner() {
    let (shared, mut cores) = test_build(1);
    let lent = Arc::new(CoreSlot::new());
    lent.lend(Box::new(cores.pop().unwrap()));
    let borrowed = lent.borrow().expect("lent");
    let (tx, rx) = std::sync::mpsc::channel();
    let monitor = {
        let (shared, lent) = (shared.clone(), lent.clone());
        std::thread::spawn(move || {
            REFUSE_THREADS.with(|r| r.set(true));
            tx.send(Shared::hand_off(&shared, 0, &lent)).unwrap();
        })
    };
    let handed = rx.recv_timeout(Duration::from_secs(10));
    drop(borrowed);
    monitor.join().unwrap();
    assert_eq!(handed, Ok(false), "the hand-off waited on the borrow");
    let core = lent.take().expect("the core is still lent");
    assert_eq!(shared.handoffs.load(Relaxed), 0);
    drop(core);
    shared.begin_shutdown();
    shared.cancel_all();
}

/// `block_in_place` in a loop: every hand-off's old thread retires and
/// is let go (not kept until shutdown), and a thread that lost its core
/// already starts no new one.
#[test]
fn hand_offs_leave_no_thread_behind() {
    const HAND_OFFS: u64 = if cfg!(miri) { 20 } else { 100 };
    let rt = crate::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let shared = match &rt.handle().inner {
        HandleInner::Multi(s) => s.shared().clone(),
        HandleInner::Current(_) => unreachable!("a multi-thread runtime"),
    };
    let handoffs = rt.block_on(rt.spawn(async {
        for _ in 0..HAND_OFFS {
            crate::block_in_place(|| ());
            crate::block_in_place(|| ()); // this thread has no core now
            crate::yield_now().await;
        }
    }));
    handoffs.unwrap();
    let handoffs = shared.handoffs.load(Relaxed);
    assert!(
        (HAND_OFFS..HAND_OFFS + 10).contains(&handoffs),
        "{handoffs} hand-offs: one per poll (and a retake or so)"
    );
    let kept = shared.kept_threads();
    // The monitor, the current worker, and a few retiring threads.
    assert!(kept < 10, "{kept} threads kept after {HAND_OFFS} hand-offs");
}

/// A yield (the task's own, a spent budget) goes to the ring waking
/// nobody; a `wake_queued` goes there and wakes a sleeper to take it.
#[test]
fn a_queued_wake_wakes_a_sleeper_and_a_yield_does_not() {
    let (shared, mut cores) = test_build(2);
    let ctx = WorkerCtx::new(external_spawner(&shared), 0);
    let mut core = cores.swap_remove(0);
    shared.idle.worker_to_parked(1);
    let (yielded, yielded_raw) = crate::task::inert::task();
    ctx.schedule_local(&mut core, yielded, Queued::Yielded);
    assert_eq!(shared.sleeping_workers(), 1, "a yield woke a sleeper");
    let (queued, queued_raw) = crate::task::inert::task();
    ctx.schedule_local(&mut core, queued, Queued::ForThieves);
    assert_eq!(shared.sleeping_workers(), 0, "the queued wake woke nobody");
    assert_eq!(core.queue.len(), 2, "both in the ring");
    drop(core);
    yielded_raw.drop_join_handle();
    queued_raw.drop_join_handle();
    shared.begin_shutdown();
    shared.cancel_all();
}

/// The tasks a driver turn wakes (timers that fell due together) run in
/// the order they were woken, not newest first as from the LIFO stack.
#[test]
fn a_driver_turns_wakes_run_in_the_order_woken() {
    let (shared, mut cores) = test_build(1);
    let ctx = WorkerCtx::new(external_spawner(&shared), 0);
    let core = Box::new(cores.swap_remove(0));
    let (tasks, raws): (Vec<_>, Vec<_>) = (0..3).map(|_| crate::task::inert::task()).unzip();
    let mut core = ctx
        .dispatch(core, || {
            for task in tasks {
                ctx.schedule_here(task, Queued::Woken);
            }
        })
        .expect("the core was not taken away");
    let mut ran = Vec::new();
    for (i, raw) in raws.iter().enumerate() {
        let next = ctx.next_task(&mut core).expect("three tasks queued");
        assert!(next.is(*raw), "task {i} of the turn did not run {i}th");
        ran.push(next);
    }
    drop(ran);
    drop(core);
    for raw in raws {
        raw.drop_join_handle();
    }
    shared.begin_shutdown();
    shared.cancel_all();
}

/// `after_monitor_turn` wakes a worker only when every worker sleeps.
#[test]
fn after_the_monitors_turn_a_worker_is_woken_only_if_all_sleep() {
    let (shared, _cores) = test_build(2);
    shared.idle.worker_to_parked(0);
    shared.after_monitor_turn();
    assert_eq!(
        shared.sleeping_workers(),
        1,
        "worker 1 is awake: nobody woken"
    );
    shared.idle.worker_to_parked(1);
    shared.after_monitor_turn();
    assert_eq!(shared.sleeping_workers(), 1, "all slept: one woken");
    shared.begin_shutdown();
    shared.cancel_all();
}
