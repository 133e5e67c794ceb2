//! What TCP and Unix streams share in their API: the halves
//! ([`ReadHalf`], [`WriteHalf`], [`OwnedReadHalf`], [`OwnedWriteHalf`],
//! generic over the stream, TCP by default), and `stream_api!`, which gives
//! a stream type its reads, writes, splits and `futures-io` traits.
//!
//! Invariants:
//! - a half only reads or only writes; both halves of one stream may be
//!   used at once (every operation takes `&self`);
//! - dropping the owned write half does not shut writing down (the peer
//!   would see end of stream while the read half still lives): call
//!   `shutdown`; the socket closes when both owned halves are dropped.

use super::TcpStream;
use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A stream type that splits into halves: [`TcpStream`] and
/// [`UnixStream`](super::UnixStream). Sealed.
pub trait Split: sealed::Sealed {}

pub(crate) mod sealed {
    use super::*;

    pub trait Sealed {
        /// The peer's address type.
        type Addr;
        fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;
        fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;
        fn poll_write_vectored(
            &self,
            cx: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<io::Result<usize>>;
        fn shutdown(&self, how: Shutdown) -> io::Result<()>;
        fn peer_addr(&self) -> io::Result<Self::Addr>;
    }
}

/// The reading half of a stream, borrowed (`split`).
#[derive(Debug)]
pub struct ReadHalf<'a, S: Split = TcpStream>(pub(crate) &'a S);

/// The writing half of a stream, borrowed (`split`).
#[derive(Debug)]
pub struct WriteHalf<'a, S: Split = TcpStream>(pub(crate) &'a S);

/// The reading half of a stream, owned (`into_split`).
#[derive(Debug)]
pub struct OwnedReadHalf<S: Split = TcpStream>(pub(crate) Arc<S>);

/// The writing half of a stream, owned (`into_split`).
#[derive(Debug)]
pub struct OwnedWriteHalf<S: Split = TcpStream>(pub(crate) Arc<S>);

/// Owned halves of `stream`.
pub(crate) fn into_split<S: Split>(stream: S) -> (OwnedReadHalf<S>, OwnedWriteHalf<S>) {
    let s = Arc::new(stream);
    (OwnedReadHalf(s.clone()), OwnedWriteHalf(s))
}

macro_rules! read_half {
    ($($t:ty),*) => {$(
        impl<S: Split> $t {
            /// Reads into `buf`; `Ok(0)` at end of stream.
            pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
                std::future::poll_fn(|cx| self.0.poll_read(cx, buf)).await
            }
            /// Reads exactly `buf.len()` bytes. Not cancel-safe.
            pub async fn read_exact(&self, buf: &mut [u8]) -> io::Result<()> {
                crate::io::stream_io::read_exact(buf, |cx, b| self.0.poll_read(cx, b)).await
            }
            /// Poll form of `read`.
            pub fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.0.poll_read(cx, buf)
            }
            /// The remote address.
            pub fn peer_addr(&self) -> io::Result<S::Addr> {
                self.0.peer_addr()
            }
        }
        impl<S: Split> futures_io::AsyncRead for $t {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.0.poll_read(cx, buf)
            }
        }
    )*};
}

macro_rules! write_half {
    ($($t:ty),*) => {$(
        impl<S: Split> $t {
            /// Writes some of `buf`; returns how many bytes.
            pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
                std::future::poll_fn(|cx| self.0.poll_write(cx, buf)).await
            }
            /// Writes all of `buf`.
            pub async fn write_all(&self, buf: &[u8]) -> io::Result<()> {
                crate::io::stream_io::write_all(buf, |cx, b| self.0.poll_write(cx, b)).await
            }
            /// Poll form of `write`.
            pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.0.poll_write(cx, buf)
            }
            /// Writes some of `bufs`, in order, in one `writev`.
            pub async fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
                std::future::poll_fn(|cx| self.0.poll_write_vectored(cx, bufs)).await
            }
            /// Poll form of `write_vectored`.
            pub fn poll_write_vectored(&self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
                self.0.poll_write_vectored(cx, bufs)
            }
            /// Half-close: the peer reads end of stream.
            pub fn shutdown(&self) -> io::Result<()> {
                self.0.shutdown(Shutdown::Write)
            }
            /// The remote address.
            pub fn peer_addr(&self) -> io::Result<S::Addr> {
                self.0.peer_addr()
            }
        }
        impl<S: Split> futures_io::AsyncWrite for $t {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.0.poll_write(cx, buf)
            }
            fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
                self.0.poll_write_vectored(cx, bufs)
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // nothing is buffered in user space
            }
            fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.0.shutdown(Shutdown::Write))
            }
        }
    )*};
}

read_half!(ReadHalf<'_, S>, OwnedReadHalf<S>);
write_half!(WriteHalf<'_, S>, OwnedWriteHalf<S>);

/// For a stream type `$t` with a `StreamIo` in field `io`, an address type
/// `$addr` and a `shutdown(&self, Shutdown)` of its own: reads, writes,
/// splits, `Split`, and `futures-io`'s traits for `$t` and `&$t`.
macro_rules! stream_api {
    ($t:ident, $addr:ty) => {
        impl $t {
            /// Reads into `buf`; `Ok(0)` at end of stream (the peer shut
            /// down its writing side) or for an empty `buf`.
            pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
                std::future::poll_fn(|cx| self.io.poll_read(cx, buf)).await
            }

            /// Reads exactly `buf.len()` bytes; [`io::ErrorKind::UnexpectedEof`]
            /// if the stream ends first. Not cancel-safe (bytes read so far are lost).
            pub async fn read_exact(&self, buf: &mut [u8]) -> io::Result<()> {
                crate::io::stream_io::read_exact(buf, |cx, b| self.io.poll_read(cx, b)).await
            }

            /// Writes some of `buf`; returns how many bytes.
            pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
                std::future::poll_fn(|cx| self.io.poll_write(cx, buf)).await
            }

            /// Writes all of `buf`, waiting whenever the socket buffer is full.
            pub async fn write_all(&self, buf: &[u8]) -> io::Result<()> {
                crate::io::stream_io::write_all(buf, |cx, b| self.io.poll_write(cx, b)).await
            }

            /// Poll form of [`read`](Self::read).
            pub fn poll_read(
                &self,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                self.io.poll_read(cx, buf)
            }

            /// Poll form of [`write`](Self::write).
            pub fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.io.poll_write(cx, buf)
            }

            /// Writes some of `bufs`, in order, in one `writev`; returns how
            /// many bytes in all.
            pub async fn write_vectored(&self, bufs: &[std::io::IoSlice<'_>]) -> io::Result<usize> {
                std::future::poll_fn(|cx| self.io.poll_write_vectored(cx, bufs)).await
            }

            /// Poll form of [`write_vectored`](Self::write_vectored).
            pub fn poll_write_vectored(
                &self,
                cx: &mut Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                self.io.poll_write_vectored(cx, bufs)
            }

            /// Borrowed halves, to read and write concurrently in one task
            /// (with `join`-like combinators); for two tasks use
            /// [`into_split`](Self::into_split).
            pub fn split(&self) -> (crate::net::ReadHalf<'_, $t>, crate::net::WriteHalf<'_, $t>) {
                (crate::net::ReadHalf(self), crate::net::WriteHalf(self))
            }

            /// Owned halves that can move to two tasks. The connection
            /// closes when both are dropped; dropping the write half does
            /// not shut writing down (call `OwnedWriteHalf::shutdown`).
            pub fn into_split(
                self,
            ) -> (
                crate::net::OwnedReadHalf<$t>,
                crate::net::OwnedWriteHalf<$t>,
            ) {
                crate::net::split::into_split(self)
            }
        }

        impl crate::net::Split for $t {}

        impl crate::net::split::sealed::Sealed for $t {
            type Addr = $addr;
            fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.io.poll_read(cx, buf)
            }
            fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.io.poll_write(cx, buf)
            }
            fn poll_write_vectored(
                &self,
                cx: &mut Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                self.io.poll_write_vectored(cx, bufs)
            }
            fn shutdown(&self, how: std::net::Shutdown) -> io::Result<()> {
                $t::shutdown(self, how)
            }
            fn peer_addr(&self) -> io::Result<$addr> {
                $t::peer_addr(self)
            }
        }

        crate::net::split::futures_io_for!($t, &$t);
    };
}
pub(crate) use stream_api;

macro_rules! futures_io_for {
    ($($t:ty),*) => {$(
        impl futures_io::AsyncRead for $t {
            fn poll_read(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.io.poll_read(cx, buf)
            }
        }
        impl futures_io::AsyncWrite for $t {
            fn poll_write(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.io.poll_write(cx, buf)
            }
            fn poll_write_vectored(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
                self.io.poll_write_vectored(cx, bufs)
            }
            fn poll_flush(self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // nothing is buffered in user space
            }
            fn poll_close(self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.shutdown(std::net::Shutdown::Write))
            }
        }
    )*};
}
pub(crate) use futures_io_for;
