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
//!
//! This file is the builder; starting is in `start.rs`, [`GraphShared`] in
//! `shared.rs`.

mod shared;
mod start;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::actor::{ActorCell, RunMode};
use crate::bundle::{RxBundle, TxBundle};
use crate::context::ActorContext;
use crate::error::{GraphError, IntoActorResult};
use crate::port::{ChannelInfo, ChannelShared, RxHandle, TxHandle};
use crate::supervisor::{Factory, RestartPolicy, RunFuture};
use crate::telemetry::TelemetryConfig;

pub(crate) use shared::GraphShared;

/// Default channel capacity when none is given.
pub const DEFAULT_CAPACITY: usize = 1024;

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
    probes: Vec<Arc<dyn crate::Probe>>,
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
            probes: Vec::new(),
        }
    }

    /// Adds a [`Probe`](crate::Probe) whose figures the telemetry shows
    /// beside the actors and channels (an Aeron endpoint, say).
    pub fn probe(&mut self, probe: Arc<dyn crate::Probe>) -> &mut Graph {
        self.probes.push(probe);
        self
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
