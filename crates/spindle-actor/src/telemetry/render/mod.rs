//! The three machine-readable views of a [`Snapshot`](super::sampler::Snapshot):
//! JSON for the live page (`/api/graph.json`, `json.rs`), Graphviz DOT
//! (`/graph.dot`, `dot.rs`) and Prometheus text format 0.0.4 (`/metrics`,
//! `prometheus.rs`).
//!
//! # Invariants
//! - Every string from the graph (names, failure messages) is escaped for
//!   its format: JSON string escapes, DOT quoted-string escapes, Prometheus
//!   label-value escapes (`\\`, `\"`, `\n`). Names are user input.
//! - Non-finite numbers never reach the output (JSON has no NaN).
//! - Each Prometheus metric family has one `# HELP` and one `# TYPE` line,
//!   followed by all its samples; counters end in `_total`.

mod dot;
mod json;
mod prometheus;
#[cfg(all(test, not(loom)))]
mod tests;

// The server, the only user of the whole views, is not built under loom
// or miri (`telemetry/mod.rs`).
#[cfg_attr(any(loom, miri), allow(unused_imports))]
pub(crate) use dot::dot;
#[cfg_attr(any(loom, miri), allow(unused_imports))]
pub(crate) use json::json;
pub(crate) use json::json_str;
#[cfg_attr(any(loom, miri), allow(unused_imports))]
pub(crate) use prometheus::prometheus;
pub(crate) use prometheus::Exposition;
