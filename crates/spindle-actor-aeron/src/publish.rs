//! The publishing actor: a graph channel's messages out through an Aeron
//! publication, whole batches per frame.
//!
//! Invariants:
//! - a batch is as many messages as fit one Aeron message (the
//!   publication's max payload less the frame header), so Aeron never
//!   fragments a frame and a subscriber sees whole batches;
//! - nothing is dropped: an offer refused for back pressure is retried (the
//!   upstream ring fills meanwhile, and its writer waits); the frame being
//!   offered, the next sequence number and the publication itself live in
//!   the actor's state, so a restart offers the same frame again in the
//!   same Aeron session (a subscriber never sees two sessions of a stream,
//!   whose frames would interleave);
//! - the subscriber going away before the end of the stream is an error
//!   naming the stream and sequence (the supervisor reports and restarts
//!   the actor, which waits for a subscriber again);
//! - after the upstream channel closes and drains, an end-of-stream frame
//!   carries the total, and the actor stops once the subscriber has left
//!   (or after `linger`).

use crate::codec::Codec;
use crate::endpoint::{Direction, Endpoint};
use crate::error::AeronError;
use crate::frame::{self, Kind, HEADER};
use crate::idle::{Idle, Idler};
use crate::pod::{describe, wait_for, Pod, ADD_TIMEOUT};
use crate::Stream;
use rusteron_client::{AeronExclusivePublication, AeronOfferError, IntoCString};
use spindle::time::Duration;
use spindle_actor::{ActorContext, ActorState, Graph, RxHandle};
use std::sync::{Arc, Mutex};

/// What a publication waits for, and how long.
#[derive(Debug, Clone, Copy)]
pub struct PublishOptions {
    /// How long to wait for a subscriber before failing.
    pub connect_timeout: Duration,
    /// After the end-of-stream frame: how long to wait for the subscriber
    /// to leave before stopping anyway.
    pub linger: Duration,
    /// What the actor's thread does while Aeron refuses an offer for
    /// back pressure.
    pub idle: Idle,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            connect_timeout: Duration::from_secs(10),
            linger: Duration::from_secs(5),
            idle: Idle::default(),
        }
    }
}

/// What survives a restart: the next sequence number and the frame not
/// yet accepted by Aeron.
#[derive(Default)]
struct Progress {
    next: u64,
    pending: Option<Vec<u8>>,
}

/// Adds an actor `name` to `graph` that publishes `input`'s messages on
/// `stream`, encoded by `codec`; returns its live figures.
pub fn publish<T, C>(
    graph: &mut Graph,
    name: &str,
    input: &RxHandle<T>,
    pod: &Pod,
    stream: Stream,
    codec: C,
    options: PublishOptions,
) -> Arc<Endpoint>
where
    T: Send + 'static,
    C: Codec<T>,
{
    let endpoint = Endpoint::added_to(graph, name, Direction::Publish, &stream);
    let (input, pod, codec) = (input.clone(), pod.clone(), Arc::new(codec));
    let progress = ActorState::new(Progress::default());
    let sessions = ActorState::new(None);
    let ep = endpoint.clone();
    graph
        .actor(name)
        .reads(&input)
        .own_thread()
        .run(move |ctx| {
            let job = Job {
                stream: stream.clone(),
                codec: codec.clone(),
                endpoint: ep.clone(),
                options,
            };
            let (input, pod) = (input.clone(), pod.clone());
            let (progress, sessions) = (progress.clone(), sessions.clone());
            async move { job.run(ctx, input, pod, progress, sessions).await }
        });
    endpoint
}

/// One run of the actor (a restart makes a new one).
struct Job<C> {
    stream: Stream,
    codec: Arc<C>,
    endpoint: Arc<Endpoint>,
    options: PublishOptions,
}

/// What one offer came to.
enum Offered {
    Taken,
    Refused,
    Failed(AeronError),
}

impl<C> Job<C> {
    async fn run<T>(
        self,
        ctx: ActorContext,
        input: RxHandle<T>,
        pod: Pod,
        progress: ActorState<Progress>,
        sessions: ActorState<Option<Mutex<AeronExclusivePublication>>>,
    ) -> Result<(), spindle_actor::ActorError>
    where
        T: Send + 'static,
        C: Codec<T>,
    {
        // The publication outlives a failed run: a restart goes on in the
        // same Aeron session, so a subscriber never sees two sessions of
        // one stream (whose frames would interleave).
        let mut session = sessions.lock();
        if session.is_none() {
            *session = Some(Mutex::new(self.open(&pod)?));
        }
        let publication = session.as_ref().expect("opened above");
        let connected = |p: &&Mutex<AeronExclusivePublication>| locked(p).is_connected();
        match wait_for(&ctx, publication, connected, self.options.connect_timeout).await {
            Ok(_) => {}
            Err(_) if ctx.is_stopping() => return Ok(()),
            Err(_) => return Err(self.no_subscriber().into()),
        }
        self.endpoint.set_connected(true);
        let room = locked(publication)
            .max_payload_length()
            .map_err(|e| self.refused(describe(&e)))?;
        let capacity = (room.saturating_sub(HEADER) / self.codec.max_size()).max(1);
        let tag = self.codec.tag().hash;
        let mut rx = input.lock()?;
        let mut items = Vec::with_capacity(capacity);
        loop {
            let pending = progress.lock().pending.take();
            if let Some(frame) = pending {
                self.offer_until_taken(publication, frame, &progress)
                    .await?;
                continue;
            }
            if rx.take_batch(&mut items, capacity) == 0 {
                if !ctx.is_running(|| rx.is_closed_and_empty()) {
                    break;
                }
                if rx.wait_avail(1).await.is_none() && rx.is_closed_and_empty() {
                    break;
                }
                continue;
            }
            let mut p = progress.lock();
            let frame = self.encode_batch(&items, tag, &mut p);
            p.pending = Some(frame);
            items.clear();
        }
        self.finish(&ctx, publication, &progress, tag).await?;
        *session = None;
        Ok(())
    }

    /// The frame of `items`, numbered from `progress.next`, which moves
    /// past them.
    fn encode_batch<T>(&self, items: &[T], tag: u64, progress: &mut Progress) -> Vec<u8>
    where
        C: Codec<T>,
    {
        let mut frame = Vec::with_capacity(HEADER + items.len() * self.codec.max_size());
        frame::begin(&mut frame, Kind::Batch, tag, progress.next);
        self.codec.encode(items, &mut frame);
        frame::seal(&mut frame, items.len() as u32);
        progress.next += items.len() as u64;
        frame
    }

    /// Sends the end frame, then waits (up to the linger) for the
    /// subscriber to leave once it has read it.
    async fn finish(
        &self,
        ctx: &ActorContext,
        publication: &Mutex<AeronExclusivePublication>,
        progress: &ActorState<Progress>,
        tag: u64,
    ) -> Result<(), AeronError> {
        let total = progress.lock().next;
        let mut end = Vec::with_capacity(HEADER);
        frame::begin(&mut end, Kind::End, tag, total);
        frame::seal(&mut end, 0);
        self.offer_until_taken(publication, end, progress).await?;
        self.endpoint.set_ended();
        let gone = |p: &&Mutex<AeronExclusivePublication>| !locked(p).is_connected();
        let _ = wait_for(ctx, publication, gone, self.options.linger).await;
        Ok(())
    }

    /// Adds the publication (blocking this actor's own thread until the
    /// driver answers).
    fn open(&self, pod: &Pod) -> Result<AeronExclusivePublication, AeronError> {
        let uri = self.stream.channel.clone().into_c_string();
        pod.aeron()
            .async_add_exclusive_publication(&uri, self.stream.stream_id)
            .and_then(|adding| adding.poll_blocking(ADD_TIMEOUT))
            .map_err(|e| self.refused(describe(&e)))
    }

    fn refused(&self, reason: String) -> AeronError {
        AeronError::Channel {
            channel: self.stream.channel.clone(),
            stream_id: self.stream.stream_id,
            reason,
        }
    }

    fn no_subscriber(&self) -> AeronError {
        AeronError::NoPeer {
            channel: self.stream.channel.clone(),
            stream_id: self.stream.stream_id,
            waited: self.options.connect_timeout,
            role: "subscriber",
        }
    }

    /// Offers `frame` until Aeron takes it, backing off while it refuses
    /// for back pressure; on a fatal refusal the frame goes back to
    /// `progress` for the next run.
    async fn offer_until_taken(
        &self,
        p: &Mutex<AeronExclusivePublication>,
        frame: Vec<u8>,
        progress: &ActorState<Progress>,
    ) -> Result<(), AeronError> {
        let mut idler = Idler::new(self.options.idle);
        loop {
            let offered = self.offer_once(&locked(p), &frame);
            match offered {
                Offered::Taken => return Ok(()),
                Offered::Refused => idler.idle().await,
                Offered::Failed(e) => {
                    progress.lock().pending = Some(frame);
                    return Err(e);
                }
            }
        }
    }

    fn offer_once(&self, p: &AeronExclusivePublication, frame: &[u8]) -> Offered {
        match p.offer(frame) {
            Ok(position) => {
                let count = frame::parse(frame).map_or(0, |f| f.count);
                self.endpoint.add_frame(u64::from(count));
                self.endpoint.set_window(p.position_limit() - position);
                Offered::Taken
            }
            Err(AeronOfferError::BackPressured | AeronOfferError::AdminAction) => {
                self.endpoint.add_back_pressure();
                Offered::Refused
            }
            Err(AeronOfferError::NotConnected) => {
                self.endpoint.set_connected(false);
                Offered::Failed(AeronError::PeerGone {
                    channel: self.stream.channel.clone(),
                    stream_id: self.stream.stream_id,
                    role: "subscriber",
                    at_sequence: frame::parse(frame).map_or(0, |f| f.sequence),
                })
            }
            Err(other) => Offered::Failed(self.refused(format!("offer refused: {other}"))),
        }
    }
}

/// The publication, from its never-contended mutex (which makes the
/// handle, `Send` but not `Sync`, shareable across the run's awaits).
fn locked(
    p: &Mutex<AeronExclusivePublication>,
) -> std::sync::MutexGuard<'_, AeronExclusivePublication> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}
