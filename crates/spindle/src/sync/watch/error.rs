//! The errors of a watch channel.

use std::fmt;

/// [`Sender::send`](super::Sender::send) found no receiver; the value
/// comes back, unsent.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("watch channel closed: no receiver left")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// Every sender is gone (and, for [`changed`](super::Receiver::changed),
/// the receiver has seen the last value they sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvError(pub(super) ());

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("watch channel closed: no sender left")
    }
}

impl std::error::Error for RecvError {}
