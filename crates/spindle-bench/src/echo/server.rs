//! A peer's `serve-echo` process: started with W workers, it binds
//! 127.0.0.1:0 and announces its port on its first stdout line; it is told
//! to exit by closing its stdin and killed if it has not exited 5 s later.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::peers::Peer;
use spindle_peer_common::echo;

/// A started `serve-echo` process.
pub(super) struct Server {
    child: Child,
    pub(super) port: u16,
    stderr: mpsc::Receiver<String>,
}

pub(super) fn start_server(peer: &Peer, workers: usize) -> Result<Server, String> {
    let mut child = Command::new(&peer.path)
        .args(["serve-echo", "--workers", &workers.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", peer.path.display()))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let (line_tx, line_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(l)) = lines.next() {
            let _ = line_tx.send(l);
        }
        for _ in lines {} // drain
    });
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut s);
        let _ = err_tx.send(s);
    });
    let line = line_rx.recv_timeout(Duration::from_secs(10));
    let port = line
        .as_ref()
        .ok()
        .and_then(|l| l.strip_prefix(echo::ANNOUNCE))
        .and_then(|rest| rest.trim().strip_prefix("port="))
        .and_then(|p| p.parse::<u16>().ok());
    let mut server = Server {
        child,
        port: 0,
        stderr: err_rx,
    };
    match port {
        Some(p) => {
            server.port = p;
            Ok(server)
        }
        None => {
            let (_, err) = stop_server(&mut server);
            Err(format!(
                "{} serve-echo did not announce a port ({}){}",
                peer.name,
                match line {
                    Ok(l) => format!("said `{l}`"),
                    Err(_) => "nothing within 10 s".into(),
                },
                if err.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", crate::runner::tail(&err, 3))
                }
            ))
        }
    }
}

/// Closes the server's stdin, waits up to 5 s, kills it if needed; returns
/// its CPU time (user + sys) and its stderr.
pub(super) fn stop_server(server: &mut Server) -> (Duration, String) {
    drop(server.child.stdin.take());
    let pid = server.child.id() as libc::pid_t;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut killed = false;
    let cpu = loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own child, not yet reaped (only this loop
        // reaps it); `status` and `usage` are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            let tv = |t: libc::timeval| {
                Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
            };
            break tv(usage.ru_utime) + tv(usage.ru_stime);
        }
        if r < 0 {
            break Duration::ZERO;
        }
        if Instant::now() >= deadline && !killed {
            let _ = server.child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = server
        .stderr
        .recv_timeout(Duration::from_secs(2))
        .unwrap_or_default();
    (cpu, err)
}
