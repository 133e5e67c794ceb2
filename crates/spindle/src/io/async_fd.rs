//! [`AsyncFd`]: readiness for a file descriptor spindle does not wrap
//! itself (an inotify fd, a tun device, a socket from a C library).
//!
//! Invariants:
//! - the fd is registered once, for both directions, with the reactor of
//!   the runtime `AsyncFd::new` ran in, and deregistered before the inner
//!   value is dropped or handed back (field order; `into_inner`);
//! - the fd must already be non-blocking: `AsyncFd` never changes its mode,
//!   as the fd may be shared with code that expects its current one. A
//!   blocking fd would block a worker inside the attempt;
//! - every attempt runs after the direction was reported ready, and a
//!   `WouldBlock` from it clears readiness with the tick the attempt saw
//!   (`ReadyGuard::try_io`, `read_with`), so no edge is lost.

use super::{Direction, Registration};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{ready, Context, Poll};

/// A non-blocking file descriptor on the runtime's reactor.
///
/// `read_with`/`write_with` retry an operation until it does not report
/// `WouldBlock`, waiting for readiness in between; `readable`/`writable`
/// give a [`ReadyGuard`] for callers that drive the attempts themselves.
///
/// ```no_run
/// use std::io::Read;
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let (a, b) = std::os::unix::net::UnixStream::pair()?;
/// a.set_nonblocking(true)?;
/// let fd = spindle::io::AsyncFd::new(a)?;
/// let mut buf = [0u8; 64];
/// let n = fd.read_with(|s| (&*s).read(&mut buf)).await?;
/// # drop(b);
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
pub struct AsyncFd<T: AsRawFd> {
    // Field order: the registration is dropped (deregistered) before the fd closes.
    reg: Registration,
    /// `Some` until `into_inner` takes it.
    inner: Option<T>,
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`'s fd with the current runtime's reactor.
    ///
    /// Errors: outside a runtime, or a descriptor the poller refuses
    /// (a regular file: `EPERM`), naming the fd.
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        Ok(AsyncFd {
            reg: Registration::new(inner.as_raw_fd())?,
            inner: Some(inner),
        })
    }

    /// The wrapped value.
    pub fn get_ref(&self) -> &T {
        self.inner.as_ref().expect("present until into_inner")
    }

    /// The wrapped value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        self.inner.as_mut().expect("present until into_inner")
    }

    /// Deregisters the fd and hands the value back (its fd still open).
    pub fn into_inner(mut self) -> T {
        let inner = self.inner.take().expect("present until into_inner");
        drop(self);
        inner
    }

    /// Waits until the fd is readable.
    pub async fn readable(&self) -> ReadyGuard<'_, T> {
        poll_fn(|cx| self.poll_read_ready(cx)).await
    }

    /// Waits until the fd is writable.
    pub async fn writable(&self) -> ReadyGuard<'_, T> {
        poll_fn(|cx| self.poll_write_ready(cx)).await
    }

    /// Poll form of [`readable`](Self::readable).
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<ReadyGuard<'_, T>> {
        self.poll_ready(Direction::Read, cx)
    }

    /// Poll form of [`writable`](Self::writable).
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<ReadyGuard<'_, T>> {
        self.poll_ready(Direction::Write, cx)
    }

    fn poll_ready(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<ReadyGuard<'_, T>> {
        let tick = ready!(self.reg.poll_ready(dir, cx));
        Poll::Ready(ReadyGuard {
            fd: self,
            dir,
            tick,
        })
    }

    /// Runs `op` on the value whenever the fd is readable, until it gives
    /// anything but `WouldBlock`. Cancel-safe if `op` is.
    pub async fn read_with<R>(&self, mut op: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        poll_fn(|cx| self.poll_read_with(cx, &mut op)).await
    }

    /// Runs `op` on the value whenever the fd is writable, until it gives
    /// anything but `WouldBlock`. Cancel-safe if `op` is.
    pub async fn write_with<R>(&self, mut op: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        poll_fn(|cx| self.poll_write_with(cx, &mut op)).await
    }

    /// Poll form of [`read_with`](Self::read_with), for `poll_read`
    /// implementations.
    pub fn poll_read_with<R>(
        &self,
        cx: &mut Context<'_>,
        mut op: impl FnMut(&T) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let inner = self.get_ref();
        self.reg.poll_io(Direction::Read, cx, || op(inner))
    }

    /// Poll form of [`write_with`](Self::write_with), for `poll_write`
    /// implementations.
    pub fn poll_write_with<R>(
        &self,
        cx: &mut Context<'_>,
        mut op: impl FnMut(&T) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let inner = self.get_ref();
        self.reg.poll_io(Direction::Write, cx, || op(inner))
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<T: AsRawFd + AsFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.get_ref().as_fd()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", &self.inner)
            .finish()
    }
}

/// A direction of an [`AsyncFd`] reported ready: the attempt to make now.
///
/// Readiness is a hint: the attempt may still get `WouldBlock`, which
/// [`try_io`](Self::try_io) answers by clearing readiness, so that the
/// next `readable`/`writable` waits for a new edge.
#[must_use = "a ReadyGuard does nothing unless an attempt is made through it"]
pub struct ReadyGuard<'a, T: AsRawFd> {
    fd: &'a AsyncFd<T>,
    dir: Direction,
    /// The readiness tick this guard saw (`driver/reactor.rs`).
    tick: u64,
}

impl<'a, T: AsRawFd> ReadyGuard<'a, T> {
    /// The wrapped value.
    pub fn get_inner(&self) -> &'a T {
        self.fd.get_ref()
    }

    /// Runs one attempt. A `WouldBlock` is returned as it is, after
    /// clearing readiness: await `readable`/`writable` again and retry.
    pub fn try_io<R>(&mut self, op: impl FnOnce(&'a T) -> io::Result<R>) -> io::Result<R> {
        let result = op(self.fd.get_ref());
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
            self.clear_ready();
        }
        result
    }

    /// Marks the direction not ready (the caller saw `WouldBlock` itself),
    /// unless an edge arrived since this guard was made.
    pub fn clear_ready(&mut self) {
        self.fd.reg.clear_ready(self.dir, self.tick);
    }
}

impl<T: AsRawFd> fmt::Debug for ReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadyGuard")
            .field("fd", &self.fd.as_raw_fd())
            .field("direction", &self.dir)
            .finish()
    }
}
