//! The HTTP side of telemetry: binding (with the loopback rule), the
//! server thread, routing.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tiny_http::{Header, Method, Request, Response, Server};

use super::render;
use super::sampler::Sampler;
use super::{TelemetryConfig, SAMPLE_PERIOD};
use crate::error::GraphError;
use crate::graph::GraphShared;

/// A bound, not yet serving, server.
pub(crate) struct Bound {
    server: Server,
    addr: SocketAddr,
}

/// Resolves and checks the address, then binds it.
pub(crate) fn bind(cfg: &TelemetryConfig) -> Result<Bound, GraphError> {
    let bad = |reason: String| GraphError::BadTelemetryAddr {
        addr: cfg.addr.clone(),
        reason,
    };
    let addr = cfg
        .addr
        .to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("it resolves to no address".into()))?;
    if !addr.ip().is_loopback() && !cfg.allow_remote {
        return Err(GraphError::NonLoopbackTelemetry { addr });
    }
    let server = Server::http(addr).map_err(|e| GraphError::TelemetryBind {
        addr,
        reason: e.to_string(),
    })?;
    let addr = server.server_addr().to_ip().unwrap_or(addr);
    Ok(Bound { server, addr })
}

/// The serving thread; stopped by [`TelemetryServer::stop`].
pub(crate) struct TelemetryServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    server: Arc<Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TelemetryServer {
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving and joins the thread.
    pub(crate) fn stop(mut self) {
        self.stop.store(true, Ordering::Release);
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts the server thread for `graph`.
pub(crate) fn serve(bound: Bound, graph: Arc<GraphShared>) -> TelemetryServer {
    let stop = Arc::new(AtomicBool::new(false));
    let server = Arc::new(bound.server);
    let thread = {
        let stop = stop.clone();
        let server = server.clone();
        std::thread::Builder::new()
            .name("spindle-telemetry".into())
            .spawn(move || run(&server, &graph, &stop))
            .expect("cannot start the telemetry thread")
    };
    TelemetryServer {
        addr: bound.addr,
        stop,
        server,
        thread: Some(thread),
    }
}

fn run(server: &Server, graph: &GraphShared, stop: &AtomicBool) {
    let mut sampler = Sampler::default();
    sampler.tick(graph);
    let mut next = Instant::now() + SAMPLE_PERIOD;
    while !stop.load(Ordering::Acquire) {
        let now = Instant::now();
        if now >= next {
            sampler.tick(graph);
            next += SAMPLE_PERIOD;
            if next < now {
                next = now + SAMPLE_PERIOD;
            }
        }
        let wait = next.saturating_duration_since(Instant::now());
        match server.recv_timeout(wait.max(Duration::from_millis(1))) {
            Ok(Some(req)) => handle(req, graph, &sampler),
            Ok(None) => {}
            Err(e) => {
                // tiny_http's accept thread ended on an accept error (such
                // as running out of file descriptors): nothing more will be
                // served. Said, not hidden; binding again is not done yet.
                eprintln!("spindle-actor telemetry: the listener failed ({e}); no longer serving");
                break;
            }
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("static header")
}

fn handle(req: Request, graph: &GraphShared, sampler: &Sampler) {
    if !matches!(req.method(), Method::Get | Method::Head) {
        let r = Response::from_string("method not allowed\n")
            .with_status_code(405)
            .with_header(header("Allow", "GET, HEAD"));
        let _ = req.respond(r);
        return;
    }
    let path = req.url().split(['?', '#']).next().unwrap_or("");
    let (body, ctype) = match path {
        "/" | "/index.html" => (super::page::PAGE.to_string(), "text/html; charset=utf-8"),
        "/graph.dot" => (
            render::dot(&sampler.snapshot(graph)),
            "text/vnd.graphviz; charset=utf-8",
        ),
        "/metrics" => (
            render::prometheus(&sampler.snapshot(graph)),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        "/api/graph.json" => (render::json(&sampler.snapshot(graph)), "application/json"),
        _ => {
            let r = Response::from_string(
                "not found: try /, /graph.dot, /metrics or /api/graph.json\n",
            )
            .with_status_code(404);
            let _ = req.respond(r);
            return;
        }
    };
    // tiny_http sends no body for HEAD, and answers 400 itself to a
    // request it cannot parse.
    let r = Response::from_string(body)
        .with_header(header("Content-Type", ctype))
        .with_header(header("Cache-Control", "no-store"));
    // A client that went away is not our problem.
    let _ = req.respond(r);
}
