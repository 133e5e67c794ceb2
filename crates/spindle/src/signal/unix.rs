//! Unix signals as streams of arrivals: [`signal`] and [`SignalKind`].
//!
//! Invariants:
//! - a [`Signal`] sees every arrival after [`signal`] returned it; arrivals
//!   that come before it is polled again collapse into one `recv`;
//! - a signal that cannot be caught (`SIGKILL`, `SIGSTOP`, and those whose
//!   handler would hide a fault: `SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`)
//!   or that this platform does not have is an error naming it, and
//!   nothing is installed.

use super::registry::{self, Waiter};
use std::fmt;
use std::io;
use std::os::raw::c_int;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A signal, by name or number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalKind(c_int);

impl SignalKind {
    /// `SIGTERM`: a polite request to stop (what `kill` and container
    /// runtimes send).
    pub const fn terminate() -> SignalKind {
        SignalKind(libc::SIGTERM)
    }

    /// `SIGHUP`: the terminal went away, or "reload your configuration".
    pub const fn hangup() -> SignalKind {
        SignalKind(libc::SIGHUP)
    }

    /// `SIGINT`: Ctrl-C in a terminal.
    pub const fn interrupt() -> SignalKind {
        SignalKind(libc::SIGINT)
    }

    /// `SIGQUIT`: Ctrl-\ in a terminal.
    pub const fn quit() -> SignalKind {
        SignalKind(libc::SIGQUIT)
    }

    /// `SIGUSR1`.
    pub const fn user_defined1() -> SignalKind {
        SignalKind(libc::SIGUSR1)
    }

    /// `SIGUSR2`.
    pub const fn user_defined2() -> SignalKind {
        SignalKind(libc::SIGUSR2)
    }

    /// `SIGCHLD`: a child process stopped or exited.
    pub const fn child() -> SignalKind {
        SignalKind(libc::SIGCHLD)
    }

    /// `SIGALRM`.
    pub const fn alarm() -> SignalKind {
        SignalKind(libc::SIGALRM)
    }

    /// `SIGWINCH`: the terminal's size changed.
    pub const fn window_change() -> SignalKind {
        SignalKind(libc::SIGWINCH)
    }

    /// `SIGPIPE`: a write to a pipe or socket nobody reads.
    pub const fn pipe() -> SignalKind {
        SignalKind(libc::SIGPIPE)
    }

    /// Any signal by number (a real-time one, say); [`signal`] checks it.
    pub const fn from_raw(signum: c_int) -> SignalKind {
        SignalKind(signum)
    }

    /// The signal's number.
    pub const fn as_raw_value(self) -> c_int {
        self.0
    }

    fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            libc::SIGTERM => "SIGTERM",
            libc::SIGHUP => "SIGHUP",
            libc::SIGINT => "SIGINT",
            libc::SIGQUIT => "SIGQUIT",
            libc::SIGUSR1 => "SIGUSR1",
            libc::SIGUSR2 => "SIGUSR2",
            libc::SIGCHLD => "SIGCHLD",
            libc::SIGALRM => "SIGALRM",
            libc::SIGWINCH => "SIGWINCH",
            libc::SIGPIPE => "SIGPIPE",
            libc::SIGKILL => "SIGKILL",
            libc::SIGSTOP => "SIGSTOP",
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGBUS => "SIGBUS",
            libc::SIGILL => "SIGILL",
            libc::SIGFPE => "SIGFPE",
            _ => return None,
        })
    }

    /// Why this signal cannot be listened for, if it cannot.
    fn refusal(self) -> Option<&'static str> {
        if signal_hook::consts::FORBIDDEN.contains(&self.0) || self.0 == libc::SIGBUS {
            Some("it cannot be caught, or catching it would hide a fault")
        } else if !(1..=max_signal()).contains(&self.0) {
            Some("this platform has no such signal")
        } else {
            None
        }
    }
}

impl fmt::Display for SignalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "signal {}", self.0),
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn max_signal() -> c_int {
    libc::SIGRTMAX()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn max_signal() -> c_int {
    31
}

/// Listens for `kind` from now on: a stream of its arrivals.
///
/// Errors name the signal: `could not listen for SIGKILL (9): it cannot
/// be caught, ...` ([`io::ErrorKind::InvalidInput`]), or the OS's reason.
///
/// ```no_run
/// use spindle::signal::unix::{signal, SignalKind};
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let mut term = signal(SignalKind::terminate())?;
/// term.recv().await;
/// println!("SIGTERM: draining connections");
/// # Ok::<(), std::io::Error>(())
/// # });
/// ```
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    if let Some(why) = kind.refusal() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("could not listen for {kind}: {why}"),
        ));
    }
    registry::listen(kind.0, &kind.to_string())?;
    Ok(Signal {
        kind,
        waiter: Waiter::new(kind.0),
    })
}

/// Arrivals of one signal ([`signal`]); also a `futures_core::Stream`
/// that never ends.
pub struct Signal {
    kind: SignalKind,
    waiter: Waiter,
}

impl Signal {
    /// Completes on the next arrival (or at once if one came since the
    /// last `recv`). Cancel-safe: a dropped `recv` loses no arrival.
    pub async fn recv(&mut self) {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Poll form of [`recv`](Self::recv).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.waiter.poll(cx)
    }

    /// Which signal this listens for.
    pub fn kind(&self) -> SignalKind {
        self.kind
    }
}

impl futures_core::Stream for Signal {
    type Item = ();

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<()>> {
        self.get_mut().poll_recv(cx).map(Some)
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal").field("kind", &self.kind).finish()
    }
}
