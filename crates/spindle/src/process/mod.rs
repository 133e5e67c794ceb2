//! Child processes for spindle tasks: [`Command`] (std's builder) spawns
//! a [`Child`] whose pipes are async streams and whose exit is awaited
//! without blocking a worker.
//!
//! - Piped standard streams ([`ChildStdin`], [`ChildStdout`],
//!   [`ChildStderr`]) implement `futures_io::AsyncWrite` / `AsyncRead`:
//!   the parent's pipe ends are made non-blocking and registered with the
//!   runtime's reactor, as sockets are (`net/`); a full pipe makes a
//!   writer wait for the child to read, not block.
//! - [`Child::wait`] waits on a pidfd where Linux gives one (5.3 and
//!   later: no thread, one fd), and otherwise on a blocking-pool job per
//!   waited-for child, holding one pool thread until that child exits
//!   (`exit.rs`).
//! - [`Command::output`] reads stdout and stderr concurrently while it
//!   waits, so a child that fills either pipe cannot stall it.
//! - [`Command::kill_on_drop`] (off by default) kills a dropped, unwaited
//!   child and reaps it in the background; see [`Child`] for what
//!   dropping does otherwise.
//! - Errors keep the OS error's kind and name the program: ``could not
//!   spawn `no-such-prog`: No such file or directory (os error 2)``.
//!
//! Invariants:
//! - a pipe's registration is dropped before its fd closes (field order);
//! - a child is reaped only by the task that owns (or inherited) its
//!   `Child`, through std's `try_wait`, which records the status: nothing
//!   signals a pid after it was released. Something else reaping this
//!   process's children (a `waitpid(-1)` elsewhere, `SIGCHLD` ignored)
//!   takes the status, and `wait` then fails (`ECHILD`).

mod child;
mod command;
mod exit;
mod pipe;

pub use child::Child;
pub use command::Command;
pub use pipe::{ChildStderr, ChildStdin, ChildStdout};
pub use std::process::{ExitStatus, Output, Stdio};
