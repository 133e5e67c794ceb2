//! Runtime shutdown, on every scheduler flavour: every task cancelled and
//! freed (its future dropped once, where it was pinned), a late spawn
//! cancelled at once, a long chain of wakes cancelled without recursing,
//! and `shutdown_timeout`: no limit at `Duration::MAX`, giving up on a
//! worker blocked in a poll, and cancelling what it left only once that
//! worker has returned.

mod common;

use common::{DropCounter, Gate};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn shutdown_drops_each_future_where_it_was_pinned() {
    for (flavour, rt) in common::flavours() {
        let moved = Arc::new(AtomicUsize::new(0));
        rt.block_on(async {
            for _ in 0..10 {
                drop(spindle::spawn(common::PinProbe::new(&moved)));
            }
            spindle::yield_now().await;
        });
        drop(rt);
        assert_eq!(moved.load(SeqCst), 0, "{flavour}: moved before its drop");
    }
}

#[test]
fn shutdown_cancels_every_task_and_frees_it() {
    for (flavour, rt) in common::flavours() {
        let drops = DropCounter::new();
        let gate = Gate::new();
        let n = if cfg!(miri) { 20 } else { 1000 };
        let handle = rt.handle().clone();
        let hs = rt.block_on(async {
            let hs: Vec<_> = (0..n)
                .map(|i| {
                    let t = drops.track();
                    let g = gate.clone();
                    spindle::spawn(async move {
                        let _t = t;
                        if i % 2 == 0 {
                            g.wait().await; // idle forever
                        }
                        loop {
                            spindle::yield_now().await; // always runnable
                        }
                    })
                })
                .collect::<Vec<_>>();
            spindle::yield_now().await;
            hs
        });
        drop(rt);
        assert_eq!(
            drops.drops(),
            n,
            "{flavour}: every future dropped exactly once at shutdown"
        );
        for h in hs {
            assert!(h.is_finished());
        }
        // Spawning after shutdown gives a cancelled task, never a hang.
        let t = drops.track();
        let late = handle.spawn(async move {
            let _t = t;
        });
        assert!(late.is_finished());
        assert_eq!(drops.drops(), n + 1, "{flavour}");
        drop(gate);
    }
}

/// A shutdown timeout too long for `Instant` is no limit (adding it to
/// one would panic).
#[test]
fn a_shutdown_timeout_of_duration_max_waits_without_limit() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    assert_eq!(
        rt.block_on(async { spindle::spawn(async { 7 }).await.unwrap() }),
        7
    );
    assert!(rt.shutdown_timeout(Duration::MAX));
}

/// Spawns a task that blocks its worker's thread until the flag returned is
/// set; returns once it is inside that poll (a task still queued would be
/// dropped at shutdown and let every worker stop).
fn spawn_blocker(rt: &spindle::Runtime) -> Arc<AtomicBool> {
    let release = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (r, s) = (release.clone(), started.clone());
    drop(rt.spawn(async move {
        s.store(true, SeqCst);
        while !r.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }));
    assert!(common::until_blocking(|| started.load(SeqCst)));
    release
}

#[test]
fn shutdown_timeout_gives_up_on_a_blocked_worker() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    let release = spawn_blocker(&rt);
    let stopped = rt.shutdown_timeout(Duration::from_millis(50));
    assert!(
        !stopped,
        "a worker stuck in a blocking poll cannot stop in time"
    );
    release.store(true, SeqCst);
}

/// What a shutdown that gave up on a stuck worker leaves is cancelled once
/// that worker has returned, never while it may still poll a task (closing
/// the registry while a task goes idle for the first time would race its
/// poller).
#[test]
fn tasks_left_by_a_timed_out_shutdown_are_cancelled_once_the_stuck_worker_returns() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let drops = DropCounter::new();
    let idle = Arc::new(AtomicBool::new(false));
    let (t, i) = (drops.track(), idle.clone());
    drop(rt.spawn(async move {
        let _t = t;
        i.store(true, SeqCst);
        Gate::new().wait().await;
    }));
    assert!(common::until_blocking(|| idle.load(SeqCst)));
    let release = spawn_blocker(&rt);
    assert!(!rt.shutdown_timeout(Duration::from_millis(50)));
    assert_eq!(drops.drops(), 0, "cancelled while a worker may still poll");
    release.store(true, SeqCst);
    assert!(
        common::until_blocking(|| drops.drops() == 1),
        "the idle task was never cancelled"
    );
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(drops.drops(), 1);
}

/// A chain of idle tasks, each holding the sender its successor waits on:
/// shutdown's cancellation of the first wakes the second, and so on down
/// the chain. They are cancelled one after the other, not each inside its
/// predecessor's destructor: the runtime is dropped on a thread with a
/// small stack.
#[test]
fn shutdown_cancels_a_long_wake_chain_without_recursing() {
    const N: usize = if cfg!(miri) { 50 } else { 20_000 };
    for (flavour, rt) in common::flavours() {
        let (first_tx, mut rx) = spindle::chan::bounded::<u8>(1);
        let parked = Arc::new(AtomicUsize::new(0));
        for _ in 0..N {
            let (tx, next_rx) = spindle::chan::bounded::<u8>(1);
            let parked = parked.clone();
            let my_rx = std::mem::replace(&mut rx, next_rx);
            drop(rt.spawn(async move {
                let _tx = tx; // its drop closes the successor's channel
                parked.fetch_add(1, SeqCst);
                let _ = my_rx.recv().await;
            }));
        }
        // Every task parks on its receive before the runtime goes.
        rt.block_on(async {
            while parked.load(SeqCst) < N {
                spindle::time::sleep(Duration::from_millis(1)).await;
            }
        });
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || drop(rt))
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("{flavour}: dropping the runtime panicked"));
        drop((first_tx, rx));
    }
}
