//! Tasks hidden behind a long poll (spawned or woken by it, in its
//! worker's LIFO slot) run on an idle worker while the poll goes on: the
//! monitor's watch wakes a sleeper, which visits the busy worker's core
//! and takes them. A binary of its own, whose tests run one at a time
//! (`alone`): the one timed test here must not share the CPUs with other
//! tests.

mod common;

use common::Gate;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Held for the whole of each test: libtest runs a binary's tests in
/// parallel, and the others' spinning workers would take the CPUs the timed
/// one measures (a failed test's poison is no reason to fail the next).
fn alone() -> MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    ALONE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Task `a` opens a gate task `b` waits at, then computes without yielding
/// until `b` has run or `limit` passed; returns when `b` ran (from the
/// gate's opening), if it did meanwhile. On `rt`, two workers without
/// hand-offs (`two_workers_without_hand_offs`): `b` must be taken from
/// `a`'s worker by the other one.
fn woken_beside_the_waker(
    rt: &spindle::Runtime,
    queued: bool,
    limit: Duration,
) -> Option<Duration> {
    rt.block_on(async move {
        let gate = Gate::new();
        let ran = Arc::new(AtomicBool::new(false));
        let (g, r) = (gate.clone(), ran.clone());
        let b = spindle::spawn(async move {
            g.wait().await;
            r.store(true, SeqCst);
        });
        while !gate.has_waiters() {
            spindle::yield_now().await;
        }
        let r = ran.clone();
        let a = spindle::spawn(async move {
            let start = Instant::now();
            if queued {
                gate.open_queued();
            } else {
                gate.open();
            }
            while !r.load(SeqCst) && start.elapsed() < limit {
                std::hint::spin_loop();
            }
            r.load(SeqCst).then(|| start.elapsed())
        });
        let beside = a.await.unwrap();
        b.await.unwrap();
        beside
    })
}

#[test]
fn a_task_woken_by_a_long_poll_runs_on_the_idle_worker() {
    let _alone = alone();
    // The woken task sits in the waker's LIFO slot; the idle worker takes
    // it from there (woken by the monitor's watch, then a visit).
    let rt = two_workers_without_hand_offs();
    let took = woken_beside_the_waker(&rt, false, 2 * common::patience());
    let took = took.expect("the woken task waited for its waker's poll to end");
    assert!(took < Duration::from_millis(100), "it ran after {took:?}");
}

/// With hand-offs off the monitor's rounds last 1 ms or more, and a poll
/// must be seen at two of them before a sleeper is woken for what it
/// hides; the armed watch looks every 50 µs between rounds. So the
/// fastest of nine trials, each a task hidden behind a long poll, is
/// under a round only if the watch took it.
#[test]
fn a_task_hidden_by_a_long_poll_waits_a_look_not_a_round() {
    let _alone = alone();
    let fastest = |trial: &dyn Fn() -> Option<Duration>| {
        (0..9)
            .map(|_| trial().expect("the hidden task waited for the poll to end"))
            .min()
            .unwrap()
    };
    let round = Duration::from_millis(1);
    let woken = fastest(&|| {
        let rt = two_workers_without_hand_offs();
        woken_beside_the_waker(&rt, false, 2 * common::patience())
    });
    assert!(
        woken < round,
        "woken: the fastest of nine ran after {woken:?}"
    );
    let spawned = fastest(&|| spawned_beside_the_spawner(2 * common::patience()));
    assert!(
        spawned < round,
        "spawned: the fastest of nine ran after {spawned:?}"
    );
}

/// Task `a` spawns `b`, then computes without yielding until `b` has run
/// or `limit` passed; returns when `b` ran (from the spawn), if it did
/// meanwhile. As `woken_beside_the_waker`.
fn spawned_beside_the_spawner(limit: Duration) -> Option<Duration> {
    let rt = two_workers_without_hand_offs();
    rt.block_on(async move {
        spindle::spawn(async move {
            let ran = Arc::new(AtomicBool::new(false));
            let r = ran.clone();
            let start = Instant::now();
            let b = spindle::spawn(async move { r.store(true, SeqCst) });
            while !ran.load(SeqCst) && start.elapsed() < limit {
                std::hint::spin_loop();
            }
            let took = start.elapsed();
            b.await.unwrap();
            ran.load(SeqCst).then_some(took)
        })
        .await
        .unwrap()
    })
}

#[test]
fn a_queued_wake_runs_on_an_idle_worker_while_the_waker_computes() {
    let _alone = alone();
    let rt = two_workers_without_hand_offs();
    assert!(
        woken_beside_the_waker(&rt, true, 2 * common::patience()).is_some(),
        "the task woken with wake_queued waited for its waker's poll to end"
    );
    // Stolen from the waker's ring, where `wake_queued` put it (waking the
    // idle worker), not taken by a visit, as the monitor's watch would
    // take a task hidden among the fresh ones.
    let m = rt.metrics();
    let visits: u64 = m.workers.iter().map(|w| w.hidden_steals).sum();
    assert_eq!(visits, 0, "{m:?}");
}

#[test]
fn a_task_spawned_by_a_long_poll_runs_on_the_idle_worker() {
    let _alone = alone();
    // The child waits in its parent's fresh tasks (the LIFO slot) while
    // the parent spins until it has run: the monitor wakes the idle worker,
    // which visits the busy worker's core and takes it.
    let rt = two_workers_without_hand_offs();
    let ran = rt.block_on(async {
        spindle::spawn(async {
            let ran = Arc::new(AtomicBool::new(false));
            let r = ran.clone();
            let child = spindle::spawn(async move { r.store(true, SeqCst) });
            let start = Instant::now();
            while !ran.load(SeqCst) && start.elapsed() < 2 * common::patience() {
                std::hint::spin_loop();
            }
            child.await.unwrap();
            ran.load(SeqCst)
        })
        .await
        .unwrap()
    });
    assert!(ran, "the spawned child waited for its parent's poll to end");
    // Taken by a visit (hand-offs are off).
    let m = rt.metrics();
    let taken: u64 = m.workers.iter().map(|w| w.hidden_steals).sum();
    assert!(taken >= 1, "{m:?}");
}

/// The runtime every test here runs on: two workers, and no hand-off of a
/// busy worker's core, so that only a visit can take its hidden tasks.
fn two_workers_without_hand_offs() -> spindle::Runtime {
    spindle::Builder::new_multi_thread()
        .workers(2)
        .handoff_after(None)
        .build()
        .unwrap()
}
