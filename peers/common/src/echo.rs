//! The echo-server mode of the peer protocol, for `spindle-bench echo`:
//!
//! ```text
//! <peer> serve-echo --workers W
//!     binds 127.0.0.1:0 (loopback only), prints one line
//!       `SPINDLE-BENCH-ECHO port=<port>`
//!     on stdout (flushed), then serves echo on every connection it accepts:
//!     TCP_NODELAY set (Go's default), whatever is read (into a buffer of
//!     `BUF` bytes) written back in full, the connection closed at end of
//!     stream or on an error. It exits 0 when its stdin reaches end of file
//!     (the harness closes it), or is killed.
//! ```
//!
//! The harness's load generator checks every echoed byte; the server only
//! copies bytes back.

use std::io::{Read, Write};
use std::net::SocketAddr;

/// The first word of the announcement line.
pub const ANNOUNCE: &str = "SPINDLE-BENCH-ECHO";

/// Read buffer of each connection, the same in every peer.
pub const BUF: usize = 16 * 1024;

/// The address every echo server binds.
pub const BIND: &str = "127.0.0.1:0";

/// `Some(workers)` when this process was started as `serve-echo`; bad
/// arguments for that mode print the error and exit 2.
pub fn requested() -> Option<usize> {
    requested_mode("serve-echo")
}

/// `Some(workers)` when this process was started as `<mode> --workers W`
/// (`serve-echo`, `serve-http`); bad arguments print the error and exit 2.
pub fn requested_mode(mode: &str) -> Option<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_mode(&args, mode) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!("usage: <peer> {mode} --workers W");
            std::process::exit(2);
        }
    }
}

/// The parser behind [`requested`]: `Ok(None)` for any other command.
pub fn parse(args: &[String]) -> Result<Option<usize>, String> {
    parse_mode(args, "serve-echo")
}

/// The parser behind [`requested_mode`].
pub fn parse_mode(args: &[String], mode: &str) -> Result<Option<usize>, String> {
    if args.first().map(String::as_str) != Some(mode) {
        return Ok(None);
    }
    match &args[1..] {
        [flag, n] if flag == "--workers" => match n.parse::<usize>() {
            Ok(0) => Err("`--workers 0`: need at least one".into()),
            Ok(w) => Ok(Some(w)),
            Err(_) => Err(format!("`--workers {n}`: not a positive integer")),
        },
        _ => Err(format!("`{mode}` takes exactly `--workers W`")),
    }
}

/// The announcement line for a server bound to `addr`.
pub fn announcement(addr: SocketAddr) -> String {
    format!("{ANNOUNCE} port={}", addr.port())
}

/// Prints the announcement and flushes stdout.
pub fn announce(addr: SocketAddr) {
    announce_as(ANNOUNCE, addr)
}

/// Prints `<word> port=<port>` and flushes stdout.
pub fn announce_as(word: &str, addr: SocketAddr) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{word} port={}", addr.port());
    let _ = out.flush();
}

/// Blocks until stdin reaches end of file, then exits the process with 0
/// (the server's threads are not joined: there is nothing to flush).
pub fn exit_when_stdin_closes() -> ! {
    let mut sink = [0u8; 256];
    let mut stdin = std::io::stdin().lock();
    loop {
        match stdin.read(&mut sink) {
            Ok(0) => std::process::exit(0),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => std::process::exit(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_serve_echo_and_names_bad_input() {
        assert_eq!(parse(&args("serve-echo --workers 2")), Ok(Some(2)));
        assert_eq!(parse(&args("run skynet --size 1 --workers 2")), Ok(None));
        assert!(parse(&args("serve-echo --workers 0"))
            .unwrap_err()
            .contains("workers 0"));
        assert!(parse(&args("serve-echo --workers x"))
            .unwrap_err()
            .contains("`--workers x`"));
        assert!(parse(&args("serve-echo"))
            .unwrap_err()
            .contains("--workers"));
        let a: SocketAddr = "127.0.0.1:4242".parse().unwrap();
        assert_eq!(announcement(a), "SPINDLE-BENCH-ECHO port=4242");
    }
}
