//! TCP, UDP and Unix sockets for spindle tasks, on the runtime's reactor
//! (`driver/reactor.rs`, epoll through the `mio` crate).
//!
//! - [`TcpListener`], [`TcpStream`] (with borrowed and owned halves),
//!   [`UdpSocket`], and their Unix counterparts [`UnixListener`],
//!   [`UnixStream`], [`UnixDatagram`]: std sockets made non-blocking, each
//!   registered once with the reactor of the runtime it is created in
//!   (creating one outside a runtime is an error saying so). An operation tries the syscall while
//!   its direction is ready and waits for the next readiness edge after
//!   `WouldBlock` (the protocol is in `driver/reactor.rs`).
//! - Every operation takes `&self`; reads and writes are cancel-safe.
//! - Errors keep the OS error's kind and name the address involved:
//!   `could not bind 127.0.0.1:7000: Address already in use (os error 98)`.
//! - Dropping a socket deregisters it from the reactor before its fd closes
//!   (field order), so the poller reports nothing for a reused fd number;
//!   an event it had already reported carries its source's generation in
//!   its token and is dropped (`driver/reactor.rs`).
//! - With the `tokio-io` feature the streams also implement Tokio's
//!   `AsyncRead`/`AsyncWrite` (`tokio_io.rs`; the traits only, no Tokio
//!   runtime).
//! - Tasks waiting on a socket are woken on the worker that drives the
//!   reactor (the one parked on it, or a busy one every few dozen polls).

/// `AsRawFd` and `AsFd` for a socket type through its std socket.
macro_rules! fd_of_inner {
    ($t:ty, |$s:ident| $inner:expr) => {
        impl std::os::fd::AsRawFd for $t {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                let $s = self;
                std::os::fd::AsRawFd::as_raw_fd($inner)
            }
        }

        impl std::os::fd::AsFd for $t {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                let $s = self;
                std::os::fd::AsFd::as_fd($inner)
            }
        }
    };
}
pub(crate) use fd_of_inner;

mod addr;
mod split;
mod tcp;
#[cfg(feature = "tokio-io")]
mod tokio_io;
mod udp;
mod unix;

pub use addr::ToSocketAddrs;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, Split, WriteHalf};
pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
