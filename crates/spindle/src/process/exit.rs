//! Waiting for a child to exit without blocking a worker.
//!
//! The child is always reaped by the waiting task itself, through std's
//! `Child::try_wait` (`waitpid(WNOHANG)`), once something says it exited:
//! - on Linux (5.3 and later), a pidfd (`pidfd_open`) registered with the
//!   reactor: it becomes readable when the child exits. Registering costs
//!   an fd per child and nothing else;
//! - where `pidfd_open` fails (an older kernel, a seccomp filter, another
//!   OS), a blocking-pool job that waits for the exit with
//!   `waitid(WEXITED | WNOWAIT)`: it occupies one pool thread per waited-for
//!   child until that child exits, and does not reap it.
//!
//! Reaping only in the task means a pid is released only by a call that
//! also records the status in std's `Child`, so `Child::kill` (which checks
//! that record) never signals a pid that another process may have taken.

use crate::io::{Direction, Registration};
use crate::task::JoinHandle;
use std::future::Future;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::process::{Child, ExitStatus};
use std::task::{ready, Context, Poll};

pub(super) enum Exit {
    Pidfd {
        // Field order: the registration is dropped (deregistered) before the fd closes.
        reg: Registration,
        _fd: OwnedFd,
    },
    /// The job waiting for the exit on the blocking pool, once started.
    Pool(Option<JoinHandle<io::Result<()>>>),
}

impl Exit {
    /// How to wait for the child `pid` (spawned by this process, not yet
    /// reaped): a pidfd on the reactor where the kernel gives one.
    pub(super) fn new(pid: u32) -> Exit {
        match pidfd(pid) {
            Some((reg, fd)) => Exit::Pidfd { reg, _fd: fd },
            None => Exit::Pool(None),
        }
    }

    /// Whether the exit comes as a readiness event (no thread held).
    pub(super) fn is_pidfd(&self) -> bool {
        matches!(self, Exit::Pidfd { .. })
    }

    /// `Ready` with the status once `child` exited and was reaped here.
    pub(super) fn poll_exit(
        &mut self,
        child: &mut Child,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<ExitStatus>> {
        match self {
            // Starts out ready: the first attempt finds a child that exited
            // before the registration.
            Exit::Pidfd { reg, .. } => reg.poll_io(Direction::Read, cx, || {
                child
                    .try_wait()?
                    .ok_or_else(|| io::ErrorKind::WouldBlock.into())
            }),
            Exit::Pool(job) => loop {
                if let Some(status) = child.try_wait()? {
                    *job = None; // a job still waiting gets ECHILD; nobody reads it
                    return Poll::Ready(Ok(status));
                }
                match job {
                    None => {
                        let pool = crate::Handle::try_current().ok_or_else(no_runtime)?;
                        let pid = child.id();
                        *job = Some(pool.spawn_blocking(move || wait_exited(pid)));
                    }
                    Some(running) => {
                        let done = ready!(Pin::new(running).poll(cx));
                        *job = None;
                        done.map_err(io::Error::from)??;
                        // Exited: the next `try_wait` reaps it.
                    }
                }
            },
        }
    }
}

fn no_runtime() -> io::Error {
    io::Error::other(
        "waiting for a child process needs a spindle runtime (a task, \
         `Runtime::block_on`, or `Runtime::enter`)",
    )
}

/// A pidfd for `pid` on the current runtime's reactor; `None` where the
/// kernel gives none or no runtime is current.
#[cfg(target_os = "linux")]
fn pidfd(pid: u32) -> Option<(Registration, OwnedFd)> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    let flags: libc::c_uint = 0;
    // SAFETY: pidfd_open takes two integers and returns a new descriptor
    // (close-on-exec) or -1; no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) };
    let fd = RawFd::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: `fd` was just returned by the kernel and nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // The pidfd is only polled, never read: blocking mode does not matter.
    let reg = Registration::new(std::os::fd::AsRawFd::as_raw_fd(&fd)).ok()?;
    Some((reg, fd))
}

#[cfg(not(target_os = "linux"))]
fn pidfd(_pid: u32) -> Option<(Registration, OwnedFd)> {
    None
}

/// Blocking: returns once the child `pid` exited, leaving it waitable
/// (`WNOWAIT`): the task reaps it.
fn wait_exited(pid: u32) -> io::Result<()> {
    let id = libc::id_t::from(pid);
    loop {
        // SAFETY: all-zero bytes are a valid `siginfo_t` (a plain C struct).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a live, writable `siginfo_t` that waitid fills.
        let r = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;

    /// The blocking-pool fallback, as used where `pidfd_open` fails.
    #[test]
    fn the_pool_fallback_waits_and_reaps() {
        let rt = crate::Runtime::new().unwrap();
        rt.block_on(async {
            let mut child = std::process::Command::new("sh")
                .args(["-c", "sleep 0.05; exit 7"])
                .spawn()
                .unwrap();
            let mut exit = Exit::Pool(None);
            let status = poll_fn(|cx| exit.poll_exit(&mut child, cx)).await.unwrap();
            assert_eq!(status.code(), Some(7));
            // Reaped: the status is recorded, and kill is a no-op.
            assert_eq!(child.try_wait().unwrap().unwrap().code(), Some(7));
            child.kill().unwrap();
        });
    }
}
