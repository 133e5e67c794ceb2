//! `Command`: `std::process::Command`'s builder, spawning a [`Child`]
//! whose pipes and exit the runtime waits on.

use super::Child;
use crate::io_error::context;
use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Output, Stdio};

/// A process to spawn: [`std::process::Command`]'s builder (the same
/// methods, the same defaults), with [`spawn`](Self::spawn) giving a
/// [`Child`] to await, and `async` [`output`](Self::output) and
/// [`status`](Self::status).
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let out = spindle::process::Command::new("echo")
///     .arg("hello")
///     .output()
///     .await?;
/// assert_eq!(out.stdout, b"hello\n");
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
///
/// A program that cannot be started is an error naming it: ``could not
/// spawn `no-such-prog`: No such file or directory (os error 2)``, with
/// the kind ([`io::ErrorKind::NotFound`] there) kept.
pub struct Command {
    std: std::process::Command,
    kill_on_drop: bool,
    /// Whether stdin, stdout, stderr were set here: `output` picks its own
    /// defaults for the others only.
    stdio_set: [bool; 3],
}

impl Command {
    /// A command running `program` (looked up in `PATH` unless it is a
    /// path), with no arguments, this process's environment and working
    /// directory, and inherited standard streams.
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        Command::from(std::process::Command::new(program))
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(&mut self, key: impl AsRef<OsStr>, val: impl AsRef<OsStr>) -> &mut Command {
        self.std.env(key, val);
        self
    }

    /// Sets environment variables for the child.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Starts the child's environment empty (then `env` adds to it).
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// The child's working directory.
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// The child's standard input (`Stdio::piped()` for [`Child::stdin`]).
    pub fn stdin(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdin(cfg);
        self.stdio_set[0] = true;
        self
    }

    /// The child's standard output (`Stdio::piped()` for [`Child::stdout`]).
    pub fn stdout(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdout(cfg);
        self.stdio_set[1] = true;
        self
    }

    /// The child's standard error (`Stdio::piped()` for [`Child::stderr`]).
    pub fn stderr(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stderr(cfg);
        self.stdio_set[2] = true;
        self
    }

    /// Whether dropping the [`Child`] before it was waited for kills it
    /// (`SIGKILL`, then reaped in the background). Off by default, as in
    /// std: a dropped child runs on.
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }

    /// The std command underneath, to read what was set.
    pub fn as_std(&self) -> &std::process::Command {
        &self.std
    }

    /// Starts the child. Needs a spindle runtime (its pipes and exit are
    /// registered with it); checked before anything is started.
    ///
    /// Errors name the program: ``could not spawn `no-such-prog`: No such
    /// file or directory (os error 2)``.
    pub fn spawn(&mut self) -> io::Result<Child> {
        let program = self.std.get_program().to_string_lossy().into_owned();
        let named = |e| context(e, format_args!("could not spawn `{program}`"));
        if crate::Handle::try_current().is_none() {
            return Err(named(io::Error::other(
                "spindle::process needs a spindle runtime (a task, \
                 `Runtime::block_on`, or `Runtime::enter`)",
            )));
        }
        let std = self.std.spawn().map_err(named)?;
        Child::new(std, self.kill_on_drop, program.clone()).map_err(named)
    }

    /// Runs the child to its end and collects its output, as std's
    /// `output`: stdout and stderr are piped and read (concurrently, while
    /// waiting) unless set with [`stdout`](Self::stdout) /
    /// [`stderr`](Self::stderr); stdin is null unless set.
    pub async fn output(&mut self) -> io::Result<Output> {
        let defaults: [fn() -> Stdio; 3] = [Stdio::null, Stdio::piped, Stdio::piped];
        let unset = self.stdio_set.map(|set| !set);
        self.set_stdio(unset, defaults);
        let child = self.spawn();
        // What `spawn` does when nothing was set: inherit.
        self.set_stdio(unset, [Stdio::inherit; 3]);
        child?.wait_with_output().await
    }

    /// Runs the child to its end (standard streams inherited unless set)
    /// and returns its exit status.
    pub async fn status(&mut self) -> io::Result<ExitStatus> {
        self.spawn()?.wait().await
    }

    /// Sets stream `i` to `make[i]()` where `which[i]`, without marking it
    /// as set by the caller.
    fn set_stdio(&mut self, which: [bool; 3], make: [fn() -> Stdio; 3]) {
        if which[0] {
            self.std.stdin(make[0]());
        }
        if which[1] {
            self.std.stdout(make[1]());
        }
        if which[2] {
            self.std.stderr(make[2]());
        }
    }
}

impl From<std::process::Command> for Command {
    /// Wraps a std command. Streams it set are not known here: `output`
    /// then pipes stdout and stderr and nulls stdin all the same.
    fn from(std: std::process::Command) -> Command {
        Command {
            std,
            kill_on_drop: false,
            stdio_set: [false; 3],
        }
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Command")
            .field("std", &self.std)
            .field("kill_on_drop", &self.kill_on_drop)
            .finish()
    }
}
