//! The subscribing actor: an Aeron subscription's frames into a graph
//! channel, whole batches at a time.
//!
//! Invariants:
//! - frames are polled only when the downstream channel has taken the last
//!   batch: a slow downstream stops the polling, and Aeron's flow control
//!   then holds the publisher back (nothing is dropped on the way);
//! - every frame's sequence is checked against the next one expected: a
//!   subscriber that joins late, or rejoins after a restart, records the
//!   range it missed (`Endpoint::gaps`) and reports it, so nothing is lost
//!   silently; the end-of-stream frame's total is checked the same way;
//! - a frame with another type tag, or one that does not parse, stops the
//!   actor with an error naming the stream, and nothing of it is delivered;
//! - a stream has one publisher: the subscriber follows the first Aeron
//!   session it reads (across its restarts), and a frame from another
//!   session (a second publication on the stream id, or a restarted
//!   publishing process) stops it the same way;
//! - the end-of-stream frame closes the downstream channel; the publisher
//!   going away before it is an error naming the stream and sequence.

use crate::codec::Codec;
use crate::endpoint::{Direction, Endpoint};
use crate::error::AeronError;
use crate::frame::{self, Kind};
use crate::idle::{Idle, Idler};
use crate::pod::{describe, wait_for, Pod, ADD_TIMEOUT};
use crate::Stream;
use rusteron_client::{AeronSubscription, Handlers, IntoCString};
use spindle::time::Duration;
use spindle_actor::{ActorContext, ActorState, Graph, TxHandle};
use std::sync::{Arc, Mutex};

/// Frames taken per poll of the subscription.
const FRAGMENTS_PER_POLL: usize = 16;

/// What a subscription waits for, and where it starts.
#[derive(Debug, Clone, Copy)]
pub struct SubscribeOptions {
    /// How long to wait for a publisher before failing.
    pub connect_timeout: Duration,
    /// The first sequence number this subscriber expects: 0 for a fresh
    /// one; for one that replaces an earlier run (a restarted process),
    /// how many messages that run had taken, so that the gap it reports is
    /// exactly what neither run received.
    pub resume_from: u64,
    /// What the actor's thread does while no frame comes.
    pub idle: Idle,
}

impl Default for SubscribeOptions {
    fn default() -> Self {
        SubscribeOptions {
            connect_timeout: Duration::from_secs(10),
            resume_from: 0,
            idle: Idle::default(),
        }
    }
}

/// Adds an actor `name` to `graph` that delivers `stream`'s messages,
/// decoded by `codec`, into `output`; returns its live figures.
pub fn subscribe<T, C>(
    graph: &mut Graph,
    name: &str,
    output: &TxHandle<T>,
    pod: &Pod,
    stream: Stream,
    codec: C,
    options: SubscribeOptions,
) -> Arc<Endpoint>
where
    T: Send + 'static,
    C: Codec<T>,
{
    let endpoint = Endpoint::added_to(graph, name, Direction::Subscribe, &stream);
    let (output, pod, codec) = (output.clone(), pod.clone(), Arc::new(codec));
    // Where the stream was read up to survives restarts.
    let next = ActorState::new(Cursor {
        next: options.resume_from,
        session: None,
    });
    let ep = endpoint.clone();
    graph
        .actor(name)
        .writes(&output)
        .own_thread()
        .run(move |ctx| {
            let job = Job {
                stream: stream.clone(),
                codec: codec.clone(),
                endpoint: ep.clone(),
                options,
            };
            let (output, pod, next) = (output.clone(), pod.clone(), next.clone());
            async move { job.run(ctx, output, pod, next).await }
        });
    endpoint
}

/// How far the stream has been read, and from which publisher.
#[derive(Default)]
struct Cursor {
    /// The next sequence number expected.
    next: u64,
    /// The Aeron session of the publisher read so far.
    session: Option<i32>,
}

/// One run of the actor.
struct Job<C> {
    stream: Stream,
    codec: Arc<C>,
    endpoint: Arc<Endpoint>,
    options: SubscribeOptions,
}

/// What one poll's frames left to do.
#[derive(Default)]
struct Polled {
    ended: bool,
    error: Option<AeronError>,
}

impl<C> Job<C> {
    async fn run<T>(
        self,
        ctx: ActorContext,
        output: TxHandle<T>,
        pod: Pod,
        next: ActorState<Cursor>,
    ) -> Result<(), spindle_actor::ActorError>
    where
        T: Send + 'static,
        C: Codec<T>,
    {
        let Some(subscription) = self.connect(&ctx, &pod).await? else {
            return Ok(()); // the graph began stopping before a publisher came
        };
        self.endpoint.set_connected(true);
        // A mutex (never contended) makes the handle, which is `Send` but
        // not `Sync`, shareable across this future's awaits.
        let subscription = Mutex::new(subscription);
        let mut tx = output.lock()?;
        let mut items: Vec<T> = Vec::new();
        let mut idler = Idler::new(self.options.idle);
        loop {
            let polled = self.poll(
                &subscription.lock().unwrap_or_else(|e| e.into_inner()),
                &mut items,
                &next,
            )?;
            if !items.is_empty() {
                idler.reset();
                if tx.vacant() < items.len() {
                    self.endpoint.add_back_pressure();
                }
                if tx.send_batch(&mut items).await < items.len() {
                    return Ok(()); // the reader is gone: the graph is stopping
                }
            }
            if let Some(e) = polled.error {
                // A stream this end cannot read will not get better by
                // restarting: the pod stops (cleanly, with this error).
                ctx.request_shutdown();
                tx.mark_closed();
                return Err(e.into());
            }
            if polled.ended {
                self.endpoint.set_ended();
                tx.mark_closed();
                return Ok(());
            }
            self.still_connected(
                &subscription.lock().unwrap_or_else(|e| e.into_inner()),
                &next,
            )?;
            if !ctx.is_running(|| tx.mark_closed()) {
                return Ok(());
            }
            idler.idle().await;
        }
    }

    /// Opens the subscription and waits for a publisher to connect;
    /// `None` when the graph began stopping first.
    async fn connect(
        &self,
        ctx: &ActorContext,
        pod: &Pod,
    ) -> Result<Option<AeronSubscription>, AeronError> {
        let subscription = self.open(pod)?;
        let waited = self.options.connect_timeout;
        match wait_for(ctx, subscription, |s| s.is_connected(), waited).await {
            Ok(s) => Ok(Some(s)),
            Err(_) if ctx.is_stopping() => Ok(None),
            Err(_) => Err(AeronError::NoPeer {
                channel: self.stream.channel.clone(),
                stream_id: self.stream.stream_id,
                waited,
                role: "publisher",
            }),
        }
    }

    /// `PeerGone` once the publisher has left the stream.
    fn still_connected(
        &self,
        s: &AeronSubscription,
        next: &ActorState<Cursor>,
    ) -> Result<(), AeronError> {
        if s.is_connected() {
            return Ok(());
        }
        self.endpoint.set_connected(false);
        Err(AeronError::PeerGone {
            channel: self.stream.channel.clone(),
            stream_id: self.stream.stream_id,
            role: "publisher",
            at_sequence: next.lock().next,
        })
    }

    /// Adds the subscription (blocking this actor's own thread until the
    /// driver answers).
    fn open(&self, pod: &Pod) -> Result<AeronSubscription, AeronError> {
        let uri = self.stream.channel.clone().into_c_string();
        pod.aeron()
            .async_add_subscription(&uri, self.stream.stream_id, Handlers::NONE, Handlers::NONE)
            .and_then(|adding| adding.poll_blocking(ADD_TIMEOUT))
            .map_err(|e| AeronError::Channel {
                channel: self.stream.channel.clone(),
                stream_id: self.stream.stream_id,
                reason: describe(&e),
            })
    }

    /// One poll: decodes the frames that came into `items`.
    fn poll<T>(
        &self,
        s: &AeronSubscription,
        items: &mut Vec<T>,
        next: &ActorState<Cursor>,
    ) -> Result<Polled, AeronError>
    where
        C: Codec<T>,
    {
        let mut polled = Polled::default();
        let mut cursor = next.lock();
        s.poll_fn(
            |bytes, header| {
                if polled.ended || polled.error.is_some() {
                    return; // the rest of this poll is not delivered
                }
                let from = header.session_id();
                if let Err(e) = self.take_frame(bytes, from, items, &mut cursor, &mut polled) {
                    polled.error = Some(e);
                }
            },
            FRAGMENTS_PER_POLL,
        )
        .map_err(|e| AeronError::Channel {
            channel: self.stream.channel.clone(),
            stream_id: self.stream.stream_id,
            reason: format!("poll failed: {}", describe(&e)),
        })?;
        Ok(polled)
    }

    /// Checks one frame (from Aeron session `from`) and appends its messages.
    fn take_frame<T>(
        &self,
        bytes: &[u8],
        from: Option<i32>,
        items: &mut Vec<T>,
        cursor: &mut Cursor,
        polled: &mut Polled,
    ) -> Result<(), AeronError>
    where
        C: Codec<T>,
    {
        let bad = |reason: String| AeronError::Frame {
            channel: self.stream.channel.clone(),
            stream_id: self.stream.stream_id,
            reason,
        };
        self.follow_session(cursor, from)?;
        let f = frame::parse(bytes).map_err(|e| bad(e.0))?;
        let tag = self.codec.tag();
        if f.tag != tag.hash {
            return Err(AeronError::TypeMismatch {
                channel: self.stream.channel.clone(),
                stream_id: self.stream.stream_id,
                expected: tag.name,
                expected_tag: tag.hash,
                got_tag: f.tag,
            });
        }
        let expected = cursor.next;
        if f.sequence > expected {
            self.missed(expected, f.sequence);
        } else if f.sequence < expected {
            return Err(bad(format!(
                "sequence {} went backwards (expected {expected})",
                f.sequence
            )));
        }
        match f.kind {
            Kind::End => polled.ended = true,
            Kind::Batch => {
                let before = items.len();
                if let Err(e) = self.codec.decode(f.payload, f.count as usize, items) {
                    items.truncate(before);
                    return Err(bad(e.0));
                }
                self.endpoint.add_frame(u64::from(f.count));
            }
        }
        cursor.next = f.sequence + u64::from(f.count);
        Ok(())
    }

    /// Notes the first publisher's session; a frame from another session
    /// is `SecondPublisher`.
    fn follow_session(&self, cursor: &mut Cursor, from: Option<i32>) -> Result<(), AeronError> {
        match (cursor.session, from) {
            (Some(session), Some(other)) if other != session => Err(AeronError::SecondPublisher {
                channel: self.stream.channel.clone(),
                stream_id: self.stream.stream_id,
                session,
                other_session: other,
            }),
            (None, Some(first)) => {
                cursor.session = Some(first);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Records and reports messages `[from, to)` this subscriber never saw.
    fn missed(&self, from: u64, to: u64) {
        self.endpoint.add_gap(from, to);
        spindle::report::warn(
            spindle::report::Kind::Transport,
            format_args!(
                "spindle-actor-aeron: `{}` missed messages #{from}..#{to} ({} messages) of {} stream {}",
                self.endpoint.actor,
                to - from,
                self.stream.channel,
                self.stream.stream_id
            ),
        );
    }
}
