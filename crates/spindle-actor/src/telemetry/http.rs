//! The HTTP/1.1 subset the telemetry server speaks: one request per
//! connection, a head of at most [`MAX_HEAD`] bytes, no request body read,
//! every response `Connection: close` with a `Content-Length`.
//!
//! Parsing is strict where it decides the answer (the request line) and
//! lenient elsewhere (header values are not interpreted): a request line
//! that is not `METHOD /target HTTP/1.x` is a 400, never a guess.

/// The largest request head read; a longer one is refused (414 when the
/// request line alone does not fit, 431 otherwise).
pub(crate) const MAX_HEAD: usize = 8 * 1024;

/// Where the head ends (just past its blank line), if it has.
pub(crate) fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// What a request asks for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request<'a> {
    pub(crate) method: &'a str,
    /// The path, without query or fragment.
    pub(crate) path: &'a str,
}

/// Parses a complete head; `None` for a malformed one.
pub(crate) fn parse(head: &[u8]) -> Option<Request<'_>> {
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic());
    if parts.next().is_some()
        || !token(method)
        || !target.starts_with('/')
        || !version.starts_with("HTTP/1.")
    {
        return None;
    }
    // Header lines: `name: value`, up to the blank line.
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, _) = line.split_once(':')?;
        if name.is_empty() || name.contains([' ', '\t']) {
            return None;
        }
    }
    let path = target.split(['?', '#']).next().unwrap_or("");
    Some(Request { method, path })
}

/// A response, written with [`Response::encode`].
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
    /// An `Allow` header, for 405.
    pub(crate) allow: Option<&'static str>,
}

impl Response {
    /// A plain-text answer.
    pub(crate) fn text(status: u16, body: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.to_string(),
            allow: None,
        }
    }

    /// The bytes on the wire; `head_only` for a HEAD request (the headers
    /// still give the body's length).
    pub(crate) fn encode(&self, head_only: bool) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            414 => "URI Too Long",
            431 => "Request Header Fields Too Large",
            503 => "Service Unavailable",
            _ => "",
        };
        let mut out = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n",
            self.status,
            self.content_type,
            self.body.len()
        );
        if let Some(allow) = self.allow {
            out.push_str("Allow: ");
            out.push_str(allow);
            out.push_str("\r\n");
        }
        out.push_str("\r\n");
        if !head_only {
            out.push_str(&self.body);
        }
        out.into_bytes()
    }
}

/// The answer to a head that did not fit in [`MAX_HEAD`] bytes.
pub(crate) fn too_long(buf: &[u8]) -> Response {
    if buf.windows(2).any(|w| w == b"\r\n") {
        Response::text(431, "request head too large\n")
    } else {
        Response::text(414, "request line too long\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_end_at_the_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nrest"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }

    #[test]
    fn parses_what_it_must_and_refuses_the_rest() {
        fn ok(h: &[u8]) -> Option<(&str, &str)> {
            parse(h).map(|r| (r.method, r.path))
        }
        assert_eq!(
            ok(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a:1\r\n\r\n"),
            Some(("GET", "/metrics"))
        );
        assert_eq!(ok(b"HEAD /#top HTTP/1.0\r\n\r\n"), Some(("HEAD", "/")));
        assert_eq!(ok(b"POST / HTTP/1.1\r\n\r\n"), Some(("POST", "/")));
        for bad in [
            &b"GARBAGE\r\n\r\n"[..],
            b"GET\r\n\r\n",
            b"GET / HTTP/1.1 extra\r\n\r\n",
            b"GET metrics HTTP/1.1\r\n\r\n",
            b"GET / HTTP/2\r\n\r\n",
            b"G3T / HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost\r\n\r\n",
            b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
            b"\x00\x01\x02\xff\xfe\r\n\r\n",
        ] {
            assert_eq!(ok(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn responses_carry_length_and_close() {
        let mut r = Response::text(405, "no\n");
        r.allow = Some("GET, HEAD");
        let full = String::from_utf8(r.encode(false)).unwrap();
        assert!(full.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
        assert!(full.contains("\r\nContent-Length: 3\r\n"));
        assert!(full.contains("\r\nConnection: close\r\n"));
        assert!(full.contains("\r\nAllow: GET, HEAD\r\n"));
        assert!(full.ends_with("\r\n\r\nno\n"));
        let head = String::from_utf8(r.encode(true)).unwrap();
        assert!(head.ends_with("Content-Length: 3\r\nCache-Control: no-store\r\nConnection: close\r\nAllow: GET, HEAD\r\n\r\n"));
    }

    #[test]
    fn a_long_line_is_414_and_long_headers_431() {
        assert_eq!(too_long(&[b'a'; MAX_HEAD]).status, 414);
        assert_eq!(too_long(b"GET / HTTP/1.1\r\nX: aaaa").status, 431);
    }
}
