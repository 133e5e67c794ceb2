//! Files and directories for spindle tasks: `std::fs` run on the runtime's
//! blocking pool (`sched/blocking.rs`), so a task that reads a file never
//! blocks a worker.
//!
//! - The free functions ([`read`], [`write()`], [`read_to_string`],
//!   [`create_dir_all`], [`remove_file`], [`metadata`], …) each run their
//!   `std::fs` counterpart as one blocking job and await its `JoinHandle`.
//!   Dropping the future does not stop a job that was queued: it runs to
//!   the end on the pool and its result is dropped (a dropped [`write()`]
//!   still writes).
//! - [`read_dir`] gives a [`ReadDir`]: each blocking job takes a batch of
//!   entries, which [`ReadDir::next_entry`] then hands out one by one.
//! - [`File`] implements `futures_io::{AsyncRead, AsyncWrite, AsyncSeek}`
//!   over a buffer that travels to the pool with each operation: a write
//!   returns once handed over, a flush waits for it, and a dropped `File`
//!   still completes it (the type's docs; the state machine is in
//!   `fs/file.rs`).
//! - Errors keep the OS error's kind and name the path: `could not open
//!   /tmp/x/missing.txt: No such file or directory (os error 2)`.
//! - Everything here needs a spindle runtime (a task, `Runtime::block_on`,
//!   or `Runtime::enter`); outside one, operations fail with an error
//!   saying so.
//!
//! Invariants:
//! - a job owns everything it touches (paths, bytes, a directory
//!   iterator, the std file and its buffer): nothing it uses is borrowed
//!   from a future that may be dropped while it runs;
//! - every error returned from here went through `io_error::context`
//!   with the path it concerns (a join error too: the pool shut down
//!   under the job).

mod buf;
mod file;
mod open_options;
mod ops;
mod read_dir;

pub use file::File;
pub use open_options::OpenOptions;
pub use ops::{
    copy, create_dir, create_dir_all, metadata, read, read_to_string, remove_dir, remove_dir_all,
    remove_file, rename, write,
};
pub use read_dir::{read_dir, DirEntry, ReadDir};

use crate::io_error::context;
use crate::task::JoinError;
use crate::Handle;
use std::io;
use std::path::Path;

/// The current runtime, whose blocking pool runs the jobs; an error when
/// this thread is in no runtime.
fn pool() -> io::Result<Handle> {
    Handle::try_current().ok_or_else(|| {
        io::Error::other(
            "spindle::fs needs a spindle runtime (a task, `Runtime::block_on`, \
             or `Runtime::enter`)",
        )
    })
}

/// A job's output, or the reason it has none (cancelled by the pool's
/// shutdown, or a panic) as an `io::Error`.
fn joined<T>(r: Result<io::Result<T>, JoinError>) -> io::Result<T> {
    r.unwrap_or_else(|e| Err(join_error(e)))
}

fn join_error(e: JoinError) -> io::Error {
    io::Error::other(format!("the blocking job did not finish ({e})"))
}

/// Runs `f` on the blocking pool and awaits its output.
async fn run<T, F>(f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    joined(pool()?.spawn_blocking(f).await)
}

/// Runs `f(path)` on the blocking pool; its error (or the pool's) prefixed
/// with "could not {verb} {path}".
async fn on_path<T, F>(path: &Path, verb: &str, f: F) -> io::Result<T>
where
    F: FnOnce(&Path) -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    let owned = path.to_path_buf();
    run(move || f(&owned))
        .await
        .map_err(|e| context(e, format_args!("could not {verb} {}", path.display())))
}
