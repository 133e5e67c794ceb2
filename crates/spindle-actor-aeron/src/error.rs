//! [`AeronError`]: everything that stops a pod's Aeron side, each naming
//! the channel and stream (or the driver directory) at fault.

use std::fmt;
use std::time::Duration;

/// Why a pod's publication or subscription stopped (or never started).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AeronError {
    /// The media driver could not be launched or reached.
    Driver(String),
    /// Aeron refused the channel or stream (a malformed channel string, an
    /// endpoint already bound by another subscription).
    Channel {
        channel: String,
        stream_id: i32,
        reason: String,
    },
    /// Nobody appeared on the other end in time.
    NoPeer {
        channel: String,
        stream_id: i32,
        waited: Duration,
        role: &'static str,
    },
    /// The other end went away before the end of the stream.
    PeerGone {
        channel: String,
        stream_id: i32,
        role: &'static str,
        at_sequence: u64,
    },
    /// A frame carries another type tag than this end expects.
    TypeMismatch {
        channel: String,
        stream_id: i32,
        expected: String,
        expected_tag: u64,
        got_tag: u64,
    },
    /// Frames from a second publisher (another Aeron session) on a stream
    /// this subscriber reads from one: the stream id is in use by another
    /// publication, or the publishing process restarted.
    SecondPublisher {
        channel: String,
        stream_id: i32,
        session: i32,
        other_session: i32,
    },
    /// Bytes on the stream that are not a frame of ours.
    Frame {
        channel: String,
        stream_id: i32,
        reason: String,
    },
}

impl fmt::Display for AeronError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AeronError::Driver(why) => write!(f, "aeron: {why}"),
            AeronError::Channel {
                channel,
                stream_id,
                reason,
            } => {
                write!(f, "aeron: {channel} stream {stream_id}: {reason}")
            }
            AeronError::NoPeer {
                channel,
                stream_id,
                waited,
                role,
            } => write!(
                f,
                "aeron: no {role} appeared on {channel} stream {stream_id} within {waited:?}"
            ),
            AeronError::PeerGone {
                channel,
                stream_id,
                role,
                at_sequence,
            } => write!(
                f,
                "aeron: the {role} on {channel} stream {stream_id} went away before the end \
                 of the stream, at message #{at_sequence}"
            ),
            AeronError::TypeMismatch {
                channel,
                stream_id,
                expected,
                expected_tag,
                got_tag,
            } => {
                write!(
                    f,
                    "aeron: {channel} stream {stream_id} carries type tag {got_tag:016x}; \
                     this subscriber expects `{expected}` (tag {expected_tag:016x}): the two \
                     pods disagree on the message type or its encoding"
                )
            }
            AeronError::SecondPublisher {
                channel,
                stream_id,
                session,
                other_session,
            } => write!(
                f,
                "aeron: {channel} stream {stream_id}: frames from a second publisher (session \
                 {other_session}) beside the one this subscriber reads (session {session}): \
                 is the stream id in use by another publication, or did the publishing \
                 process restart? A stream has one publisher"
            ),
            AeronError::Frame {
                channel,
                stream_id,
                reason,
            } => {
                write!(
                    f,
                    "aeron: {channel} stream {stream_id}: a frame that does not parse: {reason}"
                )
            }
        }
    }
}

impl std::error::Error for AeronError {}
