//! The buffer a [`File`](super::File) lends each blocking job: read-ahead
//! bytes between jobs, the bytes of one write during a write job.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// Bytes one blocking read or write moves at most: bounds each job's copy
/// and the memory a `File` keeps.
pub(super) const MAX_BUF: usize = 1 << 20;

/// `bytes[pos..]` are read but not yet handed out (between jobs), or to
/// be written (inside a write job).
#[derive(Default)]
pub(super) struct Buf {
    bytes: Vec<u8>,
    pos: usize,
}

impl Buf {
    /// Bytes read from the file but not handed out yet.
    pub(super) fn unread(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Hands out as much of the unread bytes as `dst` takes.
    pub(super) fn copy_to(&mut self, dst: &mut [u8]) -> usize {
        let n = self.unread().min(dst.len());
        dst[..n].copy_from_slice(&self.bytes[self.pos..self.pos + n]);
        self.pos += n;
        if self.pos == self.bytes.len() {
            self.clear();
        }
        n
    }

    /// Forgets the unread bytes; returns the relative seek that moves the
    /// OS cursor back to the first of them (0 or negative).
    pub(super) fn discard_unread(&mut self) -> i64 {
        // At most MAX_BUF: no overflow.
        let back = -(self.unread() as i64);
        self.clear();
        back
    }

    /// Takes the bytes of one write (at most `MAX_BUF`); returns how many.
    pub(super) fn fill_from(&mut self, src: &[u8]) -> usize {
        debug_assert_eq!(self.unread(), 0, "a write buffer holds no read-ahead");
        let n = src.len().min(MAX_BUF);
        self.bytes.extend_from_slice(&src[..n]);
        n
    }

    /// Blocking: one read of up to `len` bytes from `file` into the
    /// buffer (empty before); end of file leaves it empty.
    pub(super) fn read_from(&mut self, mut file: &File, len: usize) -> io::Result<()> {
        self.clear();
        self.bytes.resize(len, 0);
        let r = loop {
            match file.read(&mut self.bytes) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => break r,
            }
        };
        self.bytes.truncate(*r.as_ref().unwrap_or(&0));
        r.map(drop)
    }

    /// Blocking: moves the cursor by `back` (undoing read-ahead), then
    /// writes every byte of the buffer to `file`. The buffer is empty
    /// afterwards, whatever happened.
    pub(super) fn write_to(&mut self, mut file: &File, back: i64) -> io::Result<()> {
        let r = seek_back(file, back).and_then(|()| file.write_all(&self.bytes[self.pos..]));
        self.clear();
        r
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.pos = 0;
    }
}

/// Blocking: moves `file`'s cursor by `back` (from `discard_unread`).
pub(super) fn seek_back(mut file: &File, back: i64) -> io::Result<()> {
    if back != 0 {
        file.seek(SeekFrom::Current(back))?;
    }
    Ok(())
}
