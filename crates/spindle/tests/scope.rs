//! Structured concurrency with `scope` and `try_scope`, on every scheduler
//! flavour through `rt_test!`: a scope waits for every child (spawned from
//! its body or from an inner scope's), scopes nest hundreds deep, a child's
//! panic or error cancels the siblings and reaches the caller, cancellation
//! reaches children however far they got (queued, parked, not yet listed,
//! finished), and the units a body takes ahead for its spawns are all
//! given back.

mod common;

use common::{counted, DropCounter, Gate};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

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
