//! spindle-actor graphs across processes and machines, over Aeron.
//!
//! A pipeline that outgrows one process splits into *pods*, each a
//! [`Graph`](spindle_actor::Graph) of its own, joined by Aeron streams
//! (shared-memory IPC on one host, UDP between hosts):
//!
//! - [`publish`] adds an actor that sends a graph channel's messages out on
//!   an Aeron stream, whole batches per Aeron message, blocking upstream
//!   (never dropping) while Aeron applies back pressure;
//! - [`subscribe`] adds an actor that delivers a stream's messages into a
//!   graph channel, checking every batch's type tag and sequence;
//! - a [`Codec`] turns messages into bytes: [`PlainCodec`] for fixed-size
//!   plain data ([`Plain`]), [`SerdeCodec`] for serde types;
//! - a [`Pod`] is the process's Aeron client, with a media driver embedded
//!   in the process or already running ([`DriverMode`]).
//!
//! Several streams may share one channel (one UDP endpoint, or IPC): each
//! is its own stream id, ordered on its own.
//!
//! Shutdown crosses pods: when a publishing actor's input closes and
//! drains, it sends an end-of-stream frame with the total; the subscriber
//! closes its output channel on it, so the subscribing pod's graph drains
//! and stops with the same totals. A peer that goes away early is an error
//! naming the stream (the supervisor reports it and restarts the actor); a
//! subscriber that joins late or rejoins records and reports exactly which
//! sequence range it missed ([`Endpoint::gaps`]).
//!
//! Invariants: frames never exceed one Aeron message (`frame.rs`); a frame
//! that does not parse, or carries another type tag, is never delivered;
//! every error names the channel and stream or the driver directory.
//! `examples/distributed` runs FizzBuzz across two pods.

mod codec;
mod endpoint;
mod error;
mod frame;
mod idle;
mod pod;
mod publish;
mod subscribe;

pub use codec::{Codec, Plain, PlainCodec, SerdeCodec, Tag};
pub use endpoint::{Direction, Endpoint};
pub use error::AeronError;
pub use frame::FrameError;
pub use idle::Idle;
pub use pod::{DriverMode, Pod};
pub use publish::{publish, PublishOptions};
pub use subscribe::{subscribe, SubscribeOptions};

/// An Aeron channel and a stream id on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// An Aeron channel URI: `aeron:ipc`, `aeron:udp?endpoint=127.0.0.1:40123`.
    pub channel: String,
    pub stream_id: i32,
}

impl Stream {
    pub fn new(channel: impl Into<String>, stream_id: i32) -> Stream {
        Stream {
            channel: channel.into(),
            stream_id,
        }
    }
}
