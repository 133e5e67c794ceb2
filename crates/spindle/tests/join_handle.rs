//! What a `JoinHandle` does besides giving the output, on every scheduler
//! flavour through `rt_test!`: a task's panic reaches it as a `JoinError`
//! and the runtime goes on; dropping it detaches the task and lets go of
//! the waker it was polled with; a panic dropping an unread output, or in
//! a foreign waker on the handle, stays in the task's worker.

mod common;

use common::Gate;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

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
