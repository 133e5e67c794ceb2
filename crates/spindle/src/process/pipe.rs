//! The parent's ends of a child's standard pipes, made non-blocking and
//! registered with the reactor: [`ChildStdin`], [`ChildStdout`],
//! [`ChildStderr`].
//!
//! Only the parent's end changes mode: the child's end is another
//! descriptor (made by `std::process` at spawn), and stays blocking.

use crate::io::stream_io::{self, StreamIo};
use mio::unix::pipe::{Receiver, Sender};
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

/// `end`, made non-blocking, on the current runtime's reactor (read and
/// written with the stream protocol sockets use).
fn pipe<T: AsRawFd>(
    end: T,
    set_nonblocking: impl FnOnce(&T) -> io::Result<()>,
) -> io::Result<StreamIo<T>> {
    set_nonblocking(&end)?;
    StreamIo::new(end)
}

/// The child's standard input, when spawned with `stdin(Stdio::piped())`:
/// implements `futures_io::AsyncWrite`.
///
/// The child reads end of file once this is dropped or closed
/// (`AsyncWriteExt::close`, [`close`](Self::close)); writes after the
/// child closed its end fail with [`io::ErrorKind::BrokenPipe`].
pub struct ChildStdin {
    /// `None` once closed.
    pipe: Option<StreamIo<Sender>>,
}

impl ChildStdin {
    /// Takes over a std child's stdin (made non-blocking here); needs a
    /// spindle runtime.
    pub fn from_std(stdin: std::process::ChildStdin) -> io::Result<ChildStdin> {
        let pipe = pipe(Sender::from(stdin), |s| s.set_nonblocking(true))?;
        Ok(ChildStdin { pipe: Some(pipe) })
    }

    /// Writes some of `buf`, waiting while the pipe is full; returns how many bytes.
    pub async fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_write_buf(cx, buf)).await
    }

    /// Writes all of `buf`, waiting whenever the pipe is full.
    pub async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        stream_io::write_all(buf, |cx, b| self.poll_write_buf(cx, b)).await
    }

    /// Closes the pipe: the child reads end of file. Later writes fail.
    pub fn close(&mut self) {
        self.pipe = None;
    }

    fn poll_write_buf(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match &self.pipe {
            Some(pipe) => pipe.poll_write(cx, buf),
            None => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the child's stdin was closed",
            ))),
        }
    }
}

impl futures_io::AsyncWrite for ChildStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_buf(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(())) // nothing is buffered in user space
    }

    /// Closes the pipe (see [`ChildStdin::close`]).
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().close();
        Poll::Ready(Ok(()))
    }
}

impl fmt::Debug for ChildStdin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fd = self.pipe.as_ref().map(|p| p.inner().as_raw_fd());
        f.debug_struct("ChildStdin").field("fd", &fd).finish()
    }
}

/// `ChildStdout` and `ChildStderr`: a reading pipe end, with
/// `futures_io::AsyncRead`, an inherent `read`, and its fd.
macro_rules! reader {
    ($(#[$doc:meta])* $name:ident, $std:ty) => {
        $(#[$doc])*
        pub struct $name {
            pipe: StreamIo<Receiver>,
        }

        impl $name {
            /// Takes over the std pipe end (made non-blocking here); needs
            /// a spindle runtime.
            pub fn from_std(end: $std) -> io::Result<$name> {
                let pipe = pipe(Receiver::from(end), |r| r.set_nonblocking(true))?;
                Ok($name { pipe })
            }

            /// Reads into `buf`; `Ok(0)` at end of stream (every copy of
            /// the child's end is closed: usually, the child exited).
            pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
                poll_fn(|cx| self.pipe.poll_read(cx, buf)).await
            }

            /// Poll form of [`read`](Self::read).
            pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.pipe.poll_read(cx, buf)
            }
        }

        impl futures_io::AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.pipe.poll_read(cx, buf)
            }
        }

        impl AsRawFd for $name {
            fn as_raw_fd(&self) -> RawFd {
                self.pipe.inner().as_raw_fd()
            }
        }

        impl AsFd for $name {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.pipe.inner().as_fd()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("fd", &self.as_raw_fd()).finish()
            }
        }
    };
}

reader!(
    /// The child's standard output, when spawned with
    /// `stdout(Stdio::piped())`: implements `futures_io::AsyncRead`.
    ChildStdout,
    std::process::ChildStdout
);
reader!(
    /// The child's standard error, when spawned with
    /// `stderr(Stdio::piped())`: implements `futures_io::AsyncRead`.
    ChildStderr,
    std::process::ChildStderr
);
