//! Before a server is timed, its answers are checked: both tests return
//! 200 with the expected content type and exact body and a `date` header,
//! an unknown path returns 404, and all of it on one kept-alive
//! connection (wrk's connections are kept alive; a server that closed each
//! would be timed on reconnects).

use spindle_peer_common::http as proto;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One parsed response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Checks the server on `port`; the error names what was wrong.
pub fn check(port: u16) -> Result<(), String> {
    let stream = TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| format!("could not connect to 127.0.0.1:{port}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
    let mut get = |path: &str| -> Result<Response, String> {
        let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        (&stream)
            .write_all(req.as_bytes())
            .map_err(|e| format!("GET {path}: {e}"))?;
        read_response(&mut reader).map_err(|e| format!("GET {path}: {e}"))
    };
    for (path, content_type, body) in [
        (proto::PLAINTEXT_PATH, "text/plain", proto::PLAINTEXT_BODY),
        (proto::JSON_PATH, "application/json", proto::JSON_BODY),
    ] {
        let r = get(path)?;
        let what = |w: &str| format!("GET {path}: {w}");
        if r.status != 200 {
            return Err(what(&format!("status {}, expected 200", r.status)));
        }
        if r.header("content-type") != Some(content_type) {
            return Err(what(&format!(
                "content-type {:?}, expected {content_type:?}",
                r.header("content-type")
            )));
        }
        if r.body != body.as_bytes() {
            return Err(what(&format!(
                "body {:?}, expected {body:?}",
                String::from_utf8_lossy(&r.body)
            )));
        }
        if r.header("date").is_none() {
            return Err(what("no date header"));
        }
    }
    let r = get("/no-such-test")?;
    if r.status != 404 {
        return Err(format!(
            "GET /no-such-test: status {}, expected 404",
            r.status
        ));
    }
    Ok(())
}

/// Reads one response with a `content-length` body.
pub fn read_response(r: &mut impl BufRead) -> Result<Response, String> {
    let mut line = String::new();
    read_line(r, &mut line)?;
    let status = line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|s| s.get(..3))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP/1.1 status line: {line:?}"))?;
    let mut headers = Vec::new();
    loop {
        read_line(r, &mut line)?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| format!("not a header: {line:?}"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .ok_or("no content-length (the check needs one, as every peer sends)")?;
    let mut body = vec![0; len];
    r.read_exact(&mut body).map_err(|e| format!("body: {e}"))?;
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// One line without its `\r\n`; end of stream is an error.
fn read_line(r: &mut impl BufRead, line: &mut String) -> Result<(), String> {
    line.clear();
    match r.read_line(line) {
        Ok(0) => Err("the connection closed".into()),
        Ok(_) => {
            let end = line.trim_end_matches(['\r', '\n']).len();
            line.truncate(end);
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_response_and_names_what_is_missing() {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";
        let r = read_response(&mut text.as_bytes()).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.body, b"hello");
        let no_len = "HTTP/1.1 200 OK\r\n\r\n";
        assert!(read_response(&mut no_len.as_bytes())
            .unwrap_err()
            .contains("content-length"));
        assert!(read_response(&mut "SSH-2.0\r\n".as_bytes())
            .unwrap_err()
            .contains("status line"));
    }
}
