//! TCP: [`TcpListener`], [`TcpStream`] and its halves.

use super::addr::{context, first_ok, ToSocketAddrs};
use crate::io::stream_io::StreamIo;
use crate::io::{Direction, Registration};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
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

crate::net::fd_of_inner!(TcpListener, |s| &s.inner);

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
    io: StreamIo<std::net::TcpStream>,
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
        stream.io.finish_connect().await?;
        Ok(stream)
    }

    /// Takes over a connected std stream (made non-blocking here).
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::registered(stream)
    }

    fn registered(inner: std::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: StreamIo::new(inner)?,
        })
    }

    /// Shuts down reading, writing or both. `Shutdown::Write` is a
    /// half-close: the peer reads end of stream, and may still send.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.inner().shutdown(how)
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.inner().set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.inner().nodelay()
    }

    /// The remote address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.inner().peer_addr()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.inner().local_addr()
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .field("fd", &self.io.inner().as_raw_fd())
            .finish()
    }
}

crate::net::fd_of_inner!(TcpStream, |s| s.io.inner());
crate::net::split::stream_api!(TcpStream, SocketAddr);
