//! Runtime behaviour, written once and run on every scheduler flavour
//! (current-thread, 1 worker, 4 workers) through `rt_test!`.

mod common;

use common::{counted, DropCounter, Gate};
use spindle::{CancellationToken, JoinError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
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
    let flavours = common::flavours()
        .into_iter()
        .filter(|(f, _)| *f == "current_thread");
    for (flavour, rt) in flavours {
        let polls = Arc::new(AtomicUsize::new(0));
        let p = polls.clone();
        let tasks = rt.block_on(async move { common::tree(p, 4, 3, common::Join::Spawn).await });
        assert_eq!(tasks, 1 + 4 + 16 + 64, "{flavour}");
        assert_eq!(polls.load(SeqCst), 85, "{flavour}: one poll per task");
    }
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
    fn a_panic_is_caught_with_its_message_and_the_runtime_goes_on() {
        let h = spindle::spawn(async { panic!("boom {}", 7) });
        let err = h.await.unwrap_err();
        assert!(err.is_panic());
        assert_eq!(err.panic_message(), Some("boom 7"));
        assert!(err.to_string().contains("boom 7"));
        // The worker survived.
        assert_eq!(spindle::spawn(async { 1 }).await.unwrap(), 1);
        let payload = spindle::spawn(async { std::panic::panic_any(11u32) }).await.unwrap_err().into_panic();
        assert_eq!(*payload.downcast::<u32>().unwrap(), 11);
    }
}

rt_test! {
    fn abort_an_idle_task_drops_its_future() {
        let drops = DropCounter::new();
        let t = drops.track();
        let gate = Gate::new();
        let h = spindle::spawn({
            let gate = gate.clone();
            async move {
                let _t = t;
                gate.wait().await;
                unreachable!("aborted task resumed");
            }
        });
        spindle::yield_now().await; // let it park
        h.abort();
        h.abort(); // idempotent
        let err: JoinError = h.await.unwrap_err();
        assert!(err.is_cancelled(), "{err:?}");
        assert_eq!(drops.drops(), 1);
    }
}

rt_test! {
    fn an_aborted_or_cancelled_future_is_dropped_where_it_was_pinned() {
        let moved = Arc::new(AtomicUsize::new(0));
        // Aborted while idle.
        let probe = common::PinProbe::new(&moved);
        let h = spindle::spawn(probe);
        spindle::yield_now().await; // polled once: pending, pinned
        h.abort();
        assert!(h.await.unwrap_err().is_cancelled());
        // Aborted while running: cancelled at its next suspension, inside
        // the probe.
        let (tx, rx) = std::sync::mpsc::channel::<spindle::AbortHandle>();
        let probe = common::PinProbe::new(&moved);
        let h = spindle::spawn(async move {
            rx.recv().unwrap().abort();
            probe.await;
        });
        tx.send(h.abort_handle()).unwrap();
        assert!(h.await.unwrap_err().is_cancelled());
        // Cancelled with its scope.
        let probe = common::PinProbe::new(&moved);
        let r = spindle::scope(|s| async move {
            drop(s.spawn(probe));
            spindle::yield_now().await;
            s.cancel();
        })
        .await;
        drop(r);
        assert_eq!(moved.load(SeqCst), 0, "a pinned future was moved to be dropped");
    }
}

rt_test! {
    fn dropping_a_polled_handle_lets_go_of_its_waker() {
        struct Noop;
        impl std::task::Wake for Noop {
            fn wake(self: Arc<Self>) {}
        }
        let gate = Gate::new();
        let g = gate.clone();
        let mut h = spindle::spawn(async move { g.wait().await });
        let counted = Arc::new(Noop);
        let waker = std::task::Waker::from(counted.clone());
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(std::future::Future::poll(std::pin::Pin::new(&mut h), &mut cx).is_pending());
        drop(waker);
        assert_eq!(Arc::strong_count(&counted), 2, "the task keeps the waker");
        let abort = h.abort_handle();
        drop(h);
        assert_eq!(Arc::strong_count(&counted), 1, "kept after the handle went");
        abort.abort();
    }
}

rt_test! {
    fn abort_while_running_cancels_at_the_next_suspension() {
        let reached = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = std::sync::mpsc::channel::<spindle::AbortHandle>();
        let r = reached.clone();
        let h = spindle::spawn(async move {
            let me = rx.recv().unwrap();
            me.abort(); // abort ourselves while running
            r.fetch_add(1, SeqCst);
            spindle::yield_now().await; // cancelled here
            r.fetch_add(1, SeqCst);
        });
        tx.send(h.abort_handle()).unwrap();
        assert!(h.await.unwrap_err().is_cancelled());
        assert_eq!(reached.load(SeqCst), 1);
    }
}

rt_test! {
    fn abort_after_completion_keeps_the_output() {
        let h = spindle::spawn(async { 3 });
        while !h.is_finished() {
            spindle::yield_now().await;
        }
        h.abort();
        assert_eq!(h.await.unwrap(), 3);
    }
}

rt_test! {
    fn dropping_a_handle_detaches_the_task() {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let gate = Gate::new();
        drop(spindle::spawn({
            let gate = gate.clone();
            async move {
                gate.wait().await;
                d.store(true, SeqCst);
            }
        }));
        gate.open();
        while !done.load(SeqCst) {
            spindle::yield_now().await;
        }
    }
}

rt_test! {
    fn abort_on_drop_cancels() {
        let drops = DropCounter::new();
        let t = drops.track();
        let gate = Gate::new();
        let g = gate.clone();
        let h = spindle::spawn(async move {
            let _t = t;
            g.wait().await;
        })
        .abort_on_drop();
        spindle::yield_now().await;
        drop(h);
        common::until(|| drops.drops() == 1).await;
        assert_eq!(drops.drops(), 1);
    }
}

rt_test! {
    fn yield_now_lets_others_run() {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let h = spindle::spawn(async move {
            f.store(true, SeqCst);
        });
        let mut spins = 0;
        while !flag.load(SeqCst) {
            spindle::yield_now().await;
            spins += 1;
            assert!(spins < 1_000_000, "yield_now never let the other task run");
        }
        h.await.unwrap();
    }
}

rt_test! {
    fn scope_waits_for_every_child() {
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        let out = spindle::scope(|s| async move {
            for _ in 0..100 {
                let d = d.clone();
                drop(s.spawn(async move {
                    spindle::yield_now().await;
                    d.fetch_add(1, SeqCst);
                }));
            }
            "body"
        })
        .await
        .unwrap();
        assert_eq!(out, "body");
        assert_eq!(done.load(SeqCst), 100);
    }
}

rt_test! {
    fn scope_live_counts_children_over_several_body_polls() {
        let gate = Gate::new();
        let escaped = Arc::new(std::sync::Mutex::new(None));
        let (g, e) = (gate.clone(), escaped.clone());
        spindle::scope(|s| async move {
            *e.lock().unwrap() = Some(s.clone());
            for round in 1..=3 {
                for _ in 0..5 {
                    drop(s.spawn(g.wait()));
                }
                // Spawned in this poll or earlier ones, however many units
                // the body took ahead for its spawns.
                assert_eq!(s.live(), 5 * round);
                spindle::yield_now().await;
            }
            g.open();
            common::until(|| s.live() == 0).await;
        })
        .await
        .unwrap();
        let escaped = escaped.lock().unwrap().take().unwrap();
        assert_eq!(escaped.live(), 0, "no units left behind");
    }
}

rt_test! {
    fn a_body_panic_gives_back_what_it_took_for_spawns() {
        let drops = DropCounter::new();
        let escaped = Arc::new(std::sync::Mutex::new(None));
        let (d, e) = (drops.clone(), escaped.clone());
        let r = spindle::spawn(spindle::scope(move |s| async move {
            *e.lock().unwrap() = Some(s.clone());
            for _ in 0..4 {
                let t = d.track();
                drop(s.spawn(async move {
                    let _t = t;
                    Gate::new().wait().await; // parked for good
                }));
            }
            panic!("body failed");
        }))
        .await;
        assert_eq!(r.unwrap_err().panic_message(), Some("body failed"));
        common::until(|| drops.drops() == 4).await;
        let escaped = escaped.lock().unwrap().take().unwrap();
        common::until(|| escaped.live() == 0).await;
        assert_eq!(escaped.live(), 0, "cancelled children and unused units all given back");
    }
}

rt_test! {
    fn an_inner_body_spawning_into_the_outer_scope_is_waited_for_by_it() {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        spindle::scope(|outer| async move {
            spindle::scope(|inner| async move {
                drop(inner.spawn(async {}));
                // Spawned while the inner body is polled: counted in the
                // outer scope all the same.
                drop(outer.spawn(async move {
                    for _ in 0..10 {
                        spindle::yield_now().await;
                    }
                    d.store(true, SeqCst);
                }));
            })
            .await
            .unwrap();
        })
        .await
        .unwrap();
        assert!(done.load(SeqCst), "the outer scope returned before its child");
    }
}

rt_test! {
    fn a_child_panic_cancels_siblings_and_reaches_the_caller() {
        let drops = DropCounter::new();
        let gate = Gate::new();
        let d = drops.clone();
        let g = gate.clone();
        let res = spindle::scope(|s| async move {
            for _ in 0..10 {
                let t = d.track();
                let g = g.clone();
                drop(s.spawn(async move {
                    let _t = t;
                    g.wait().await; // never opened
                }));
            }
            drop(s.spawn(async {
                spindle::yield_now().await;
                panic!("child failed");
            }));
            Gate::new().wait().await; // the body is cancelled too
        })
        .await;
        let err = res.unwrap_err();
        assert!(err.is_panic());
        assert_eq!(err.panic_message(), Some("child failed"));
        assert_eq!(drops.drops(), 10, "every sibling dropped before the scope returned");
        assert_eq!(*err.into_panic().downcast::<&str>().unwrap(), "child failed");
    }
}

rt_test! {
    fn try_scope_returns_the_first_error() {
        let res = spindle::try_scope(|s| async move {
            drop(s.spawn_try(async { Err::<(), _>("bad input") }));
            drop(s.spawn(Gate::new().wait()));
            0
        })
        .await;
        match res {
            Err(spindle::ScopeError::Failed(e)) => assert_eq!(e, "bad input"),
            other => panic!("expected Failed, got {other:?}"),
        }
    }
}

rt_test! {
    fn nested_scopes() {
        fn nest(depth: u32) -> std::pin::Pin<Box<dyn std::future::Future<Output = u64> + Send>> {
            Box::pin(async move {
                if depth == 0 {
                    return 1;
                }
                spindle::scope(|s| async move {
                    let a = s.spawn(nest(depth - 1));
                    let b = s.spawn(nest(depth - 1));
                    a.await.unwrap() + b.await.unwrap()
                })
                .await
                .unwrap()
            })
        }
        let depth = if cfg!(miri) { 3 } else { 8 };
        assert_eq!(nest(depth).await, 1 << depth);
    }
}

rt_test! {
    fn deep_nested_scopes() {
        fn chain(depth: u32) -> std::pin::Pin<Box<dyn std::future::Future<Output = u32> + Send>> {
            Box::pin(async move {
                if depth == 0 {
                    return 0;
                }
                spindle::scope(|s| async move { s.spawn(chain(depth - 1)).await.unwrap() + 1 }).await.unwrap()
            })
        }
        let depth = if cfg!(miri) { 20 } else { 500 };
        assert_eq!(chain(depth).await, depth);
    }
}

rt_test! {
    fn scope_cancel() {
        let r = spindle::scope(|s| async move {
            drop(s.spawn(Gate::new().wait()));
            s.cancel();
            Gate::new().wait().await;
        })
        .await;
        assert!(r.unwrap_err().is_cancelled());
    }
}

rt_test! {
    fn join_all_race_when_n() {
        let hs: Vec<_> = (0..50u32).map(|i| spindle::spawn(async move { i * 2 })).collect();
        let outs: Vec<u32> = spindle::join_all(hs).await.into_iter().map(Result::unwrap).collect();
        assert_eq!(outs, (0..50).map(|i| i * 2).collect::<Vec<_>>());

        let drops = DropCounter::new();
        let t = drops.track();
        let slow: std::pin::Pin<Box<dyn std::future::Future<Output = u32> + Send>> = Box::pin(async move {
            let _t = t;
            Gate::new().wait().await;
            0
        });
        let fast: std::pin::Pin<Box<dyn std::future::Future<Output = u32> + Send>> = Box::pin(async { 9 });
        assert_eq!(spindle::race(vec![slow, fast]).await, Some((1, 9)));
        assert_eq!(drops.drops(), 1, "the loser was dropped");

        let futs: Vec<_> = (0..10u32).map(|i| Box::pin(async move { i })).collect();
        let firsts = spindle::when_n(3, futs).await;
        assert_eq!(firsts.len(), 3);
        assert!(spindle::race(Vec::<std::future::Ready<u8>>::new()).await.is_none());
    }
}

rt_test! {
    fn a_scope_cancelled_after_its_body_finished_is_cancelled() {
        let gate = Gate::new();
        let g = gate.clone();
        let r = spindle::scope(|s| async move {
            let inner = s.clone();
            drop(s.spawn(async move {
                g.wait().await;
                inner.cancel();
                Gate::new().wait().await;
            }));
        });
        let opener = spindle::spawn(async move { gate.open() });
        assert!(r.await.unwrap_err().is_cancelled());
        opener.await.unwrap();
    }
}

rt_test! {
    fn a_child_cancelling_its_scope_in_its_first_poll_goes_too() {
        // The child is not yet listed for cancellation when it cancels: it
        // must see the flag when it lists itself at its first suspension.
        let drops = DropCounter::new();
        let t = drops.track();
        let r = spindle::time::timeout(
            common::patience(),
            spindle::scope(|s| async move {
                let inner = s.clone();
                drop(s.spawn(async move {
                    let _t = t;
                    inner.cancel();
                    Gate::new().wait().await;
                }));
            }),
        )
        .await
        .expect("the scope returned");
        assert!(r.unwrap_err().is_cancelled());
        assert_eq!(drops.drops(), 1);
    }
}

rt_test! {
    fn a_child_spawned_into_a_cancelled_scope_never_runs_its_future() {
        let drops = DropCounter::new();
        let t = drops.track();
        let (child, polls) = counted(async move {
            let _t = t;
        });
        let r = spindle::scope(|s| async move {
            s.cancel();
            let h = s.spawn(child);
            assert!(h.await.unwrap_err().is_cancelled());
        })
        .await;
        assert!(r.unwrap_err().is_cancelled());
        assert_eq!(polls.load(SeqCst), 0, "the child's future was never polled");
        assert_eq!(drops.drops(), 1, "and was dropped");
    }
}

rt_test! {
    fn dropping_a_scope_cancels_queued_parked_and_finished_children_alike() {
        let drops = DropCounter::new();
        let d = drops.clone();
        let n = 40;
        let started = Arc::new(AtomicUsize::new(0));
        let st = started.clone();
        let scope = spindle::spawn(spindle::scope(move |s| async move {
            for i in 0..n {
                let t = d.track();
                let st = st.clone();
                drop(s.spawn(async move {
                    let _t = t;
                    st.fetch_add(1, SeqCst);
                    if i % 2 == 0 {
                        Gate::new().wait().await; // parked for good
                    }
                }));
            }
            Gate::new().wait().await;
        }));
        common::until(|| started.load(SeqCst) >= n / 2).await;
        scope.abort();
        assert!(scope.await.unwrap_err().is_cancelled());
        common::until(|| drops.drops() == n).await;
        assert_eq!(drops.drops(), n, "every child dropped once");
    }
}

rt_test! {
    fn race_over_abort_on_drop_handles_cancels_losing_tasks() {
        let drops = DropCounter::new();
        let t = drops.track();
        let loser = spindle::spawn(async move {
            let _t = t;
            Gate::new().wait().await;
            1
        })
        .abort_on_drop();
        let winner = spindle::spawn(async { 2 }).abort_on_drop();
        let (i, v) = spindle::race(vec![loser, winner]).await.unwrap();
        assert_eq!((i, v.unwrap()), (1, 2));
        common::until(|| drops.drops() == 1).await;
        assert_eq!(drops.drops(), 1);
    }
}

rt_test! {
    fn cancellation_tokens() {
        let root = CancellationToken::new();
        let child = root.child_token();
        let grandchild = child.child_token();
        let waiters: Vec<_> = (0..10)
            .map(|_| {
                let g = grandchild.clone();
                spindle::spawn(async move { g.cancelled().await })
            })
            .collect();
        let c2 = child.clone();
        let r = spindle::spawn(async move { c2.run_until_cancelled(Gate::new().wait()).await });
        spindle::yield_now().await;
        assert!(!grandchild.is_cancelled());
        root.cancel();
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(r.await.unwrap(), None);
        assert!(root.child_token().is_cancelled(), "a child of a cancelled token is born cancelled");
        let independent = CancellationToken::new();
        let c = independent.child_token();
        c.cancel();
        assert!(!independent.is_cancelled(), "children don't cancel parents");
    }
}

rt_test! {
    fn block_on_inside_the_runtime_panics_clearly() {
        let err = spindle::spawn(async {
            let rt = spindle::Builder::new_current_thread().build().unwrap();
            rt.block_on(async {});
        })
        .await
        .unwrap_err();
        let msg = err.panic_message().unwrap().to_string();
        assert!(msg.contains("block_on") && msg.contains("inside a spindle runtime"), "{msg}");
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
        // Each task holds its own runtime (`sched/hook.rs`): spawned through
        // another runtime's handle from this one's worker, run there, and
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
    fn metrics_count_polls_and_spawns() {
        let handle = spindle::Handle::current();
        let before = handle.metrics();
        let hs: Vec<_> = (0..100).map(|_| spindle::spawn(async {})).collect();
        for h in hs {
            h.await.unwrap();
        }
        let after = handle.metrics();
        assert!(after.total(|w| w.polls) >= before.total(|w| w.polls) + 100);
        assert!(after.total(|w| w.spawns) + after.remote_schedules >= before.total(|w| w.spawns) + 100);
    }
}

#[test]
fn spawn_outside_a_runtime_panics_with_advice() {
    let err = std::panic::catch_unwind(|| drop(spindle::spawn(async {}))).unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains("Runtime::block_on") && msg.contains("Handle"),
        "{msg}"
    );
}

#[test]
fn zero_workers_is_an_error_that_says_so() {
    let err = spindle::Builder::new_multi_thread()
        .workers(0)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("workers(0)"), "{err}");
}

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

#[spindle::test]
async fn the_test_macro_runs_on_a_current_thread_runtime() {
    assert_eq!(
        spindle::Handle::current().metrics().flavor,
        "current_thread"
    );
    assert_eq!(spindle::spawn(async { 1 }).await.unwrap(), 1);
}

#[spindle::test(flavor = "multi_thread", workers = 3)]
async fn the_test_macro_takes_a_worker_count() {
    let m = spindle::Handle::current().metrics();
    assert_eq!((m.flavor, m.workers.len()), ("multi_thread", 3));
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

#[test]
fn spawn_tracking_registers_tasks_at_spawn_and_lets_go_when_they_finish() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .track_spawns(true)
        .build()
        .unwrap();
    let gate = Gate::new();
    let n = common::scaled(200) as u64;
    let (g, h) = (gate.clone(), rt.handle().clone());
    let total = rt.block_on(async move {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let g = g.clone();
                h.spawn(async move {
                    g.wait().await; // idle once, then finish
                    i
                })
            })
            .collect();
        // Every task is registered from its spawn on, waiting or not.
        assert_eq!(
            spindle::Handle::current().metrics().registered_tasks,
            n as usize
        );
        g.open();
        let mut total = 0;
        for h in handles {
            total += h.await.unwrap();
        }
        total
    });
    assert_eq!(total, n * (n - 1) / 2);
    assert_eq!(rt.metrics().registered_tasks, 0);
    drop(gate);
}

#[test]
fn a_ping_pong_pair_does_not_starve_a_task_queued_behind_it() {
    // One worker: the pair wakes each other through the LIFO slot forever;
    // only the cap on consecutive LIFO polls lets the third task run and
    // stop them. Without it this never finishes (the thread below reports).
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = spindle::Builder::new_multi_thread()
            .workers(1)
            .handoff_after(None)
            .build()
            .unwrap();
        let rounds = rt.block_on(async {
            let stop = Arc::new(AtomicBool::new(false));
            let (to_b, from_a) = spindle::chan::rendezvous::<u64>();
            let (to_a, from_b) = spindle::chan::rendezvous::<u64>();
            let s = stop.clone();
            let a = spindle::spawn(async move {
                let mut rounds = 0u64;
                while !s.load(SeqCst) {
                    to_b.send(rounds).await.unwrap();
                    rounds = from_b.recv().await.unwrap() + 1;
                }
                rounds
            });
            let b = spindle::spawn(async move {
                while let Ok(v) = from_a.recv().await {
                    if to_a.send(v).await.is_err() {
                        break;
                    }
                }
            });
            drop(spindle::spawn(async move { stop.store(true, SeqCst) }));
            let rounds = a.await.unwrap();
            b.await.unwrap();
            rounds
        });
        let _ = done_tx.send(rounds);
    });
    let rounds = done_rx
        .recv_timeout(4 * common::patience())
        .expect("the task behind the ping-pong pair never ran");
    assert!(rounds >= 1);
}

#[test]
#[cfg_attr(miri, ignore = "a scheduling-policy check, not a memory one")]
fn a_lone_ping_pong_pair_stays_on_one_worker() {
    // Each time the pair hits the cap on LIFO polls, the capped task goes to
    // the back of an otherwise empty ring: it is the worker's next task, and
    // waking the idle worker would only get it stolen, splitting the pair
    // across cores (Tokio wakes one there, and so did this scheduler).
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .handoff_after(None)
        .build()
        .unwrap();
    let rounds = 20_000u64;
    let sum = rt.block_on(async move {
        let (to_b, from_a) = spindle::chan::rendezvous::<u64>();
        let (to_a, from_b) = spindle::chan::rendezvous::<u64>();
        let b = spindle::spawn(async move {
            while let Ok(v) = from_a.recv().await {
                to_a.send(v).await.unwrap();
            }
        });
        let a = spindle::spawn(async move {
            let mut sum = 0;
            for i in 0..rounds {
                to_b.send(i).await.unwrap();
                sum += from_b.recv().await.unwrap();
            }
            sum
        });
        let sum = a.await.unwrap();
        b.await.unwrap();
        sum
    });
    assert_eq!(sum, rounds * (rounds - 1) / 2);
    // ~2,500 cap events (two polls per round trip, cap 16); when each woke
    // the other worker, 21-55 moves in ten runs (its steals of the capped
    // task) and a fifth to a half of the polls ran there; now 2 (the
    // spawns, taken from the injector). Counted are the moves, not where
    // the polls ran: a worker still searching when the pair starts may steal
    // it once (seen under CPU load: 3 moves), and then the pair lives there.
    let workers = rt.metrics().workers;
    let moves: u64 = workers
        .iter()
        .map(|w| w.steal_operations + w.injector_pops)
        .sum();
    let polls: Vec<u64> = workers.iter().map(|w| w.polls).collect();
    assert!(
        moves <= 6,
        "the pair moved between workers {moves} times (2 are its spawns); polls per worker {polls:?}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "a scheduling-policy check, not a memory one")]
fn workers_told_not_to_yield_before_parking_still_sleep_and_wake_for_a_thread() {
    // `yield_before_park(false)`: the park path without its yield. A plain
    // thread feeds a task with pauses long enough for the workers to park
    // between messages; every message must still be received.
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .yield_before_park(false)
        .build()
        .unwrap();
    let (tx, rx) = spindle::chan::bounded::<u64>(4);
    let feeder = std::thread::spawn(move || {
        for i in 0..50 {
            std::thread::sleep(Duration::from_micros(200));
            tx.send_blocking(i).unwrap();
        }
    });
    let receiver = rt.spawn(async move {
        let mut sum = 0;
        while let Ok(v) = rx.recv().await {
            sum += v;
        }
        sum
    });
    let sum = rt.block_on(receiver).unwrap();
    feeder.join().unwrap();
    assert_eq!(sum, 50 * 49 / 2);
    let parks: u64 = rt.metrics().workers.iter().map(|w| w.parks).sum();
    assert!(
        parks >= 25,
        "{parks} parks: the workers did not sleep between messages"
    );
}

/// A task yielding inside a `join_all` of over 32 futures (each polled with
/// its own waker) gives the other tasks of its worker their turn: each
/// future is polled once per poll of the group. (Were a future that wakes
/// itself polled again at once, this test would hang on the current-thread
/// and one-worker flavours.)
#[test]
fn yielding_inside_a_large_join_all_lets_other_tasks_run() {
    for (name, rt) in common::flavours() {
        let (done, finished) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            rt.block_on(async {
                let flag = Arc::new(AtomicBool::new(false));
                let f = flag.clone();
                drop(spindle::spawn(async move { f.store(true, SeqCst) }));
                spindle::join_all((0..33).map(|_| {
                    let flag = flag.clone();
                    async move {
                        while !flag.load(SeqCst) {
                            spindle::yield_now().await;
                        }
                    }
                }))
                .await;
            });
            let _ = done.send(());
        });
        finished
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{name}: the group never let the flag's task run"));
        t.join().unwrap();
    }
}

rt_test! {
    /// A task's unread output (its handle dropped) is dropped by the worker
    /// that completes it; a panic in that drop stays there: the runtime
    /// goes on running tasks.
    fn a_panic_dropping_an_unread_output_stays_in_its_task() {
        struct Bomb;
        impl Drop for Bomb {
            fn drop(&mut self) {
                panic!("the output's drop panicked");
            }
        }
        let gate = Gate::new();
        let g = gate.clone();
        let h = spindle::spawn(async move {
            g.wait().await;
            Bomb
        });
        drop(h);
        gate.open();
        for i in 0..100u32 {
            assert_eq!(spindle::spawn(async move { i }).await.unwrap(), i);
        }
    }
}

rt_test! {
    /// A foreign executor's waker on a `JoinHandle` is woken by the worker
    /// that completes the task; a panic in that wake stays there, and the
    /// output is still there to read.
    fn a_join_waker_that_panics_does_not_take_the_worker_down() {
        use std::future::Future;
        use std::pin::Pin;
        use std::task::{Context, Poll, Wake, Waker};
        struct PanicWake;
        impl Wake for PanicWake {
            fn wake(self: Arc<Self>) {
                panic!("the foreign waker panicked");
            }
        }
        let gate = Gate::new();
        let g = gate.clone();
        let mut h = spindle::spawn(async move {
            g.wait().await;
            7u32
        });
        let w = Waker::from(Arc::new(PanicWake));
        assert!(Pin::new(&mut h).poll(&mut Context::from_waker(&w)).is_pending());
        gate.open();
        common::until(|| h.is_finished()).await;
        let noop = Context::from_waker(Waker::noop());
        assert!(matches!(Pin::new(&mut h).poll(&mut { noop }), Poll::Ready(Ok(7))));
        for i in 0..100u32 {
            assert_eq!(spindle::spawn(async move { i }).await.unwrap(), i);
        }
    }
}

/// `block_on` is refused only where it would stall tasks (a worker, another
/// `block_on`), not inside `Runtime::enter` or a blocking job, whose
/// threads merely know their runtime.
#[test]
fn block_on_inside_enter_or_a_blocking_job_runs() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    {
        let _entered = rt.enter();
        assert_eq!(rt.block_on(async { 5 }), 5);
    }
    let other = spindle::Builder::new_current_thread().build().unwrap();
    let job = rt
        .handle()
        .spawn_blocking(move || other.block_on(async { 7 }));
    assert_eq!(rt.block_on(job).unwrap(), 7);
    let nested = rt.block_on(async {
        std::panic::catch_unwind(|| {
            let inner = spindle::Builder::new_current_thread().build().unwrap();
            inner.block_on(async {})
        })
    });
    assert!(nested.is_err(), "a block_on inside a block_on is refused");
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
