//! The hello example's accept loop: one spindle task per connection,
//! served by hyper over [`SpindleIo`].
//!
//! Invariants:
//! - Every accepted socket gets `TCP_NODELAY` (small responses go out at
//!   once, not after Nagle's delay) before hyper sees it.
//! - A connection's error ends that connection only: a malformed request
//!   has been answered with hyper's 400 before `serve_connection` returns
//!   its error, and a client that goes away mid-request is the client's
//!   business. Neither is printed (a load test would print thousands).
//! - An accept error (out of file descriptors, say) is printed and the
//!   loop waits a moment before accepting again, rather than spinning.
//! - HTTP/1 connections are kept alive between requests (hyper's default)
//!   and get hyper's 30-second header-read timeout through
//!   [`SpindleTimer`]; HTTP/2 pings and timeouts use it too.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use spindle::net::{TcpListener, TcpStream};
use spindle_hyper::{SpindleExecutor, SpindleIo, SpindleTimer};
use std::error::Error;
use std::future::Future;
use std::time::Duration;

/// What a connection may speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.x only, through hyper's own `http1` builder.
    Http1,
    /// HTTP/1.x, or HTTP/2 for a client that opens with its preface
    /// (prior knowledge), told apart by hyper-util's `auto` builder.
    Http1AndHttp2,
}

/// Accepts connections from `listener` until the task is dropped, each
/// answered by `handler` in a task of its own.
pub async fn serve<H, Fut, E>(listener: TcpListener, protocol: Protocol, handler: H)
where
    H: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<Full<Bytes>>, E>> + Send + 'static,
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                // Detached: it ends with its connection.
                drop(spindle::spawn(connection(
                    stream,
                    protocol,
                    handler.clone(),
                )));
            }
            Err(e) => {
                eprintln!("hello: accept failed: {e}");
                spindle::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// Serves one connection until the client closes it or it fails.
async fn connection<H, Fut, E>(stream: TcpStream, protocol: Protocol, handler: H)
where
    H: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<Full<Bytes>>, E>> + Send + 'static,
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    // Fails only for a socket that is already closed, which hyper then sees.
    let _ = stream.set_nodelay(true);
    let io = SpindleIo::new(stream);
    let service = service_fn(handler);
    // The connection's error is dropped (module docs say why).
    let _ = match protocol {
        Protocol::Http1 => hyper::server::conn::http1::Builder::new()
            .timer(SpindleTimer::new())
            .serve_connection(io, service)
            .await
            .map_err(Box::from),
        Protocol::Http1AndHttp2 => {
            let mut builder = hyper_util::server::conn::auto::Builder::new(SpindleExecutor::new());
            builder.http1().timer(SpindleTimer::new());
            builder.http2().timer(SpindleTimer::new());
            builder.serve_connection(io, service).await
        }
    };
}
