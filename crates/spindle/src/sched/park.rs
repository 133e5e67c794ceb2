//! Parking a thread until it is notified, and `block_on` for a plain thread.
//!
//! `Parker` state machine (one `AtomicUsize`):
//!
//! ```text
//! EMPTY    --park-->   PARKED (under the mutex, then waits on the condvar)
//! EMPTY    --unpark--> NOTIFIED          (no lock, no syscall)
//! PARKED   --unpark--> NOTIFIED + lock/unlock + notify_one
//! NOTIFIED --park-->   EMPTY             (returns at once)
//! ```
//!
//! A notification is never lost: `unpark` always leaves NOTIFIED, and `park`
//! only sleeps after moving EMPTY to PARKED under the mutex, which `unpark`
//! takes (and releases) before signalling, so the signal cannot fall between
//! the sleeper's check and its wait. `unpark` on a thread that is not parked
//! costs one atomic swap.

use crate::loom::{lock, AtomicUsize, Condvar, Mutex, Ordering::SeqCst};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;

pub(crate) struct Parker {
    state: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Parker {
    pub(crate) fn new() -> Parker {
        Parker {
            state: AtomicUsize::new(EMPTY),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Blocks until notified (returns at once if a notification is pending).
    pub(crate) fn park(&self) {
        // SeqCst throughout: the state word is also read by the idle
        // protocol's reasoning (docs/sleep-wake.md); parking is not hot.
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, SeqCst, SeqCst)
            .is_ok()
        {
            return;
        }
        let mut guard = lock(&self.lock);
        match self.state.compare_exchange(EMPTY, PARKED, SeqCst, SeqCst) {
            Ok(_) => {}
            Err(NOTIFIED) => {
                self.state.store(EMPTY, SeqCst);
                return;
            }
            Err(s) => unreachable!("parker in state {s} while parking"),
        }
        loop {
            guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
            if self
                .state
                .compare_exchange(NOTIFIED, EMPTY, SeqCst, SeqCst)
                .is_ok()
            {
                return; // a real notification (not a spurious wake-up)
            }
        }
    }

    pub(crate) fn unpark(&self) {
        match self.state.swap(NOTIFIED, SeqCst) {
            EMPTY | NOTIFIED => {}
            PARKED => {
                // Taking the lock orders this signal after the sleeper's
                // wait began (it holds the lock from PARKED until it waits).
                drop(lock(&self.lock));
                self.cv.notify_one();
            }
            s => unreachable!("parker in state {s}"),
        }
    }
}

/// `Waker::from` needs `std::sync::Arc`, also under loom.
struct ThreadWaker(Parker);

impl Wake for ThreadWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `fut` to completion on this thread, parking while it is pending.
pub(crate) fn block_on_thread<F: Future>(fut: F) -> F::Output {
    let parker = std::sync::Arc::new(ThreadWaker(Parker::new()));
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
