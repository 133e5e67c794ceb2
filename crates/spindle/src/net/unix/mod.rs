//! Unix domain sockets: [`UnixListener`], [`UnixStream`], [`UnixDatagram`],
//! on the same reactor and with the same verbs as their TCP and UDP
//! counterparts.
//!
//! Invariants (as for `net/`'s other sockets):
//! - each socket is non-blocking and registered once with the reactor of
//!   the runtime it is created in, and deregistered before its fd closes;
//! - errors keep the OS error's kind and name the path:
//!   `could not bind /run/app.sock: Address already in use (os error 98)`.
//!
//! Binding to a path creates the socket file; it stays after the socket
//! closes (as with std and every Unix program): remove it before binding
//! again.

mod datagram;
mod listener;
mod stream;

pub use datagram::UnixDatagram;
pub use listener::UnixListener;
pub use stream::UnixStream;

use std::io;
use std::path::Path;

/// `e`, naming `path` and saying what was attempted; a bind to a path
/// that exists says so, the usual cause.
fn path_error(e: io::Error, what: &str, path: &Path) -> io::Error {
    let hint = if e.kind() == io::ErrorKind::AddrInUse && path.exists() {
        " (the path exists: remove it first)"
    } else {
        ""
    };
    crate::io_error::context(e, format_args!("could not {what} {}{hint}", path.display()))
}
