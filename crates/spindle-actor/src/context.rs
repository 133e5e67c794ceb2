//! What an actor run is given: [`ActorContext`] (its name, the shutdown
//! vote, the graph's stop request, heartbeats).
//!
//! # The shutdown vote
//! Once the graph is asked to stop (by [`RunningGraph::request_shutdown`],
//! an actor's [`ActorContext::request_shutdown`], Ctrl-C, a deadline or a
//! spent restart budget), [`ActorContext::is_running`] asks the actor
//! whether it agrees to stop: `is_running(|| rx.is_closed_and_empty() &&
//! tx.mark_closed())` keeps a stage running until its input is drained,
//! then closes its output, so the stop travels down a pipeline behind the
//! last message and nothing in flight is lost. An actor that never agrees
//! is named in the stop report when the timeout of
//! [`RunningGraph::block_until_stopped`] runs out.
//!
//! [`RunningGraph::request_shutdown`]: crate::RunningGraph::request_shutdown
//! [`RunningGraph::block_until_stopped`]: crate::RunningGraph::block_until_stopped

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::actor::ActorCell;
use crate::graph::GraphShared;
use spindle::time::{self, Sleep};

/// Handed to each run of an actor.
#[derive(Clone)]
pub struct ActorContext {
    pub(crate) cell: Arc<ActorCell>,
    pub(crate) graph: Arc<GraphShared>,
}

impl ActorContext {
    /// The actor's name.
    pub fn name(&self) -> &str {
        &self.cell.name
    }

    /// How many times this actor was restarted before this run.
    pub fn restarts(&self) -> u64 {
        self.cell
            .restarts
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `true` while the graph runs. Once a stop was requested, calls
    /// `agree_to_stop` and returns `false` if it agrees: the actor should
    /// then return. Returning `true` after a stop request is a veto: the
    /// actor still has work (see the module docs).
    pub fn is_running(&self, agree_to_stop: impl FnOnce() -> bool) -> bool {
        if !self.graph.is_stopping() {
            return true;
        }
        !agree_to_stop()
    }

    /// Whether a stop of the graph was requested.
    pub fn is_stopping(&self) -> bool {
        self.graph.is_stopping()
    }

    /// Asks the whole graph to stop (each actor then votes through
    /// [`ActorContext::is_running`]).
    pub fn request_shutdown(&self) {
        self.graph.request_shutdown("requested by actor");
    }

    /// A heartbeat: [`Every::tick`] completes every `period` (a late tick
    /// is not made up for: missed beats are skipped), or early, once, when
    /// a stop request reaches this actor.
    pub fn every(&self, period: Duration) -> Every {
        Every {
            cell: self.cell.clone(),
            period: period.max(Duration::from_nanos(1)),
            next: Instant::now().checked_add(period),
            sleep: None,
        }
    }

    /// Sleeps for `d`, or less if a stop request reaches this actor (then
    /// returns `false`).
    pub async fn sleep(&self, d: Duration) -> bool {
        let mut beat = Every {
            cell: self.cell.clone(),
            period: d,
            next: Instant::now().checked_add(d),
            sleep: None,
        };
        beat.tick().await
    }
}

impl fmt::Debug for ActorContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorContext")
            .field("actor", &self.cell.name)
            .finish_non_exhaustive()
    }
}

/// A periodic heartbeat; see [`ActorContext::every`].
pub struct Every {
    cell: Arc<ActorCell>,
    period: Duration,
    /// The next beat (`None`: never; a period past what `Instant` holds,
    /// as `Duration::MAX` for "until the stop notice").
    next: Option<Instant>,
    sleep: Option<Sleep>,
}

impl Every {
    /// Waits for the next beat: `true` when the period elapsed, `false` when
    /// a stop request cut the wait short.
    pub fn tick(&mut self) -> Tick<'_> {
        Tick { every: self }
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}

/// Future of [`Every::tick`].
#[must_use = "futures do nothing unless polled"]
pub struct Tick<'a> {
    every: &'a mut Every,
}

impl Future for Tick<'_> {
    type Output = bool;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let e = &mut *self.get_mut().every;
        let now = Instant::now();
        if let Some(due) = e.next.filter(|&due| now >= due) {
            // Skip missed beats: the next one is a whole period after the
            // latest due beat.
            let period_ns = e.period.as_nanos().max(1);
            let beats = (now - due).as_nanos() / period_ns + 1;
            let ahead = Duration::from_nanos((beats * period_ns).min(u64::MAX as u128) as u64);
            e.next = due.checked_add(ahead);
            e.sleep = None;
            return Poll::Ready(true);
        }
        if e.cell.take_notice() {
            return Poll::Ready(false);
        }
        // Never: only the stop notice ends the wait (it wakes this task).
        let Some(next) = e.next else {
            return Poll::Pending;
        };
        let s = match &mut e.sleep {
            Some(s) if s.deadline() == Some(next.into()) => s,
            slot => slot.insert(time::sleep_until(next.into())),
        };
        if Pin::new(s).poll(cx).is_ready() {
            e.sleep = None;
            e.next = next.checked_add(e.period);
            return Poll::Ready(true);
        }
        Poll::Pending
    }
}
