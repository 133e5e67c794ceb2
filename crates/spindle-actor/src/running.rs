//! A started graph ([`RunningGraph`]): stop requests (explicit, Ctrl-C,
//! deadline), waiting for the actors, and the [`StopReport`].
//!
//! # Shutdown protocol
//! 1. A stop is requested (once; later requests are ignored): the graph's
//!    `stopping` flag is set, and each actor gets a *notice* that interrupts
//!    its current wait once (see `actor.rs`).
//! 2. Each actor votes in [`ActorContext::is_running`]: it stops when its
//!    inputs are drained (and closes its outputs), or vetoes while it still
//!    has work. Sources stop producing and close their outputs, so the
//!    stop follows the last message down each pipeline.
//! 3. An actor that returns is retired: its outputs close (readers drain,
//!    then see closed), its inputs are dropped (writers see it gone).
//! 4. [`RunningGraph::block_until_stopped`] waits for every actor; once a
//!    stop was requested it gives them `timeout` from the request and then
//!    reports the actors that held out. On a clean stop every channel's
//!    totals match: sent = taken ([`StopReport::totals_match`]).
//!
//! [`ActorContext::is_running`]: crate::ActorContext::is_running

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::actor::ActorStatus;
use crate::graph::GraphShared;
use crate::telemetry::TelemetryServer;

/// A started graph. Dropping it requests a stop (without waiting) and
/// stops the telemetry server.
pub struct RunningGraph {
    shared: Arc<GraphShared>,
    telemetry: Option<TelemetryServer>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl RunningGraph {
    pub(crate) fn new(
        shared: Arc<GraphShared>,
        telemetry: Option<TelemetryServer>,
        threads: Vec<std::thread::JoinHandle<()>>,
    ) -> RunningGraph {
        RunningGraph {
            shared,
            telemetry,
            threads,
        }
    }

    /// Asks every actor to stop (see the module docs).
    pub fn request_shutdown(&self) {
        self.shared
            .request_shutdown("requested by the graph's owner");
    }

    /// Requests a stop after `d` (a deadline), unless one came before.
    pub fn shutdown_after(&self, d: Duration) {
        let shared = self.shared.clone();
        drop(self.shared.rt.spawn(async move {
            spindle::time::sleep(d).await;
            shared.request_shutdown("deadline reached");
        }));
    }

    /// Requests a stop on Ctrl-C (SIGINT, through
    /// [`spindle::signal::ctrl_c`]; from then on SIGINT no longer ends the
    /// process by default). Fails if the handler cannot be installed.
    #[cfg(not(any(loom, miri)))]
    pub fn stop_on_ctrl_c(&self) -> Result<(), crate::GraphError> {
        let mut ctrl_c = spindle::signal::ctrl_c();
        // An installation failure is known at once: poll once to see it.
        let mut cx = Context::from_waker(std::task::Waker::noop());
        if let Poll::Ready(Err(e)) = Pin::new(&mut ctrl_c).poll(&mut cx) {
            return Err(crate::GraphError::CtrlC {
                reason: e.to_string(),
            });
        }
        let weak = Arc::downgrade(&self.shared);
        drop(self.shared.rt.spawn(async move {
            if ctrl_c.await.is_ok() {
                if let Some(s) = weak.upgrade() {
                    s.request_shutdown("Ctrl-C");
                }
            }
        }));
        Ok(())
    }

    /// Whether a stop was requested.
    pub fn is_stopping(&self) -> bool {
        self.shared.is_stopping()
    }

    /// Whether every actor has stopped.
    pub fn is_stopped(&self) -> bool {
        self.shared.live() == 0
    }

    /// Where the telemetry server listens, if the graph has one.
    pub fn telemetry_addr(&self) -> Option<SocketAddr> {
        self.telemetry.as_ref().map(|t| t.addr())
    }

    /// Blocks this thread until every actor stopped. Waits without limit
    /// for a stop request (or for the actors to finish by themselves);
    /// after a request, waits at most `timeout` from it, then returns the
    /// report naming the actors that held out.
    pub fn block_until_stopped(&self, timeout: Duration) -> StopReport {
        let s = &self.shared;
        let mut g = s.done_lock();
        loop {
            if s.live() == 0 {
                break;
            }
            // A deadline past what `Instant` holds: no limit.
            let wait = match s.stop_request().map(|(at, _)| at.checked_add(timeout)) {
                Some(Some(deadline)) => {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    deadline - now
                }
                Some(None) | None => Duration::from_millis(200),
            };
            g = s
                .done_cv
                .wait_timeout(g, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(g);
        self.report()
    }

    /// [`block_until_stopped`](Self::block_until_stopped) for async
    /// callers: needed with a current-thread runtime, whose tasks only run
    /// inside its `block_on` (`rt.block_on(running.wait_stopped(t))`).
    pub async fn wait_stopped(&self, timeout: Duration) -> StopReport {
        let s = &self.shared;
        loop {
            if s.live() == 0 {
                break;
            }
            // A deadline past what `Instant` holds: no limit.
            let deadline = match s.stop_request().map(|(at, _)| at.checked_add(timeout)) {
                Some(Some(deadline)) if Instant::now() >= deadline => break,
                Some(Some(deadline)) => deadline,
                Some(None) | None => Instant::now() + Duration::from_millis(200),
            };
            let mut stopped = self.stopped();
            let mut sleep = spindle::time::sleep_until(deadline.into());
            std::future::poll_fn(|cx| {
                if Pin::new(&mut stopped).poll(cx).is_ready()
                    || Pin::new(&mut sleep).poll(cx).is_ready()
                {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
            .await;
        }
        self.report()
    }

    /// Completes when every actor has stopped (no timeout; see
    /// [`wait_stopped`](Self::wait_stopped) for one).
    pub fn stopped(&self) -> Stopped<'_> {
        Stopped {
            shared: &self.shared,
        }
    }

    /// The state of every actor and channel now.
    pub fn report(&self) -> StopReport {
        let s = &self.shared;
        let stop = s.stop_request();
        StopReport {
            graph: s.name.clone(),
            stop_reason: stop.as_ref().map(|(_, r)| r.clone()),
            actors: s
                .actors
                .iter()
                .map(|a| ActorReport {
                    name: a.name.clone(),
                    status: a.status(),
                    restarts: a.restarts.load(std::sync::atomic::Ordering::Relaxed),
                    last_failure: a.last_failure(),
                    busy: Duration::from_nanos(
                        a.busy_ns.load(std::sync::atomic::Ordering::Relaxed),
                    ),
                    polls: a.polls.load(std::sync::atomic::Ordering::Relaxed),
                })
                .collect(),
            channels: s
                .channels
                .iter()
                .map(|c| {
                    // Taken first: on a running graph a message may be sent
                    // and taken between the two reads, and `taken` must not
                    // pass the `sent` read after it.
                    let taken = c.taken();
                    ChannelReport {
                        name: c.name().to_string(),
                        from: c.writer().map(|a| a.name.clone()).unwrap_or_default(),
                        to: c.reader().map(|a| a.name.clone()).unwrap_or_default(),
                        sent: c.sent(),
                        taken,
                        dead_letters: c.dead_letters(),
                        dead_letters_dropped: c.dead_letters_dropped(),
                    }
                })
                .collect(),
            failures: s.failures(),
        }
    }
}

impl Drop for RunningGraph {
    fn drop(&mut self) {
        self.shared.request_shutdown("the RunningGraph was dropped");
        if let Some(t) = self.telemetry.take() {
            t.stop();
        }
        // Actor threads are detached: they end when their actor does.
        self.threads.clear();
    }
}

impl fmt::Debug for RunningGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunningGraph")
            .field("graph", &self.shared.name)
            .field("live_actors", &self.shared.live())
            .finish_non_exhaustive()
    }
}

/// Future of [`RunningGraph::stopped`].
#[must_use = "futures do nothing unless polled"]
pub struct Stopped<'a> {
    shared: &'a Arc<GraphShared>,
}

impl Future for Stopped<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.shared.live() == 0 || !self.shared.register_done(cx.waker()) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// One actor in a [`StopReport`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorReport {
    /// Its name.
    pub name: String,
    /// Where it is in its life.
    pub status: ActorStatus,
    /// Restarts after failures.
    pub restarts: u64,
    /// Its latest failure, if any.
    pub last_failure: Option<String>,
    /// Time spent inside its polls, every run.
    pub busy: Duration,
    /// Polls of its future, every run.
    pub polls: u64,
}

/// One channel in a [`StopReport`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelReport {
    /// Its name.
    pub name: String,
    /// The writing actor.
    pub from: String,
    /// The reading actor.
    pub to: String,
    /// Messages sent.
    pub sent: u64,
    /// Messages taken (dead letters included).
    pub taken: u64,
    /// Messages moved to dead letters by the poison policy.
    pub dead_letters: u64,
    /// Of those, the ones no dead-letter sink took (none was set, or it
    /// was full or closed): lost, so the report is not clean.
    pub dead_letters_dropped: u64,
}

/// What [`RunningGraph::block_until_stopped`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopReport {
    /// The graph's name.
    pub graph: String,
    /// Why the stop was requested, if it was.
    pub stop_reason: Option<String>,
    /// Every actor.
    pub actors: Vec<ActorReport>,
    /// Every channel.
    pub channels: Vec<ChannelReport>,
    /// Actors that ran out of restart budget, with their last failure.
    pub failures: Vec<String>,
}

impl StopReport {
    /// Every actor stopped, none failed, every channel's totals match, and
    /// no dead letter was dropped for want of a sink.
    pub fn is_clean(&self) -> bool {
        self.held_out().is_empty()
            && self.failures.is_empty()
            && self.totals_match()
            && self.channels.iter().all(|c| c.dead_letters_dropped == 0)
    }

    /// Actors still running (or restarting): they held out.
    pub fn held_out(&self) -> Vec<&str> {
        self.actors
            .iter()
            .filter(|a| !a.status.is_done())
            .map(|a| a.name.as_str())
            .collect()
    }

    /// Every channel delivered all it was sent: sent = taken.
    pub fn totals_match(&self) -> bool {
        self.channels.iter().all(|c| c.sent == c.taken)
    }

    /// The report of channel `name`.
    pub fn channel(&self, name: &str) -> Option<&ChannelReport> {
        self.channels.iter().find(|c| c.name == name)
    }

    /// The report of actor `name`.
    pub fn actor(&self, name: &str) -> Option<&ActorReport> {
        self.actors.iter().find(|a| a.name == name)
    }
}

impl fmt::Display for StopReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held = self.held_out();
        let verdict = if self.is_clean() {
            "stopped cleanly"
        } else if !held.is_empty() {
            "did not stop in time"
        } else if !self.failures.is_empty() {
            "stopped after a failure"
        } else {
            "stopped with messages left in channels"
        };
        writeln!(f, "graph `{}` {verdict}", self.graph)?;
        if let Some(r) = &self.stop_reason {
            writeln!(f, "  stop: {r}")?;
        }
        if !held.is_empty() {
            writeln!(f, "  held out: {}", held.join(", "))?;
        }
        for m in &self.failures {
            writeln!(f, "  failure: {m}")?;
        }
        for a in &self.actors {
            write!(
                f,
                "  actor {:<16} {:<10} restarts {} busy {:.3} s in {} polls",
                a.name,
                a.status.as_str(),
                a.restarts,
                a.busy.as_secs_f64(),
                a.polls
            )?;
            if let Some(w) = &a.last_failure {
                write!(f, " (last: {w})")?;
            }
            writeln!(f)?;
        }
        for c in &self.channels {
            write!(
                f,
                "  channel {:<14} {} -> {}: sent {} taken {}",
                c.name, c.from, c.to, c.sent, c.taken
            )?;
            if c.dead_letters > 0 {
                write!(f, " (dead letters {}", c.dead_letters)?;
                if c.dead_letters_dropped > 0 {
                    write!(f, ", {} dropped: no sink took them", c.dead_letters_dropped)?;
                }
                write!(f, ")")?;
            }
            if c.sent > c.taken {
                write!(f, " ({} left)", c.sent - c.taken)?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
