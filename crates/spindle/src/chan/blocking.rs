//! Blocking plain OS threads on channel futures.
//!
//! `send_blocking`, `recv_blocking` and the `*_timeout` variants run the very
//! same futures as the async API, polled by [`block_on`] with a [`Waker`] that
//! unparks the calling thread. A channel therefore never needs to know whether
//! its waiter is a task or a thread.
//!
//! # Invariants
//! - `Parker::notified` is set by `wake` and consumed by `park`; a wake that
//!   happens before the park is not lost (the flag stays set), and several
//!   wakes before one park collapse into one (the future is polled again and
//!   re-checks the channel anyway).
//! - The flag is only touched under the parker's mutex; the condvar is only
//!   waited on with that mutex held, so there is no wake-up between the check
//!   and the wait.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};
#[cfg(not(loom))]
use std::time::Instant;

use crate::loom::{lock, Condvar, Mutex};

/// A one-bit semaphore that a [`Waker`] releases and a thread acquires.
#[derive(Debug)]
pub(crate) struct Parker {
    notified: Mutex<bool>,
    cv: Condvar,
}

impl Parker {
    fn new() -> Self {
        Parker {
            notified: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    fn park(&self) {
        let mut n = lock(&self.notified);
        while !*n {
            n = match self.cv.wait(n) {
                Ok(g) => g,
                #[cfg(not(loom))]
                Err(p) => p.into_inner(),
                #[cfg(loom)]
                Err(_) => panic!("poisoned parker"),
            };
        }
        *n = false;
    }

    /// Parks until woken or `deadline`; returns false on timeout.
    #[cfg(not(loom))]
    fn park_until(&self, deadline: Instant) -> bool {
        let mut n = lock(&self.notified);
        while !*n {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            n = match self.cv.wait_timeout(n, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *n = false;
        true
    }
}

impl Wake for Parker {
    fn wake(self: StdArc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        *lock(&self.notified) = true;
        self.cv.notify_one();
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

fn with_parker<R>(f: impl FnOnce(&Parker, &Waker) -> R) -> R {
    #[cfg(not(loom))]
    {
        // A thread reuses one parker for all its blocking calls: no
        // allocation per call. A stale wake left over from an earlier call
        // only causes one spurious poll.
        PARKER.with(|(p, w)| {
            let depth = DEPTH.with(|d| {
                d.set(d.get() + 1);
                d.get()
            });
            let r = f(p, w);
            DEPTH.with(|d| d.set(d.get() - 1));
            if depth > 1 {
                // A blocking call nested inside a future polled by an outer
                // one shares the parker and may have consumed a wake meant
                // for the outer call: leave the flag set (one spurious poll
                // instead of a lost wake-up).
                w.wake_by_ref();
            }
            r
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
