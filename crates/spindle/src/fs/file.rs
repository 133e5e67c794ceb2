//! `File`: an open file whose reads, writes and seeks run on the blocking
//! pool, behind `futures_io`'s `AsyncRead`, `AsyncWrite` and `AsyncSeek`.
//!
//! A `File` is idle, holding its buffer ([`Buf`]), or busy with one
//! blocking job that has the buffer and gives it back with what it did
//! (an [`Op`]). The job's `JoinHandle` lives in the `File`, so a poll that
//! returned `Pending` and was then dropped leaves the job running and
//! findable: the next poll (of any kind) waits for it first.
//!
//! - A read job fills the buffer with up to the caller's length (at most
//!   `MAX_BUF`); the read that started it, or the next one, hands the bytes
//!   out. Bytes a smaller later read did not take stay as read-ahead.
//! - A write copies the caller's bytes (at most `MAX_BUF`) into the buffer,
//!   starts a job that writes them all, and returns at once: the bytes
//!   count as written. The job's error, if any, is kept and returned by the
//!   next write or flush (or `sync_all`, `set_len`, `metadata`, which
//!   flush first). `poll_flush` waits for the write in flight.
//! - A seek is a job too. `AsyncSeek` has one method, called again with
//!   the same position after `Pending`: a finished seek job answers the
//!   call asking for the same position it was started for.
//!
//! Invariants:
//! - at most one job is in flight, and only it touches the OS cursor;
//! - while idle the buffer holds only read-ahead (write bytes never wait in
//!   it: they leave with the job that writes them), and the OS cursor is
//!   ahead of the position the caller sees by exactly its unread bytes; a
//!   write, seek or `set_len` first forgets those bytes and moves the
//!   cursor back by as many (`Buf::discard_unread`, `seek_back`).
//!
//! Dropping a `File` with a job in flight detaches the job: a write still
//! completes on the pool, and its error is lost (flush first to see it).
//! A runtime shut down before the job started cancels it.

use super::buf::{seek_back, Buf, MAX_BUF};
use super::{context, join_error, pool, run, OpenOptions};
use crate::task::JoinHandle;
use crate::Handle;
use futures_io::{AsyncRead, AsyncSeek, AsyncWrite};
use std::fmt;
use std::fs::Metadata;
use std::future::{poll_fn, Future};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// An open file, for spindle tasks: reads, writes and seeks run on the
/// blocking pool.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let mut f = spindle::fs::File::create("/tmp/greeting").await?;
/// f.write_all(b"hello").await?;
/// f.sync_all().await?; // flushes, then fsync
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
///
/// Implements `futures_io::{AsyncRead, AsyncWrite, AsyncSeek}`, and has
/// inherent [`read`](Self::read), [`write_all`](Self::write_all),
/// [`flush`](Self::flush) and [`seek`](Self::seek).
///
/// - **A write returns once its bytes are copied** (up to 1 MiB per call)
///   and handed to the blocking pool. Its error, if it fails, is returned
///   by the next write or [`flush`](Self::flush); flush to know that
///   everything written so far reached the OS.
/// - **Dropping a `File` does not cancel a write in flight**: it completes
///   on the pool, and its error is lost. A runtime shut down before the
///   job started drops it.
/// - Reading may read ahead of what a call returns when a call with a
///   smaller buffer follows a pending one; the next write, seek or
///   [`set_len`](Self::set_len) moves the OS position back first, so the
///   position is always the one the caller sees.
/// - Errors name the path: `could not read /data/x: Is a directory (os
///   error 21)`.
pub struct File {
    std: Arc<std::fs::File>,
    /// How errors name the file.
    path: Arc<Path>,
    state: State,
    /// A finished write's error, already named, for the next write or
    /// flush to return.
    write_err: Option<io::Error>,
}

enum State {
    Idle(Buf),
    Busy(JoinHandle<(Op, Buf)>),
}

/// What a finished job did.
enum Op {
    /// Filled the buffer.
    Read(io::Result<()>),
    Write(io::Result<()>),
    /// The position asked for (as the caller gave it), and the offset.
    Seek(SeekFrom, io::Result<u64>),
    /// The length asked for.
    SetLen(u64, io::Result<()>),
}

impl File {
    /// Opens `path` for reading. Errors name the path: `could not open
    /// /tmp/x/missing.txt: No such file or directory (os error 2)`.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().read(true).open(path).await
    }

    /// Opens `path` for writing, creating it or truncating it.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        options.open(path).await
    }

    /// The builder for other ways of opening: [`OpenOptions`].
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Takes over an open std file; errors call it by its fd number.
    pub fn from_std(std: std::fs::File) -> File {
        let path = Path::new(&format!("fd {}", std.as_raw_fd())).into();
        File::with_path(std, path)
    }

    pub(super) fn with_path(std: std::fs::File, path: Arc<Path>) -> File {
        File {
            std: Arc::new(std),
            path,
            state: State::Idle(Buf::default()),
            write_err: None,
        }
    }

    /// Reads into `buf`; `Ok(0)` at end of file or for an empty `buf`.
    pub async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_read_buf(cx, buf)).await
    }

    /// Writes all of `buf` (each chunk handed to the pool as
    /// [`AsyncWrite::poll_write`] does); the last chunk may still be in
    /// flight when this returns.
    pub async fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let n = poll_fn(|cx| self.poll_write_buf(cx, buf)).await?;
            buf = &buf[n..];
        }
        Ok(())
    }

    /// Waits for the write in flight; returns the error of any write that
    /// failed since the last flush.
    pub async fn flush(&mut self) -> io::Result<()> {
        poll_fn(|cx| self.poll_flush_writes(cx)).await
    }

    /// Moves the position; returns the new offset from the start.
    pub async fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        poll_fn(|cx| self.poll_seek_to(cx, pos)).await
    }

    /// Flushes, then waits until the data and metadata are on the device
    /// ([`std::fs::File::sync_all`]).
    pub async fn sync_all(&mut self) -> io::Result<()> {
        self.flush().await?;
        let std = self.std.clone();
        let r = run(move || std.sync_all()).await;
        r.map_err(|e| self.named(e, "sync"))
    }

    /// Flushes, then waits until the data is on the device
    /// ([`std::fs::File::sync_data`]).
    pub async fn sync_data(&mut self) -> io::Result<()> {
        self.flush().await?;
        let std = self.std.clone();
        let r = run(move || std.sync_data()).await;
        r.map_err(|e| self.named(e, "sync"))
    }

    /// Flushes, then truncates or extends the file to `size` bytes
    /// (extended with zeros). The position does not move.
    pub async fn set_len(&mut self, size: u64) -> io::Result<()> {
        self.flush().await?;
        poll_fn(|cx| self.poll_set_len(cx, size)).await
    }

    /// Flushes (so the length includes every write made so far), then
    /// reads the file's metadata.
    pub async fn metadata(&mut self) -> io::Result<Metadata> {
        self.flush().await?;
        let std = self.std.clone();
        let r = run(move || std.metadata()).await;
        r.map_err(|e| self.named(e, "read metadata of"))
    }

    fn named(&self, e: io::Error, verb: &str) -> io::Error {
        context(e, format_args!("could not {verb} {}", self.path.display()))
    }

    /// The runtime to run a job on, or an error naming the file.
    fn pool(&self, verb: &str) -> io::Result<Handle> {
        pool().map_err(|e| self.named(e, verb))
    }

    fn buf(&mut self) -> &mut Buf {
        match &mut self.state {
            State::Idle(buf) => buf,
            State::Busy(_) => unreachable!("the buffer is only used while idle"),
        }
    }

    /// Starts `job` on `pool` with the buffer (idle until now).
    fn start<F>(&mut self, pool: Handle, job: F)
    where
        F: FnOnce(&std::fs::File, &mut Buf) -> Op + Send + 'static,
    {
        let mut buf = std::mem::take(self.buf());
        let std = self.std.clone();
        self.state = State::Busy(pool.spawn_blocking(move || {
            let op = job(&std, &mut buf);
            (op, buf)
        }));
    }

    /// Waits for the job in flight, if any, and takes its buffer back.
    /// Gives what a finished read, seek or `set_len` did; a write's error
    /// goes to `write_err` instead.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<Op>>> {
        let State::Busy(job) = &mut self.state else {
            return Poll::Ready(Ok(None));
        };
        let done = ready!(Pin::new(job).poll(cx));
        match done {
            Ok((op, buf)) => {
                self.state = State::Idle(buf);
                match op {
                    Op::Write(r) => {
                        if let Err(e) = r {
                            self.write_err = Some(self.named(e, "write"));
                        }
                        Poll::Ready(Ok(None))
                    }
                    op => Poll::Ready(Ok(Some(op))),
                }
            }
            Err(e) => {
                // The pool dropped the job (shutdown): its buffer is gone.
                self.state = State::Idle(Buf::default());
                Poll::Ready(Err(self.named(join_error(e), "finish an operation on")))
            }
        }
    }

    fn poll_read_buf(&mut self, cx: &mut Context<'_>, dst: &mut [u8]) -> Poll<io::Result<usize>> {
        loop {
            if let Some(Op::Read(r)) = ready!(self.poll_idle(cx))? {
                if let Err(e) = r {
                    return Poll::Ready(Err(self.named(e, "read")));
                }
                return Poll::Ready(Ok(self.buf().copy_to(dst)));
            }
            if self.buf().unread() > 0 || dst.is_empty() {
                return Poll::Ready(Ok(self.buf().copy_to(dst)));
            }
            let pool = self.pool("read")?;
            let len = dst.len().min(MAX_BUF);
            self.start(pool, move |f, buf| Op::Read(buf.read_from(f, len)));
        }
    }

    fn poll_write_buf(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        // Whatever finished: read-ahead stays in the buffer (undone below),
        // a seek's or `set_len`'s result had no caller left waiting for it.
        ready!(self.poll_idle(cx))?;
        if let Some(e) = self.write_err.take() {
            return Poll::Ready(Err(e));
        }
        if src.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let pool = self.pool("write")?;
        let back = self.buf().discard_unread();
        let n = self.buf().fill_from(src);
        self.start(pool, move |f, buf| Op::Write(buf.write_to(f, back)));
        Poll::Ready(Ok(n))
    }

    fn poll_flush_writes(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_idle(cx))?;
        Poll::Ready(self.write_err.take().map_or(Ok(()), Err))
    }

    fn poll_seek_to(&mut self, cx: &mut Context<'_>, pos: SeekFrom) -> Poll<io::Result<u64>> {
        loop {
            if let Some(Op::Seek(asked, r)) = ready!(self.poll_idle(cx))? {
                if asked == pos {
                    return Poll::Ready(r.map_err(|e| self.named(e, "seek in")));
                }
            }
            let pool = self.pool("seek in")?;
            // The OS cursor is ahead by the unread bytes.
            let unread = self.buf().unread() as i64;
            let target = match pos {
                SeekFrom::Current(n) => match n.checked_sub(unread) {
                    Some(n) => SeekFrom::Current(n),
                    None => {
                        let e =
                            io::Error::new(io::ErrorKind::InvalidInput, "seek offset overflows");
                        return Poll::Ready(Err(self.named(e, "seek in")));
                    }
                },
                p => p,
            };
            self.buf().discard_unread();
            self.start(pool, move |mut f, _| Op::Seek(pos, f.seek(target)));
        }
    }

    fn poll_set_len(&mut self, cx: &mut Context<'_>, size: u64) -> Poll<io::Result<()>> {
        loop {
            if let Some(Op::SetLen(asked, r)) = ready!(self.poll_idle(cx))? {
                if asked == size {
                    return Poll::Ready(r.map_err(|e| self.named(e, "set the length of")));
                }
            }
            let pool = self.pool("set the length of")?;
            let back = self.buf().discard_unread();
            self.start(pool, move |f, _| {
                Op::SetLen(size, seek_back(f, back).and_then(|()| f.set_len(size)))
            });
        }
    }
}

impl AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_read_buf(cx, buf)
    }
}

impl AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_buf(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_writes(cx)
    }

    /// Flushes; the file itself closes when the `File` is dropped.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_writes(cx)
    }
}

impl AsyncSeek for File {
    fn poll_seek(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        pos: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        self.get_mut().poll_seek_to(cx, pos)
    }
}

impl AsRawFd for File {
    fn as_raw_fd(&self) -> RawFd {
        self.std.as_raw_fd()
    }
}

impl AsFd for File {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.std.as_fd()
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File")
            .field("path", &self.path)
            .field("fd", &self.std.as_raw_fd())
            .field("busy", &matches!(self.state, State::Busy(_)))
            .finish()
    }
}
