//! Building and entering a runtime: a builder error that names its
//! setting, `spawn` outside a runtime and `block_on` where it would stall
//! tasks refused with advice, `block_on` allowed inside `Runtime::enter`
//! and a blocking job, and `#[spindle::test]`'s runtimes.

mod common;

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
