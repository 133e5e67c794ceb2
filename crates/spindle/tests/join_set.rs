//! `JoinSet`, run on every scheduler flavour through `rt_test!`: outputs in
//! finish order, `len`, `abort_all`, dropping the set aborts its tasks,
//! `detach_all` lets them finish, an empty set, panics, `join_all`,
//! `shutdown`, `try_join_next`, and a drain of many tasks.

mod common;

use common::Gate;
use spindle::JoinSet;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

rt_test! {
    fn outputs_come_back_in_finish_order() {
        // Each task finishes when the test releases it, in an order unlike
        // the spawn order; no timing is involved.
        let mut set = JoinSet::new();
        let mut release = Vec::new();
        for value in [3u32, 1, 2] {
            let (tx, rx) = spindle::chan::oneshot::<()>();
            release.push((value, tx));
            set.spawn(async move {
                rx.await.unwrap();
                value
            });
        }
        assert_eq!(set.len(), 3);
        release.sort_by_key(|&(value, _)| value);
        for (n, (value, tx)) in release.into_iter().enumerate() {
            tx.send(()).unwrap();
            assert_eq!(set.join_next().await.unwrap().unwrap(), value);
            assert_eq!(set.len(), 2 - n);
        }
        assert!(set.is_empty());
    }
}

rt_test! {
    fn join_next_on_an_empty_set_is_none() {
        let mut set = JoinSet::<u32>::new();
        assert!(set.join_next().await.is_none());
        assert!(set.try_join_next().is_none());
        assert_eq!(set.len(), 0);
    }
}

rt_test! {
    fn abort_all_gives_cancelled() {
        let mut set = JoinSet::new();
        for _ in 0..10 {
            set.spawn(std::future::pending::<()>());
        }
        set.abort_all();
        let mut n = 0;
        while let Some(out) = set.join_next().await {
            assert!(out.unwrap_err().is_cancelled());
            n += 1;
        }
        assert_eq!(n, 10);
    }
}

rt_test! {
    fn dropping_the_set_aborts_its_tasks() {
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = DropFlag(dropped.clone());
        let mut set = JoinSet::new();
        set.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        spindle::yield_now().await;
        drop(set);
        while !dropped.load(SeqCst) {
            spindle::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

rt_test! {
    fn detach_all_lets_the_tasks_finish() {
        let gate = Gate::new();
        let done = Arc::new(AtomicBool::new(false));
        let mut set = JoinSet::new();
        let (wait, flag) = (gate.wait(), done.clone());
        set.spawn(async move {
            wait.await;
            flag.store(true, SeqCst);
        });
        set.detach_all();
        assert!(set.is_empty());
        assert!(set.join_next().await.is_none());
        drop(set);
        gate.open();
        while !done.load(SeqCst) {
            spindle::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

rt_test! {
    fn a_set_works_on_after_detach_all() {
        let mut set = JoinSet::new();
        for i in 0..50u64 {
            set.spawn(async move {
                spindle::yield_now().await;
                i
            });
        }
        set.detach_all();
        for i in 0..50u64 {
            set.spawn(async move { i });
        }
        assert_eq!(set.len(), 50);
        let mut sum = 0;
        while let Some(out) = set.join_next().await {
            sum += out.unwrap();
        }
        assert_eq!(sum, (0..50u64).sum::<u64>());
    }
}

rt_test! {
    fn a_panicking_task_gives_is_panic() {
        let mut set = JoinSet::new();
        set.spawn(async { panic!("boom") });
        set.spawn(async { 5 });
        let mut panics = 0;
        let mut values = 0;
        while let Some(out) = set.join_next().await {
            match out {
                Ok(v) => values += v,
                Err(e) => {
                    assert!(e.is_panic());
                    panics += 1;
                }
            }
        }
        assert_eq!((panics, values), (1, 5));
    }
}

rt_test! {
    fn join_all_gives_every_output() {
        let mut set = JoinSet::new();
        for i in 0..100u64 {
            set.spawn(async move { i });
        }
        let mut all = set.join_all().await;
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
    }
}

rt_test! {
    fn shutdown_aborts_and_waits() {
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = DropFlag(dropped.clone());
        let mut set = JoinSet::new();
        set.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        set.shutdown().await;
        assert!(set.is_empty());
        assert!(dropped.load(SeqCst));
    }
}

rt_test! {
    fn try_join_next_gives_a_finished_task() {
        let mut set = JoinSet::new();
        set.spawn(async { 7 });
        let out = loop {
            if let Some(out) = set.try_join_next() {
                break out;
            }
            spindle::yield_now().await;
        };
        assert_eq!(out.unwrap(), 7);
        assert!(set.try_join_next().is_none());
    }
}

rt_test! {
    fn slots_are_reused_while_tasks_come_and_go() {
        let mut set = JoinSet::new();
        let mut sum = 0u64;
        for round in 0..50u64 {
            for i in 0..20 {
                set.spawn(async move {
                    spindle::yield_now().await;
                    round * 20 + i
                });
            }
            for _ in 0..10 {
                sum += set.join_next().await.unwrap().unwrap();
            }
        }
        while let Some(out) = set.join_next().await {
            sum += out.unwrap();
        }
        assert_eq!(sum, (0..1000u64).sum::<u64>());
    }
}

#[test]
fn spawn_on_uses_the_given_runtime() {
    let other = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let handle = other.handle().clone();
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    rt.block_on(async move {
        let mut set = JoinSet::new();
        set.spawn_on(async { 3 }, &handle);
        assert_eq!(set.join_next().await.unwrap().unwrap(), 3);
    });
}

#[test]
fn draining_100k_tasks_gives_the_exact_sum() {
    let rt = spindle::Builder::new_multi_thread().build().unwrap();
    rt.block_on(async {
        let n: u64 = if cfg!(miri) { 1_000 } else { 100_000 };
        let mut set = JoinSet::new();
        for i in 0..n {
            set.spawn(async move { i });
        }
        assert_eq!(set.len() as u64, n);
        let mut sum = 0;
        while let Some(out) = set.join_next().await {
            sum += out.unwrap();
        }
        assert_eq!(sum, n * (n - 1) / 2);
    });
}
