//! hyper 1.x on spindle: the runtime pieces hyper asks its user for.
//!
//! hyper is runtime-agnostic: a server or client connection is driven by
//! a future the caller polls, over I/O implementing `hyper::rt::{Read,
//! Write}`, with an `Executor` for its background tasks (HTTP/2) and a
//! `Timer` for its timeouts. This crate gives spindle's:
//!
//! - [`SpindleExecutor`]: spawns each future as a detached spindle task.
//! - [`SpindleTimer`]: sleeps on spindle's timer wheels ([`SpindleSleep`]),
//!   resets them in place, and reads spindle's clock (so paused time in
//!   tests pauses hyper's timeouts too).
//! - [`SpindleIo`]: any `futures-io` stream (spindle's `net::TcpStream`)
//!   as hyper's I/O.
//!
//! Invariants:
//! - No Tokio runtime: nothing here starts or needs Tokio's scheduler,
//!   reactor or timer (hyper and h2 depend on the `tokio` crate for its
//!   sync and I/O types only). hyper-util's server helpers, without its
//!   `tokio` feature, work with these types (the `hello` example uses its
//!   `auto` builder).
//! - Everything must run inside a spindle runtime: the connection futures
//!   in spindle tasks (or `block_on`), where the executor spawns and the
//!   timer's sleeps are polled. Outside one, spawning or first polling a
//!   pending sleep panics, saying so.
//! - No `unsafe` (`#![forbid(unsafe_code)]`): reads go through a
//!   per-thread buffer rather than into hyper's uninitialized one
//!   (`scratch.rs` says what that costs).
//!
//! A server for one connection and a client that asks it one request:
//!
//! ```
//! use http_body_util::{BodyExt, Empty, Full};
//! use hyper::body::{Bytes, Incoming};
//! use hyper::{Request, Response};
//! use spindle::net::{TcpListener, TcpStream};
//! use spindle_hyper::SpindleIo;
//!
//! async fn hello(_: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
//!     Ok(Response::new(Full::new(Bytes::from("Hello, World!"))))
//! }
//!
//! spindle::Runtime::new().unwrap().block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
//!     let addr = listener.local_addr().unwrap();
//!     spindle::spawn(async move {
//!         let (stream, _) = listener.accept().await.unwrap();
//!         hyper::server::conn::http1::Builder::new()
//!             .timer(spindle_hyper::SpindleTimer::new())
//!             .serve_connection(SpindleIo::new(stream), hyper::service::service_fn(hello))
//!             .await
//!             .unwrap();
//!     });
//!
//!     let stream = TcpStream::connect(addr).await.unwrap();
//!     let (mut sender, conn) = hyper::client::conn::http1::handshake(SpindleIo::new(stream))
//!         .await
//!         .unwrap();
//!     spindle::spawn(conn); // drives the connection; ends when `sender` is dropped
//!     let request = Request::get("/").body(Empty::<Bytes>::new()).unwrap();
//!     let response = sender.send_request(request).await.unwrap();
//!     let body = response.into_body().collect().await.unwrap().to_bytes();
//!     assert_eq!(body, "Hello, World!");
//! });
//! ```
//!
//! For HTTP/2, pass [`SpindleExecutor::new()`] to
//! `hyper::server::conn::http2::Builder::new` or
//! `hyper::client::conn::http2::handshake`, and the timer to their
//! `.timer(..)`. `examples/hello` serves TechEmpower's plaintext and json
//! tests over HTTP/1, or HTTP/1 and HTTP/2 together (`--http2`).

#![forbid(unsafe_code)]

mod executor;
mod io;
mod scratch;
mod timer;

pub use executor::SpindleExecutor;
pub use io::SpindleIo;
pub use timer::{SpindleSleep, SpindleTimer};
