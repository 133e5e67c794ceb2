//! Tokio's `AsyncRead` and `AsyncWrite` for the TCP and Unix streams (feature
//! `tokio-io`), so that code written against those traits (tokio-util's
//! codecs, libraries that take `impl AsyncRead + AsyncWrite`) runs on
//! spindle's sockets. Only the traits come from tokio: no tokio runtime,
//! reactor or timer is started or needed.
//!
//! Implemented for [`TcpStream`], [`UnixStream`], a reference to either,
//! and their borrowed and owned halves (reads on the read halves, writes
//! on the write halves).
//!
//! Invariants, as tokio's traits state them:
//! - A read fills part of the `ReadBuf`'s unfilled region and advances it
//!   by exactly what the socket returned; advancing by nothing is end of
//!   stream. A `ReadBuf` with no room left is ready at once, without a
//!   syscall (spindle's own read would otherwise wait for readiness first).
//! - Nothing is buffered here: `poll_flush` is ready at once, and
//!   `poll_shutdown` is a half-close (`shutdown(Write)`), the peer then
//!   reading end of stream.
//! - Vectored writes are one `writev` (`is_write_vectored` is true).
//!
//! The read goes through `ReadBuf::initialize_unfilled`, which zeroes the
//! part of the buffer not yet initialized before the socket writes into
//! it: safe code, at the price of that `memset` where the caller hands in
//! fresh memory each time.

use super::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpStream, UnixStream, WriteHalf};
use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Runs `read` over the unfilled part of `buf` and advances it by the count
/// read; a full `buf` is ready at once.
fn read_into(
    buf: &mut ReadBuf<'_>,
    read: impl FnOnce(&mut [u8]) -> Poll<io::Result<usize>>,
) -> Poll<io::Result<()>> {
    if buf.remaining() == 0 {
        return Poll::Ready(Ok(()));
    }
    let n = ready!(read(buf.initialize_unfilled()))?;
    buf.advance(n);
    Poll::Ready(Ok(()))
}

/// `AsyncRead` for types with an inherent `poll_read(&self, cx, &mut [u8])`.
macro_rules! tokio_read {
    ($($t:ty),*) => {$(
        impl AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                let this = &*self;
                read_into(buf, |b| this.poll_read(cx, b))
            }
        }
    )*};
}

/// `AsyncWrite` for types with inherent `poll_write` and
/// `poll_write_vectored`; `$shutdown` half-closes the stream.
macro_rules! tokio_write {
    ($($t:ty => $shutdown:expr),*) => {$(
        impl AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                (&*self).poll_write(cx, buf)
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                (&*self).poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // nothing is buffered in user space
            }

            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                let shutdown: fn(&$t) -> io::Result<()> = $shutdown;
                Poll::Ready(shutdown(&self))
            }
        }
    )*};
}

tokio_read!(
    TcpStream,
    &TcpStream,
    ReadHalf<'_, TcpStream>,
    OwnedReadHalf<TcpStream>
);
tokio_read!(
    UnixStream,
    &UnixStream,
    ReadHalf<'_, UnixStream>,
    OwnedReadHalf<UnixStream>
);
tokio_write!(
    TcpStream => |s| s.shutdown(Shutdown::Write),
    &TcpStream => |s| s.shutdown(Shutdown::Write),
    WriteHalf<'_, TcpStream> => |s| s.shutdown(),
    OwnedWriteHalf<TcpStream> => |s| s.shutdown(),
    UnixStream => |s| s.shutdown(Shutdown::Write),
    &UnixStream => |s| s.shutdown(Shutdown::Write),
    WriteHalf<'_, UnixStream> => |s| s.shutdown(),
    OwnedWriteHalf<UnixStream> => |s| s.shutdown()
);
