//! `yield_now`: let other tasks run before this one continues.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Suspends the task once, putting it at the back of its worker's queue, so
/// every task already queued runs before it continues.
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future of [`yield_now`].
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        // Woken while running: the poller re-queues it at the back (raw.rs).
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
