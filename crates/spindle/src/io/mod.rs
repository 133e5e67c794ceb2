//! I/O readiness: the reactor (`driver/reactor.rs`) the driver polls,
//! `Registration` (`registration.rs`), the handle every socket keeps on it,
//! and [`AsyncFd`], the same handle for a file descriptor of the user's own.
//!
//! Invariants:
//! - every fd given to the reactor is non-blocking and stays open until its
//!   `Registration` is dropped, which deregisters it first (the owner drops
//!   the registration before the fd: field order in `net/` and `AsyncFd`);
//! - an I/O attempt runs only after `poll_ready` said `Ready(tick)`, and a
//!   `WouldBlock` is answered with `clear_ready(tick)` (the protocol in
//!   `driver/reactor.rs`), so no edge is lost between the attempt and the wait.

mod async_fd;
pub(crate) mod registration;
pub(crate) mod stream_io;

pub(crate) use crate::driver::reactor::Direction;
pub use async_fd::{AsyncFd, ReadyGuard};
pub(crate) use registration::Registration;
