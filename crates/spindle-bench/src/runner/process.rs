//! One peer process, run and measured from outside.
//!
//! [`run_process`] starts a peer in its own process group, drains its stdout
//! and stderr on two threads, and reaps it with `wait4` on a third, which
//! gives the wall time (spawn to reap), user and system CPU time and peak RSS
//! of that process alone. Past the time limit the whole process group gets
//! SIGKILL and the run is reported as timed out.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a peer process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
}

/// One finished process, measured from outside.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub peak_rss_bytes: u64,
    /// The harness's own peak RSS when it started the process: a child's
    /// `ru_maxrss` never reads below it (Linux carries the spawning
    /// process's high-water mark across exec), so a peak at or under this
    /// floor means "at most this much".
    pub rss_floor_bytes: u64,
}

/// This process's own memory high-water mark (`VmHWM`), the floor every
/// child inherits. Not `getrusage(RUSAGE_SELF)`: that one also carries the
/// high-water mark of whatever exec'd us (cargo, under `cargo run`).
pub fn own_peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn tv_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000
}

/// Runs `bin args…` (with `env` added to this process's environment) to
/// completion or until `timeout`, measuring it.
pub fn run_process(
    bin: &Path,
    args: &[String],
    env: &[(&str, &str)],
    timeout: Duration,
) -> std::io::Result<Outcome> {
    let rss_floor_bytes = own_peak_rss();
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    let out_t = drain(child.stdout.take().expect("piped stdout"));
    let err_t = drain(child.stderr.take().expect("piped stderr"));
    let rx = reap(pid, start);
    let mut timed_out = false;
    let reaped = match rx.recv_timeout(timeout) {
        Ok(r) => r,
        Err(_) => {
            timed_out = true;
            // SAFETY: kill(2) on our child's process group; no memory involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
            rx.recv()
                .map_err(|_| std::io::Error::other("wait thread vanished"))?
        }
    }?;
    drop(child);
    let Reaped { status, ru, wall } = reaped;
    let exit = if timed_out {
        Exit::TimedOut
    } else if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else {
        Exit::Signal(libc::WTERMSIG(status))
    };
    // A grandchild could keep a pipe open; don't wait for it forever.
    let stdout = join_with_limit(out_t);
    let stderr = join_with_limit(err_t);
    Ok(Outcome {
        exit,
        stdout,
        stderr,
        wall_ns: wall.as_nanos() as u64,
        user_ns: tv_ns(ru.ru_utime),
        sys_ns: tv_ns(ru.ru_stime),
        peak_rss_bytes: ru.ru_maxrss as u64 * 1024,
        rss_floor_bytes,
    })
}

/// Reads a child's pipe to its end on a thread of its own, as text.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = pipe.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    })
}

/// A reaped child: its wait status, its resource usage, and the time from
/// `start` to its reaping.
struct Reaped {
    status: libc::c_int,
    ru: libc::rusage,
    wall: Duration,
}

/// Reaps child `pid` with `wait4` on a thread of its own, which sends the
/// result once.
fn reap(pid: libc::pid_t, start: Instant) -> mpsc::Receiver<std::io::Result<Reaped>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut status: libc::c_int = 0;
        // SAFETY: an all-zero rusage is a valid value of this plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `pid` is our own unreaped child (std never waits for it:
            // we never call `wait` on the `Child`); both out-pointers are valid.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            if r == pid {
                break;
            }
            if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            let _ = tx.send(Err(std::io::Error::last_os_error()));
            return;
        }
        let wall = start.elapsed();
        let _ = tx.send(Ok(Reaped { status, ru, wall }));
    });
    rx
}

fn join_with_limit(t: std::thread::JoinHandle<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !t.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    if t.is_finished() {
        t.join().unwrap_or_default()
    } else {
        String::from("<output still open after exit>")
    }
}

/// The last `lines` lines of a text, for error messages.
pub fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.trim_end().lines().collect();
    v[v.len().saturating_sub(lines)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_process_from_outside() {
        let o = run_process(
            Path::new("/bin/sh"),
            &["-c".into(), "echo hi $EXTRA; echo oops >&2; exit 4".into()],
            &[("EXTRA", "there")],
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(o.exit, Exit::Code(4));
        assert_eq!(o.stdout.trim(), "hi there");
        assert_eq!(o.stderr.trim(), "oops");
        assert!(o.wall_ns > 0 && o.peak_rss_bytes > 0);
        assert!(o.rss_floor_bytes > 0 && own_peak_rss() > 0);
    }

    #[test]
    fn kills_a_process_past_its_time_limit() {
        let t = Instant::now();
        let o = run_process(
            Path::new("/bin/sh"),
            &["-c".into(), "sleep 20".into()],
            &[],
            Duration::from_millis(200),
        )
        .unwrap();
        assert_eq!(o.exit, Exit::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
