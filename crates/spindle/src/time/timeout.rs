//! `timeout`: a future with a deadline; on expiry the inner future is
//! dropped (cancelled) and `Elapsed` returned.

use super::sleep::{sleep, sleep_until, Sleep};
use super::Instant;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Runs `future` for at most `duration`: `Ok(output)` if it finished first,
/// `Err(Elapsed)` otherwise, the inner future then being dropped. The inner
/// future is polled first, so one that is ready at once wins even with a
/// zero duration.
///
/// The deadline is a timer: over, it spends a unit of the task's budget
/// (`task::coop`), and is seen even when the inner future was refused by
/// the budget in the same poll. Polled once the budget was already refused
/// in this poll (by a sibling in the same `join!`, say), the timeout
/// yields with the task without a look at its deadline, as Tokio's does:
/// it fires at a later poll that reaches it first, so behind a sibling
/// that spends every poll's budget before it, not until that sibling ends.
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout {
        future: Some(future),
        sleep: sleep(duration),
    }
}

/// [`timeout`] with an absolute deadline.
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future: Some(future),
        sleep: sleep_until(deadline),
    }
}

/// The future [`timeout`] returns.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Timeout<F> {
    /// `None` once finished or cancelled.
    future: Option<F>,
    sleep: Sleep,
}

/// The deadline passed before the future finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(());

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl<F> Timeout<F> {
    /// The inner future, while it has not finished or been cancelled.
    pub fn get_ref(&self) -> Option<&F> {
        self.future.as_ref()
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // `Timeout` has no `Drop` impl; `sleep` is `Unpin` and not pinned.
        // SAFETY: `future` is structurally pinned: never moved out of its
        // `Option`, only dropped in place by `Pin::set`.
        let (mut future, sleep) = unsafe {
            let this = self.get_unchecked_mut();
            (Pin::new_unchecked(&mut this.future), &mut this.sleep)
        };
        let Some(inner) = future.as_mut().as_pin_mut() else {
            panic!("`Timeout` polled after it completed");
        };
        let refused_before = crate::task::coop::refused_in_poll();
        if let Poll::Ready(v) = inner.poll(cx) {
            future.set(None);
            return Poll::Ready(Ok(v));
        }
        // The deadline is a timer like any other: over, it spends a unit
        // (so a loop of timeouts already over yields). But an inner future
        // that spent the budget and was refused just now must not hide its
        // deadline too: then it is looked at without the budget. (Refused
        // before, this timeout yields with the rest of the poll.)
        let expired = if !refused_before && crate::task::coop::refused_in_poll() {
            crate::task::coop::unlimited(|| Pin::new(sleep).poll(cx))
        } else {
            Pin::new(sleep).poll(cx)
        };
        match expired {
            Poll::Ready(()) => {
                future.set(None); // cancel the inner future now
                Poll::Ready(Err(Elapsed(())))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
