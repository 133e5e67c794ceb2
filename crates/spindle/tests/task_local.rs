//! `task_local!`: values scoped to a future, following it across workers,
//! restored on panic, seen by the future's destructors, not inherited by
//! spawned tasks.

use spindle::task::{AccessError, LocalKey};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

spindle::task_local! {
    static ID: u64;
    /// A key with attributes and a non-`Copy` value.
    pub(crate) static NAME: String;
}

fn runtime() -> spindle::Runtime {
    spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap()
}

#[test]
fn each_task_sees_its_own_value_across_yields_and_workers() {
    let tasks = if cfg!(miri) { 4 } else { 200 };
    runtime().block_on(async move {
        let handles: Vec<_> = (0..tasks)
            .map(|i| {
                spindle::spawn(ID.scope(i, async move {
                    for _ in 0..20 {
                        spindle::yield_now().await;
                        assert_eq!(ID.get(), i);
                    }
                    ID.get()
                }))
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.await.unwrap(), i as u64);
        }
    });
}

#[test]
fn outside_every_scope_try_with_fails_and_names_the_key() {
    let e: AccessError = ID.try_with(|_| ()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("`ID`") && msg.contains("scope"), "{msg}");
    let panic = std::panic::catch_unwind(|| ID.get()).unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert!(text.contains("`ID`"), "{text}");
}

#[test]
fn nested_scopes_stack_and_unwind_in_order() {
    spindle::Runtime::new().unwrap().block_on(async {
        let seen = ID
            .scope(1, async {
                let inner = ID.scope(2, async { ID.get() }).await;
                (inner, ID.get())
            })
            .await;
        assert_eq!(seen, (2, 1));
        assert!(ID.try_with(|_| ()).is_err());
    });
    let v = ID.sync_scope(3, || ID.sync_scope(4, || ID.get()) + ID.get());
    assert_eq!(v, 7);
}

#[test]
fn a_panicking_poll_puts_the_value_back() {
    let fut = NAME.scope("outer".to_string(), async {
        NAME.with(|n| assert_eq!(n, "outer"));
        panic!("boom");
    });
    let mut fut = pin!(fut);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    }));
    assert!(caught.is_err());
    assert!(
        NAME.try_with(|_| ()).is_err(),
        "the value leaked to the thread"
    );
    assert_eq!(fut.as_mut().take_value().as_deref(), Some("outer"));
}

/// Reads `ID` in its destructor.
struct ReadsOnDrop(std::sync::Arc<std::sync::Mutex<Option<u64>>>);

impl Drop for ReadsOnDrop {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = ID.try_with(|v| *v).ok();
    }
}

#[test]
fn a_dropped_scope_drops_its_future_with_the_value_set() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let guard = ReadsOnDrop(seen.clone());
    let fut = ID.scope(9, async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    let mut fut = Box::pin(fut);
    assert!(fut
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending());
    drop(fut);
    assert_eq!(*seen.lock().unwrap(), Some(9));
    assert!(ID.try_with(|_| ()).is_err());
}

#[test]
fn a_spawned_task_does_not_inherit_the_value() {
    runtime().block_on(ID.scope(5, async {
        let child = spindle::spawn(async { ID.try_with(|v| *v).is_err() });
        assert!(
            child.await.unwrap(),
            "a spawned task saw its parent's value"
        );
        assert_eq!(ID.get(), 5);
    }));
}

#[test]
fn keys_are_independent_and_debug_names_them() {
    let both = ID.sync_scope(1, || NAME.sync_scope("n".into(), || (ID.get(), NAME.get())));
    assert_eq!(both, (1, "n".to_string()));
    let key: &'static LocalKey<u64> = &ID;
    assert!(format!("{key:?}").contains("ID"));
    let ready = ID.scope(2, std::future::ready(1));
    assert!(format!("{ready:?}").contains("value: Some(2)"));
}

#[test]
fn polled_after_completion_panics_with_a_message() {
    let mut fut = pin!(ID.scope(1, std::future::ready(())));
    let mut cx = Context::from_waker(Waker::noop());
    assert_eq!(fut.as_mut().poll(&mut cx), Poll::Ready(()));
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = fut.as_mut().poll(&mut cx);
    }));
    let text = again.unwrap_err();
    let text = text.downcast_ref::<&str>().unwrap();
    assert!(text.contains("after it completed"), "{text}");
}
