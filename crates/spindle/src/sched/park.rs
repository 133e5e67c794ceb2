//! Parking a thread until it is notified, and `block_on` for a plain thread.
//!
//! `Parker` is a flag under a mutex with a condvar: `unpark` before `park`
//! is remembered (the flag), so a notification is never lost however the two
//! interleave; `park` consumes it.

use crate::loom::{lock, Arc, Condvar, Mutex};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};

#[derive(Default)]
pub(crate) struct Parker {
    notified: Mutex<bool>,
    cv: Condvar,
}

impl Parker {
    pub(crate) fn new() -> Parker {
        Parker {
            notified: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// Blocks until notified (returns at once if a notification is pending).
    pub(crate) fn park(&self) {
        let mut n = lock(&self.notified);
        while !*n {
            n = self.cv.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n = false;
    }

    pub(crate) fn unpark(&self) {
        let mut n = lock(&self.notified);
        if !*n {
            *n = true;
            self.cv.notify_one();
        }
    }
}

struct ThreadWaker(Parker);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` to completion on this thread, parking while it is pending.
#[cfg(not(loom))]
pub(crate) fn block_on_thread<F: Future>(fut: F) -> F::Output {
    let parker = Arc::new(ThreadWaker(Parker::new()));
    let waker = Waker::from(parker.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        parker.0.park();
    }
}
