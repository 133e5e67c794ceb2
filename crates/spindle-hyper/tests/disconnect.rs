//! A client that goes away mid-body: the server's handler sees its body
//! read fail (the body ends before its `Content-Length`), and the server goes on serving
//! other clients.

mod common;

use common::server::Protocol;
use common::{fetch1, h1_client, on_each_runtime, start};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use spindle::chan::{Receiver, Sender};
use spindle::net::TcpStream;
use std::error::Error;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

/// What the handler saw of one upload's body.
#[derive(Debug)]
enum Upload {
    /// Read whole: this many bytes.
    Whole(usize),
    /// The read failed: the kind of the I/O error under hyper's, and the
    /// whole chain as text.
    Failed {
        cause: Option<std::io::ErrorKind>,
        error: String,
    },
}

/// Serves uploads: reads the whole body, reports what it saw on the
/// returned channel, and answers with the byte count.
async fn upload_server() -> (SocketAddr, Receiver<Upload>) {
    let (tx, rx) = spindle::chan::unbounded();
    let addr = start(Protocol::Http1, move |req| upload(req, tx.clone())).await;
    (addr, rx)
}

async fn upload(
    req: Request<Incoming>,
    seen: Sender<Upload>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    match req.into_body().collect().await {
        Ok(body) => {
            let n = body.to_bytes().len();
            seen.try_send(Upload::Whole(n)).unwrap();
            Ok(Response::new(Full::new(Bytes::from(n.to_string()))))
        }
        Err(e) => {
            let failed = Upload::Failed {
                cause: io_cause(&e),
                error: chain(&e),
            };
            seen.try_send(failed).unwrap();
            Err(e) // ends the connection, which is gone anyway
        }
    }
}

/// The kind of the first I/O error in `e`'s chain of sources.
fn io_cause(e: &(dyn Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut cause = e.source();
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        cause = c.source();
    }
    None
}

/// `e` and its sources, `: `-separated.
fn chain(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text += &format!(": {c}");
        cause = c.source();
    }
    text
}

/// A POST of `/upload` announcing `announced` bytes, of which `sent` are
/// sent before the socket is closed.
async fn upload_and_vanish(addr: SocketAddr, announced: usize, sent: usize) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let head = format!("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {announced}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&vec![b'x'; sent]).await.unwrap();
    // Give the server the head and partial body first, so that the handler
    // is reading the body when the socket closes (either order must still
    // end in an error, but this one is the case under test).
    spindle::time::sleep(Duration::from_millis(20)).await;
    drop(stream);
}

#[test]
fn a_client_gone_mid_body_fails_the_body_read_only() {
    on_each_runtime("disconnect mid-body", || async {
        let (addr, seen) = upload_server().await;
        upload_and_vanish(addr, 100_000, 10_000).await;
        match seen.recv().await.unwrap() {
            Upload::Failed { cause, error } => {
                // hyper: a body that ends before its Content-Length.
                assert_eq!(cause, Some(ErrorKind::UnexpectedEof), "{error}");
                assert!(
                    error.contains("error reading a body from connection"),
                    "{error}"
                );
            }
            other => panic!("the body read must fail, got {other:?}"),
        }
        // Others are served, by the same server, meanwhile and after.
        let mut client = h1_client(addr).await;
        let post = Request::post("/upload")
            .header("host", "127.0.0.1")
            .body(Full::new(Bytes::from(vec![b'y'; 50_000])))
            .unwrap();
        let answer = fetch1(&mut client, post).await;
        assert_eq!(answer.body, "50000");
        assert!(matches!(seen.recv().await.unwrap(), Upload::Whole(50_000)));
    });
}

#[test]
fn many_vanishing_clients_beside_steady_ones() {
    on_each_runtime("vanishing clients", || async {
        let (addr, seen) = upload_server().await;
        let vanishing: Vec<_> = (0..8)
            .map(|i| spindle::spawn(upload_and_vanish(addr, 4096, 100 * i)))
            .collect();
        let mut client = h1_client(addr).await;
        for i in 0..8 {
            let post = Request::post("/upload")
                .header("host", "127.0.0.1")
                .body(Full::new(Bytes::from(vec![b'z'; 1000 + i])))
                .unwrap();
            assert_eq!(fetch1(&mut client, post).await.body, (1000 + i).to_string());
        }
        for v in vanishing {
            v.await.unwrap();
        }
        let (mut failed, mut whole) = (0, 0);
        for _ in 0..16 {
            match seen.recv().await.unwrap() {
                Upload::Failed {
                    cause: Some(ErrorKind::UnexpectedEof),
                    ..
                } => failed += 1,
                Upload::Whole(_) => whole += 1,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!((failed, whole), (8, 8));
    });
}
