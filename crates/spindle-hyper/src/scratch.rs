//! The per-thread scratch buffer that [`SpindleIo`](crate::SpindleIo)'s
//! reads pass through.
//!
//! hyper reads into uninitialized memory (`ReadBufCursor`); a futures-io
//! stream reads into `&mut [u8]`, which must be initialized. Rather than
//! zero hyper's buffer before every read (its whole free space, several
//! KiB, for a request of a few hundred bytes) or reach for `unsafe`, the
//! stream reads into this thread's buffer, initialized once, and the bytes
//! it returned are copied out with the cursor's safe `put_slice`: the cost
//! is a copy of what was read.
//!
//! Invariants:
//! - One buffer per thread, grown to at most [`MAX_READ`] bytes and kept;
//!   it holds nothing between calls (every read is copied out before
//!   `read_into` returns).
//! - A read asks for at most `min(remaining, MAX_READ)` bytes, so what it
//!   returns always fits the cursor.
//! - A nested read on the same thread (an inner stream that itself reads
//!   through a `SpindleIo`), or one during thread teardown, reads through a
//!   fresh buffer of its own instead.

use hyper::rt::ReadBufCursor;
use std::cell::RefCell;
use std::io;
use std::task::{ready, Poll};

/// The most one read asks for; hyper's buffer grows past it for large
/// bodies, which then take several reads.
pub(crate) const MAX_READ: usize = 64 * 1024;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `read` over an initialized buffer of up to `cursor.remaining()`
/// bytes and copies what it read into `cursor`. Nothing copied (a read of
/// 0) is end of stream, as hyper reads it; a cursor with no room is ready
/// at once.
pub(crate) fn read_into(
    cursor: &mut ReadBufCursor<'_>,
    read: impl FnOnce(&mut [u8]) -> Poll<io::Result<usize>>,
) -> Poll<io::Result<()>> {
    let want = cursor.remaining().min(MAX_READ);
    if want == 0 {
        return Poll::Ready(Ok(()));
    }
    let mut read = Some(read);
    let shared = SCRATCH.try_with(|cell| {
        let mut scratch = cell.try_borrow_mut().ok()?;
        if scratch.len() < want {
            scratch.resize(want, 0);
        }
        let read = read.take().expect("read runs once");
        Some(read_then_copy(&mut scratch[..want], cursor, read))
    });
    match (shared, read) {
        (Ok(Some(done)), _) => done,
        (_, Some(read)) => read_then_copy(&mut vec![0; want], cursor, read),
        (_, None) => unreachable!("the shared buffer is refused before `read` is taken"),
    }
}

/// Reads into `buf`, then copies the bytes read into `cursor`.
fn read_then_copy(
    buf: &mut [u8],
    cursor: &mut ReadBufCursor<'_>,
    read: impl FnOnce(&mut [u8]) -> Poll<io::Result<usize>>,
) -> Poll<io::Result<()>> {
    let len = buf.len();
    let n = ready!(read(buf))?;
    let Some(got) = buf.get(..n) else {
        return Poll::Ready(Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a stream's poll_read returned {n} bytes read into a buffer of {len}"),
        )));
    };
    cursor.put_slice(got);
    Poll::Ready(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::{read_into, MAX_READ};
    use hyper::rt::ReadBuf;
    use std::io;
    use std::task::Poll;

    /// Runs `read_into` over a fresh buffer of `cap` bytes; returns the
    /// result, the length offered to `read`, and the bytes filled.
    fn run(
        cap: usize,
        read: impl FnOnce(&mut [u8]) -> Poll<io::Result<usize>>,
    ) -> (Poll<io::Result<()>>, usize, Vec<u8>) {
        let mut storage = vec![0xEE; cap];
        let mut buf = ReadBuf::new(&mut storage);
        let mut offered = 0;
        let polled = read_into(&mut buf.unfilled(), |dst| {
            offered = dst.len();
            read(dst)
        });
        (polled, offered, buf.filled().to_vec())
    }

    #[test]
    fn exactly_the_bytes_read_are_filled() {
        let (polled, offered, filled) = run(100, |dst| {
            dst[..5].copy_from_slice(b"hello");
            dst[5..].fill(b'!'); // written but not reported: not copied
            Poll::Ready(Ok(5))
        });
        assert!(matches!(polled, Poll::Ready(Ok(()))));
        assert_eq!(offered, 100);
        assert_eq!(filled, b"hello");
    }

    #[test]
    fn a_read_asks_for_at_most_max_read() {
        let (_, offered, filled) = run(MAX_READ * 2, |dst| Poll::Ready(Ok(dst.len())));
        assert_eq!(offered, MAX_READ);
        assert_eq!(filled.len(), MAX_READ);
    }

    #[test]
    fn pending_errors_and_end_of_stream_pass_through() {
        let (polled, _, filled) = run(8, |_| Poll::Pending);
        assert!(polled.is_pending());
        assert!(filled.is_empty());
        let (polled, _, _) = run(8, |_| {
            Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()))
        });
        match polled {
            Poll::Ready(Err(e)) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset),
            other => panic!("expected the reset, got {other:?}"),
        }
        let (polled, _, filled) = run(8, |_| Poll::Ready(Ok(0)));
        assert!(matches!(polled, Poll::Ready(Ok(()))));
        assert!(filled.is_empty(), "nothing filled: end of stream");
    }

    #[test]
    fn a_full_cursor_is_ready_without_reading() {
        let (polled, _, _) = run(0, |_| panic!("no read with no room"));
        assert!(matches!(polled, Poll::Ready(Ok(()))));
    }

    #[test]
    fn a_count_past_the_buffer_is_an_error_naming_it() {
        let (polled, _, filled) = run(4, |_| Poll::Ready(Ok(9)));
        match polled {
            Poll::Ready(Err(e)) => {
                assert_eq!(e.kind(), io::ErrorKind::InvalidData);
                assert!(
                    e.to_string()
                        .contains("returned 9 bytes read into a buffer of 4"),
                    "{e}"
                );
            }
            other => panic!("expected an error, got {other:?}"),
        }
        assert!(filled.is_empty());
    }

    #[test]
    fn a_nested_read_uses_a_buffer_of_its_own() {
        let (polled, _, filled) = run(16, |outer| {
            // The thread's buffer is lent to the outer read now.
            let (inner, _, inner_filled) = run(8, |dst| {
                dst[..3].copy_from_slice(b"in!");
                Poll::Ready(Ok(3))
            });
            assert!(matches!(inner, Poll::Ready(Ok(()))));
            assert_eq!(inner_filled, b"in!");
            outer[..3].copy_from_slice(b"out");
            Poll::Ready(Ok(3))
        });
        assert!(matches!(polled, Poll::Ready(Ok(()))));
        assert_eq!(filled, b"out");
    }
}
