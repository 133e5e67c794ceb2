//! `Child`: a spawned process, its pipes, and its exit.

use super::exit::Exit;
use super::pipe::{ChildStderr, ChildStdin, ChildStdout};
use crate::io_error::context;
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::process::{ExitStatus, Output};
use std::task::{Context, Poll};

/// A child process spawned by [`Command::spawn`](super::Command::spawn).
///
/// The piped standard streams are in [`stdin`](Self::stdin),
/// [`stdout`](Self::stdout) and [`stderr`](Self::stderr) (`None` unless
/// spawned with `Stdio::piped()`); take them out to use them from other
/// tasks.
///
/// Dropping a `Child` that has not been waited for:
/// - with [`kill_on_drop(true)`](super::Command::kill_on_drop), sends it
///   `SIGKILL`, and reaps it in a background task (outside a runtime: on
///   the spot, after the kill);
/// - otherwise leaves it running. Where its exit comes through a pidfd (see
///   [`spindle::process`](super)), a background task reaps it when it exits;
///   otherwise it stays a zombie from its exit until this process ends, as
///   with `std::process`.
pub struct Child {
    /// The child's standard input, when piped.
    pub stdin: Option<ChildStdin>,
    /// The child's standard output, when piped.
    pub stdout: Option<ChildStdout>,
    /// The child's standard error, when piped.
    pub stderr: Option<ChildStderr>,
    /// `None` only while dropping.
    proc: Option<Proc>,
    status: Option<ExitStatus>,
    kill_on_drop: bool,
    /// How errors name it: the program as given to `Command::new`.
    program: String,
}

/// The std child (pipes taken out) and how its exit is seen.
struct Proc {
    exit: Exit,
    std: std::process::Child,
}

impl Proc {
    fn poll_exit(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        self.exit.poll_exit(&mut self.std, cx)
    }
}

impl Child {
    /// Takes over a std child just spawned: its pipes onto the reactor,
    /// its exit onto a pidfd (or the blocking pool). On an error the child
    /// is killed and reaped before returning.
    pub(super) fn new(
        mut std: std::process::Child,
        kill_on_drop: bool,
        program: String,
    ) -> io::Result<Child> {
        let pipes = (|| {
            let stdin = std.stdin.take().map(ChildStdin::from_std).transpose()?;
            let stdout = std.stdout.take().map(ChildStdout::from_std).transpose()?;
            let stderr = std.stderr.take().map(ChildStderr::from_std).transpose()?;
            Ok::<_, io::Error>((stdin, stdout, stderr))
        })();
        let (stdin, stdout, stderr) = match pipes {
            Ok(p) => p,
            Err(e) => {
                // No `Child` to hand back: do not leave the process behind.
                // After SIGKILL the wait is short.
                let _ = std.kill();
                let _ = std.wait();
                return Err(e);
            }
        };
        let exit = Exit::new(std.id());
        Ok(Child {
            stdin,
            stdout,
            stderr,
            proc: Some(Proc { exit, std }),
            status: None,
            kill_on_drop,
            program,
        })
    }

    fn proc(&mut self) -> &mut Proc {
        self.proc.as_mut().expect("only taken by drop")
    }

    /// The child's process id; `None` once its exit status was collected
    /// (the id may then belong to another process).
    pub fn id(&self) -> Option<u32> {
        match (&self.status, &self.proc) {
            (None, Some(p)) => Some(p.std.id()),
            _ => None,
        }
    }

    /// Waits for the child to exit and returns its status. Closes the
    /// child's stdin first (if still here), so a child that reads to end
    /// of file can finish.
    ///
    /// Cancel-safe: dropping the future loses nothing, and the next call
    /// goes on waiting. Once collected, the status is returned by every
    /// later call.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        poll_fn(|cx| self.poll_wait(cx)).await
    }

    /// The exit status if the child has exited (reaping it), without
    /// waiting; `Ok(None)` while it runs.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let r = self.proc().std.try_wait();
        self.status = r.map_err(|e| self.named(e, "wait for"))?;
        Ok(self.status)
    }

    /// Sends the child `SIGKILL`, without waiting for it to exit. A child
    /// whose status was collected is not signalled (`Ok`).
    pub fn start_kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        let r = self.proc().std.kill();
        r.map_err(|e| self.named(e, "kill"))
    }

    /// Sends the child `SIGKILL` and waits for it to exit.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await.map(drop)
    }

    /// Waits for the child while reading all of its piped stdout and stderr
    /// (concurrently, so a child that fills one pipe cannot stall); closes
    /// its stdin first. Streams that were not piped, or were taken out of
    /// the `Child`, come back empty.
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        drop(self.stdin.take());
        let mut out = Drained::new(self.stdout.take());
        let mut err = Drained::new(self.stderr.take());
        let mut status = None;
        poll_fn(|cx| {
            out.poll(cx)?;
            err.poll(cx)?;
            if status.is_none() {
                status = Some(std::task::ready!(self.poll_wait(cx))?);
            }
            match out.done() && err.done() {
                true => Poll::Ready(Ok::<_, io::Error>(())),
                false => Poll::Pending,
            }
        })
        .await?;
        Ok(Output {
            status: status.expect("set before the loop ends"),
            stdout: out.bytes,
            stderr: err.bytes,
        })
    }

    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        if let Some(status) = self.status {
            return Poll::Ready(Ok(status));
        }
        let r = std::task::ready!(self.proc().poll_exit(cx));
        let status = r.map_err(|e| self.named(e, "wait for"))?;
        self.status = Some(status);
        Poll::Ready(Ok(status))
    }

    fn named(&self, e: io::Error, verb: &str) -> io::Error {
        let pid = self.proc.as_ref().map(|p| p.std.id());
        let pid = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        context(e, format_args!("could not {verb} `{}`{pid}", self.program))
    }
}

/// A stdout or stderr pipe read to its end into `bytes`.
struct Drained<R> {
    pipe: Option<R>,
    bytes: Vec<u8>,
}

impl<R: futures_io::AsyncRead + Unpin> Drained<R> {
    /// Bytes read per attempt (the buffer grows by as much).
    const CHUNK: usize = 16 * 1024;

    fn new(pipe: Option<R>) -> Drained<R> {
        Drained {
            pipe,
            bytes: Vec::new(),
        }
    }

    fn done(&self) -> bool {
        self.pipe.is_none()
    }

    /// Reads until the pipe is empty (waker stored) or at its end (pipe
    /// dropped).
    fn poll(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        while let Some(pipe) = &mut self.pipe {
            let len = self.bytes.len();
            self.bytes.resize(len + Self::CHUNK, 0);
            let r = std::pin::Pin::new(pipe).poll_read(cx, &mut self.bytes[len..]);
            let r = match r {
                Poll::Ready(r) => r,
                Poll::Pending => {
                    self.bytes.truncate(len);
                    return Ok(());
                }
            };
            self.bytes.truncate(len + *r.as_ref().unwrap_or(&0));
            match r {
                Ok(0) => self.pipe = None, // end of stream
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let Some(mut proc) = self.proc.take() else {
            return;
        };
        if self.status.is_some() || matches!(proc.std.try_wait(), Ok(Some(_))) {
            return; // reaped
        }
        if self.kill_on_drop {
            let _ = proc.std.kill();
        }
        reap_later(proc, self.kill_on_drop);
    }
}

/// Reaps a dropped child once it exits, where that costs no thread for
/// long: in a task on the current runtime when its exit comes through a
/// pidfd, or when it was just killed; on the spot for a killed child
/// outside any runtime. Otherwise it is left (see `Child`'s docs).
fn reap_later(mut proc: Proc, killed: bool) {
    match crate::Handle::try_current() {
        Some(rt) if killed || proc.exit.is_pidfd() => {
            // If the runtime is shutting down, the task is dropped unrun:
            // the child is then left as above.
            drop(rt.spawn(async move {
                let _ = poll_fn(|cx| proc.poll_exit(cx)).await;
            }));
        }
        None if killed => {
            let _ = proc.std.wait();
        }
        _ => {}
    }
}

impl fmt::Debug for Child {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Child")
            .field("program", &self.program)
            .field("id", &self.id())
            .field("status", &self.status)
            .field("stdin", &self.stdin)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .finish()
    }
}
