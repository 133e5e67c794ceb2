//! I/O readiness on the `polling` crate (epoll here; kqueue, IOCP elsewhere):
//! no hand-written syscalls.
//!
//! Each registered file descriptor is a `Source` with a readiness record per
//! direction (read, write). Sources are registered once, edge-triggered, for
//! both directions. The protocol per direction:
//! - an event sets `ready` and bumps `tick`, then wakes the waiting task;
//! - a task that gets `WouldBlock` clears `ready` only if `tick` is still
//!   the one it saw before its attempt (`clear_ready`), so an edge that
//!   arrived during the attempt is not lost;
//! - `poll_ready` returns `Ready` while `ready` is set, else stores the waker
//!   under the same lock the event takes, so an event after the check wakes it.
//!
//! Only the driver-lock holder waits on the poller and dispatches events;
//! `notify` (any thread) makes the current or next wait return.

use crate::loom::{lock, AtomicUsize, Mutex, Ordering::*};
use polling::{Event, Events, PollMode, Poller};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Read or write readiness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read = 0,
    Write = 1,
}

#[derive(Default)]
struct Readiness {
    ready: bool,
    tick: u64,
    waker: Option<Waker>,
}

/// A registered file descriptor's readiness.
pub(crate) struct Source {
    fd: RawFd,
    key: usize,
    state: Mutex<[Readiness; 2]>,
}

pub(crate) struct Reactor {
    poller: Poller,
    /// Filled by `wait`, drained by `dispatch` (driver-lock holder only).
    events: Mutex<Events>,
    sources: Mutex<Slab>,
    registered: AtomicUsize,
}

/// Sources by key, with a free list.
#[derive(Default)]
struct Slab {
    entries: Vec<Option<Arc<Source>>>,
    free: Vec<usize>,
}

impl Reactor {
    pub(crate) fn new() -> io::Result<Reactor> {
        Ok(Reactor {
            poller: Poller::new()?,
            events: Mutex::new(Events::new()),
            sources: Mutex::new(Slab::default()),
            registered: AtomicUsize::new(0),
        })
    }

    /// Registers `fd` (non-blocking, owned by the caller until `deregister`).
    pub(crate) fn register(&self, fd: RawFd) -> io::Result<Arc<Source>> {
        let mut slab = lock(&self.sources);
        let key = slab.free.pop().unwrap_or(slab.entries.len());
        let source = Arc::new(Source {
            fd,
            key,
            state: Mutex::new(Default::default()),
        });
        // SAFETY: the caller keeps `fd` open until `deregister`, which
        // removes it from the poller before the fd can be closed.
        let added = unsafe {
            self.poller
                .add_with_mode(fd, Event::all(key), PollMode::Edge)
        };
        if let Err(e) = added {
            slab.free.push(key);
            return Err(e);
        }
        if key == slab.entries.len() {
            slab.entries.push(Some(source.clone()));
        } else {
            slab.entries[key] = Some(source.clone());
        }
        self.registered.fetch_add(1, SeqCst);
        Ok(source)
    }

    /// Removes `source` from the poller (call before closing its fd).
    pub(crate) fn deregister(&self, source: &Source) {
        // SAFETY: the fd is still open (the caller closes it after this).
        let fd = unsafe { BorrowedFd::borrow_raw(source.fd) };
        let _ = self.poller.delete(fd);
        let mut slab = lock(&self.sources);
        slab.entries[source.key] = None;
        slab.free.push(source.key);
        self.registered.fetch_sub(1, SeqCst);
        // Wake anyone still waiting: their next attempt sees the fd gone.
        let wakers: Vec<_> = lock(&source.state)
            .iter_mut()
            .filter_map(|r| r.waker.take())
            .collect();
        drop(slab);
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Whether any source is registered (busy workers then poll for events).
    pub(crate) fn has_sources(&self) -> bool {
        self.registered.load(Relaxed) > 0
    }

    /// Blocks until an event, `notify`, or `timeout` (`None`: no limit).
    pub(crate) fn wait(&self, timeout: Option<Duration>) {
        let mut events = lock(&self.events);
        events.clear();
        // An error here (EINTR) is a spurious wake-up: the caller re-checks.
        let _ = self.poller.wait(&mut events, timeout);
    }

    /// Makes the current or next `wait` return.
    pub(crate) fn notify(&self) {
        let _ = self.poller.notify();
    }

    /// Wakes the tasks the last `wait` found ready; returns how many events.
    pub(crate) fn dispatch(&self) -> usize {
        let mut events = lock(&self.events);
        let n = events.len();
        if n == 0 {
            return 0;
        }
        let mut wakers = Vec::new();
        {
            let slab = lock(&self.sources);
            for ev in events.iter() {
                let Some(Some(source)) = slab.entries.get(ev.key) else {
                    continue; // deregistered since
                };
                let mut state = lock(&source.state);
                for (dir, hit) in [(Direction::Read, ev.readable), (Direction::Write, ev.writable)] {
                    if hit {
                        let r = &mut state[dir as usize];
                        r.ready = true;
                        r.tick = r.tick.wrapping_add(1);
                        wakers.extend(r.waker.take());
                    }
                }
            }
        }
        events.clear();
        drop(events);
        wakers.into_iter().for_each(Waker::wake);
        n
    }
}

impl Reactor {
    /// Runtime shutdown: drops every waiting task's waker.
    pub(crate) fn shut_down(&self) {
        let slab = lock(&self.sources);
        let wakers: Vec<_> = slab
            .entries
            .iter()
            .flatten()
            .flat_map(|s| lock(&s.state).iter_mut().filter_map(|r| r.waker.take()).collect::<Vec<_>>())
            .collect();
        drop(slab);
        drop(wakers);
    }
}

impl Source {
    /// `Ready(tick)` while `dir` is ready; otherwise registers the waker.
    pub(crate) fn poll_ready(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<u64> {
        let mut state = lock(&self.state);
        let r = &mut state[dir as usize];
        if r.ready {
            return Poll::Ready(r.tick);
        }
        match &mut r.waker {
            Some(w) => w.clone_from(cx.waker()),
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// After `WouldBlock`: not ready any more, unless an event came since `tick`.
    pub(crate) fn clear_ready(&self, dir: Direction, tick: u64) {
        let mut state = lock(&self.state);
        let r = &mut state[dir as usize];
        if r.tick == tick {
            r.ready = false;
        }
    }

    /// Marks `dir` ready without an event: sockets start out writable, and a
    /// freshly registered fd may already have data (edge-triggered epoll
    /// reports the state at registration, but only once).
    pub(crate) fn set_ready(&self, dir: Direction) {
        let mut state = lock(&self.state);
        let r = &mut state[dir as usize];
        r.ready = true;
        r.tick = r.tick.wrapping_add(1);
    }
}

impl AsRawFd for Source {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}
