//! [`SpindleIo`]: hyper's `Read` and `Write` over any `futures-io` stream
//! (spindle's `net::TcpStream`, its halves, or a user's TLS stream).
//!
//! Invariants:
//! - Reads go through the calling thread's scratch buffer (`scratch.rs`):
//!   hyper hands in uninitialized memory and futures-io reads into
//!   initialized bytes, so the inner stream fills the scratch and exactly
//!   the bytes it returned are copied into hyper's buffer. No `unsafe`,
//!   and no zeroing of hyper's buffer on every read.
//! - Writes, flushes and shutdowns go straight to the inner stream;
//!   hyper's `poll_shutdown` is futures-io's `poll_close`.
//! - `is_write_vectored` is what the wrapper was told
//!   ([`SpindleIo::with_vectored_writes`]; off by default), because
//!   futures-io cannot say whether a stream's `poll_write_vectored` sends
//!   more than the first buffer. hyper sends a response in one flattened
//!   write when it is off, and queues header and body buffers for one
//!   vectored write when it is on.
//! - The inner stream is structurally pinned: a `!Unpin` stream works, and
//!   is never moved once the wrapper is pinned.

use crate::scratch;
use futures_io::{AsyncRead, AsyncWrite};
use hyper::rt::{Read, ReadBufCursor, Write};
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// A `futures-io` stream as hyper's I/O: what hyper's `serve_connection`
    /// and `handshake` take.
    ///
    /// ```no_run
    /// # async fn f() -> std::io::Result<()> {
    /// let stream = spindle::net::TcpStream::connect("127.0.0.1:8080").await?;
    /// // spindle's TcpStream sends every buffer of a vectored write in one writev.
    /// let io = spindle_hyper::SpindleIo::new(stream).with_vectored_writes(true);
    /// # drop(io);
    /// # Ok(())
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct SpindleIo<T> {
        #[pin]
        inner: T,
        vectored: bool,
    }
}

impl<T> SpindleIo<T> {
    /// Wraps `inner`, with vectored writes reported off.
    pub fn new(inner: T) -> SpindleIo<T> {
        SpindleIo {
            inner,
            vectored: false,
        }
    }

    /// Whether to tell hyper that vectored writes are efficient: turn it on
    /// only for a stream whose `poll_write_vectored` writes more than the
    /// first buffer at once (spindle's `TcpStream` and its halves do).
    pub fn with_vectored_writes(mut self, on: bool) -> SpindleIo<T> {
        self.vectored = on;
        self
    }

    /// The inner stream.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The inner stream, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// The inner stream, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut T> {
        self.project().inner
    }

    /// Unwraps the inner stream.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: AsyncRead> Read for SpindleIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let mut inner = self.project().inner;
        scratch::read_into(&mut buf, |dst| inner.as_mut().poll_read(cx, dst))
    }
}

impl<T: AsyncWrite> Write for SpindleIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.vectored
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_close(cx)
    }
}
