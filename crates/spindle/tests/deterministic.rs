//! Deterministic runtimes: a seeded schedule finds an ordering bug plain
//! runs miss, its seed replays it exactly, `select!` follows the seed, and
//! a deadlock panics with the seed instead of hanging.

use spindle::chan;
use spindle::Builder;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// The lost update of the example: a deposit split by awaits racing a
/// one-step fee.
#[path = "../examples/lost_update.rs"]
#[allow(dead_code)] // its `main`
mod lost_update;

use lost_update::day_of_business;

/// The seed `explore`'s panic message names.
fn failing_seed(body: impl Fn() + std::panic::UnwindSafe) -> Option<u64> {
    let panic = std::panic::catch_unwind(body).err()?;
    let msg = panic.downcast_ref::<String>().expect("a message").clone();
    let seed = msg.strip_prefix("seed ")?.split(':').next()?;
    Some(seed.parse().expect("a seed number"))
}

#[test]
fn plain_runs_miss_the_lost_update() {
    let rt = Builder::new_current_thread().build().unwrap();
    for _ in 0..200 {
        assert_eq!(rt.block_on(day_of_business()), 149);
    }
}

#[test]
fn explore_finds_the_lost_update_and_its_seed_replays_it() {
    let seed = failing_seed(|| {
        spindle::test::explore(300, || async {
            assert_eq!(day_of_business().await, 149, "lost update");
        })
    })
    .expect("300 schedules and none lost the update");
    for _ in 0..5 {
        let rt = Builder::new_deterministic(seed).build().unwrap();
        assert_eq!(
            rt.block_on(day_of_business()),
            150,
            "seed {seed} did not replay"
        );
    }
}

#[test]
fn explore_passes_a_correct_body_under_every_seed() {
    spindle::test::explore(50, || async {
        let n = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let n = n.clone();
                spindle::spawn(async move {
                    spindle::yield_now().await;
                    n.fetch_add(1, SeqCst);
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(n.load(SeqCst), 4);
    });
}

/// Six tasks take three steps each, logging their number at each step.
async fn six_tasks(order: Arc<Mutex<Vec<u32>>>) {
    let tasks: Vec<_> = (0..6)
        .map(|t| {
            let o = order.clone();
            spindle::spawn(async move {
                for _ in 0..3 {
                    o.lock().unwrap().push(t);
                    spindle::yield_now().await;
                }
            })
        })
        .collect();
    spindle::yield_now().await;
    for t in tasks {
        t.await.unwrap();
    }
}

/// The order of `six_tasks`' steps under `seed`.
fn trace(seed: u64) -> Vec<u32> {
    let order = Arc::new(Mutex::new(Vec::new()));
    Builder::new_deterministic(seed)
        .build()
        .unwrap()
        .block_on(six_tasks(order.clone()));
    let v = order.lock().unwrap().clone();
    v
}

#[test]
fn a_seed_fixes_the_schedule_and_seeds_differ() {
    assert_eq!(trace(7), trace(7));
    assert_eq!(trace(8), trace(8));
    let distinct: std::collections::HashSet<Vec<u32>> = (1..=10).map(trace).collect();
    assert!(
        distinct.len() > 5,
        "10 seeds gave {} schedules",
        distinct.len()
    );
    let fifo: Vec<u32> = (0..3).flat_map(|_| 0..6).collect();
    assert!((1..=10).map(trace).any(|t| t != fifo));
}

/// Which arm each of 20 selects over two ready channels took, under `seed`.
fn select_choices(seed: u64) -> Vec<u8> {
    Builder::new_deterministic(seed)
        .build()
        .unwrap()
        .block_on(async {
            let (a_tx, a) = chan::bounded::<u8>(1);
            let (b_tx, b) = chan::bounded::<u8>(1);
            let mut picks = Vec::new();
            for _ in 0..20 {
                let _ = a_tx.try_send(0);
                let _ = b_tx.try_send(1);
                let v = spindle::select! {
                    v = a.recv() => v.unwrap(),
                    v = b.recv() => v.unwrap(),
                };
                picks.push(v);
            }
            picks
        })
}

#[test]
fn select_follows_the_seed() {
    assert_eq!(select_choices(3), select_choices(3));
    let runs: std::collections::HashSet<Vec<u8>> = (1..=5).map(select_choices).collect();
    assert!(runs.len() > 1, "select chose the same under 5 seeds");
}

#[test]
fn a_deadlock_panics_with_the_seed() {
    let rt = Builder::new_deterministic(5).build().unwrap();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            let (_keep, rx) = chan::bounded::<u8>(1);
            let waiter = spindle::spawn(async move { rx.recv().await });
            let _ = waiter.await;
        })
    }))
    .expect_err("a deadlock returned");
    let msg = err.downcast_ref::<String>().expect("a message");
    assert!(msg.contains("seed 5") && msg.contains("deadlock"), "{msg}");
    assert!(msg.contains("SPINDLE_SEED=5"), "{msg}");
    // The waiting task, named by where it was spawned (the line above
    // `let _ = waiter.await`).
    assert!(msg.contains("tests/deterministic.rs:"), "{msg}");
}

#[test]
fn a_deterministic_runtime_runs_timers_on_virtual_time() {
    let rt = Builder::new_deterministic(1).build().unwrap();
    let real = std::time::Instant::now();
    rt.block_on(async {
        let start = spindle::time::now();
        spindle::time::sleep(std::time::Duration::from_secs(86_400)).await;
        assert!(spindle::time::now() - start >= std::time::Duration::from_secs(86_400));
    });
    assert!(real.elapsed() < std::time::Duration::from_secs(30));
}

/// The attribute's runtime is `new_deterministic(9)`: the same schedule
/// as `trace(9)` builds by hand.
#[spindle::test(seed = 9)]
async fn the_test_attribute_takes_a_seed() {
    let order = Arc::new(Mutex::new(Vec::new()));
    six_tasks(order.clone()).await;
    let here = order.lock().unwrap().clone();
    assert_eq!(here, std::thread::spawn(|| trace(9)).join().unwrap());
}

#[spindle::test(deterministic)]
async fn the_test_attribute_runs_deterministic() {
    spindle::time::sleep(std::time::Duration::from_secs(3600)).await;
}

/// Polls taken by a task of `steps` budgeted steps, each computing for
/// `step` first, on a seeded runtime.
fn polls_of_a_busy_task(steps: u32, step: std::time::Duration) -> u64 {
    let rt = Builder::new_deterministic(7).build().unwrap();
    let polls = Arc::new(AtomicU64::new(0));
    let p = polls.clone();
    let mut work = Box::pin(async move {
        for _ in 0..steps {
            let start = std::time::Instant::now();
            while start.elapsed() < step {
                std::hint::spin_loop();
            }
            spindle::task::consume_budget().await;
        }
    });
    rt.block_on(async move {
        spindle::spawn(std::future::poll_fn(move |cx| {
            p.fetch_add(1, SeqCst);
            std::future::Future::poll(work.as_mut(), cx)
        }))
        .await
        .unwrap()
    });
    polls.load(SeqCst)
}

#[test]
fn a_busy_task_yields_at_the_same_steps_however_fast_it_runs() {
    // A seeded runtime's budget counts units only: a task yields after
    // every 128 (the default budget), never where a clock says, so a replay
    // on a slower machine takes the same steps.
    let fast = polls_of_a_busy_task(1000, std::time::Duration::ZERO);
    let slow = polls_of_a_busy_task(1000, std::time::Duration::from_micros(100));
    assert_eq!((fast, slow), (8, 8), "1000 steps, 128 a poll");
}
