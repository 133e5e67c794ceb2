//! What the channel loom models share: a loom-aware `block_on` and the
//! model builder with the suite's default preemption bound.

/// A loom-aware executor for the select models: polls on this loom thread,
/// parking on a loom condvar between polls.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    use loom::sync::{Condvar, Mutex};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct P(Mutex<bool>, Condvar);
    impl Wake for P {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            *self.0.lock().unwrap() = true;
            self.1.notify_one();
        }
    }
    let p = Arc::new(P(Mutex::new(false), Condvar::new()));
    let w = Waker::from(p.clone());
    let mut cx = Context::from_waker(&w);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        let mut g = p.0.lock().unwrap();
        while !*g {
            g = p.1.wait(g).unwrap();
        }
        *g = false;
    }
}

/// Every interleaving up to `LOOM_MAX_PREEMPTIONS` (2 when unset).
pub fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(f);
}

/// Every interleaving with at most `bound` preemptions, whatever
/// `LOOM_MAX_PREEMPTIONS` says: for models with three threads that spin on
/// each other's claims, where the suite's bound of 2 runs for most of an
/// hour.
#[allow(dead_code, reason = "each model file uses what it needs")]
pub fn model_with_bound(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.check(f);
}
