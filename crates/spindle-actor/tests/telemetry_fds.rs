//! The telemetry server outlives a process that ran out of file
//! descriptors: a connection that arrives while `accept` fails with
//! `EMFILE` is served once descriptors are free again, and so are later
//! ones. Its own test binary, since it lowers the process's descriptor
//! limit and fills it.

mod common;

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{eventually, exchange, http_get, parse, pipe};

/// Lowers the soft `RLIMIT_NOFILE` to at most 1024 (so that filling it is
/// quick) and returns the files opened to reach it.
fn fill_descriptors() -> Vec<File> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    lim.rlim_cur = lim.rlim_cur.min(1024);
    // SAFETY: `lim` is a valid rlimit no larger than the current one.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
    let mut files = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(f) => files.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::EMFILE), "{e}");
                return files;
            }
        }
    }
}

#[test]
fn serves_again_after_running_out_of_descriptors() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let (mut g, _seen) = pipe(100, 16, 8);
    g.telemetry("127.0.0.1:0");
    let running = g.start(rt.handle()).unwrap();
    let addr = running.telemetry_addr().unwrap();
    eventually("the pipe's 100 messages taken", || {
        running.report().channel("numbers").unwrap().taken == 100
    });
    assert_eq!(http_get(addr, "/metrics").0, 200);

    // Every descriptor taken but one, which the client's socket takes: the
    // server's `accept` of it then fails with EMFILE.
    let mut files = fill_descriptors();
    files.pop();
    let mut early = TcpStream::connect(addr).expect("connect with the last descriptor");
    early
        .write_all(b"GET /api/graph.json HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    early
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut byte = [0u8; 1];
    let err = early
        .read(&mut byte)
        .expect_err("answered without a descriptor to accept with");
    assert!(
        matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{err}"
    );
    drop(files);

    // The connection that waited is served, and so is a new one.
    let answer = exchange(early, b"");
    let (code, body) = parse(&answer);
    assert_eq!(code, 200, "{answer:?}");
    assert!(body.contains("\"graph\""), "{body}");
    assert_eq!(http_get(addr, "/metrics").0, 200);

    running.request_shutdown();
    assert!(running
        .block_until_stopped(Duration::from_secs(10))
        .is_clean());
}
