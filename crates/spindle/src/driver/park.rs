//! Parking a thread until it is notified, and `block_on` for a plain thread.
//!
//! `Parker` state machine (one `AtomicUsize`):
//!
//! ```text
//! EMPTY    --park-->   PARKED (under the mutex, then waits on the condvar)
//! EMPTY    --park_on_driver--> PARKED_DRIVER (then blocks in the driver)
//! EMPTY    --unpark--> NOTIFIED          (no lock, no syscall)
//! PARKED   --unpark--> NOTIFIED + lock/unlock + notify_one
//! PARKED_DRIVER --unpark--> NOTIFIED + driver.notify() (sticky)
//! NOTIFIED --park-->   EMPTY             (returns at once)
//! ```
//!
//! A thread leaves PARKED_DRIVER by itself (an I/O event, a timer, or the
//! notify), swapping the state back to EMPTY.
//!
//! A notification is never lost: `unpark` always leaves NOTIFIED, and `park`
//! only sleeps after moving EMPTY to PARKED under the mutex, which `unpark`
//! takes (and releases) before signalling, so the signal cannot fall between
//! the sleeper's check and its wait. `unpark` on a thread that is not parked
//! costs one atomic swap.

use super::{Driver, DriverGuard};
use crate::loom::{lock, Arc, AtomicUsize, Condvar, Mutex, Ordering::SeqCst};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;
const PARKED_DRIVER: usize = 3;

pub(crate) struct Parker {
    state: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
    /// The driver this thread may park on (`park_on_driver`).
    driver: Option<Arc<Driver>>,
}

impl Parker {
    pub(crate) fn new() -> Parker {
        Parker {
            state: AtomicUsize::new(EMPTY),
            lock: Mutex::new(()),
            cv: Condvar::new(),
            driver: None,
        }
    }

    pub(crate) fn with_driver(driver: Arc<Driver>) -> Parker {
        Parker {
            driver: Some(driver),
            ..Parker::new()
        }
    }

    /// Blocks in the driver (whose lock the caller holds) until notified, an
    /// I/O event or the next timer. Returns at once if a notification is
    /// pending; may return spuriously (the caller re-checks for work).
    pub(crate) fn park_on_driver(&self, driver: &DriverGuard<'_>) {
        match self
            .state
            .compare_exchange(EMPTY, PARKED_DRIVER, SeqCst, SeqCst)
        {
            Ok(_) => {}
            Err(NOTIFIED) => {
                self.state.store(EMPTY, SeqCst);
                return;
            }
            Err(s) => unreachable!("parker in state {s} while parking"),
        }
        // An unpark from here on sees PARKED_DRIVER and notifies the driver,
        // which is sticky: `wait` returns at once if it came first.
        driver.wait();
        self.state.swap(EMPTY, SeqCst);
    }

    /// Blocks until notified.
    pub(crate) fn park(&self) {
        self.park_timeout(None);
    }

    /// Blocks until notified or `timeout` passes (`None`: no limit); returns
    /// at once if a notification is pending.
    pub(crate) fn park_timeout(&self, timeout: Option<Duration>) {
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
        let deadline = timeout.and_then(|t| std::time::Instant::now().checked_add(t));
        loop {
            guard = match deadline {
                None => self.cv.wait(guard).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        // Timed out: back to EMPTY (a notification that
                        // raced the timeout is consumed: we return anyway).
                        self.state.swap(EMPTY, SeqCst);
                        return;
                    }
                    self.cv
                        .wait_timeout(guard, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
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
            PARKED_DRIVER => self
                .driver
                .as_ref()
                .expect("parked on a driver it does not have")
                .notify(),
            s => unreachable!("parker in state {s}"),
        }
    }
}

impl Parker {
    /// Whether an unpark is pending (the next park would return at once).
    pub(crate) fn has_notification(&self) -> bool {
        self.state.load(SeqCst) == NOTIFIED
    }
}

#[cfg(all(test, loom))]
impl Parker {
    /// Consumes a pending notification (models check one was sent).
    pub(crate) fn take_notification(&self) -> bool {
        self.state
            .compare_exchange(NOTIFIED, EMPTY, SeqCst, SeqCst)
            .is_ok()
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
