//! Error types. Every error of a send carries the unsent value back.

use std::fmt;

/// `send` failed because the channel is closed; the value comes back.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

/// `try_send` failed.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<T> {
    /// The channel is full (for a rendezvous channel: no receiver is waiting).
    Full(T),
    /// The channel is closed.
    Closed(T),
}

/// `send_timeout` failed.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum SendTimeoutError<T> {
    /// The deadline passed before there was room.
    Timeout(T),
    /// The channel is closed.
    Closed(T),
}

/// `recv` failed: the channel is closed and drained.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub struct RecvError;

/// `try_recv` failed.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum TryRecvError {
    /// Nothing to receive now.
    Empty,
    /// The channel is closed and drained.
    Closed,
}

/// `recv_timeout` failed.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub enum RecvTimeoutError {
    /// The deadline passed with nothing to receive.
    Timeout,
    /// The channel is closed and drained.
    Closed,
}

impl<T> SendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> TrySendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(v) | TrySendError::Closed(v) => v,
        }
    }
    /// Whether the channel was full.
    pub fn is_full(&self) -> bool {
        matches!(self, TrySendError::Full(_))
    }
    /// Whether the channel was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, TrySendError::Closed(_))
    }
}

impl<T> SendTimeoutError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            SendTimeoutError::Timeout(v) | SendTimeoutError::Closed(v) => v,
        }
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}
impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a closed channel")
    }
}
impl<T> std::error::Error for SendError<T> {}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}
impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("sending on a full channel"),
            TrySendError::Closed(_) => f.write_str("sending on a closed channel"),
        }
    }
}
impl<T> std::error::Error for TrySendError<T> {}

impl<T> fmt::Debug for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendTimeoutError::Timeout(_) => f.write_str("Timeout(..)"),
            SendTimeoutError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}
impl<T> fmt::Display for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendTimeoutError::Timeout(_) => f.write_str("timed out sending on a full channel"),
            SendTimeoutError::Closed(_) => f.write_str("sending on a closed channel"),
        }
    }
}
impl<T> std::error::Error for SendTimeoutError<T> {}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("receiving on a closed and empty channel")
    }
}
impl std::error::Error for RecvError {}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryRecvError::Empty => f.write_str("receiving on an empty channel"),
            TryRecvError::Closed => f.write_str("receiving on a closed and empty channel"),
        }
    }
}
impl std::error::Error for TryRecvError {}

impl fmt::Display for RecvTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvTimeoutError::Timeout => f.write_str("timed out receiving on an empty channel"),
            RecvTimeoutError::Closed => f.write_str("receiving on a closed and empty channel"),
        }
    }
}
impl std::error::Error for RecvTimeoutError {}
