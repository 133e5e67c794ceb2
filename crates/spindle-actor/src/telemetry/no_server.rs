//! Under loom and miri spindle has no OS reactor, so there is no telemetry
//! server: binding one is an error that says why, and the types are empty.

use std::net::SocketAddr;
use std::sync::Arc;

use super::TelemetryConfig;
use crate::error::GraphError;
use crate::graph::GraphShared;

pub(crate) enum Bound {}

pub(crate) fn bind(cfg: &TelemetryConfig) -> Result<Bound, GraphError> {
    Err(GraphError::TelemetryBind {
        addr: cfg.resolve()?,
        reason: "no telemetry server under loom or miri (no OS reactor)".into(),
    })
}

pub(crate) enum TelemetryServer {}

impl TelemetryServer {
    pub(crate) fn addr(&self) -> SocketAddr {
        match *self {}
    }

    pub(crate) fn stop(self) {
        match self {}
    }
}

pub(crate) fn serve(bound: Bound, _graph: Arc<GraphShared>) -> Result<TelemetryServer, GraphError> {
    match bound {}
}
