//! UDP: [`UdpSocket`].

use super::addr::{context, first_ok, resolve, ToSocketAddrs};
use crate::io::{Direction, Registration};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::task::{Context, Poll};

/// A UDP socket.
///
/// Every operation takes `&self`; several tasks may send and receive on one
/// socket (behind an `Arc`), and all waiters of a direction are woken when
/// it becomes ready. Sends and receives are cancel-safe.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let socket = spindle::net::UdpSocket::bind("127.0.0.1:0").await?;
/// let mut buf = [0u8; 1500];
/// let (n, from) = socket.recv_from(&mut buf).await?;
/// socket.send_to(&buf[..n], from).await?;
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
pub struct UdpSocket {
    // Field order: the registration is dropped (deregistered) before the fd closes.
    reg: Registration,
    inner: std::net::UdpSocket,
}

impl UdpSocket {
    /// Binds to `addr` (each address it names in turn; port 0 picks a free
    /// port). Errors name the address, as [`TcpListener::bind`](super::TcpListener::bind)'s do.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        // Registered inside, so that a reactor error names the address too.
        first_ok(&addr, "bind", |a| {
            UdpSocket::from_std(std::net::UdpSocket::bind(a)?)
        })
    }

    /// Takes over a bound std socket (made non-blocking here).
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            reg: Registration::new(socket.as_raw_fd())?,
            inner: socket,
        })
    }

    /// Sets the default destination for [`send`](Self::send) and the only
    /// source [`recv`](Self::recv) accepts.
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        first_ok(&addr, "connect to", |a| self.inner.connect(a))
    }

    /// Sends `buf` as one datagram to `target` (its first address).
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let to = resolve(&target, "send to")?[0];
        poll_fn(|cx| self.poll_send_to(cx, buf, to))
            .await
            .map_err(|e| context(e, format_args!("could not send to {to}")))
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
        to: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.reg
            .poll_io(Direction::Write, cx, || self.inner.send_to(buf, to))
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

    /// Allows sending to broadcast addresses.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.inner.set_broadcast(on)
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}

super::fd_of_inner!(UdpSocket, |s| &s.inner);
