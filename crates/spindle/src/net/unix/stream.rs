//! [`UnixStream`].

use super::path_error;
use crate::io::stream_io::StreamIo;
use socket2::{Domain, SockAddr, Socket, Type};
use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

/// A Unix stream connection.
///
/// The same API as [`TcpStream`](crate::net::TcpStream): every operation
/// takes `&self`, reads and writes are cancel-safe, it splits into halves
/// (`ReadHalf<'_, UnixStream>`, `OwnedReadHalf<UnixStream>`, ...), and
/// `futures_io::{AsyncRead, AsyncWrite}` are implemented for `UnixStream`
/// and `&UnixStream`.
pub struct UnixStream {
    io: StreamIo<std::os::unix::net::UnixStream>,
}

impl UnixStream {
    /// Connects to the socket at `path`, without blocking the worker.
    ///
    /// Errors name the path: `could not connect to /tmp/app.sock: No such
    /// file or directory (os error 2)`, with the kind kept.
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        let path = path.as_ref();
        UnixStream::connect_path(path)
            .await
            .map_err(|e| path_error(e, "connect to", path))
    }

    async fn connect_path(path: &Path) -> io::Result<UnixStream> {
        let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
        socket.set_nonblocking(true)?;
        // `EAGAIN` (the listener's backlog is full) is an error, not a
        // handshake in progress: the connection was not queued.
        match socket.connect(&SockAddr::unix(path)?) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        let stream = UnixStream::registered(std::os::unix::net::UnixStream::from(
            std::os::fd::OwnedFd::from(socket),
        ))?;
        stream.io.finish_connect().await?;
        Ok(stream)
    }

    /// A connected pair of sockets.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = std::os::unix::net::UnixStream::pair()?;
        Ok((UnixStream::from_std(a)?, UnixStream::from_std(b)?))
    }

    /// Takes over a connected std stream (made non-blocking here).
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        UnixStream::registered(stream)
    }

    fn registered(inner: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: StreamIo::new(inner)?,
        })
    }

    /// Shuts down reading, writing or both. `Shutdown::Write` is a
    /// half-close: the peer reads end of stream, and may still send.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.inner().shutdown(how)
    }

    /// The remote address (unnamed for a `pair` or an unbound client).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.inner().peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.inner().local_addr()
    }
}

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .field("fd", &self.io.inner().as_raw_fd())
            .finish()
    }
}

crate::net::fd_of_inner!(UnixStream, |s| s.io.inner());
crate::net::split::stream_api!(UnixStream, SocketAddr);
