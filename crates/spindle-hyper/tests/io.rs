//! `SpindleIo` under bodies far larger than one socket read or write:
//! a megabyte echoed both ways, byte for byte, over HTTP/1 and HTTP/2,
//! with vectored writes reported on (hyper queues header and body buffers
//! for one `writev`) and off (hyper flattens them into one buffer).

mod common;

use common::{fetch1, fetch2, on_each_runtime};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::{http1, http2};
use hyper::{Request, Response};
use spindle::net::{TcpListener, TcpStream};
use spindle_hyper::{SpindleExecutor, SpindleIo, SpindleTimer};
use std::net::SocketAddr;

const BODY_LEN: usize = 1 << 20;

/// A body no two nearby offsets of which match: a misplaced or repeated
/// chunk shows.
fn pattern() -> Bytes {
    (0..BODY_LEN)
        .map(|i| (i % 251) as u8 ^ (i >> 12) as u8)
        .collect()
}

async fn echo(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let body = req.into_body().collect().await?.to_bytes();
    Ok(Response::new(Full::new(body)))
}

/// Serves [`echo`] over HTTP/1 or HTTP/2 (`h2`), every connection's
/// `SpindleIo` reporting vectored writes as `vectored` says.
async fn echo_server(h2: bool, vectored: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(spindle::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let io = SpindleIo::new(stream).with_vectored_writes(vectored);
            let service = hyper::service::service_fn(echo);
            drop(spindle::spawn(async move {
                let _ = if h2 {
                    hyper::server::conn::http2::Builder::new(SpindleExecutor::new())
                        .timer(SpindleTimer::new())
                        .serve_connection(io, service)
                        .await
                } else {
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await
                };
            }));
        }
    }));
    addr
}

fn post(body: Bytes) -> Request<Full<Bytes>> {
    Request::post("/echo")
        .header("host", "127.0.0.1")
        .body(Full::new(body))
        .unwrap()
}

#[test]
fn a_megabyte_echoed_over_http1_with_and_without_vectored_writes() {
    on_each_runtime("h1 megabyte", || async {
        let body = pattern();
        for vectored in [false, true] {
            let addr = echo_server(false, vectored).await;
            let stream = TcpStream::connect(addr).await.unwrap();
            let io = SpindleIo::new(stream).with_vectored_writes(vectored);
            let (mut client, conn) = http1::handshake(io).await.unwrap();
            drop(spindle::spawn(conn));
            for round in 0..2 {
                let answer = fetch1(&mut client, post(body.clone())).await;
                assert_eq!(
                    answer.body.len(),
                    BODY_LEN,
                    "vectored {vectored}, round {round}"
                );
                assert!(
                    answer.body == body,
                    "vectored {vectored}, round {round}: bytes differ"
                );
            }
        }
    });
}

#[test]
fn a_megabyte_echoed_over_http2_with_and_without_vectored_writes() {
    on_each_runtime("h2 megabyte", || async {
        let body = pattern();
        for vectored in [false, true] {
            let addr = echo_server(true, vectored).await;
            let stream = TcpStream::connect(addr).await.unwrap();
            let io = SpindleIo::new(stream).with_vectored_writes(vectored);
            let (client, conn) = http2::Builder::new(SpindleExecutor::new())
                .timer(SpindleTimer::new())
                .handshake(io)
                .await
                .unwrap();
            drop(spindle::spawn(conn));
            // Two streams at once, interleaved on the one connection.
            let both: Vec<_> = (0..2)
                .map(|_| {
                    let (mut client, body) = (client.clone(), body.clone());
                    spindle::spawn(async move { fetch2(&mut client, post(body)).await.body })
                })
                .collect();
            for got in both {
                let got = got.await.unwrap();
                assert!(
                    got == body,
                    "vectored {vectored}: {} bytes back, differing",
                    got.len()
                );
            }
        }
    });
}
