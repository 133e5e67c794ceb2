//! [`UnixListener`].

use super::{path_error, UnixStream};
use crate::io::{Direction, Registration};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

/// A Unix stream socket listening for connections.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let listener = spindle::net::UnixListener::bind("/tmp/app.sock")?;
/// loop {
///     let (stream, _peer) = listener.accept().await?;
///     spindle::spawn(async move {
///         let _ = stream.write_all(b"hello\n").await;
///     });
/// }
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
pub struct UnixListener {
    // Field order: the registration is dropped (deregistered) before the fd closes.
    reg: Registration,
    inner: std::os::unix::net::UnixListener,
}

impl UnixListener {
    /// Creates the socket file at `path` and listens on it.
    ///
    /// Errors name the path: `could not bind /tmp/app.sock (the path
    /// exists: remove it first): Address already in use (os error 98)`.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        let path = path.as_ref();
        std::os::unix::net::UnixListener::bind(path)
            .and_then(UnixListener::from_std)
            .map_err(|e| path_error(e, "bind", path))
    }

    /// Takes over a bound std listener (made non-blocking here).
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        Ok(UnixListener {
            reg: Registration::new(listener.as_raw_fd())?,
            inner: listener,
        })
    }

    /// The next connection and its peer's address (usually unnamed).
    ///
    /// Cancel-safe: dropping the future accepts nothing.
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Poll form of [`accept`](Self::accept).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        self.reg
            .poll_io(Direction::Read, cx, || self.inner.accept())
            .map(|r| {
                let (stream, peer) = r?;
                Ok((UnixStream::from_std(stream)?, peer))
            })
    }

    /// The address this listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}

crate::net::fd_of_inner!(UnixListener, |s| &s.inner);
