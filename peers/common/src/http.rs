//! The HTTP-server mode of the peer protocol, for `spindle-bench http`:
//!
//! ```text
//! <peer> serve-http --workers W
//!     binds 127.0.0.1:0 (loopback only), prints one line
//!       `SPINDLE-BENCH-HTTP port=<port>`
//!     on stdout (flushed), then serves TechEmpower's two simplest tests
//!     over HTTP/1.1 with keep-alive and TCP_NODELAY:
//!       GET /plaintext  200, `content-type: text/plain`, body `Hello, World!`
//!       GET /json       200, `content-type: application/json`, body
//!                       `{"message":"Hello, World!"}`, serialized per request
//!       anything else   404
//!     each response with `server` and `date` headers. It exits 0 when its
//!     stdin reaches end of file, or is killed.
//! ```
//!
//! spindle's server is `spindle-hyper`'s `hello` example, which serves the
//! same routes with the same hyper settings; the harness checks every
//! server's responses byte for byte before it times any.

/// The first word of the announcement line.
pub const ANNOUNCE: &str = "SPINDLE-BENCH-HTTP";

/// The plaintext route and its body.
pub const PLAINTEXT_PATH: &str = "/plaintext";
pub const PLAINTEXT_BODY: &str = "Hello, World!";

/// The JSON route, the message it serializes and the body that gives.
pub const JSON_PATH: &str = "/json";
pub const JSON_MESSAGE: &str = "Hello, World!";
pub const JSON_BODY: &str = r#"{"message":"Hello, World!"}"#;

/// The `server` header every peer sends.
pub const SERVER: &str = "spindle-bench";

/// `Some(workers)` when this process was started as `serve-http`; bad
/// arguments for that mode print the error and exit 2.
pub fn requested() -> Option<usize> {
    crate::echo::requested_mode("serve-http")
}

/// The announcement line for a server bound to `addr`.
pub fn announce(addr: std::net::SocketAddr) {
    crate::echo::announce_as(ANNOUNCE, addr)
}
