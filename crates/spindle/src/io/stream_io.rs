//! `StreamIo<S>`: a byte stream's fd on the reactor (a TCP or Unix stream
//! socket, a child's pipe), and the read/write protocol they all share.
//!
//! Invariants:
//! - the registration is dropped (deregistered) before the fd closes
//!   (field order);
//! - a read that filled less than its buffer (and was not end of stream),
//!   or a write that took less than it was given, clears readiness with
//!   the tick seen before the attempt (`Registration::poll_io_drain`): the
//!   kernel only stops short when the receive queue is empty or the send
//!   buffer full, which saves the syscall that would return `WouldBlock`.

use super::{Direction, Registration};
use std::future::poll_fn;
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::task::{Context, Poll};

pub(crate) struct StreamIo<S> {
    reg: Registration,
    inner: S,
}

impl<S: AsRawFd> StreamIo<S> {
    /// Registers `inner` (already non-blocking) with the current runtime.
    pub(crate) fn new(inner: S) -> io::Result<StreamIo<S>> {
        Ok(StreamIo {
            reg: Registration::new(inner.as_raw_fd())?,
            inner,
        })
    }

    pub(crate) fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S> StreamIo<S>
where
    for<'a> &'a S: Read,
{
    pub(crate) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let len = buf.len();
        self.reg.poll_io_drain(
            Direction::Read,
            cx,
            || (&self.inner).read(buf),
            |&n| n > 0 && n < len,
        )
    }
}

impl<S> StreamIo<S>
where
    for<'a> &'a S: Write,
{
    pub(crate) fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.reg.poll_io_drain(
            Direction::Write,
            cx,
            || (&self.inner).write(buf),
            |&n| n > 0 && n < buf.len(),
        )
    }

    /// Writes some of `bufs`, in order, in one `writev`.
    pub(crate) fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        self.reg.poll_io_drain(
            Direction::Write,
            cx,
            || (&self.inner).write_vectored(bufs),
            |&n| n > 0 && n < len,
        )
    }
}

impl<S: AsFd> StreamIo<S> {
    /// After a non-blocking `connect`: waits until the handshake is over.
    /// Writable means it is, one way or the other: `SO_ERROR` says which;
    /// no peer address yet means not over after all (a spurious
    /// readiness), so the next edge is awaited.
    pub(crate) async fn finish_connect(&self) -> io::Result<()> {
        let socket = socket2::SockRef::from(&self.inner);
        self.reg
            .io(Direction::Write, || {
                if let Some(e) = socket.take_error()? {
                    return Err(e);
                }
                match socket.peer_addr() {
                    Ok(_) => Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                        Err(io::ErrorKind::WouldBlock.into())
                    }
                    Err(e) => Err(e),
                }
            })
            .await
    }
}

/// Reads exactly `buf.len()` bytes through `poll_read`;
/// [`io::ErrorKind::UnexpectedEof`] if the stream ends first.
pub(crate) async fn read_exact(
    mut buf: &mut [u8],
    mut poll_read: impl FnMut(&mut Context<'_>, &mut [u8]) -> Poll<io::Result<usize>>,
) -> io::Result<()> {
    while !buf.is_empty() {
        match poll_fn(|cx| poll_read(cx, buf)).await? {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("stream ended with {} bytes still to read", buf.len()),
                ))
            }
            n => buf = &mut buf[n..],
        }
    }
    Ok(())
}

/// Writes all of `buf` through `poll_write`.
pub(crate) async fn write_all(
    mut buf: &[u8],
    mut poll_write: impl FnMut(&mut Context<'_>, &[u8]) -> Poll<io::Result<usize>>,
) -> io::Result<()> {
    while !buf.is_empty() {
        match poll_fn(|cx| poll_write(cx, buf)).await? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => buf = &buf[n..],
        }
    }
    Ok(())
}
