//! `JoinError`: why a task gave no output.

use super::id::Id;
use std::any::Any;
use std::fmt;

/// A task did not produce its output: it was cancelled, or it panicked.
///
/// A panic inside a task is caught at the task boundary; the worker thread
/// goes on. The payload is kept here, so `into_panic` can re-raise it with
/// `std::panic::resume_unwind`.
pub struct JoinError {
    cause: Cause,
    id: Id,
}

/// Why a task gave no output, as its cell stores it: one pointer wide, so
/// that the cell's `Result<T, Cause>` output slot stays small (the panic
/// case is rare and may allocate). The handle that takes the output adds
/// the task's id ([`Cause::with_id`]).
pub(crate) enum Cause {
    Cancelled,
    Panic(Box<PanicRepr>),
}

pub(crate) struct PanicRepr {
    message: String,
    payload: Option<Box<dyn Any + Send + 'static>>,
}

impl Cause {
    pub(crate) fn panic(payload: Box<dyn Any + Send + 'static>) -> Cause {
        let message = panic_message(&*payload);
        Cause::Panic(Box::new(PanicRepr {
            message,
            payload: Some(payload),
        }))
    }

    /// The error a handle of task `id` gives for this cause.
    pub(crate) fn with_id(self, id: Id) -> JoinError {
        JoinError { cause: self, id }
    }
}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> JoinError {
        Cause::Cancelled.with_id(id)
    }

    pub(crate) fn panic(payload: Box<dyn Any + Send + 'static>, id: Id) -> JoinError {
        Cause::panic(payload).with_id(id)
    }

    /// The id of the task that failed (its handle's [`id`](super::JoinHandle::id)).
    /// A scope cancelled as a whole ([`Scope::cancel`](crate::Scope::cancel))
    /// gives the scope's own id, which no task shares while the scope lives.
    pub fn id(&self) -> Id {
        self.id
    }

    /// The task was cancelled (abort, a scope or race that cancelled it, or
    /// the runtime shutting down) before it finished.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.cause, Cause::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.cause, Cause::Panic(_))
    }

    /// The panic message (`&str` or `String` payloads), if it panicked.
    pub fn panic_message(&self) -> Option<&str> {
        match &self.cause {
            Cause::Panic(p) => Some(&p.message),
            Cause::Cancelled => None,
        }
    }

    /// The panic payload, for `std::panic::resume_unwind`.
    ///
    /// # Panics
    /// If the error is not a panic.
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .unwrap_or_else(|e| panic!("`JoinError::into_panic` on {e}"))
    }

    /// The panic payload, or the error back if it was no panic (or the payload went to a scope).
    pub fn try_into_panic(mut self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match &mut self.cause {
            Cause::Panic(p) => p.payload.take().ok_or(self),
            Cause::Cancelled => Err(self),
        }
    }
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Cause::Cancelled => write!(f, "task {} was cancelled", self.id),
            Cause::Panic(p) => write!(f, "task {} panicked: {}", self.id, p.message),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Cause::Cancelled => write!(f, "JoinError::Cancelled({})", self.id),
            Cause::Panic(p) => write!(f, "JoinError::Panic({}, {:?})", self.id, p.message),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> std::io::Error {
        std::io::Error::other(e.to_string())
    }
}
