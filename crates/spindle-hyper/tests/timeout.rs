//! Timeouts on spindle's timers: a client giving up on a slow handler
//! (`spindle::time::timeout` around hyper's request), the server going on
//! serving after it; and hyper's own header-read timeout, which runs on
//! `SpindleTimer`.

mod common;

use common::server::Protocol;
use common::{fetch1, fetch2, get, h1_client, h2_client, on_each_runtime, start};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use spindle::net::{TcpListener, TcpStream};
use spindle_hyper::{SpindleIo, SpindleTimer};
use std::convert::Infallible;
use std::time::{Duration, Instant};

/// How long the slow handler takes: far past the client's patience.
const SLOW: Duration = Duration::from_secs(5);
/// How long the client waits.
const PATIENCE: Duration = Duration::from_millis(100);

/// `/slow` sleeps [`SLOW`] first; every path answers `done`.
async fn slow_or_fast(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.uri().path() == "/slow" {
        spindle::time::sleep(SLOW).await;
    }
    Ok(Response::new(Full::new(Bytes::from_static(b"done"))))
}

#[test]
fn an_http1_request_times_out_and_the_server_serves_the_next() {
    on_each_runtime("h1 timeout", || async {
        let addr = start(Protocol::Http1, slow_or_fast).await;
        let mut client = h1_client(addr).await;
        let started = Instant::now();
        let gave_up = spindle::time::timeout(PATIENCE, fetch1(&mut client, get("/slow"))).await;
        let waited = started.elapsed();
        assert!(gave_up.is_err(), "the slow request must time out");
        assert!(
            waited >= PATIENCE && waited < SLOW,
            "gave up after {waited:?}"
        );
        // That connection is mid-exchange; a new one is served at once,
        // while the slow handler is still asleep.
        let mut next = h1_client(addr).await;
        let answer = fetch1(&mut next, get("/fast")).await;
        assert_eq!(answer.body, "done");
        assert!(started.elapsed() < SLOW);
    });
}

#[test]
fn an_http2_stream_times_out_and_its_connection_serves_the_next() {
    on_each_runtime("h2 timeout", || async {
        let addr = start(Protocol::Http1AndHttp2, slow_or_fast).await;
        let mut client = h2_client(addr).await;
        let started = Instant::now();
        let gave_up = spindle::time::timeout(PATIENCE, fetch2(&mut client, get("/slow"))).await;
        assert!(gave_up.is_err(), "the slow request must time out");
        // The dropped stream is reset; the connection itself goes on.
        let answer = fetch2(&mut client, get("/fast")).await;
        assert_eq!(answer.body, "done");
        assert!(started.elapsed() < SLOW);
    });
}

#[test]
fn hypers_header_read_timeout_closes_a_silent_connection() {
    on_each_runtime("header read timeout", || async {
        const HEADER_TIMEOUT: Duration = Duration::from_millis(300);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spindle::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            hyper::server::conn::http1::Builder::new()
                .timer(SpindleTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(
                    SpindleIo::new(stream),
                    hyper::service::service_fn(slow_or_fast),
                )
                .await
        });
        let client = TcpStream::connect(addr).await.unwrap();
        let started = Instant::now();
        // Half a request line, then nothing.
        client.write_all(b"GET /fast HT").await.unwrap();
        let mut buf = [0u8; 256];
        let mut got = Vec::new();
        while let Ok(n @ 1..) = client.read(&mut buf).await {
            got.extend_from_slice(&buf[..n]);
        }
        let waited = started.elapsed();
        let err = server.await.unwrap().expect_err("the connection must fail");
        assert!(err.is_timeout(), "a header timeout, got {err}");
        // Never early (spindle's timers round up), and not much later.
        assert!(waited >= HEADER_TIMEOUT, "closed after {waited:?}");
        assert!(waited < Duration::from_secs(3), "closed after {waited:?}");
        let got = String::from_utf8_lossy(&got);
        assert!(
            !got.contains("200 OK"),
            "no answer to half a request: {got:?}"
        );
    });
}
