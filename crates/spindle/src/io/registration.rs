//! `Registration`: one fd on the reactor of the runtime it was created in,
//! and the retry loop every socket operation goes through (`poll_io`).
//!
//! A registration keeps its runtime's driver alive (a `SchedRef`,
//! `sched_ref.rs`), so dropping a socket after its runtime is gone still
//! deregisters cleanly. Events for it are only dispatched while that
//! runtime runs: a socket used from another runtime works only as long as
//! its own one is alive.

use crate::driver::reactor::{Direction, Source};
use crate::driver::Driver;
use crate::sched_ref::SchedRef;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

pub(crate) struct Registration {
    driver: SchedRef<Driver>,
    source: Arc<Source>,
}

impl Registration {
    /// Registers `fd` (already non-blocking) with the current runtime's reactor.
    ///
    /// Outside a runtime: an error saying so (not a panic: socket
    /// constructors return `io::Result` anyway).
    pub(crate) fn new(fd: RawFd) -> io::Result<Registration> {
        let Some((driver, _)) = crate::sched::current_driver() else {
            return Err(io::Error::other(
                "spindle's sockets, pipes and `AsyncFd`s must be created inside a spindle \
                 runtime (a task, `Runtime::block_on`, or `Runtime::enter`)",
            ));
        };
        let source = driver.io.register(fd).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("could not register fd {fd} with spindle's I/O driver: {e}"),
            )
        })?;
        // A driver waiting on its condvar (no source registered until now)
        // must come back and wait on the poller, or this fd's events would
        // wait for the next timer.
        driver.notify();
        Ok(Registration { driver, source })
    }

    /// Runs `op` once `dir` is ready, until it gives anything but
    /// `WouldBlock`; `Pending` (waker stored) while `dir` is not ready.
    pub(crate) fn poll_io<R>(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
        op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_io_drain(dir, cx, op, |_| false)
    }

    /// `poll_io`, for operations that can tell from their result that they
    /// drained the socket (`drained`): a stream read that filled less than
    /// its buffer, a stream write that took less than it was given. The
    /// kernel only stops short when the receive queue is empty or the send
    /// buffer full, so the direction is cleared at once (with the tick seen
    /// before the attempt, as for `WouldBlock`: an edge that arrived since
    /// keeps it ready), which saves the syscall that would only have
    /// returned `WouldBlock`.
    pub(crate) fn poll_io_drain<R>(
        &self,
        dir: Direction,
        cx: &mut Context<'_>,
        mut op: impl FnMut() -> io::Result<R>,
        drained: impl Fn(&R) -> bool,
    ) -> Poll<io::Result<R>> {
        loop {
            let tick = ready!(self.source.poll_ready(dir, cx));
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.source.clear_ready(dir, tick)
                }
                Ok(r) => {
                    if drained(&r) {
                        self.source.clear_ready(dir, tick);
                    }
                    return Poll::Ready(Ok(r));
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// `Ready(tick)` once `dir` is ready (see `driver/reactor.rs`).
    pub(crate) fn poll_ready(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<u64> {
        self.source.poll_ready(dir, cx)
    }

    /// After `WouldBlock`: not ready, unless an event came since `tick`.
    pub(crate) fn clear_ready(&self, dir: Direction, tick: u64) {
        self.source.clear_ready(dir, tick)
    }

    /// Awaits `op` as `poll_io` runs it.
    pub(crate) async fn io<R>(
        &self,
        dir: Direction,
        mut op: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        std::future::poll_fn(|cx| self.poll_io(dir, cx, &mut op)).await
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // The owner's fd is still open here: it is dropped after us.
        self.driver.io.deregister(&self.source);
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("fd", &self.source.as_raw_fd())
            .finish()
    }
}
