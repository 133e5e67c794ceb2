//! TCP and UDP sockets for spindle tasks, on the runtime's reactor
//! (`io/reactor.rs`, epoll through the `mio` crate).
//!
//! - [`TcpListener`], [`TcpStream`] (with borrowed and owned halves),
//!   [`UdpSocket`]: std sockets made non-blocking, each registered once with
//!   the reactor of the runtime it is created in (creating one outside a
//!   runtime is an error saying so). An operation tries the syscall while
//!   its direction is ready and waits for the next readiness edge after
//!   `WouldBlock` (the protocol is in `io/reactor.rs`).
//! - Every operation takes `&self`; reads and writes are cancel-safe.
//! - Errors keep the OS error's kind and name the address involved:
//!   `could not bind 127.0.0.1:7000: Address already in use (os error 98)`.
//! - Dropping a socket deregisters it from the reactor before its fd closes
//!   (field order), so an event can never reach a reused fd number.
//! - Tasks waiting on a socket are woken on the worker that drives the
//!   reactor (the one parked on it, or a busy one every few dozen polls).

mod addr;
mod tcp;
mod udp;

pub use addr::ToSocketAddrs;
pub use tcp::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpListener, TcpStream, WriteHalf};
pub use udp::UdpSocket;
