//! The frame: what one Aeron message carries. A batch of a stream's
//! messages, or the end-of-stream marker after the last batch.
//!
//! Layout (little-endian), a 32-byte header then the payload:
//!
//! ```text
//! 0   magic     u32  "SPND"
//! 4   version   u8   FORMAT_VERSION
//! 5   kind      u8   0 = batch, 1 = end of stream
//! 6   reserved  u16  0
//! 8   tag       u64  the stream's type tag (codec and type; `codec.rs`)
//! 16  sequence  u64  batch: the first message's sequence number (from 0);
//!                    end: how many messages the stream carried in all
//! 24  count     u32  batch: messages in the payload; end: 0
//! 28  length    u32  payload bytes
//! 32  payload
//! ```
//!
//! Invariants: a frame always fits one Aeron message (the publisher sizes
//! batches to the publication's max payload, so Aeron never fragments
//! them); a parse failure names what was wrong and at which byte; nothing
//! of a frame that fails to parse is delivered.

use std::fmt;

/// "SPND", first bytes of every frame.
pub const MAGIC: u32 = u32::from_le_bytes(*b"SPND");
/// The layout above.
pub const FORMAT_VERSION: u8 = 1;
/// Header bytes before the payload.
pub const HEADER: usize = 32;

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Messages `sequence .. sequence + count`.
    Batch,
    /// The stream ended after `sequence` messages.
    End,
}

/// A parsed frame header and its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub kind: Kind,
    pub tag: u64,
    pub sequence: u64,
    pub count: u32,
    pub payload: &'a [u8],
}

/// Why bytes are not a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError(pub String);

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FrameError {}

/// Writes a header for `kind` at the start of `out` (cleared first); the
/// caller appends the payload, then calls [`seal`].
pub fn begin(out: &mut Vec<u8>, kind: Kind, tag: u64, sequence: u64) {
    out.clear();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.push(FORMAT_VERSION);
    out.push(match kind {
        Kind::Batch => 0,
        Kind::End => 1,
    });
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&sequence.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
}

/// Fills in the message count and payload length of a frame `begin` started.
pub fn seal(out: &mut [u8], count: u32) {
    let length = (out.len() - HEADER) as u32;
    out[24..28].copy_from_slice(&count.to_le_bytes());
    out[28..32].copy_from_slice(&length.to_le_bytes());
}

/// Parses `bytes` as one frame.
pub fn parse(bytes: &[u8]) -> Result<Frame<'_>, FrameError> {
    let bad = |what: String| Err(FrameError(what));
    if bytes.len() < HEADER {
        return bad(format!(
            "a frame of {} bytes, shorter than its {HEADER}-byte header",
            bytes.len()
        ));
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    if u32_at(0) != MAGIC {
        return bad(format!(
            "bytes 0..4 are {:08x}, not a spindle frame's magic",
            u32_at(0)
        ));
    }
    if bytes[4] != FORMAT_VERSION {
        return bad(format!(
            "frame format version {} (byte 4); this build reads version {FORMAT_VERSION}",
            bytes[4]
        ));
    }
    let kind = match bytes[5] {
        0 => Kind::Batch,
        1 => Kind::End,
        k => {
            return bad(format!(
                "frame kind {k} (byte 5): neither batch (0) nor end (1)"
            ))
        }
    };
    let length = u32_at(28) as usize;
    if bytes.len() - HEADER != length {
        return bad(format!(
            "the header says {length} payload bytes (bytes 28..32), the frame has {}",
            bytes.len() - HEADER
        ));
    }
    Ok(Frame {
        kind,
        tag: u64_at(8),
        sequence: u64_at(16),
        count: u32_at(24),
        payload: &bytes[HEADER..],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_round_trips_and_damage_is_named() {
        let mut out = Vec::new();
        begin(&mut out, Kind::Batch, 0xfeed, 40);
        out.extend_from_slice(&[1, 2, 3]);
        seal(&mut out, 3);
        let f = parse(&out).unwrap();
        assert_eq!(
            (f.kind, f.tag, f.sequence, f.count, f.payload),
            (Kind::Batch, 0xfeed, 40, 3, &[1u8, 2, 3][..])
        );

        assert!(parse(&out[..10]).unwrap_err().0.contains("shorter than"));
        let mut wrong = out.clone();
        wrong[0] = b'X';
        assert!(parse(&wrong).unwrap_err().0.contains("magic"));
        let mut wrong = out.clone();
        wrong[4] = 9;
        assert!(parse(&wrong).unwrap_err().0.contains("version 9"));
        let mut wrong = out.clone();
        wrong[5] = 7;
        assert!(parse(&wrong).unwrap_err().0.contains("kind 7"));
        assert!(parse(&out[..out.len() - 1])
            .unwrap_err()
            .0
            .contains("3 payload bytes"));
    }
}
