//! spindle-actor: batching actor pipelines on the spindle runtime.
//!
//! A [`Graph`] wires actors with named single-producer single-consumer
//! channels (rings with batch and zero-copy slot access), runs each actor as
//! a spindle task, in a team sharing one task, or on a thread of its own,
//! supervises it (restarts with backoff and a budget, state kept in
//! [`ActorState`], poison messages to dead letters), stops it gracefully
//! (each actor votes; channels drain; a report names those that held out),
//! and can serve live telemetry (a page drawing the graph, `/graph.dot`,
//! Prometheus `/metrics`, `/api/graph.json`).
//!
//! ```
//! use spindle_actor::{ActorContext, Graph, RxHandle, TxHandle};
//!
//! async fn source(ctx: ActorContext, out: TxHandle<u64>, n: u64) -> Result<(), spindle_actor::PortError> {
//!     let mut tx = out.lock()?;
//!     let mut next = 1;
//!     while ctx.is_running(|| tx.mark_closed()) && next <= n {
//!         let end = (next + 100).min(n + 1);
//!         let batch: Vec<u64> = (next..end).collect();
//!         tx.send_slice(&batch).await;
//!         next = end;
//!     }
//!     Ok(())
//! }
//!
//! async fn sink(ctx: ActorContext, input: RxHandle<u64>, sum: spindle_actor::ActorState<u64>)
//!     -> Result<(), spindle_actor::PortError> {
//!     let mut rx = input.lock()?;
//!     let mut buf = vec![0u64; 64];
//!     while let Some(_) = rx.wait_avail(1).await {
//!         let n = rx.take_slice(&mut buf);
//!         *sum.lock() += buf[..n].iter().sum::<u64>();
//!         if !ctx.is_running(|| rx.is_closed_and_empty()) { break; }
//!     }
//!     Ok(())
//! }
//!
//! let rt = spindle::Runtime::new().unwrap();
//! let mut g = Graph::new("sum");
//! let (tx, rx) = g.channel::<u64>("numbers").capacity(256).build();
//! let total = spindle_actor::ActorState::new(0u64);
//! let t = total.clone();
//! g.actor("source").writes(&tx).run(move |ctx| source(ctx, tx.clone(), 1000));
//! g.actor("sink").reads(&rx).run(move |ctx| sink(ctx, rx.clone(), t.clone()));
//! let running = g.start(rt.handle()).unwrap();
//! let report = running.block_until_stopped(std::time::Duration::from_secs(10));
//! assert!(report.is_clean(), "{report}");
//! assert_eq!(total.take(), Some(500_500));
//! ```
//!
//! Layout (one file per role): `ring/` (the lock-free SPSC ring and its
//! batch operations), `waker_slot.rs` (its wake-up protocol), `port.rs` (a
//! channel's ends and wiring), `rx.rs` / `tx.rs` (locked ends: batches,
//! zero-copy slots, waits), `bundle.rs` (fan-out / fan-in), `graph/`
//! (builder, checks, start, the running graph's state), `supervisor.rs`
//! (restarts, poison policy), `team.rs`, `context.rs` (shutdown vote,
//! heartbeats), `state.rs`, `running.rs`
//! (shutdown and stop report), `telemetry/` (server, sampler, renderers,
//! page). Design notes: `docs/actor.md`.

#![deny(unsafe_op_in_unsafe_fn)]
// Under loom and miri there is no telemetry server (spindle has no OS
// reactor there: `telemetry/no_server.rs`), so what only it reads is unused.
#![cfg_attr(any(loom, miri), allow(dead_code))]

mod actor;
mod bundle;
mod context;
mod error;
mod graph;
pub(crate) mod loom;
#[cfg(all(test, loom))]
mod loom_models;
mod port;
mod probe;
mod ring;
mod running;
mod rx;
mod state;
mod supervisor;
mod team;
pub mod telemetry;
mod tx;
mod waker_slot;

pub use actor::{ActorStatus, RunMode};
pub use bundle::{RxBundle, RxLanes, TxBundle, TxLanes, WaitAny, WaitAnyVacant};
pub use context::{ActorContext, Every, Tick};
pub use error::{ActorError, GraphError, IntoActorResult, PortError};
pub use graph::{ActorBuilder, BundleBuilder, ChannelBuilder, Graph, DEFAULT_CAPACITY};
pub use port::{RxHandle, TxHandle};
pub use probe::{Probe, Reading};
pub use running::{ActorReport, ChannelReport, RunningGraph, StopReport, Stopped};
pub use rx::{Rx, Slots, WaitAvail};
pub use state::{ActorState, StateGuard};
pub use supervisor::RestartPolicy;
#[cfg(not(loom))]
pub use tx::SlotsMut;
pub use tx::{Tx, WaitVacant};
