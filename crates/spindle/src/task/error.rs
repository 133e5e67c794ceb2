//! `JoinError`: why a task gave no output.

use std::any::Any;
use std::fmt;

/// A task did not produce its output: it was cancelled, or it panicked.
///
/// A panic inside a task is caught at the task boundary; the worker thread
/// goes on. The payload is kept here, so `into_panic` can re-raise it with
/// `std::panic::resume_unwind`.
pub struct JoinError {
    repr: Repr,
}

/// One pointer wide, so that a task's `Result<T, JoinError>` output slot
/// stays small (the panic case is rare and may allocate).
enum Repr {
    Cancelled,
    Panic(Box<PanicRepr>),
}

struct PanicRepr {
    message: String,
    payload: Option<Box<dyn Any + Send + 'static>>,
}

impl JoinError {
    pub(crate) fn cancelled() -> JoinError {
        JoinError {
            repr: Repr::Cancelled,
        }
    }

    pub(crate) fn panic(payload: Box<dyn Any + Send + 'static>) -> JoinError {
        let message = panic_message(&*payload);
        JoinError {
            repr: Repr::Panic(Box::new(PanicRepr {
                message,
                payload: Some(payload),
            })),
        }
    }

    /// The task was cancelled (abort, a scope or race that cancelled it, or
    /// the runtime shutting down) before it finished.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic message (`&str` or `String` payloads), if it panicked.
    pub fn panic_message(&self) -> Option<&str> {
        match &self.repr {
            Repr::Panic(p) => Some(&p.message),
            Repr::Cancelled => None,
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
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(mut p) => match p.payload.take() {
                Some(payload) => Ok(payload),
                None => Err(JoinError {
                    repr: Repr::Panic(p),
                }),
            },
            repr => Err(JoinError { repr }),
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
        match &self.repr {
            Repr::Cancelled => f.write_str("task was cancelled"),
            Repr::Panic(p) => write!(f, "task panicked: {}", p.message),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
            Repr::Panic(p) => write!(f, "JoinError::Panic({:?})", p.message),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> std::io::Error {
        std::io::Error::other(e.to_string())
    }
}
