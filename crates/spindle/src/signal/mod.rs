//! OS signals as futures and streams: [`ctrl_c`] everywhere, and
//! [`unix::signal`] for any catchable signal (`SIGTERM`, `SIGHUP`, ...).
//!
//! All of them share one process-wide registry (`registry.rs`): one
//! listener thread, a generation count per signal, and waiters that each
//! see every arrival after they were made, in any runtime or none.
//!
//! From the first listener for a signal on, its default action (ending the
//! process, for most) is gone: the program decides what the signal does
//! (as with Tokio's).

mod registry;
pub mod unix;

use registry::Waiter;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Completes on the next SIGINT (Ctrl-C in a terminal) delivered after this
/// call; `Err` if the handler could not be installed.
///
/// The handler is installed by this call (once per process), not by the
/// first poll, so a signal between the call and the first `.await` counts.
/// Any number of waiters may wait at once; all of them complete.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// spindle::signal::ctrl_c().await.expect("SIGINT handler");
/// println!("interrupted: shutting down");
/// # });
/// ```
pub fn ctrl_c() -> CtrlC {
    let kind = unix::SignalKind::interrupt();
    CtrlC {
        state: match registry::listen(kind.as_raw_value(), &kind.to_string()) {
            Ok(()) => State::Waiting(Waiter::new(kind.as_raw_value())),
            Err(e) => State::Failed(Some(e)),
        },
    }
}

/// The future [`ctrl_c`] returns.
#[must_use = "futures do nothing unless polled"]
pub struct CtrlC {
    state: State,
}

enum State {
    Waiting(Waiter),
    Failed(Option<io::Error>),
    Done,
}

impl Future for CtrlC {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = match &mut this.state {
            State::Waiting(waiter) => {
                std::task::ready!(waiter.poll(cx));
                Ok(())
            }
            State::Failed(e) => Err(e.take().expect("CtrlC polled after it completed")),
            State::Done => panic!("CtrlC polled after it completed"),
        };
        this.state = State::Done;
        Poll::Ready(result)
    }
}

impl std::fmt::Debug for CtrlC {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Waiting(_) => "waiting",
            State::Failed(_) => "failed",
            State::Done => "done",
        };
        f.debug_struct("CtrlC").field("state", &state).finish()
    }
}
