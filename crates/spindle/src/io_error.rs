//! I/O errors that name what they were about: an address (`net/`), a path
//! (`fs/`), a program (`process/`).
//!
//! The wrapped error keeps the OS error's [`io::ErrorKind`], so callers can
//! still match on it; its message is prefixed with what failed and on what:
//! `could not open /tmp/x: No such file or directory (os error 2)`.

use std::fmt;
use std::io;

/// `e`, with its kind kept and its message prefixed: "{what}: {e}".
pub(crate) fn context(e: io::Error, what: impl fmt::Display) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}
