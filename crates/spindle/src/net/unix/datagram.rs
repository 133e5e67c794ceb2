//! [`UnixDatagram`].

use super::path_error;
use crate::io::{Direction, Registration};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

/// A Unix datagram socket: the same verbs as
/// [`UdpSocket`](crate::net::UdpSocket), with paths for addresses.
///
/// Every operation takes `&self`; sends and receives are cancel-safe.
pub struct UnixDatagram {
    // Field order: the registration is dropped (deregistered) before the fd closes.
    reg: Registration,
    inner: std::os::unix::net::UnixDatagram,
}

impl UnixDatagram {
    /// Creates the socket file at `path` and binds to it. Errors name the
    /// path, as [`UnixListener::bind`](super::UnixListener::bind)'s do.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        let path = path.as_ref();
        std::os::unix::net::UnixDatagram::bind(path)
            .and_then(UnixDatagram::from_std)
            .map_err(|e| path_error(e, "bind", path))
    }

    /// A socket bound to no path: it can send, and receive replies only
    /// once connected.
    pub fn unbound() -> io::Result<UnixDatagram> {
        UnixDatagram::from_std(std::os::unix::net::UnixDatagram::unbound()?)
    }

    /// A connected pair of sockets.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = std::os::unix::net::UnixDatagram::pair()?;
        Ok((UnixDatagram::from_std(a)?, UnixDatagram::from_std(b)?))
    }

    /// Takes over a std socket (made non-blocking here).
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        Ok(UnixDatagram {
            reg: Registration::new(socket.as_raw_fd())?,
            inner: socket,
        })
    }

    /// Sets the default destination for [`send`](Self::send) and the only
    /// source [`recv`](Self::recv) accepts.
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        self.inner
            .connect(path)
            .map_err(|e| path_error(e, "connect to", path))
    }

    /// Sends `buf` as one datagram to the socket at `path`.
    pub async fn send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        poll_fn(|cx| self.poll_send_to(cx, buf, path))
            .await
            .map_err(|e| path_error(e, "send to", path))
    }

    /// Receives one datagram; returns its length and sender. A datagram
    /// longer than `buf` is cut to fit (the rest is lost).
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| self.poll_recv_from(cx, buf)).await
    }

    /// Sends `buf` to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_send(cx, buf)).await
    }

    /// Receives one datagram from the connected peer.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_recv(cx, buf)).await
    }

    /// Poll form of [`send_to`](Self::send_to).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        path: &Path,
    ) -> Poll<io::Result<usize>> {
        self.reg
            .poll_io(Direction::Write, cx, || self.inner.send_to(buf, path))
    }

    /// Poll form of [`recv_from`](Self::recv_from).
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.reg
            .poll_io(Direction::Read, cx, || self.inner.recv_from(buf))
    }

    /// Poll form of [`send`](Self::send).
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.reg
            .poll_io(Direction::Write, cx, || self.inner.send(buf))
    }

    /// Poll form of [`recv`](Self::recv).
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.reg
            .poll_io(Direction::Read, cx, || self.inner.recv(buf))
    }

    /// The address this socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }
}

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixDatagram")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}

crate::net::fd_of_inner!(UnixDatagram, |s| &s.inner);
