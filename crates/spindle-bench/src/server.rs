//! One server process under test (`echo`, `http`): started from a command
//! line, its port read from the first line it prints (10 s at most), its
//! CPU time read from `/proc/<pid>/stat` whenever asked, killed at the end.
//!
//! The first stdout line must name the port, either as the peers'
//! `SPINDLE-BENCH-ECHO port=<port>` / `SPINDLE-BENCH-HTTP port=<port>` or as
//! an example's `listening on http://127.0.0.1:<port>`.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How to start one server.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The peer's name in the report.
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// A started server.
pub struct Server {
    child: Child,
    pub port: u16,
    stderr: mpsc::Receiver<String>,
}

/// Starts `launch` and waits (10 s at most) for its port.
pub fn start(launch: &Launch) -> Result<Server, String> {
    let mut child = Command::new(&launch.program)
        .args(&launch.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", launch.program.display()))?;
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
    let mut server = Server {
        child,
        port: 0,
        stderr: err_rx,
    };
    match line.as_deref().ok().and_then(port_of) {
        Some(port) => {
            server.port = port;
            Ok(server)
        }
        None => {
            let said = server.stop();
            Err(format!(
                "{} did not announce a port ({}){}",
                launch.name,
                match line {
                    Ok(l) => format!("said `{l}`"),
                    Err(_) => "nothing within 10 s".into(),
                },
                if said.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", crate::runner::tail(&said, 3))
                }
            ))
        }
    }
}

/// The port in an announcement line: after `port=`, or after the last `:`.
pub fn port_of(line: &str) -> Option<u16> {
    let rest = match line.rfind("port=") {
        Some(i) => &line[i + 5..],
        None => &line[line.rfind(':')? + 1..],
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|&p| p != 0)
}

impl Server {
    /// User + system CPU time the server has used so far.
    pub fn cpu(&self) -> Result<Duration, String> {
        let path = format!("/proc/{}/stat", self.child.id());
        let stat =
            std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
        cpu_of_stat(&stat).ok_or_else(|| format!("{path}: no CPU times in `{stat}`"))
    }

    /// Kills the server and returns what it wrote on stderr.
    pub fn stop(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr
            .recv_timeout(Duration::from_secs(2))
            .unwrap_or_default()
    }
}

/// `utime + stime` of a `/proc/<pid>/stat` line (fields 14 and 15, in
/// clock ticks; the command name in field 2 may hold spaces, so fields are
/// counted after its closing parenthesis).
fn cpu_of_stat(stat: &str) -> Option<Duration> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace().skip(11); // field 3 is the first here
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_nanos(
        (utime + stime) * 1_000_000_000 / ticks,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_port_from_either_announcement() {
        assert_eq!(port_of("SPINDLE-BENCH-HTTP port=4242"), Some(4242));
        assert_eq!(port_of("listening on http://127.0.0.1:8080"), Some(8080));
        assert_eq!(port_of("listening on http://127.0.0.1:8080/"), Some(8080));
        assert_eq!(port_of("hello"), None);
        assert_eq!(port_of("port=0"), None);
    }

    #[test]
    fn cpu_times_come_from_fields_14_and_15() {
        // SAFETY: sysconf has no preconditions.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
        let stat = "1234 (a b) S 1 2 3 4 5 6 7 8 9 10 100 50 0 0 20 0";
        let cpu = cpu_of_stat(stat).unwrap();
        assert_eq!(cpu, Duration::from_nanos(150 * 1_000_000_000 / ticks));
    }
}
