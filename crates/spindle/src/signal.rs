//! OS signals as futures: [`ctrl_c`].
//!
//! Protocol:
//! - The first [`ctrl_c`] call in the process installs, once, a SIGINT
//!   handler through `signal-hook` (its self-pipe registration): the handler
//!   only writes a byte to a non-blocking socket pair. A small thread,
//!   `spindle-signal`, blocks reading the other end; for every read it bumps
//!   the process-wide `generation` and wakes every waiter, under one lock.
//! - A [`CtrlC`] remembers the generation when it was made and completes
//!   once the generation differs: it sees every SIGINT delivered after the
//!   `ctrl_c()` call, even one before its first poll, and any number of
//!   waiters (in any runtime, or none) all complete.
//! - A pending `CtrlC` keeps its waker in a map under its own id; polling
//!   replaces it and dropping removes it, so abandoned waiters cost nothing.
//!
//! From the first call on, SIGINT no longer ends the process by default:
//! the program decides what a Ctrl-C does (as with Tokio's `ctrl_c`).

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};

struct Waiters {
    /// SIGINTs seen by the listener thread (bytes read collapse: two
    /// signals read together count once, which wakes the same waiters).
    generation: u64,
    next_id: u64,
    wakers: BTreeMap<u64, Waker>,
}

static WAITERS: Mutex<Waiters> = Mutex::new(Waiters {
    generation: 0,
    next_id: 0,
    wakers: BTreeMap::new(),
});

/// The installation's outcome, kept for every later caller.
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

fn waiters() -> MutexGuard<'static, Waiters> {
    // A waker that panicked while the lock was held left valid data.
    WAITERS.lock().unwrap_or_else(|e| e.into_inner())
}

fn install() -> io::Result<()> {
    let installed = INSTALLED.get_or_init(|| {
        let result: io::Result<()> = (|| {
            // The listener first: a handler registered with no thread to
            // read its pipe would swallow every Ctrl-C. If the registration
            // then fails, its write end is dropped and the listener ends.
            let (rx, tx) = UnixStream::pair()?;
            std::thread::Builder::new()
                .name("spindle-signal".into())
                .spawn(move || listen(rx))?;
            signal_hook::low_level::pipe::register(signal_hook::consts::SIGINT, tx)?;
            Ok(())
        })();
        result.map_err(|e| e.to_string())
    });
    installed
        .clone()
        .map_err(|e| io::Error::other(format!("could not install the SIGINT handler: {e}")))
}

/// The listener thread: one generation per read, every waiter woken.
fn listen(mut rx: UnixStream) {
    let mut buf = [0u8; 64];
    loop {
        match rx.read(&mut buf) {
            // The write end lives in the handler for the process's life.
            Ok(0) => return,
            Ok(_) => {
                let woken = {
                    let mut w = waiters();
                    w.generation += 1;
                    std::mem::take(&mut w.wakers)
                };
                woken.into_values().for_each(Waker::wake);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                eprintln!("spindle: the SIGINT listener stopped: {e}");
                return;
            }
        }
    }
}

/// Completes on the next SIGINT (Ctrl-C in a terminal) delivered after this
/// call; `Err` if the handler could not be installed.
///
/// The handler is installed by this call (once per process), not by the
/// first poll, so a signal between the call and the first `.await` counts.
/// Any number of waiters may wait at once; all of them complete.
///
/// ```no_run
/// # spindle::Runtime::new().unwrap().block_on(async {
/// spindle::signal::ctrl_c().await.expect("SIGINT handler");
/// println!("interrupted: shutting down");
/// # });
/// ```
pub fn ctrl_c() -> CtrlC {
    CtrlC {
        state: match install() {
            Ok(()) => State::Waiting {
                generation: waiters().generation,
                id: None,
            },
            Err(e) => State::Failed(Some(e)),
        },
    }
}

/// The future [`ctrl_c`] returns.
#[must_use = "futures do nothing unless polled"]
pub struct CtrlC {
    state: State,
}

enum State {
    Waiting { generation: u64, id: Option<u64> },
    Failed(Option<io::Error>),
    Done,
}

impl Future for CtrlC {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match &mut this.state {
            State::Waiting { generation, id } => {
                let mut w = waiters();
                if w.generation != *generation {
                    if let Some(id) = id.take() {
                        w.wakers.remove(&id);
                    }
                    drop(w);
                    this.state = State::Done;
                    return Poll::Ready(Ok(()));
                }
                let id = *id.get_or_insert_with(|| {
                    w.next_id += 1;
                    w.next_id
                });
                match w.wakers.get_mut(&id) {
                    Some(old) => old.clone_from(cx.waker()),
                    None => {
                        w.wakers.insert(id, cx.waker().clone());
                    }
                }
                Poll::Pending
            }
            State::Failed(e) => {
                let e = e.take().expect("CtrlC polled after it completed");
                this.state = State::Done;
                Poll::Ready(Err(e))
            }
            State::Done => panic!("CtrlC polled after it completed"),
        }
    }
}

impl Drop for CtrlC {
    fn drop(&mut self) {
        if let State::Waiting { id: Some(id), .. } = self.state {
            waiters().wakers.remove(&id);
        }
    }
}

impl std::fmt::Debug for CtrlC {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Waiting { .. } => "waiting",
            State::Failed(_) => "failed",
            State::Done => "done",
        };
        f.debug_struct("CtrlC").field("state", &state).finish()
    }
}
