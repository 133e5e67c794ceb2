//! I/O: the readiness reactor (`driver/reactor.rs`) the driver polls, and
//! `Registration` (`registration.rs`), the handle every socket keeps on it.
//!
//! Invariants:
//! - every fd given to the reactor is non-blocking and stays open until its
//!   `Registration` is dropped, which deregisters it first (the owner drops
//!   the registration before the fd: field order in `net/`);
//! - an I/O attempt runs only after `poll_ready` said `Ready(tick)`, and a
//!   `WouldBlock` is answered with `clear_ready(tick)` (the protocol in
//!   `driver/reactor.rs`), so no edge is lost between the attempt and the wait.

pub(crate) mod registration;

pub(crate) use crate::driver::reactor::Direction;
pub(crate) use registration::Registration;
