//! hyper's HTTP/1 client against the hello example's server, both on
//! spindle: the TechEmpower routes, keep-alive, many connections at once,
//! and a malformed request answered with 400 while the server goes on.

mod common;

use common::routes::{PLAINTEXT_BODY, SERVER_NAME};
use common::server::Protocol;
use common::{fetch1, get, h1_client, on_each_runtime, raw_exchange, start_hello};
use hyper::StatusCode;

/// Checks the headers every hello response carries.
fn assert_common_headers(answer: &common::Answer, content_type: &str) {
    assert_eq!(answer.header("server"), SERVER_NAME);
    assert_eq!(answer.header("content-type"), content_type);
    assert_eq!(
        answer.header("content-length"),
        answer.body.len().to_string()
    );
    // hyper's date: `Sat, 28 Nov 2026 06:42:27 GMT`.
    let date = answer.header("date");
    assert!(date.ends_with(" GMT") && date.len() == 29, "date {date:?}");
}

#[test]
fn plaintext_json_and_404_on_one_kept_alive_connection() {
    on_each_runtime("routes", || async {
        let addr = start_hello(Protocol::Http1).await;
        let mut client = h1_client(addr).await;
        // One connection for all four: each request after the first needs
        // the server to have kept it open.
        let plain = fetch1(&mut client, get("/plaintext")).await;
        assert_eq!(plain.status, StatusCode::OK);
        assert_eq!(plain.body, PLAINTEXT_BODY);
        assert_common_headers(&plain, "text/plain");

        let json = fetch1(&mut client, get("/json")).await;
        assert_eq!(json.status, StatusCode::OK);
        assert_eq!(json.body, r#"{"message":"Hello, World!"}"#);
        assert_common_headers(&json, "application/json");

        let missing = fetch1(&mut client, get("/plaintext/x")).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert!(missing.body.is_empty());

        let post = hyper::Request::post("/json")
            .header("host", "127.0.0.1")
            .body(http_body_util::Full::default())
            .unwrap();
        let post = fetch1(&mut client, post).await;
        assert_eq!(post.status, StatusCode::NOT_FOUND, "only GET is routed");
    });
}

#[test]
fn many_connections_at_once_each_get_their_own_answers() {
    on_each_runtime("many connections", || async {
        let addr = start_hello(Protocol::Http1).await;
        let clients: Vec<_> = (0..16)
            .map(|c| {
                spindle::spawn(async move {
                    let mut client = h1_client(addr).await;
                    for i in 0..20 {
                        let path = if (c + i) % 2 == 0 {
                            "/plaintext"
                        } else {
                            "/json"
                        };
                        let answer = fetch1(&mut client, get(path)).await;
                        assert_eq!(answer.status, StatusCode::OK);
                        let want: &[u8] = match path {
                            "/plaintext" => PLAINTEXT_BODY.as_bytes(),
                            _ => br#"{"message":"Hello, World!"}"#,
                        };
                        assert_eq!(answer.body, want, "connection {c}, request {i}");
                    }
                })
            })
            .collect();
        for client in clients {
            client.await.unwrap();
        }
    });
}

#[test]
fn a_malformed_request_gets_400_and_the_server_keeps_serving() {
    on_each_runtime("malformed request", || async {
        let addr = start_hello(Protocol::Http1).await;
        for garbage in [
            &b"GARBAGE\r\n\r\n"[..],
            b"GET /plaintext HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n",
            b"\x00\x01\x02\x03 not http at all\r\n\r\n",
        ] {
            let answer = raw_exchange(addr, garbage).await;
            assert!(
                answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
                "for {garbage:?}: {answer:?}"
            );
            // The same server answers a good request next.
            let mut client = h1_client(addr).await;
            let ok = fetch1(&mut client, get("/plaintext")).await;
            assert_eq!(ok.body, PLAINTEXT_BODY);
        }
    });
}

#[test]
fn a_raw_keep_alive_exchange_answers_every_request_on_one_socket() {
    on_each_runtime("raw keep-alive", || async {
        let addr = start_hello(Protocol::Http1).await;
        // Two requests in one write (pipelined), the second asking to close:
        // both answered, in order, then the server closes.
        let answer = raw_exchange(
            addr,
            b"GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n\
              GET /json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await;
        let first = answer.find("Hello, World!").expect("the plaintext body");
        let second = answer
            .find(r#"{"message":"Hello, World!"}"#)
            .expect("the json body");
        assert!(first < second, "{answer:?}");
        assert_eq!(
            answer.matches("HTTP/1.1 200 OK\r\n").count(),
            2,
            "{answer:?}"
        );
    });
}
