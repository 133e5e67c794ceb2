//! `serve-http` (see `spindle_peer_common::http`): hyper 1.x on a Tokio
//! multi-thread runtime of W workers, as hyper-util's Tokio glue and the
//! TechEmpower hyper entries write it: an accept loop, a task per
//! connection, `http1::Builder` with its defaults (keep-alive on) and
//! hyper-util's `TokioTimer` (so hyper's header-read timeout is armed, as
//! on spindle), the `date` header from hyper itself, serde_json per JSON
//! request.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use spindle_peer_common::{echo, http};
use std::convert::Infallible;
use tokio::net::TcpListener;

#[derive(serde::Serialize)]
struct Message {
    message: &'static str,
}

pub fn serve(workers: usize) -> ! {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt.block_on(async {
        TcpListener::bind(echo::BIND)
            .await
            .unwrap_or_else(|e| panic!("could not bind {}: {e}", echo::BIND))
    });
    http::announce(listener.local_addr().expect("local address"));
    drop(rt.spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    eprintln!("accept: {e}");
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            drop(tokio::spawn(async move {
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), service_fn(respond));
                let _ = conn.await;
            }));
        }
    }));
    echo::exit_when_stdin_closes()
}

async fn respond(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let (status, content_type, body) = match (req.method(), req.uri().path()) {
        (&Method::GET, http::PLAINTEXT_PATH) => (
            StatusCode::OK,
            "text/plain",
            Bytes::from_static(http::PLAINTEXT_BODY.as_bytes()),
        ),
        (&Method::GET, http::JSON_PATH) => {
            let json = serde_json::to_vec(&Message {
                message: http::JSON_MESSAGE,
            })
            .expect("a struct of one string serializes");
            (StatusCode::OK, "application/json", Bytes::from(json))
        }
        _ => (StatusCode::NOT_FOUND, "text/plain", Bytes::new()),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(SERVER, HeaderValue::from_static(http::SERVER));
    Ok(response)
}
