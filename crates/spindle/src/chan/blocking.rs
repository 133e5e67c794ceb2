//! Blocking plain OS threads on channel futures.
//!
//! `send_blocking`, `recv_blocking` and the `*_timeout` variants run the very
//! same futures as the async API, polled by [`block_on`] with a [`Waker`] that
//! unparks the calling thread. A channel therefore never needs to know whether
//! its waiter is a task or a thread.
//!
//! # The parker protocol (std's generic parker, with a spin phase)
//! `state` is `EMPTY`, `NOTIFIED` or `PARKED`.
//! - `wake`: `swap(NOTIFIED)`; only if the old state was `PARKED` take the
//!   mutex (which the sleeper holds from setting `PARKED` until it is inside
//!   `Condvar::wait`) and `notify_one`. A wake with nobody asleep costs one
//!   atomic swap.
//! - `park`: first spin a little, consuming `NOTIFIED` with a CAS (a peer
//!   that answers within microseconds is caught without a syscall); then,
//!   under the mutex, CAS `EMPTY → PARKED` (failing means `NOTIFIED`: consume
//!   it and return) and wait until a CAS `NOTIFIED → EMPTY` succeeds.
//! - A wake before the park is kept in `NOTIFIED`; several collapse into one
//!   (the future is polled again and re-checks the channel anyway).
//!
//! Ordering: the `swap` in `wake` is Release and the consuming CASes Acquire,
//! so what the waker did before waking is visible to the woken thread (the
//! channels do not rely on it: they re-check under their own protocol).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};
#[cfg(not(loom))]
use std::time::{Duration, Instant};

#[cfg(not(loom))]
use super::error::{RecvError, RecvTimeoutError};

use crate::loom::{lock, spin_loop, AtomicUsize, Condvar, Mutex, MutexGuard, Ordering};

const EMPTY: usize = 0;
const NOTIFIED: usize = 1;
const PARKED: usize = 2;

/// Spin rounds before sleeping (none under loom, where spinning only adds
/// states).
#[cfg(not(loom))]
const SPINS: u32 = 200;
#[cfg(loom)]
const SPINS: u32 = 0;

/// A one-bit semaphore that a [`Waker`] releases and a thread acquires.
#[derive(Debug)]
pub(crate) struct Parker {
    state: AtomicUsize,
    mutex: Mutex<()>,
    cv: Condvar,
}

fn wait<'a>(cv: &Condvar, g: MutexGuard<'a, ()>) -> MutexGuard<'a, ()> {
    match cv.wait(g) {
        Ok(g) => g,
        #[cfg(not(loom))]
        Err(p) => p.into_inner(),
        #[cfg(loom)]
        Err(_) => panic!("poisoned parker"),
    }
}

impl Parker {
    fn new() -> Self {
        Parker {
            state: AtomicUsize::new(EMPTY),
            mutex: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Consumes a pending notification. Acquire: pairs with the Release
    /// swap in `wake_by_ref`.
    fn try_consume(&self) -> bool {
        self.state
            .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    fn spin(&self) -> bool {
        #[allow(clippy::reversed_empty_ranges)]
        for _ in 0..SPINS {
            if self.state.load(Ordering::Relaxed) == NOTIFIED && self.try_consume() {
                return true;
            }
            spin_loop();
        }
        self.try_consume()
    }

    fn park(&self) {
        if self.spin() {
            return;
        }
        let mut g = lock(&self.mutex);
        if self
            .state
            .compare_exchange(EMPTY, PARKED, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            // It was NOTIFIED.
            let ok = self.try_consume();
            debug_assert!(ok);
            return;
        }
        loop {
            g = wait(&self.cv, g);
            if self.try_consume() {
                return;
            }
        }
    }

    /// Parks until woken or `deadline`; returns false on timeout.
    #[cfg(not(loom))]
    fn park_until(&self, deadline: Instant) -> bool {
        if self.spin() {
            return true;
        }
        let mut g = lock(&self.mutex);
        if self
            .state
            .compare_exchange(EMPTY, PARKED, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return self.try_consume();
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                // Withdraw: PARKED → EMPTY, unless a wake got in first.
                return self.state.swap(EMPTY, Ordering::Acquire) == NOTIFIED;
            }
            g = match self.cv.wait_timeout(g, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
            if self.try_consume() {
                return true;
            }
        }
    }
}

impl Wake for Parker {
    fn wake(self: StdArc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        // Release: pairs with the Acquire CAS that consumes the notification.
        if self.state.swap(NOTIFIED, Ordering::Release) == PARKED {
            // The sleeper holds the mutex from setting PARKED until it is
            // inside `wait`: taking it here means the notify cannot fall in
            // between.
            drop(lock(&self.mutex));
            self.cv.notify_one();
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    static PARKER: (StdArc<Parker>, Waker) = {
        let p = StdArc::new(Parker::new());
        let w = Waker::from(p.clone());
        (p, w)
    };
}

#[cfg(not(loom))]
thread_local! {
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs a blocking wait `f` with this thread's parker and its waker, and
/// without a budget (`task::coop`): a thread parked on its own wait has no
/// other task to yield to, and a refusal would only wake it to poll
/// again, refused again (the future a multi-thread `block_on` polls has a
/// budget, and may make blocking calls). Under loom the budget is always
/// unlimited.
fn with_parker<R>(f: impl FnOnce(&Parker, &Waker) -> R) -> R {
    #[cfg(not(loom))]
    {
        // A thread reuses one parker for all its blocking calls: no
        // allocation per call. A stale wake left over from an earlier call
        // only causes one spurious poll.
        /// Leaves a blocking call's nesting level, also when it unwinds.
        struct Leave<'a> {
            waker: &'a Waker,
            depth: usize,
        }
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                DEPTH.with(|d| d.set(d.get() - 1));
                if self.depth > 1 {
                    // A blocking call nested inside a future polled by an
                    // outer one shares the parker and may have consumed a
                    // wake meant for the outer call: leave the flag set
                    // (one spurious poll instead of a lost wake-up).
                    self.waker.wake_by_ref();
                }
            }
        }
        PARKER.with(|(p, w)| {
            let depth = DEPTH.with(|d| {
                d.set(d.get() + 1);
                d.get()
            });
            let _leave = Leave { waker: w, depth };
            crate::task::coop::unlimited(|| f(p, w))
        })
    }
    #[cfg(loom)]
    {
        let p = StdArc::new(Parker::new());
        let w = Waker::from(p.clone());
        f(&p, &w)
    }
}

/// Polls `fut` to completion on the current thread, parking between polls.
pub(crate) fn block_on<F: Future>(mut fut: Pin<&mut F>) -> F::Output {
    with_parker(|p, w| {
        let mut cx = Context::from_waker(w);
        loop {
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return v;
            }
            p.park();
        }
    })
}

/// Like [`block_on`] but gives up at `deadline`, returning `None`; the future
/// is left unfinished for the caller to take apart (e.g. to recover a value).
#[cfg(not(loom))]
pub(crate) fn block_on_until<F: Future>(
    mut fut: Pin<&mut F>,
    deadline: Instant,
) -> Option<F::Output> {
    with_parker(|p, w| {
        let mut cx = Context::from_waker(w);
        loop {
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return Some(v);
            }
            if !p.park_until(deadline) {
                // One last poll: the operation may have become possible at
                // the deadline.
                return match fut.as_mut().poll(&mut cx) {
                    Poll::Ready(v) => Some(v),
                    Poll::Pending => None,
                };
            }
        }
    })
}

/// `now + timeout`, or, where that is past what `Instant` holds (a timeout
/// of `Duration::MAX`, meaning "no limit"), a deadline a century away: the
/// `*_timeout` calls then wait as their plain forms do, where adding it to
/// `Instant::now()` would panic.
#[cfg(not(loom))]
pub(crate) fn deadline_after(timeout: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    let now = Instant::now();
    now.checked_add(timeout).unwrap_or(now + CENTURY)
}

/// A receive with a deadline: `None` is the timeout.
#[cfg(not(loom))]
pub(super) fn timed_recv<T>(got: Option<Result<T, RecvError>>) -> Result<T, RecvTimeoutError> {
    match got {
        Some(Ok(v)) => Ok(v),
        Some(Err(RecvError)) => Err(RecvTimeoutError::Closed),
        None => Err(RecvTimeoutError::Timeout),
    }
}
