//! Supervision: each actor runs inside a [`Supervised`] future that catches
//! its panics (and `Err` returns), restarts it with backoff within a
//! restart budget, applies the poison-message policy, and, when the actor
//! stops for good, retires its channel ends.
//!
//! # Invariants
//! - A run's future is polled inside `catch_unwind`; after a panic it is
//!   dropped at once (inside `catch_unwind` too), which returns its channel
//!   ends and [`ActorState`](crate::ActorState) guards to their handles
//!   before anything else looks at them.
//! - Failure bookkeeping happens with no run alive: the poison check reads
//!   the peek state each `Rx` left behind (`port.rs`), so the message that
//!   was being handled when the run failed is identified exactly when the
//!   actor peeks before it commits.
//! - Budget: more than `max_restarts` failures within `window` fail the
//!   actor for good; the graph is then asked to stop and the failure is put
//!   in the stop report.
//! - Backoff before restart `k` (counting failures still inside the window)
//!   is `backoff_min · 2^(k-1)`, capped at `backoff_max`.
//! - The waker of every poll is stored in the actor's cell *before* the
//!   poll (see `actor.rs`), and the actor is marked as the thread's current
//!   actor during it (for the wiring check of `lock`).
//! - When the actor stops (normally or failed), its outputs are closed
//!   (readers drain, then see closed) and its inputs dropped (writers see
//!   the reader gone), and the graph's live count goes down once.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::actor::{self, ActorCell, ActorStatus};
use crate::context::ActorContext;
use crate::error::ActorError;
use crate::graph::GraphShared;
use crate::port::ChannelInfo;
use spindle::report::{self, Kind};
use spindle::time::{self, Sleep};

pub(crate) type RunFuture = Pin<Box<dyn Future<Output = Result<(), ActorError>> + Send>>;
pub(crate) type Factory = Box<dyn FnMut(ActorContext) -> RunFuture + Send>;

/// How an actor is restarted after a panic or an `Err` return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestartPolicy {
    max_restarts: u32,
    window: Duration,
    backoff_min: Duration,
    backoff_max: Duration,
    poison_after: Option<u32>,
}

impl Default for RestartPolicy {
    /// Up to 10 restarts within 60 s; backoff from 1 ms doubling up to 1 s;
    /// a message on which the actor failed 3 times goes to dead letters.
    fn default() -> Self {
        RestartPolicy {
            max_restarts: 10,
            window: Duration::from_secs(60),
            backoff_min: Duration::from_millis(1),
            backoff_max: Duration::from_secs(1),
            poison_after: Some(3),
        }
    }
}

impl RestartPolicy {
    /// The default policy (see [`Default`]).
    pub fn new() -> RestartPolicy {
        RestartPolicy::default()
    }

    /// No restarts: the first failure fails the actor and stops the graph.
    pub fn never() -> RestartPolicy {
        RestartPolicy {
            max_restarts: 0,
            ..RestartPolicy::default()
        }
    }

    /// At most `max_restarts` restarts within any `window`; one more failure
    /// fails the actor and stops the graph with a report.
    pub fn budget(mut self, max_restarts: u32, window: Duration) -> RestartPolicy {
        self.max_restarts = max_restarts;
        self.window = window;
        self
    }

    /// Backoff before a restart: `min`, doubling per recent failure, at most
    /// `max`.
    pub fn backoff(mut self, min: Duration, max: Duration) -> RestartPolicy {
        self.backoff_min = min;
        self.backoff_max = max.max(min);
        self
    }

    /// After `n` failures in a row while the same peeked message sat at the
    /// head of an input, that message goes to the channel's dead-letter
    /// sink (`n >= 1`). `None` keeps retrying it (within the budget). A
    /// failure with a run of messages peeked (`Rx::peek_slots`) counts for
    /// none of them: the next runs peek one at a time past that run.
    pub fn poison_after(mut self, n: Option<u32>) -> RestartPolicy {
        self.poison_after = n.map(|n| n.max(1));
        self
    }

    fn backoff_for(&self, recent_failures: usize) -> Duration {
        let shift = recent_failures.saturating_sub(1).min(30) as u32;
        self.backoff_min
            .saturating_mul(1u32 << shift)
            .min(self.backoff_max)
    }
}

enum Phase {
    Start,
    Run(RunFuture),
    Backoff(Sleep),
    Done,
}

/// One actor under supervision; completes when the actor stops for good.
pub(crate) struct Supervised {
    cell: Arc<ActorCell>,
    graph: Arc<GraphShared>,
    inputs: Vec<Arc<dyn ChannelInfo>>,
    outputs: Vec<Arc<dyn ChannelInfo>>,
    factory: Factory,
    policy: RestartPolicy,
    phase: Phase,
    failures: VecDeque<Instant>,
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_string()
    }
}

impl Supervised {
    pub(crate) fn new(
        cell: Arc<ActorCell>,
        graph: Arc<GraphShared>,
        inputs: Vec<Arc<dyn ChannelInfo>>,
        outputs: Vec<Arc<dyn ChannelInfo>>,
        factory: Factory,
        policy: RestartPolicy,
    ) -> Supervised {
        Supervised {
            cell,
            graph,
            inputs,
            outputs,
            factory,
            policy,
            phase: Phase::Start,
            failures: VecDeque::new(),
        }
    }

    pub(crate) fn actor_name(&self) -> &str {
        &self.cell.name
    }

    /// `Phase::Start`: makes the actor's future (a panic there is a
    /// failure like any other). `Some` when the supervision is over.
    fn start(&mut self) -> Option<Poll<()>> {
        let ctx = ActorContext {
            cell: self.cell.clone(),
            graph: self.graph.clone(),
        };
        let _cur = actor::enter(&self.cell);
        match catch_unwind(AssertUnwindSafe(|| (self.factory)(ctx))) {
            Ok(fut) => {
                self.cell.set_status(ActorStatus::Running);
                self.phase = Phase::Run(fut);
                None
            }
            Err(p) => {
                let why = format!("panicked while starting: {}", panic_message(&*p));
                self.after_failure(why).then_some(Poll::Ready(()))
            }
        }
    }

    /// `Phase::Run`: polls the actor's future once, timing the poll; a
    /// failed run is dropped before the failure is looked at. `Some` when
    /// the poll is over (pending) or the supervision is.
    fn run(&mut self, cx: &mut Context<'_>) -> Option<Poll<()>> {
        let Phase::Run(fut) = &mut self.phase else {
            unreachable!("run() in another phase");
        };
        self.cell.set_waker(cx.waker());
        let outcome = {
            let _cur = actor::enter(&self.cell);
            let t0 = Instant::now();
            let r = catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx)));
            self.cell.add_poll(t0.elapsed().as_nanos() as u64);
            r
        };
        let why = match outcome {
            Ok(Poll::Pending) => return Some(Poll::Pending),
            Ok(Poll::Ready(Ok(()))) => {
                self.finish(ActorStatus::Stopped);
                return Some(Poll::Ready(()));
            }
            Ok(Poll::Ready(Err(e))) => format!("returned an error: {e}"),
            Err(p) => format!("panicked: {}", panic_message(&*p)),
        };
        // Drop the failed run now: its ends and state go back to their
        // handles before the failure is looked at.
        let old = std::mem::replace(&mut self.phase, Phase::Done);
        let _ = catch_unwind(AssertUnwindSafe(move || drop(old)));
        self.after_failure(why).then_some(Poll::Ready(()))
    }

    /// The actor stopped for good: retire its ends, count it out.
    fn finish(&mut self, status: ActorStatus) {
        self.phase = Phase::Done;
        for o in &self.outputs {
            o.retire_writer();
        }
        for i in &self.inputs {
            i.retire_reader();
        }
        self.cell.set_status(status);
        self.graph.actor_done();
    }

    /// A start or a run failed (no run future is left): wait out the
    /// backoff as `Restarting`, or finish as failed when the budget is
    /// spent. Returns whether the actor is done.
    fn after_failure(&mut self, why: String) -> bool {
        match self.on_failure(why) {
            Some(d) => {
                self.cell.set_status(ActorStatus::Restarting);
                self.phase = Phase::Backoff(time::sleep(d));
                false
            }
            None => {
                self.finish(ActorStatus::Failed);
                true
            }
        }
    }

    /// A run failed (its future is already dropped). Returns the backoff
    /// before the restart, or `None` when the budget is spent.
    fn on_failure(&mut self, why: String) -> Option<Duration> {
        let name = &self.cell.name;
        self.cell.set_failure(why.clone());
        if let Some(limit) = self.policy.poison_after {
            for i in &self.inputs {
                if let Some(pos) = i.after_reader_failure(limit) {
                    report::warn(
                        Kind::Restart,
                        format_args!(
                            "spindle-actor: actor `{name}` failed {limit} times on message \
                             #{pos} of channel `{}`: moved to dead letters",
                            i.name()
                        ),
                    );
                }
            }
        }
        let now = Instant::now();
        self.failures.push_back(now);
        while self
            .failures
            .front()
            .is_some_and(|&t| now.duration_since(t) > self.policy.window)
        {
            self.failures.pop_front();
        }
        if self.failures.len() > self.policy.max_restarts as usize {
            let msg = format!(
                "actor `{name}` failed {} times within {:?} (restart budget {}); last failure: {why}",
                self.failures.len(),
                self.policy.window,
                self.policy.max_restarts
            );
            report::warn(
                Kind::Restart,
                format_args!("spindle-actor: {msg}; stopping the graph"),
            );
            self.graph.record_failure(msg.clone());
            self.graph.request_shutdown(&msg);
            return None;
        }
        let backoff = self.policy.backoff_for(self.failures.len());
        self.cell.restarts.fetch_add(1, Ordering::Relaxed);
        report::warn(
            Kind::Restart,
            format_args!("spindle-actor: actor `{name}` {why}; restarting in {backoff:?}"),
        );
        Some(backoff)
    }
}

impl Future for Supervised {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            let step = match &mut this.phase {
                Phase::Done => return Poll::Ready(()),
                Phase::Start => this.start(),
                Phase::Run(_) => this.run(cx),
                Phase::Backoff(s) => {
                    this.cell.set_waker(cx.waker());
                    // A shutdown request (read after the waker is stored,
                    // which its notice wakes) cuts the wait short: the actor
                    // restarts at once to see it and take part in the stop,
                    // instead of sitting the backoff out as held out.
                    if !this.graph.is_stopping() && Pin::new(s).poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.phase = Phase::Start;
                    None
                }
            };
            if let Some(done) = step {
                return done;
            }
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if matches!(self.phase, Phase::Done) {
            return;
        }
        // Dropped unfinished: its task was cancelled, as when the graph's
        // runtime shuts down under it. It counts as failed, and its ends
        // are retired as at any finish, so that its peers see its outputs
        // closed and its inputs gone instead of waiting for ever, and the
        // graph's count of live actors reaches zero. The run future goes
        // first (its port locks give the ends back); a panic in its drop
        // is not let out of this one.
        let _ = catch_unwind(AssertUnwindSafe(|| self.phase = Phase::Done));
        self.cell
            .set_failure("cancelled: its task was dropped (the runtime shut down)".into());
        self.finish(ActorStatus::Failed);
    }
}

impl fmt::Debug for Supervised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Supervised")
            .field("actor", &self.cell.name)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RestartPolicy::new().backoff(Duration::from_millis(2), Duration::from_millis(10));
        let b: Vec<_> = (1..=5).map(|k| p.backoff_for(k).as_millis()).collect();
        assert_eq!(b, [2, 4, 8, 10, 10]);
    }
}
