//! hyper's HTTP/2 client (prior knowledge, its streams on spindle tasks
//! through `SpindleExecutor`) against the hello example's server with
//! `--http2`, which also still speaks HTTP/1 on the same port.

mod common;

use common::routes::{PLAINTEXT_BODY, SERVER_NAME};
use common::server::Protocol;
use common::{fetch1, fetch2, get, h1_client, h2_client, on_each_runtime, start_hello};
use hyper::{StatusCode, Version};

#[test]
fn the_routes_over_http2() {
    on_each_runtime("routes over h2", || async {
        let addr = start_hello(Protocol::Http1AndHttp2).await;
        let mut client = h2_client(addr).await;
        let plain = fetch2(&mut client, get("/plaintext")).await;
        assert_eq!(plain.status, StatusCode::OK);
        assert_eq!(plain.body, PLAINTEXT_BODY);
        assert_eq!(plain.header("content-type"), "text/plain");
        assert_eq!(plain.header("server"), SERVER_NAME);

        let json = fetch2(&mut client, get("/json")).await;
        assert_eq!(json.body, r#"{"message":"Hello, World!"}"#);
        assert_eq!(json.header("content-type"), "application/json");

        let missing = fetch2(&mut client, get("/nothing")).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
    });
}

#[test]
fn the_response_says_http2() {
    on_each_runtime("h2 version", || async {
        let addr = start_hello(Protocol::Http1AndHttp2).await;
        let mut client = h2_client(addr).await;
        client.ready().await.unwrap();
        let response = client.send_request(get("/plaintext")).await.unwrap();
        assert_eq!(response.version(), Version::HTTP_2);
    });
}

#[test]
fn many_streams_at_once_on_one_connection() {
    on_each_runtime("concurrent streams", || async {
        let addr = start_hello(Protocol::Http1AndHttp2).await;
        let client = h2_client(addr).await;
        // Each task's clone of the client is one more stream on the same
        // connection; all are in flight together.
        let streams: Vec<_> = (0..64)
            .map(|i| {
                let mut client = client.clone();
                spindle::spawn(async move {
                    let path = if i % 2 == 0 { "/plaintext" } else { "/json" };
                    let answer = fetch2(&mut client, get(path)).await;
                    assert_eq!(answer.status, StatusCode::OK, "stream {i}");
                    answer.body.len()
                })
            })
            .collect();
        let mut total = 0;
        for stream in streams {
            total += stream.await.unwrap();
        }
        // 32 plaintext bodies of 13 bytes, 32 json bodies of 27.
        assert_eq!(total, 32 * 13 + 32 * 27);
    });
}

#[test]
fn http1_still_works_on_the_http2_port() {
    on_each_runtime("h1 on the auto port", || async {
        let addr = start_hello(Protocol::Http1AndHttp2).await;
        let mut client = h1_client(addr).await;
        for _ in 0..3 {
            let answer = fetch1(&mut client, get("/plaintext")).await;
            assert_eq!(answer.body, PLAINTEXT_BODY);
        }
        let answer = common::raw_exchange(addr, b"NOT HTTP\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 400 "), "{answer:?}");
    });
}
