//! `task::Id`, `task::id()` / `try_id()` and the handles' `id()`, on every
//! scheduler flavour through `rt_test!`: a task sees the id its handles
//! show, tasks alive together have different ids, a child run inline sees
//! its own and its parent gets its own back, a blocking closure is a task
//! of the pool (as in Tokio), and code that is not a task has none. A
//! `JoinError` names the task that failed, and a `JoinSet` says which task
//! each output came from.

mod common;

use common::Gate;
use std::collections::HashSet;

rt_test! {
    fn a_task_sees_the_id_its_handles_show() {
        let h = spindle::spawn(async { spindle::task::id() });
        let (id, abort_id) = (h.id(), h.abort_handle().id());
        assert_eq!(id, abort_id);
        assert_eq!(h.await.unwrap(), id);
    }
}

rt_test! {
    fn the_id_stays_on_the_handle_after_the_output_is_taken() {
        let mut h = spindle::spawn(async { 1 });
        let id = h.id();
        assert_eq!((&mut h).await.unwrap(), 1);
        assert_eq!(h.id(), id);
        let abort = h.abort_handle();
        assert_eq!(abort.id(), id);
        assert!(abort.is_finished());
        assert!(h.is_finished());
    }
}

rt_test! {
    fn tasks_alive_together_have_different_ids() {
        let gate = Gate::new();
        let handles: Vec<_> = (0..100)
            .map(|_| {
                let gate = gate.clone();
                spindle::spawn(async move {
                    let before = spindle::task::id();
                    gate.wait().await;
                    assert_eq!(spindle::task::id(), before, "the id survives an await");
                    before
                })
            })
            .collect();
        let ids: HashSet<_> = handles.iter().map(|h| h.id()).collect();
        assert_eq!(ids.len(), 100);
        gate.open();
        for h in handles {
            let id = h.id();
            assert_eq!(h.await.unwrap(), id);
        }
    }
}

rt_test! {
    fn a_child_run_inline_sees_its_own_id_and_the_parent_gets_its_back() {
        let outer = spindle::spawn(async {
            let me = spindle::task::id();
            let child = spindle::fork(async { spindle::task::id() });
            let child_id = child.into_handle();
            let expected = child_id.id();
            let seen = child_id.join_here().await.unwrap();
            assert_eq!(seen, expected);
            assert_ne!(seen, me);
            assert_eq!(spindle::task::id(), me);
        });
        outer.await.unwrap();
    }
}

rt_test! {
    fn a_join_error_names_the_task_that_failed() {
        let panicked = spindle::spawn(async { panic!("on purpose") });
        let id = panicked.id();
        let err = panicked.await.unwrap_err();
        assert!(err.is_panic());
        assert_eq!(err.id(), id);
        assert_eq!(err.to_string(), format!("task {id} panicked: on purpose"));

        let gate = Gate::new();
        let waiting = gate.clone();
        let aborted = spindle::spawn(async move { waiting.wait().await });
        let id = aborted.id();
        aborted.abort();
        let err = aborted.await.unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(err.id(), id);
        assert_eq!(err.to_string(), format!("task {id} was cancelled"));
        // The id stays with the error when `try_into_panic` gives it back.
        assert_eq!(err.try_into_panic().unwrap_err().id(), id);
    }
}

rt_test! {
    fn a_child_that_fails_inline_is_named_too() {
        let outer = spindle::spawn(async {
            let child = spindle::fork(async { panic!("inline") });
            let id = child.into_handle();
            let expected = id.id();
            let err = id.join_here().await.unwrap_err();
            assert_eq!(err.id(), expected);
        });
        outer.await.unwrap();
    }
}

rt_test! {
    fn a_join_set_says_which_task_each_output_came_from() {
        let mut set = spindle::JoinSet::new();
        let mut ids = Vec::new();
        for i in 0..20u32 {
            let abort = set.spawn(async move {
                if i == 7 {
                    panic!("task seven");
                }
                (spindle::task::id(), i)
            });
            ids.push(abort.id());
        }
        let mut seen = HashSet::new();
        while let Some(out) = set.join_next_with_id().await {
            match out {
                Ok((id, (inside, i))) => {
                    assert_eq!(id, inside, "the id is the task's own");
                    assert_eq!(id, ids[i as usize]);
                    assert!(seen.insert(i));
                }
                Err(e) => {
                    assert_eq!(e.id(), ids[7]);
                    assert!(seen.insert(7));
                }
            }
        }
        assert_eq!(seen.len(), 20);

        let mut set = spindle::JoinSet::new();
        let done = set.spawn(async { 5 });
        let mut out = None;
        while out.is_none() {
            spindle::yield_now().await;
            out = set.try_join_next_with_id();
        }
        assert_eq!(out.unwrap().unwrap(), (done.id(), 5));
    }
}

#[test]
fn a_scope_error_names_the_child_that_panicked() {
    let rt = spindle::Runtime::new().unwrap();
    rt.block_on(async {
        let (tx, rx) = std::sync::mpsc::channel();
        let err = spindle::scope(|s| async move {
            let h = s.spawn(async { panic!("child") });
            tx.send(h.id()).unwrap();
        })
        .await
        .unwrap_err();
        assert!(err.is_panic());
        assert_eq!(err.id(), rx.recv().unwrap());

        let (tx, rx) = std::sync::mpsc::channel();
        let gate = Gate::new();
        let err = spindle::scope(|s| async move {
            let waiting = gate.clone();
            let h = s.spawn(async move { waiting.wait().await });
            tx.send(h.id()).unwrap();
            s.cancel();
        })
        .await
        .unwrap_err();
        assert!(err.is_cancelled());
        assert_ne!(err.id(), rx.recv().unwrap(), "no child caused the cancel");
    });
}

#[test]
fn block_on_is_not_a_task_and_a_blocking_closure_is() {
    let runtimes = [
        spindle::Builder::new_multi_thread()
            .workers(2)
            .build()
            .unwrap(),
        spindle::Builder::new_current_thread().build().unwrap(),
    ];
    for rt in runtimes {
        rt.block_on(async {
            assert_eq!(spindle::task::try_id(), None);
            // A blocking closure runs as a task of the pool, as in Tokio.
            let blocking = spindle::spawn_blocking(spindle::task::try_id);
            let id = blocking.id();
            assert_eq!(blocking.await.unwrap(), Some(id));
        });
    }
    let err = std::panic::catch_unwind(spindle::task::id).unwrap_err();
    let msg = err.downcast_ref::<&str>().map(|s| s.to_string());
    let msg = msg
        .or_else(|| err.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(msg.contains("outside a task"), "{msg}");
}

#[test]
fn a_local_task_has_its_own_id() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let set = spindle::LocalSet::new();
    set.block_on(&rt, async {
        let h = spindle::spawn_local(async { spindle::task::try_id() });
        let id = h.id();
        assert_eq!(h.await.unwrap(), Some(id));
        let failed = spindle::spawn_local(async { panic!("local") });
        let id = failed.id();
        assert_eq!(failed.await.unwrap_err().id(), id);
        assert_eq!(
            spindle::task::try_id(),
            None,
            "run_until's future is not a task"
        );
    });
}

#[test]
fn an_id_reads_as_the_runtime_reports_write_a_task() {
    let rt = spindle::Runtime::new().unwrap();
    let id = rt.block_on(async { spindle::spawn(async {}).id() });
    let text = id.to_string();
    assert!(text.starts_with("0x"), "{text}");
    assert_eq!(format!("{id:?}"), format!("Id({text})"));
}
