//! The opt-in telemetry server: a live page drawing the graph, `/graph.dot`,
//! `/metrics` (Prometheus text format 0.0.4) and `/api/graph.json`.
//!
//! # Invariants
//! - The server binds loopback addresses only, unless the graph was built
//!   with `Graph::telemetry_allow_remote`; a failed bind is a `GraphError`
//!   naming the address, reported before any actor starts.
//! - It runs on its own thread (`spindle-telemetry`, with a current-thread
//!   spindle runtime of its own), never on the graph runtime's workers, and
//!   reads only atomics and short-held mutexes of the graph: it adds
//!   nothing to the actors' hot paths. The one cost inside
//!   actors is the per-poll busy time the supervisor records either way.
//! - The same thread samples every channel and actor every
//!   [`SAMPLE_PERIOD`]; rates and busy shares come from the last second of
//!   samples, fill percentiles from the last [`WINDOW`].
//! - A request it cannot parse gets 400, a head over 8 KiB 414 or 431, an
//!   unknown path 404, another method than GET/HEAD 405: nothing a client
//!   sends stops the server, and a failing `accept` (out of file
//!   descriptors) is retried, not fatal (`server.rs`).

mod http;
mod page;
mod probes;
mod render;
mod sampler;
// The server needs spindle's OS reactor, which loom and miri cannot run.
#[cfg(not(any(loom, miri)))]
mod server;
#[cfg(any(loom, miri))]
#[path = "no_server.rs"]
mod server;

pub(crate) use server::{bind, serve, TelemetryServer};

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use crate::error::GraphError;

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

impl TelemetryConfig {
    /// The address to bind: the first it resolves to, loopback unless
    /// remote access was allowed.
    fn resolve(&self) -> Result<SocketAddr, GraphError> {
        let bad = |reason: String| GraphError::BadTelemetryAddr {
            addr: self.addr.clone(),
            reason,
        };
        let addr = self
            .addr
            .to_socket_addrs()
            .map_err(|e| bad(e.to_string()))?
            .next()
            .ok_or_else(|| bad("it resolves to no address".into()))?;
        if !addr.ip().is_loopback() && !self.allow_remote {
            return Err(GraphError::NonLoopbackTelemetry { addr });
        }
        Ok(addr)
    }
}
