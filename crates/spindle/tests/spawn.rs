//! Spawning and joining tasks, written once and run on every scheduler
//! flavour (current-thread, 1 worker, 4 workers) through `rt_test!`: each
//! output given once, each future polled as often as it asks and dropped
//! once, inline joins on the current-thread runtime, long spawn-and-await
//! chains, wakes from other threads, and spawns from plain threads and
//! through another runtime's handle.

mod common;

use common::{counted, DropCounter, Gate};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

rt_test! {
    fn spawn_and_join_gives_the_output() {
        let h = spindle::spawn(async { 40 + 2 });
        assert_eq!(h.await.unwrap(), 42);
    }
}

rt_test! {
    fn many_tasks_each_output_once() {
        let n = common::scaled(20_000) as u64;
        let handles: Vec<_> = (0..n).map(|i| spindle::spawn(async move { i })).collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        assert_eq!(sum, n * (n - 1) / 2);
    }
}

rt_test! {
    fn a_ready_future_is_polled_exactly_once_and_dropped_once() {
        let drops = DropCounter::new();
        let t = drops.track();
        let (fut, polls) = counted(async move {
            let _t = t;
            7
        });
        assert_eq!(spindle::spawn(fut).await.unwrap(), 7);
        assert_eq!(polls.load(SeqCst), 1);
        assert_eq!(drops.drops(), 1);
    }
}

rt_test! {
    fn a_self_waking_future_is_polled_exactly_twice() {
        let (fut, polls) = counted(spindle::yield_now());
        spindle::spawn(fut).await.unwrap();
        assert_eq!(polls.load(SeqCst), 2);
    }
}

#[test]
fn awaiting_a_just_spawned_task_on_the_current_thread_runtime_runs_it_inline() {
    // The child is the newest entry of the queue, and nothing else could
    // run while the parent waits: the await runs it at once, and the parent
    // finishes in its first poll. (On a worker only a `Fork` does this:
    // `tests/semantics.rs`.)
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let (parent, polls) = counted(async { spindle::spawn(async { 5 }).await.unwrap() });
        assert_eq!(spindle::spawn(parent).await.unwrap(), 5);
        assert_eq!(polls.load(SeqCst), 1);
    });
}

rt_test! {
    fn an_inline_join_leaving_a_waker_behind_keeps_the_task_alive() {
        // The child finishes in its first (inline) poll but keeps a clone of
        // its waker: the awaiting handle must not free the cell while the
        // clone lives, and a wake after completion, from another thread,
        // does nothing. The output is dropped once, by its receiver.
        let drops = DropCounter::new();
        let slot = Arc::new(std::sync::Mutex::new(None::<std::task::Waker>));
        let (s, t) = (slot.clone(), drops.track());
        let out = spindle::spawn(async move {
            std::future::poll_fn(|cx| {
                *s.lock().unwrap() = Some(cx.waker().clone());
                std::task::Poll::Ready(())
            })
            .await;
            t
        })
        .await
        .unwrap();
        assert_eq!(drops.drops(), 0);
        drop(out);
        assert_eq!(drops.drops(), 1);
        let w = slot.lock().unwrap().take().expect("the child kept its waker");
        std::thread::spawn(move || w.wake()).join().unwrap();
    }
}

#[test]
fn a_tree_awaited_in_spawn_order_on_the_current_thread_runs_depth_first_inline() {
    // On the current-thread runtime every pending sibling stays among the
    // newest entries of the queue, so each await finds its child not
    // started and runs it inline: every task is polled once. (On workers,
    // `spindle::fork` asks for this: `tests/semantics.rs`.)
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let tasks = rt.block_on(async move { common::tree(p, 4, 3, common::Join::Spawn).await });
    assert_eq!(tasks, 1 + 4 + 16 + 64);
    assert_eq!(polls.load(SeqCst), 85, "one poll per task");
}

rt_test! {
    fn a_fork_join_tree_gives_every_output_on_every_flavour() {
        let polls = Arc::new(AtomicUsize::new(0));
        let depth = if cfg!(miri) { 2 } else { 5 };
        let tasks = common::tree(polls.clone(), 6, depth, common::Join::Spawn).await;
        assert_eq!(tasks, (0..=depth).map(|d| 6u64.pow(d)).sum::<u64>());
        assert!(polls.load(SeqCst) as u64 >= tasks);
    }
}

/// Task `n` spawns task `n - 1` and awaits it, `n` deep (nested inline runs
/// on the current-thread runtime).
fn chain(n: u32) -> spindle::JoinHandle<u32> {
    spindle::spawn(async move {
        if n == 0 {
            0
        } else {
            chain(n - 1).await.unwrap() + 1
        }
    })
}

const CHAIN: u32 = if cfg!(miri) { 50 } else { 20_000 };

rt_test! {
    fn long_chains_of_spawn_and_await_do_not_grow_the_stack_without_bound() {
        assert_eq!(chain(CHAIN).await.unwrap(), CHAIN);
    }
}

rt_test! {
    fn wake_from_another_thread() {
        let gate = Gate::new();
        let g2 = gate.clone();
        let h = spindle::spawn({
            let gate = gate.clone();
            async move {
                gate.wait().await;
                5
            }
        });
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            g2.open();
        });
        assert_eq!(h.await.unwrap(), 5);
        t.join().unwrap();
    }
}

rt_test! {
    fn handle_spawn_from_plain_threads() {
        let handle = spindle::Handle::current();
        let per = if cfg!(miri) { 5 } else { 250u64 };
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let handle = handle.clone();
                std::thread::spawn(move || {
                    let hs: Vec<_> = (0..per).map(|i| handle.spawn(async move { t * 1000 + i })).collect();
                    hs
                })
            })
            .collect();
        let mut sum = 0;
        for t in threads {
            for h in t.join().unwrap() {
                sum += h.await.unwrap();
            }
        }
        let expected: u64 = (0..4u64).map(|t| (0..per).map(|i| t * 1000 + i).sum::<u64>()).sum();
        assert_eq!(sum, expected);
    }
}

rt_test! {
    fn tasks_of_another_runtime_are_spawned_joined_and_freed_here() {
        // Each task holds its own runtime (`sched/sched_ref.rs`): spawned
        // through another runtime's handle from this one's worker, run there, and
        // joined and freed here, it must give its hold back to its own
        // runtime, which then shuts down with nothing left (drop counters).
        // A current-thread runtime runs tasks only inside `block_on`: one
        // is driven by a thread of its own until the joins are done.
        for (flavour, other) in common::flavours() {
            let drops = common::DropCounter::new();
            let handle = other.handle().clone();
            let (done_tx, done_rx) = spindle::chan::oneshot::<()>();
            let (driver, mut other) = if flavour == "current_thread" {
                let driver = std::thread::spawn(move || {
                    other.block_on(async move { done_rx.await.ok() });
                    other
                });
                (Some(driver), None)
            } else {
                (None, Some(other))
            };
            let hs: Vec<_> = (0..64u64)
                .map(|i| {
                    let t = drops.track();
                    handle.spawn(async move {
                        let _t = t;
                        i
                    })
                })
                .collect();
            let mut sum = 0;
            for h in hs {
                sum += h.await.unwrap();
            }
            assert_eq!(sum, 63 * 64 / 2);
            assert_eq!(drops.drops(), 64);
            done_tx.send(()).unwrap();
            if let Some(driver) = driver {
                other = Some(driver.join().unwrap());
            }
            // Dropping a runtime blocks: do it off this worker.
            std::thread::spawn(move || drop(other)).join().unwrap();
        }
    }
}

rt_test! {
    fn a_queued_wake_wakes_spindle_tasks_and_other_wakers() {
        let gate = Gate::new();
        let g = gate.clone();
        let waiter = spindle::spawn(async move { g.wait().await });
        while !gate.has_waiters() {
            spindle::yield_now().await;
        }
        gate.open_queued();
        waiter.await.unwrap();

        // A waker that is not a task's is woken the ordinary way.
        let woken = Arc::new(AtomicUsize::new(0));
        struct Count(Arc<AtomicUsize>);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, SeqCst);
            }
        }
        spindle::task::wake_queued(std::task::Waker::from(Arc::new(Count(woken.clone()))));
        assert_eq!(woken.load(SeqCst), 1);
    }
}
