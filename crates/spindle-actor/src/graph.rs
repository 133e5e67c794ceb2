//! The [`Graph`] builder: named channels, actors wired to them, teams and
//! threads, telemetry; [`Graph::start`] checks the wiring and runs it.
//!
//! # Invariants
//! - Every channel has exactly one writing and one reading actor when the
//!   graph starts; anything else is a [`GraphError`] naming the channel
//!   and the actor (a channel nobody reads is an error, not a silent pile
//!   of messages).
//! - Actor and channel names are unique within a graph (telemetry and the
//!   stop report identify them by name).
//! - Mistakes made while building (an end declared by two actors, a
//!   capacity of zero, an actor without a body) are kept and reported by
//!   `start`, so the builder methods stay chainable.
//! - [`GraphShared`] is the running graph's state: the stop flag, the live
//!   actor count, recorded failures. `live` goes down exactly once per
//!   actor (in `Supervised::finish`).

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::Waker;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::actor::{ActorCell, RunMode};
use crate::bundle::{RxBundle, TxBundle};
use crate::context::ActorContext;
use crate::error::{GraphError, IntoActorResult};
use crate::port::{ChannelInfo, ChannelShared, RxHandle, TxHandle};
use crate::running::RunningGraph;
use crate::supervisor::{Factory, RestartPolicy, RunFuture, Supervised};
use crate::team::Team;
use crate::telemetry::{self, TelemetryConfig};

/// Default channel capacity when none is given.
pub const DEFAULT_CAPACITY: usize = 1024;

/// The running graph's shared state.
pub(crate) struct GraphShared {
    pub(crate) name: String,
    pub(crate) actors: Vec<Arc<ActorCell>>,
    pub(crate) channels: Vec<Arc<dyn ChannelInfo>>,
    stopping: AtomicBool,
    stop_request: Mutex<Option<(Instant, String)>>,
    live: AtomicUsize,
    done_lock: Mutex<()>,
    pub(crate) done_cv: Condvar,
    done_wakers: Mutex<Vec<Waker>>,
    failures: Mutex<Vec<String>>,
    pub(crate) started: Instant,
    pub(crate) rt: spindle::Handle,
}

impl GraphShared {
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Asks every actor to stop (once; later calls do nothing).
    pub(crate) fn request_shutdown(&self, why: &str) {
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        *self.stop_request.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), why.to_string()));
        for a in &self.actors {
            a.give_notice();
        }
        let _g = self.done_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.done_cv.notify_all();
    }

    pub(crate) fn stop_request(&self) -> Option<(Instant, String)> {
        self.stop_request
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn record_failure(&self, msg: String) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(msg);
    }

    pub(crate) fn failures(&self) -> Vec<String> {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// One actor stopped for good.
    pub(crate) fn actor_done(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            {
                let _g = self.done_lock.lock().unwrap_or_else(|p| p.into_inner());
                self.done_cv.notify_all();
            }
            let ws =
                std::mem::take(&mut *self.done_wakers.lock().unwrap_or_else(|p| p.into_inner()));
            for w in ws {
                w.wake();
            }
        }
    }

    pub(crate) fn done_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.done_lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `w` to be woken when the last actor stops; `false` if that
    /// already happened.
    pub(crate) fn register_done(&self, w: &Waker) -> bool {
        let mut g = self.done_wakers.lock().unwrap_or_else(|p| p.into_inner());
        if self.live() == 0 {
            return false;
        }
        if !g.iter().any(|x| x.will_wake(w)) {
            g.push(w.clone());
        }
        true
    }
}

struct ActorSpec {
    cell: Arc<ActorCell>,
    inputs: Vec<Arc<dyn ChannelInfo>>,
    outputs: Vec<Arc<dyn ChannelInfo>>,
    policy: RestartPolicy,
    factory: Factory,
}

/// Builds an actor graph; see the crate docs for an example.
pub struct Graph {
    name: String,
    channels: Vec<Arc<dyn ChannelInfo>>,
    actors: Vec<ActorSpec>,
    errors: Vec<GraphError>,
    telemetry: Option<TelemetryConfig>,
}

impl Graph {
    /// An empty graph called `name` (shown by telemetry).
    pub fn new(name: impl Into<String>) -> Graph {
        Graph {
            name: name.into(),
            channels: Vec::new(),
            actors: Vec::new(),
            errors: Vec::new(),
            telemetry: None,
        }
    }

    /// Starts declaring a channel of `T` called `name`.
    pub fn channel<T: Send + 'static>(&mut self, name: impl Into<String>) -> ChannelBuilder<'_, T> {
        ChannelBuilder {
            graph: self,
            name: name.into(),
            capacity: DEFAULT_CAPACITY,
            batch: None,
            dead_letters: None,
        }
    }

    /// Starts declaring `lanes` channels of `T` called `name[0]`,
    /// `name[1]`, …: a bundle, for fan-out and fan-in.
    pub fn bundle<T: Send + 'static>(
        &mut self,
        name: impl Into<String>,
        lanes: usize,
    ) -> BundleBuilder<'_, T> {
        BundleBuilder {
            graph: self,
            name: name.into(),
            lanes,
            capacity: DEFAULT_CAPACITY,
            batch: None,
            _type: std::marker::PhantomData,
        }
    }

    /// Starts declaring an actor called `name`.
    pub fn actor(&mut self, name: impl Into<String>) -> ActorBuilder<'_> {
        ActorBuilder {
            graph: self,
            name: name.into(),
            mode: RunMode::Task,
            inputs: Vec::new(),
            outputs: Vec::new(),
            policy: RestartPolicy::default(),
            ran: false,
        }
    }

    /// Serves live telemetry on `addr` (`"127.0.0.1:9900"`; port 0 picks a
    /// free port, see `RunningGraph::telemetry_addr`). Only loopback
    /// addresses are accepted; see [`Graph::telemetry_allow_remote`].
    pub fn telemetry(&mut self, addr: impl Into<String>) -> &mut Graph {
        self.telemetry = Some(TelemetryConfig {
            addr: addr.into(),
            allow_remote: false,
        });
        self
    }

    /// Serves telemetry on `addr` even if it is not a loopback address
    /// (anyone who can reach it sees the graph's names and counters).
    pub fn telemetry_allow_remote(&mut self, addr: impl Into<String>) -> &mut Graph {
        self.telemetry = Some(TelemetryConfig {
            addr: addr.into(),
            allow_remote: true,
        });
        self
    }

    fn check(&mut self) -> Result<(), GraphError> {
        if let Some(e) = self.errors.drain(..).next() {
            return Err(e);
        }
        if self.actors.is_empty() {
            return Err(GraphError::Empty);
        }
        let mut seen = HashSet::new();
        for a in &self.actors {
            if !seen.insert(a.cell.name.as_str()) {
                return Err(GraphError::DuplicateName {
                    kind: "actor",
                    name: a.cell.name.clone(),
                });
            }
        }
        let mut seen = HashSet::new();
        for c in &self.channels {
            if !seen.insert(c.name()) {
                return Err(GraphError::DuplicateName {
                    kind: "channel",
                    name: c.name().to_string(),
                });
            }
            match (c.writer(), c.reader()) {
                (Some(_), Some(_)) => {}
                (Some(w), None) => {
                    return Err(GraphError::NoReader {
                        channel: c.name().to_string(),
                        writer: w.name.clone(),
                    })
                }
                (None, Some(r)) => {
                    return Err(GraphError::NoWriter {
                        channel: c.name().to_string(),
                        reader: r.name.clone(),
                    })
                }
                (None, None) => {
                    return Err(GraphError::Unwired {
                        channel: c.name().to_string(),
                    })
                }
            }
        }
        Ok(())
    }

    /// Checks the wiring, binds the telemetry server if asked, and starts
    /// every actor: tasks and teams on `rt`, own-thread actors on their
    /// threads. Nothing runs if this returns an error.
    pub fn start(self, rt: &spindle::Handle) -> Result<RunningGraph, GraphError> {
        self.start_with(rt, |name, run| {
            std::thread::Builder::new().name(name).spawn(run)
        })
    }

    /// [`Graph::start`], with own-thread actors' threads made by `spawn`
    /// (the tests' way to refuse one).
    fn start_with(
        mut self,
        rt: &spindle::Handle,
        mut spawn: impl FnMut(String, ThreadMain) -> std::io::Result<JoinHandle<()>>,
    ) -> Result<RunningGraph, GraphError> {
        self.check()?;
        let server = match &self.telemetry {
            Some(cfg) => Some(telemetry::bind(cfg)?),
            None => None,
        };
        let shared = self.shared_state(rt);
        let Placed {
            tasks,
            teams,
            threads,
        } = self.place(&shared);
        let telemetry = match server {
            Some(s) => Some(telemetry::serve(s, shared.clone())?),
            None => None,
        };
        let mut joins = Vec::new();
        let mut threads = threads.into_iter();
        while let Some(s) = threads.next() {
            match start_own_thread(s, &mut spawn) {
                Ok(j) => joins.push(j),
                Err(e) => {
                    // Keep the promise that nothing runs: ask the started
                    // actors to stop, drop the rest unstarted (which retires
                    // their ends, so no started actor waits on them), and
                    // wait for the started threads and the server to end.
                    shared.request_shutdown("an actor thread could not start");
                    drop((threads, teams, tasks));
                    for j in joins {
                        let _ = j.join();
                    }
                    if let Some(server) = telemetry {
                        server.stop();
                    }
                    return Err(e);
                }
            }
        }
        for (_, members) in teams {
            drop(rt.spawn(Team::new(members)));
        }
        for s in tasks {
            drop(rt.spawn(s));
        }
        Ok(RunningGraph::new(shared, telemetry, joins))
    }

    /// The running graph's shared state, every actor live.
    fn shared_state(&self, rt: &spindle::Handle) -> Arc<GraphShared> {
        Arc::new(GraphShared {
            name: self.name.clone(),
            actors: self.actors.iter().map(|a| a.cell.clone()).collect(),
            channels: self.channels.clone(),
            stopping: AtomicBool::new(false),
            stop_request: Mutex::new(None),
            live: AtomicUsize::new(self.actors.len()),
            done_lock: Mutex::new(()),
            done_cv: Condvar::new(),
            done_wakers: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            started: Instant::now(),
            rt: rt.clone(),
        })
    }

    /// Takes every actor out of the builder, supervised, sorted by where it
    /// runs; teams keep the order in which they were first named.
    fn place(&mut self, shared: &Arc<GraphShared>) -> Placed {
        let mut placed = Placed {
            tasks: Vec::new(),
            teams: Vec::new(),
            threads: Vec::new(),
        };
        for spec in self.actors.drain(..) {
            let mode = spec.cell.mode.clone();
            let s = Supervised::new(
                spec.cell,
                shared.clone(),
                spec.inputs,
                spec.outputs,
                spec.factory,
                spec.policy,
            );
            match mode {
                RunMode::Task => placed.tasks.push(s),
                RunMode::Team(t) => match placed.teams.iter_mut().find(|(n, _)| *n == t) {
                    Some((_, v)) => v.push(s),
                    None => placed.teams.push((t, vec![s])),
                },
                RunMode::OwnThread => placed.threads.push(s),
            }
        }
        placed
    }
}

/// What an own-thread actor's thread runs.
type ThreadMain = Box<dyn FnOnce() + Send>;

/// The supervised actors of a starting graph, by where they run.
struct Placed {
    /// One task each on the graph's runtime.
    tasks: Vec<Supervised>,
    /// Each team's name and members: one task per team.
    teams: Vec<(String, Vec<Supervised>)>,
    /// A thread each, with a current-thread runtime of its own.
    threads: Vec<Supervised>,
}

/// Starts an own-thread actor on a thread made by `spawn`, running it on
/// a current-thread runtime of its own.
fn start_own_thread(
    s: Supervised,
    spawn: &mut impl FnMut(String, ThreadMain) -> std::io::Result<JoinHandle<()>>,
) -> Result<JoinHandle<()>, GraphError> {
    let name = format!("actor-{}", s.actor_name());
    let actor = s.actor_name().to_string();
    let main: ThreadMain = Box::new(move || {
        let rt = spindle::Builder::new_current_thread()
            .build()
            .expect("current-thread runtime");
        rt.block_on(s);
    });
    spawn(name, main).map_err(|e| GraphError::Thread {
        actor,
        reason: e.to_string(),
    })
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("name", &self.name)
            .field("actors", &self.actors.len())
            .field("channels", &self.channels.len())
            .finish_non_exhaustive()
    }
}

/// Declares a channel; see [`Graph::channel`].
pub struct ChannelBuilder<'g, T> {
    graph: &'g mut Graph,
    name: String,
    capacity: usize,
    batch: Option<usize>,
    dead_letters: Option<spindle::chan::Sender<T>>,
}

impl<T: Send + 'static> ChannelBuilder<'_, T> {
    /// Slots in the ring (default [`DEFAULT_CAPACITY`]).
    pub fn capacity(mut self, n: usize) -> Self {
        self.capacity = n;
        self
    }

    /// The batch size actors should move at a time (default: half the
    /// capacity, the double-buffer split).
    pub fn batch(mut self, n: usize) -> Self {
        self.batch = Some(n);
        self
    }

    /// Where the poison-message policy sends a message the reader kept
    /// failing on (without a sink such messages are dropped, and counted).
    pub fn dead_letters(mut self, sink: spindle::chan::Sender<T>) -> Self {
        self.dead_letters = Some(sink);
        self
    }

    /// Creates the channel and returns its two ends.
    pub fn build(self) -> (TxHandle<T>, RxHandle<T>) {
        let cap = if self.capacity == 0 {
            self.graph.errors.push(GraphError::ZeroCapacity {
                channel: self.name.clone(),
            });
            1
        } else {
            self.capacity
        };
        let batch = self.batch.unwrap_or(cap / 2).clamp(1, cap);
        let shared = ChannelShared::new(self.name, cap, batch, self.dead_letters);
        self.graph.channels.push(shared.clone());
        (
            TxHandle {
                shared: shared.clone(),
            },
            RxHandle { shared },
        )
    }
}

/// Declares a bundle of channels; see [`Graph::bundle`].
pub struct BundleBuilder<'g, T> {
    graph: &'g mut Graph,
    name: String,
    lanes: usize,
    capacity: usize,
    batch: Option<usize>,
    _type: std::marker::PhantomData<fn() -> T>,
}

impl<T: Send + 'static> BundleBuilder<'_, T> {
    /// Slots in each lane's ring.
    pub fn capacity(mut self, n: usize) -> Self {
        self.capacity = n;
        self
    }

    /// Batch hint of each lane.
    pub fn batch(mut self, n: usize) -> Self {
        self.batch = Some(n);
        self
    }

    /// Creates the lanes.
    pub fn build(self) -> (TxBundle<T>, RxBundle<T>) {
        let mut txs = Vec::with_capacity(self.lanes);
        let mut rxs = Vec::with_capacity(self.lanes);
        for i in 0..self.lanes {
            let mut b = self
                .graph
                .channel::<T>(format!("{}[{i}]", self.name))
                .capacity(self.capacity);
            if let Some(n) = self.batch {
                b = b.batch(n);
            }
            let (t, r) = b.build();
            txs.push(t);
            rxs.push(r);
        }
        (TxBundle::new(txs), RxBundle::new(rxs))
    }
}

/// Declares an actor; see [`Graph::actor`]. Finish with
/// [`ActorBuilder::run`].
pub struct ActorBuilder<'g> {
    graph: &'g mut Graph,
    name: String,
    mode: RunMode,
    inputs: Vec<Arc<dyn ChannelInfo>>,
    outputs: Vec<Arc<dyn ChannelInfo>>,
    policy: RestartPolicy,
    ran: bool,
}

impl ActorBuilder<'_> {
    /// Declares that this actor reads `rx` (and only it may lock it).
    pub fn reads<T: Send + 'static>(mut self, rx: &RxHandle<T>) -> Self {
        self.inputs.push(rx.shared.clone());
        self
    }

    /// Declares that this actor writes `tx` (and only it may lock it).
    pub fn writes<T: Send + 'static>(mut self, tx: &TxHandle<T>) -> Self {
        self.outputs.push(tx.shared.clone());
        self
    }

    /// Declares that this actor reads every lane of `rx` (fan-in).
    pub fn reads_all<T: Send + 'static>(mut self, rx: &RxBundle<T>) -> Self {
        for h in rx.handles() {
            self.inputs.push(h.shared.clone());
        }
        self
    }

    /// Declares that this actor writes every lane of `tx` (fan-out).
    pub fn writes_all<T: Send + 'static>(mut self, tx: &TxBundle<T>) -> Self {
        for h in tx.handles() {
            self.outputs.push(h.shared.clone());
        }
        self
    }

    /// The restart policy (default [`RestartPolicy::default`]).
    pub fn restart(mut self, policy: RestartPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Runs this actor in the team `team`: one spindle task for all the
    /// team's actors.
    pub fn team(mut self, team: impl Into<String>) -> Self {
        self.mode = RunMode::Team(team.into());
        self
    }

    /// Runs this actor on a thread of its own (a current-thread runtime).
    pub fn own_thread(mut self) -> Self {
        self.mode = RunMode::OwnThread;
        self
    }

    /// The actor's body: called for the first run and again for every
    /// restart, with a fresh [`ActorContext`]; clone the channel handles
    /// and state into each run's future.
    pub fn run<F, Fut, R>(mut self, mut body: F)
    where
        F: FnMut(ActorContext) -> Fut + Send + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoActorResult,
    {
        self.ran = true;
        let cell = Arc::new(ActorCell::new(self.name.clone(), self.mode.clone()));
        for i in &self.inputs {
            if let Err(first) = i.set_reader(&cell) {
                self.graph.errors.push(GraphError::EndTakenTwice {
                    channel: i.name().to_string(),
                    end: "read",
                    first,
                    second: self.name.clone(),
                });
            }
        }
        for o in &self.outputs {
            if let Err(first) = o.set_writer(&cell) {
                self.graph.errors.push(GraphError::EndTakenTwice {
                    channel: o.name().to_string(),
                    end: "write",
                    first,
                    second: self.name.clone(),
                });
            }
        }
        let factory: Factory = Box::new(move |ctx| {
            let fut = body(ctx);
            Box::pin(async move { fut.await.into_actor_result() }) as RunFuture
        });
        self.graph.actors.push(ActorSpec {
            cell,
            inputs: std::mem::take(&mut self.inputs),
            outputs: std::mem::take(&mut self.outputs),
            policy: self.policy.clone(),
            factory,
        });
    }
}

impl Drop for ActorBuilder<'_> {
    fn drop(&mut self) {
        if !self.ran {
            self.graph.errors.push(GraphError::NoBody {
                actor: self.name.clone(),
            });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::PortError;

    /// An own-thread actor whose thread cannot start fails `start`, and
    /// the own-thread actor started before it has ended by the time
    /// `start` returns, though its writer never ran.
    #[test]
    fn a_refused_thread_fails_start_and_leaves_nothing_running() {
        let rt = spindle::Builder::new_multi_thread()
            .workers(1)
            .build()
            .unwrap();
        let mut g = Graph::new("refused");
        let (tx, rx) = g.channel::<u64>("c").capacity(4).build();
        let ended = Arc::new(AtomicBool::new(false));
        let e = ended.clone();
        g.actor("reader").reads(&rx).own_thread().run(move |_| {
            let (rx, e) = (rx.clone(), e.clone());
            async move {
                let mut r = rx.lock()?;
                while r.take().await.is_some() {}
                e.store(true, Ordering::SeqCst);
                Ok::<(), PortError>(())
            }
        });
        g.actor("writer").writes(&tx).own_thread().run(move |_| {
            let tx = tx.clone();
            async move {
                tx.lock()?.send(1).await.unwrap();
                Ok::<(), PortError>(())
            }
        });
        let mut threads = 0;
        let started = g.start_with(rt.handle(), |name, run| {
            threads += 1;
            if threads == 1 {
                std::thread::Builder::new().name(name).spawn(run)
            } else {
                Err(std::io::Error::other("refused by the test"))
            }
        });
        match started {
            Err(GraphError::Thread { actor, reason }) => {
                assert_eq!(
                    (actor.as_str(), reason.as_str()),
                    ("writer", "refused by the test")
                );
            }
            other => panic!("expected a thread error, got {other:?}"),
        }
        assert!(
            ended.load(Ordering::SeqCst),
            "the started reader still ran after start returned"
        );
    }
}
