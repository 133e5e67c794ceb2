//! The hello example's routes, TechEmpower's plaintext and json tests:
//! `GET /plaintext` is `Hello, World!` as `text/plain`, `GET /json` is
//! `{"message":"Hello, World!"}` as `application/json`, serialized from a
//! struct on every request as the benchmark's rules ask; anything else is
//! 404 with an empty body.
//!
//! Invariants: every response carries `server` and `content-type` (and
//! `content-length`, from the full body); hyper adds `date`. The handler
//! never fails.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;

pub const PLAINTEXT_BODY: &str = "Hello, World!";
pub const SERVER_NAME: &str = "spindle-hyper";

#[derive(serde::Serialize)]
struct Message {
    message: &'static str,
}

/// Answers one request.
pub async fn hello(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let (content_type, body, status) = match (req.method(), req.uri().path()) {
        (&Method::GET, "/plaintext") => (
            "text/plain",
            Bytes::from_static(PLAINTEXT_BODY.as_bytes()),
            StatusCode::OK,
        ),
        (&Method::GET, "/json") => {
            let json = serde_json::to_vec(&Message {
                message: PLAINTEXT_BODY,
            })
            .expect("a struct of one string serializes");
            ("application/json", Bytes::from(json), StatusCode::OK)
        }
        _ => ("text/plain", Bytes::new(), StatusCode::NOT_FOUND),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(SERVER, HeaderValue::from_static(SERVER_NAME));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(response)
}
