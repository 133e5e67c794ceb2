//! What the spindle-hyper tests share: the hello example's own modules
//! (compiled in here, so the tests serve what the example serves), a
//! server on a free loopback port, hyper clients over HTTP/1 and HTTP/2,
//! and the runtimes every test runs on.
//!
//! Every connection goes to 127.0.0.1; every server is a task of the
//! test's runtime and ends when that runtime is dropped.
#![allow(dead_code)]

#[path = "../../examples/hello/args.rs"]
pub mod args;
#[path = "../../examples/hello/routes.rs"]
pub mod routes;
#[path = "../../examples/hello/server.rs"]
pub mod server;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::{http1, http2};
use hyper::{HeaderMap, Request, Response, StatusCode};
use server::Protocol;
use spindle::net::{TcpListener, TcpStream};
use spindle_hyper::{SpindleExecutor, SpindleIo, SpindleTimer};
use std::error::Error;
use std::future::Future;
use std::net::SocketAddr;

/// A current-thread runtime and a two-worker one: each test body runs on
/// both.
pub fn runtimes() -> Vec<(&'static str, spindle::Runtime)> {
    let multi = spindle::Builder::new_multi_thread().workers(2);
    vec![
        (
            "current_thread",
            spindle::Builder::new_current_thread().build().unwrap(),
        ),
        ("2 workers", multi.build().unwrap()),
    ]
}

/// Runs `body` on each of [`runtimes`], saying which on stderr.
pub fn on_each_runtime<F: Future<Output = ()>>(name: &str, body: impl Fn() -> F) {
    for (flavour, rt) in runtimes() {
        eprintln!("-- {name} on {flavour}");
        rt.block_on(body());
    }
}

/// Serves `handler` with the example's accept loop on 127.0.0.1:0.
pub async fn start<H, Fut, E>(protocol: Protocol, handler: H) -> SocketAddr
where
    H: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Response<Full<Bytes>>, E>> + Send + 'static,
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(spindle::spawn(server::serve(listener, protocol, handler)));
    addr
}

/// Serves the example's routes.
pub async fn start_hello(protocol: Protocol) -> SocketAddr {
    start(protocol, routes::hello).await
}

/// An HTTP/1 client connection to `addr`, driven by a task of its own.
pub async fn h1_client(addr: SocketAddr) -> http1::SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = http1::handshake(SpindleIo::new(stream)).await.unwrap();
    drop(spindle::spawn(conn));
    sender
}

/// An HTTP/2 client connection to `addr` (prior knowledge), its streams on
/// spindle tasks through [`SpindleExecutor`].
pub async fn h2_client(addr: SocketAddr) -> http2::SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = http2::Builder::new(SpindleExecutor::new())
        .timer(SpindleTimer::new())
        .handshake(SpindleIo::new(stream))
        .await
        .unwrap();
    drop(spindle::spawn(conn));
    sender
}

/// A GET request for `path`.
pub fn get(path: &str) -> Request<Full<Bytes>> {
    Request::get(path)
        .header("host", "127.0.0.1")
        .body(Full::default())
        .unwrap()
}

/// A response read whole: status, headers and body.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The header `name`, which must be there once, as text.
    pub fn header(&self, name: &str) -> &str {
        let all: Vec<_> = self.headers.get_all(name).iter().collect();
        assert_eq!(all.len(), 1, "one `{name}` header in {:?}", self.headers);
        all[0].to_str().unwrap()
    }
}

/// Reads `response` whole.
pub async fn read(response: Response<Incoming>) -> Answer {
    let (parts, body) = response.into_parts();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes(),
    }
}

/// Sends `request` on an HTTP/1 connection once it is ready for one (the
/// previous exchange fully done: hyper refuses a request before that, and
/// on a multi-thread runtime the connection task may still be finishing
/// it), and reads the response whole.
pub async fn fetch1(
    client: &mut http1::SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Answer {
    client.ready().await.unwrap();
    read(client.send_request(request).await.unwrap()).await
}

/// [`fetch1`] over HTTP/2 (where a clone of the client is one more stream
/// on the same connection).
pub async fn fetch2(
    client: &mut http2::SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Answer {
    client.ready().await.unwrap();
    read(client.send_request(request).await.unwrap()).await
}

/// Writes `bytes` on a fresh raw connection to `addr`, then reads until
/// the server closes it; returns what the server sent.
pub async fn raw_exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}
