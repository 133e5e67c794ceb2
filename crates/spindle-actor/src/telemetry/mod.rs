//! The opt-in telemetry server: a live page drawing the graph, `/graph.dot`,
//! `/metrics` (Prometheus text format 0.0.4) and `/api/graph.json`.
//!
//! # Invariants
//! - The server binds loopback addresses only, unless the graph was built
//!   with `Graph::telemetry_allow_remote`; a failed bind is a `GraphError`
//!   naming the address, reported before any actor starts.
//! - It runs on its own thread (`spindle-telemetry`), never on the
//!   runtime's workers, and reads only atomics and short-held mutexes of the
//!   graph: it adds nothing to the actors' hot paths. The one cost inside
//!   actors is the per-poll busy time the supervisor records either way.
//! - The same thread samples every channel and actor every
//!   [`SAMPLE_PERIOD`]; rates and busy shares come from the last second of
//!   samples, fill percentiles from the last [`WINDOW`].
//! - A request it cannot parse gets 400 (from the HTTP layer), an unknown
//!   path 404, another method than GET/HEAD 405: nothing a client sends
//!   stops the server.

mod page;
mod render;
mod sampler;
mod server;

pub(crate) use server::{bind, serve, TelemetryServer};

use std::time::Duration;

/// How often the server samples the graph.
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(100);
/// How far back fill percentiles look.
pub const WINDOW: Duration = Duration::from_secs(10);

/// Where and how to serve telemetry.
#[derive(Debug, Clone)]
pub(crate) struct TelemetryConfig {
    pub(crate) addr: String,
    pub(crate) allow_remote: bool,
}
