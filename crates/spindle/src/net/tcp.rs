//! TCP: [`TcpListener`], [`TcpStream`] and its halves.

use super::addr::{context, first_ok, ToSocketAddrs};
use crate::io::{Direction, Registration};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::fmt;
use std::future::poll_fn;
use std::io::{self, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Pending connections the kernel queues for a listener.
const BACKLOG: i32 = 1024;

/// A TCP socket listening for connections.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let listener = spindle::net::TcpListener::bind("127.0.0.1:0").await?;
/// println!("listening on {}", listener.local_addr()?);
/// loop {
///     let (stream, _peer) = listener.accept().await?;
///     spindle::spawn(async move {
///         let mut buf = [0u8; 4096];
///         while let Ok(n @ 1..) = stream.read(&mut buf).await {
///             if stream.write_all(&buf[..n]).await.is_err() {
///                 break;
///             }
///         }
///     });
/// }
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
pub struct TcpListener {
    // Field order: the registration is dropped (deregistered) before the fd closes.
    reg: Registration,
    inner: std::net::TcpListener,
}

impl TcpListener {
    /// Binds to `addr` (each address it names in turn; port 0 picks a free
    /// port), with `SO_REUSEADDR` and a backlog of 1024.
    ///
    /// Errors name the address: `could not bind 127.0.0.1:7000: Address
    /// already in use (os error 98)`, with the kind
    /// ([`io::ErrorKind::AddrInUse`] there) kept.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        first_ok(&addr, "bind", |addr| {
            let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
            socket.set_nonblocking(true)?;
            socket.set_reuse_address(true)?;
            socket.bind(&addr.into())?;
            socket.listen(BACKLOG)?;
            // Registered here, so that a reactor error names the address too.
            TcpListener::registered(std::net::TcpListener::from(socket))
        })
    }

    /// Takes over a bound std listener (made non-blocking here).
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        TcpListener::registered(listener)
    }

    fn registered(inner: std::net::TcpListener) -> io::Result<TcpListener> {
        Ok(TcpListener {
            reg: Registration::new(inner.as_raw_fd())?,
            inner,
        })
    }

    /// The next connection and its peer's address.
    ///
    /// Cancel-safe: dropping the future accepts nothing.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Poll form of [`accept`](Self::accept).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        self.reg
            .poll_io(Direction::Read, cx, || self.inner.accept())
            .map(|r| {
                let (stream, peer) = r?;
                // A stream the driver refused is dropped (closed): say whose.
                let stream = TcpStream::from_std(stream).map_err(|e| {
                    context(
                        e,
                        format_args!("accepted a connection from {peer}, then closed it"),
                    )
                })?;
                Ok((stream, peer))
            })
    }

    /// The address this listener is bound to (the port picked for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Sets the IP time-to-live of accepted connections.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.inner.set_ttl(ttl)
    }
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpListener")
            .field("local_addr", &self.local_addr().ok())
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}

super::fd_of_inner!(TcpListener);

/// A TCP connection.
///
/// Every operation takes `&self`: one task may read while another writes
/// (through a reference, an `Arc`, [`split`](Self::split) or
/// [`into_split`](Self::into_split)). Several tasks waiting on the same
/// direction are all woken when it becomes ready. Reads and writes are
/// cancel-safe: a dropped `read` consumed nothing, a dropped `write` wrote
/// nothing (`write_all` may have written a prefix).
///
/// Also implements `futures_io::{AsyncRead, AsyncWrite}` (for `TcpStream`
/// and `&TcpStream`), so `futures-util`'s helpers and codecs work on it.
pub struct TcpStream {
    // Field order: the registration is dropped (deregistered) before the fd closes.
    reg: Registration,
    inner: std::net::TcpStream,
}

impl TcpStream {
    /// Connects to `addr` (each address it names in turn), without blocking
    /// the worker while the handshake runs.
    ///
    /// Errors name the address: `could not connect to 127.0.0.1:1:
    /// Connection refused (os error 111)`, with the kind kept.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let mut last = None;
        for addr in super::addr::resolve(&addr, "connect to")? {
            match TcpStream::connect_one(addr).await {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(context(e, format_args!("could not connect to {addr}"))),
            }
        }
        Err(last.expect("resolve returns at least one address"))
    }

    async fn connect_one(addr: SocketAddr) -> io::Result<TcpStream> {
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        socket.set_nonblocking(true)?;
        match socket.connect(&SockAddr::from(addr)) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        let stream = TcpStream::registered(std::net::TcpStream::from(socket))?;
        // Writable means the handshake is over, one way or the other:
        // `SO_ERROR` says which; no peer address yet means not over after
        // all (a spurious readiness), so wait for the next edge.
        stream
            .reg
            .io(Direction::Write, || {
                if let Some(e) = stream.inner.take_error()? {
                    return Err(e);
                }
                match stream.inner.peer_addr() {
                    Ok(_) => Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                        Err(io::ErrorKind::WouldBlock.into())
                    }
                    Err(e) => Err(e),
                }
            })
            .await?;
        Ok(stream)
    }

    /// Takes over a connected std stream (made non-blocking here).
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::registered(stream)
    }

    fn registered(inner: std::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            reg: Registration::new(inner.as_raw_fd())?,
            inner,
        })
    }

    /// Reads into `buf`; `Ok(0)` at end of stream (the peer shut down its
    /// writing side) or for an empty `buf`.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_read(cx, buf)).await
    }

    /// Reads exactly `buf.len()` bytes; [`io::ErrorKind::UnexpectedEof`]
    /// if the stream ends first. Not cancel-safe (bytes read so far are lost).
    pub async fn read_exact(&self, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read(buf).await? {
                0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("stream ended with {} bytes still to read", buf.len()),
                    ))
                }
                n => buf = &mut buf[n..],
            }
        }
        Ok(())
    }

    /// Writes some of `buf`; returns how many bytes.
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_write(cx, buf)).await
    }

    /// Writes all of `buf`, waiting whenever the socket buffer is full.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write(buf).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => buf = &buf[n..],
            }
        }
        Ok(())
    }

    /// Poll form of [`read`](Self::read).
    pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let len = buf.len();
        // A short read (not end of stream) emptied the receive queue.
        self.reg.poll_io_drain(
            Direction::Read,
            cx,
            || (&self.inner).read(buf),
            |&n| n > 0 && n < len,
        )
    }

    /// Poll form of [`write`](Self::write).
    pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        // A short write filled the send buffer.
        self.reg.poll_io_drain(
            Direction::Write,
            cx,
            || (&self.inner).write(buf),
            |&n| n > 0 && n < buf.len(),
        )
    }

    /// Writes some of `bufs`, in order, in one `writev`; returns how many
    /// bytes in all.
    pub async fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_write_vectored(cx, bufs)).await
    }

    /// Poll form of [`write_vectored`](Self::write_vectored).
    pub fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        // As `poll_write`: a short write filled the send buffer.
        self.reg.poll_io_drain(
            Direction::Write,
            cx,
            || (&self.inner).write_vectored(bufs),
            |&n| n > 0 && n < len,
        )
    }

    /// Shuts down reading, writing or both. `Shutdown::Write` is a
    /// half-close: the peer reads end of stream, and may still send.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.inner.shutdown(how)
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.nodelay()
    }

    /// The remote address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Borrowed halves, to read and write concurrently in one task (with
    /// `join`-like combinators); for two tasks use [`into_split`](Self::into_split).
    pub fn split(&self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        (ReadHalf(self), WriteHalf(self))
    }

    /// Owned halves that can move to two tasks. The connection closes when
    /// both are dropped; dropping the write half does not shut writing down
    /// (call [`OwnedWriteHalf::shutdown`]).
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        let s = Arc::new(self);
        (OwnedReadHalf(s.clone()), OwnedWriteHalf(s))
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .field("fd", &self.inner.as_raw_fd())
            .finish()
    }
}

super::fd_of_inner!(TcpStream);

/// The reading half of a [`TcpStream`], borrowed ([`TcpStream::split`]).
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a TcpStream);

/// The writing half of a [`TcpStream`], borrowed ([`TcpStream::split`]).
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a TcpStream);

/// The reading half of a [`TcpStream`], owned ([`TcpStream::into_split`]).
#[derive(Debug)]
pub struct OwnedReadHalf(Arc<TcpStream>);

/// The writing half of a [`TcpStream`], owned ([`TcpStream::into_split`]).
#[derive(Debug)]
pub struct OwnedWriteHalf(Arc<TcpStream>);

macro_rules! read_half {
    ($($t:ty),*) => {$(
        impl $t {
            /// See [`TcpStream::read`].
            pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.read(buf).await
            }
            /// See [`TcpStream::read_exact`].
            pub async fn read_exact(&self, buf: &mut [u8]) -> io::Result<()> {
                self.0.read_exact(buf).await
            }
            /// See [`TcpStream::poll_read`].
            pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.0.poll_read(cx, buf)
            }
            /// The remote address.
            pub fn peer_addr(&self) -> io::Result<SocketAddr> {
                self.0.peer_addr()
            }
        }
        impl futures_io::AsyncRead for $t {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.0.poll_read(cx, buf)
            }
        }
    )*};
}

macro_rules! write_half {
    ($($t:ty),*) => {$(
        impl $t {
            /// See [`TcpStream::write`].
            pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
                self.0.write(buf).await
            }
            /// See [`TcpStream::write_all`].
            pub async fn write_all(&self, buf: &[u8]) -> io::Result<()> {
                self.0.write_all(buf).await
            }
            /// See [`TcpStream::poll_write`].
            pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.0.poll_write(cx, buf)
            }
            /// See [`TcpStream::write_vectored`].
            pub async fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
                self.0.write_vectored(bufs).await
            }
            /// See [`TcpStream::poll_write_vectored`].
            pub fn poll_write_vectored(&self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
                self.0.poll_write_vectored(cx, bufs)
            }
            /// Half-close: the peer reads end of stream.
            pub fn shutdown(&self) -> io::Result<()> {
                self.0.shutdown(Shutdown::Write)
            }
            /// The remote address.
            pub fn peer_addr(&self) -> io::Result<SocketAddr> {
                self.0.peer_addr()
            }
        }
        impl futures_io::AsyncWrite for $t {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.0.poll_write(cx, buf)
            }
            fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
                self.0.poll_write_vectored(cx, bufs)
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // nothing is buffered in user space
            }
            fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.0.shutdown(Shutdown::Write))
            }
        }
    )*};
}

read_half!(ReadHalf<'_>, OwnedReadHalf);
write_half!(WriteHalf<'_>, OwnedWriteHalf);

macro_rules! stream_io {
    ($($t:ty),*) => {$(
        impl futures_io::AsyncRead for $t {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                TcpStream::poll_read(&self, cx, buf)
            }
        }
        impl futures_io::AsyncWrite for $t {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                TcpStream::poll_write(&self, cx, buf)
            }
            fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
                TcpStream::poll_write_vectored(&self, cx, bufs)
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // nothing is buffered in user space
            }
            fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.shutdown(Shutdown::Write))
            }
        }
    )*};
}

stream_io!(TcpStream, &TcpStream);
