//! [`Probe`]: figures of something beside a graph's actors and channels
//! (an Aeron endpoint, a connection pool) that the graph's telemetry
//! shows with them: a row on the live page, entries in
//! `/api/graph.json`, and metric families on `/metrics`.
//!
//! Invariants: the telemetry thread calls `read` once per page or scrape
//! request, never an actor; a probe's metric names are its own (prefix
//! them, `spindle_aeron_…`), and two probes reporting the same metric
//! name give its samples under one family, told apart by their labels.

/// Something a graph's telemetry reads on request.
pub trait Probe: Send + Sync + 'static {
    /// Its name on the page.
    fn name(&self) -> String;
    /// Labels each of its samples carries on `/metrics`, besides `graph`.
    fn labels(&self) -> Vec<(&'static str, String)>;
    /// Its figures now.
    fn read(&self) -> Vec<Reading>;
}

/// One figure of a [`Probe`].
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The Prometheus metric name (`spindle_aeron_messages_total`).
    pub metric: &'static str,
    /// Its `# HELP` text.
    pub help: &'static str,
    /// A counter (only grows) or a gauge.
    pub counter: bool,
    /// Its short name on the page (`messages`).
    pub short: &'static str,
    pub value: f64,
}
