//! Tasks: one allocation each (`raw.rs`, recycled per thread by `alloc.rs`), a state word deciding who owns what
//! (`state.rs`), wakers that are references (`waker.rs`), join handles
//! (`join.rs`), and the registry that lets shutdown find idle tasks
//! (`registry.rs`).

mod alloc;
mod error;
mod join;
pub(crate) mod raw;
pub(crate) mod registry;
pub(crate) mod state;
mod waker;

pub use waker::wake_queued;

pub(crate) use error::panic_message;
pub use error::JoinError;
pub use join::{AbortHandle, AbortOnDrop, JoinHandle};
pub(crate) use raw::{Notified, RawTask, Schedule};
