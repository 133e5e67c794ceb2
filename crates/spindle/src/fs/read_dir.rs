//! `read_dir`: a directory's entries, taken from the OS in batches.
//!
//! A [`ReadDir`] is either idle, holding the std iterator and the entries of
//! the last batch not yet handed out, or waiting for the blocking job that
//! takes the next batch (the iterator travels to the pool and back with
//! it). The job's `JoinHandle` lives in the `ReadDir`, not in the
//! `next_entry` future, so dropping that future loses no entry: the next
//! call picks up the same job.

use super::{context, join_error, on_path, pool, run};
use crate::task::JoinHandle;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::fs::{FileType, Metadata};
use std::future::{poll_fn, Future};
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// Entries one blocking job takes from the OS.
const BATCH: usize = 32;

/// The entries of the directory `path` ([`std::fs::read_dir`]), as a
/// [`ReadDir`]. `.` and `..` are not listed; the order is the file
/// system's.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let mut dir = spindle::fs::read_dir("/tmp").await?;
/// while let Some(entry) = dir.next_entry().await? {
///     println!("{}", entry.path().display());
/// }
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
///
/// Errors name the directory: `could not read directory /nope: No such
/// file or directory (os error 2)`.
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref();
    let iter = on_path(path, "read directory", |p| std::fs::read_dir(p)).await?;
    Ok(ReadDir {
        path: path.into(),
        state: State::Idle(Box::new(Batch {
            iter,
            entries: VecDeque::new(),
            done: false,
        })),
    })
}

/// A directory's entries, one [`next_entry`](Self::next_entry) at a time.
pub struct ReadDir {
    path: Arc<Path>,
    state: State,
}

enum State {
    Idle(Box<Batch>),
    Taking(JoinHandle<Box<Batch>>),
    /// The job taking a batch was dropped by the pool's shutdown, and the
    /// iterator with it.
    Lost,
}

/// The std iterator and the entries taken from it not yet handed out.
struct Batch {
    iter: std::fs::ReadDir,
    entries: VecDeque<io::Result<DirEntry>>,
    /// The iterator ended.
    done: bool,
}

impl Batch {
    /// Takes up to `BATCH` entries (blocking), with their file types.
    fn take(&mut self) {
        for _ in 0..BATCH {
            let Some(entry) = self.iter.next() else {
                self.done = true;
                return;
            };
            self.entries.push_back(entry.map(|e| DirEntry {
                // Usually free (the type comes with the entry on Linux);
                // otherwise it costs a `stat`, which belongs here too.
                file_type: e.file_type().ok(),
                inner: Arc::new(e),
            }));
        }
    }
}

impl ReadDir {
    /// The next entry, `None` once every entry was given. An error for one
    /// entry does not end the listing: the next call goes on.
    ///
    /// Cancel-safe: an entry is only handed out by the call that returns it.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Poll form of [`next_entry`](Self::next_entry).
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        loop {
            match &mut self.state {
                State::Idle(batch) => {
                    if let Some(entry) = batch.entries.pop_front() {
                        return Poll::Ready(entry.map(Some).map_err(|e| self.named(e)));
                    }
                    if batch.done {
                        return Poll::Ready(Ok(None));
                    }
                    // Found before the batch moves out, so that no runtime
                    // loses nothing.
                    let pool = pool().map_err(|e| self.named(e))?;
                    let State::Idle(mut batch) = std::mem::replace(&mut self.state, State::Lost)
                    else {
                        unreachable!("matched as idle above")
                    };
                    self.state = State::Taking(pool.spawn_blocking(move || {
                        batch.take();
                        batch
                    }));
                }
                State::Taking(job) => match ready!(Pin::new(job).poll(cx)) {
                    Ok(batch) => self.state = State::Idle(batch),
                    Err(e) => {
                        self.state = State::Lost;
                        return Poll::Ready(Err(self.named(join_error(e))));
                    }
                },
                State::Lost => {
                    let e =
                        io::Error::other("the listing was lost when the blocking pool shut down");
                    return Poll::Ready(Err(self.named(e)));
                }
            }
        }
    }

    fn named(&self, e: io::Error) -> io::Error {
        context(
            e,
            format_args!("could not read directory {}", self.path.display()),
        )
    }
}

impl fmt::Debug for ReadDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadDir").field("path", &self.path).finish()
    }
}

/// An entry of a directory listed by [`read_dir`].
#[derive(Clone)]
pub struct DirEntry {
    inner: Arc<std::fs::DirEntry>,
    /// Found while the batch was taken; `None` if that failed.
    file_type: Option<FileType>,
}

impl DirEntry {
    /// The entry's full path: the listed directory joined with
    /// [`file_name`](Self::file_name).
    pub fn path(&self) -> PathBuf {
        self.inner.path()
    }

    /// The entry's name in its directory.
    pub fn file_name(&self) -> OsString {
        self.inner.file_name()
    }

    /// The entry's type (not following a symbolic link): found when the
    /// entry was listed, or on the blocking pool if that failed.
    pub async fn file_type(&self) -> io::Result<FileType> {
        if let Some(t) = self.file_type {
            return Ok(t);
        }
        let inner = self.inner.clone();
        run(move || inner.file_type())
            .await
            .map_err(|e| self.named(e, "read the type of"))
    }

    /// The entry's metadata (not following a symbolic link), read on the
    /// blocking pool.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let inner = self.inner.clone();
        run(move || inner.metadata())
            .await
            .map_err(|e| self.named(e, "read metadata of"))
    }

    fn named(&self, e: io::Error, verb: &str) -> io::Error {
        context(
            e,
            format_args!("could not {verb} {}", self.path().display()),
        )
    }
}

impl fmt::Debug for DirEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DirEntry").field(&self.path()).finish()
    }
}
