//! The HTTP side of telemetry: binding (with the loopback rule), the
//! server thread, routing.
//!
//! # Protocol
//! The server thread runs a current-thread spindle runtime of its own: one
//! task accepts connections and samples the graph every [`SAMPLE_PERIOD`],
//! and each connection is a task that reads one request head (within
//! [`CONNECTION_DEADLINE`]), answers, and closes. So a slow or silent
//! client holds only its own task, never the sampling or other clients.
//!
//! A failed `accept` (out of file descriptors, say) is said once on stderr
//! and retried every [`ACCEPT_RETRY`]: the listener stays, and connections
//! waiting in its backlog are served once the failure passes. Only
//! [`TelemetryServer::stop`] ends serving; the listener closes before it
//! returns.

use crate::loom::lock_std;
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use spindle::chan;
use spindle::net::{TcpListener, TcpStream};
use spindle::report::{self, Kind};
use spindle::time;

use super::http::{self, Response};
use super::render;
use super::sampler::Sampler;
use super::{TelemetryConfig, SAMPLE_PERIOD};
use crate::error::GraphError;
use crate::graph::GraphShared;

/// How long a connection may take to send its request and read the answer.
const CONNECTION_DEADLINE: Duration = Duration::from_secs(10);
/// How long a client may keep sending after its answer (read and dropped,
/// so that closing does not reset the connection under the answer).
const DRAIN_DEADLINE: Duration = Duration::from_secs(1);
/// Connections served at once; those beyond are closed unanswered.
const MAX_CONNECTIONS: usize = 64;
/// The wait before retrying a failed `accept`.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// A bound, not yet serving, server: the listener is registered with the
/// runtime that will serve it.
pub(crate) struct Bound {
    rt: spindle::Runtime,
    listener: TcpListener,
    addr: SocketAddr,
}

/// Resolves and checks the address, then binds it.
pub(crate) fn bind(cfg: &TelemetryConfig) -> Result<Bound, GraphError> {
    let addr = cfg.resolve()?;
    let failed = |reason: String| GraphError::TelemetryBind { addr, reason };
    let std_listener = std::net::TcpListener::bind(addr).map_err(|e| failed(e.to_string()))?;
    let addr = std_listener.local_addr().unwrap_or(addr);
    let rt = spindle::Builder::new_current_thread()
        .build()
        .map_err(|e| failed(format!("cannot start its runtime: {e}")))?;
    let listener = {
        let _in_rt = rt.enter();
        TcpListener::from_std(std_listener).map_err(|e| failed(e.to_string()))?
    };
    Ok(Bound { rt, listener, addr })
}

/// The serving thread; stopped by [`TelemetryServer::stop`].
pub(crate) struct TelemetryServer {
    addr: SocketAddr,
    /// Dropped to stop the server: its receiver then reads `Closed`.
    stop: chan::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl TelemetryServer {
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving and joins the thread (the listener is closed when this
    /// returns).
    pub(crate) fn stop(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
}

/// Starts the server thread for `graph`.
pub(crate) fn serve(bound: Bound, graph: Arc<GraphShared>) -> Result<TelemetryServer, GraphError> {
    let (stop, stopped) = chan::bounded(1);
    let Bound { rt, listener, addr } = bound;
    let thread = std::thread::Builder::new()
        .name("spindle-telemetry".into())
        .spawn(move || rt.block_on(accept_and_sample(listener, graph, stopped)))
        .map_err(|e| GraphError::TelemetryThread {
            reason: e.to_string(),
        })?;
    Ok(TelemetryServer { addr, stop, thread })
}

/// The server's main task: samples on time, accepts until stopped.
async fn accept_and_sample(
    listener: TcpListener,
    graph: Arc<GraphShared>,
    stopped: chan::Receiver<()>,
) {
    let sampler = Arc::new(Mutex::new(Sampler::default()));
    let open = Arc::new(AtomicUsize::new(0));
    let mut ticks = time::interval(SAMPLE_PERIOD);
    let mut failing = false;
    loop {
        spindle::select! {
            biased;
            _ = stopped.recv() => return,
            _ = ticks.tick() => lock_std(&sampler).tick(&graph),
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if failing {
                        failing = false;
                        report::warn(
                            Kind::Telemetry,
                            format_args!("spindle-actor telemetry: accepting connections again"),
                        );
                    }
                    if open.fetch_add(1, Ordering::Relaxed) < MAX_CONNECTIONS {
                        let slot = OpenSlot(open.clone());
                        let (graph, sampler) = (graph.clone(), sampler.clone());
                        drop(spindle::spawn(async move {
                            let _slot = slot;
                            connection(stream, &graph, &sampler).await;
                        }));
                    } else {
                        open.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                Err(e) => {
                    if !failing {
                        failing = true;
                        report::warn(
                            Kind::Telemetry,
                            format_args!(
                                "spindle-actor telemetry: cannot accept a connection ({e}); \
                                 retrying every {ACCEPT_RETRY:?}"
                            ),
                        );
                    }
                    time::sleep(ACCEPT_RETRY).await;
                }
            },
        }
    }
}

/// One connection counted in `open`, released when its task ends (or is
/// dropped unfinished at stop).
struct OpenSlot(Arc<AtomicUsize>);

impl Drop for OpenSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Reads one request, answers it, closes. A client that goes away or takes
/// too long is simply dropped.
async fn connection(stream: TcpStream, graph: &GraphShared, sampler: &Mutex<Sampler>) {
    let answered = time::timeout(CONNECTION_DEADLINE, async {
        let mut buf = Vec::with_capacity(1024);
        let mut chunk = [0u8; 1024];
        let (response, head_only) = loop {
            if let Some(end) = http::head_end(&buf) {
                break match http::parse(&buf[..end]) {
                    Some(req) => (route(&req, graph, sampler), req.method == "HEAD"),
                    None => (Response::text(400, "bad request\n"), false),
                };
            }
            if buf.len() >= http::MAX_HEAD {
                break (http::too_long(&buf), false);
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        stream.write_all(&response.encode(head_only)).await.is_ok()
    })
    .await;
    if matches!(answered, Ok(true)) && stream.shutdown(Shutdown::Write).is_ok() {
        // Whatever the client still sends (a body, the rest of a refused
        // head) is read and dropped until it closes: closing with unread
        // input would reset the connection and could lose the answer.
        let _ = time::timeout(DRAIN_DEADLINE, async {
            let mut chunk = [0u8; 4096];
            while let Ok(1..) = stream.read(&mut chunk).await {}
        })
        .await;
    }
}

/// The answer to a well-formed request.
fn route(req: &http::Request<'_>, graph: &GraphShared, sampler: &Mutex<Sampler>) -> Response {
    if !matches!(req.method, "GET" | "HEAD") {
        let mut r = Response::text(405, "method not allowed\n");
        r.allow = Some("GET, HEAD");
        return r;
    }
    let snapshot = || lock_std(sampler).snapshot(graph);
    let (body, content_type) = match req.path {
        "/" | "/index.html" => (super::page::PAGE.to_string(), "text/html; charset=utf-8"),
        "/graph.dot" => (render::dot(&snapshot()), "text/vnd.graphviz; charset=utf-8"),
        "/metrics" => (
            render::prometheus(&snapshot()),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        "/api/graph.json" => (render::json(&snapshot()), "application/json"),
        _ => {
            return Response::text(
                404,
                "not found: try /, /graph.dot, /metrics or /api/graph.json\n",
            )
        }
    };
    Response {
        status: 200,
        content_type,
        body,
        allow: None,
    }
}
