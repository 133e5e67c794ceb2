//! I/O readiness on `mio` (epoll on Linux, kqueue on the BSDs): no hand-written
//! syscalls.
//!
//! Why mio and not `polling`: `polling`'s `wait` costs five syscalls on
//! Linux (re-arming its timerfd and its notifier, reading the notifier,
//! then `epoll_wait`), mio's costs one; and mio reports a peer's FIN
//! (`EPOLLRDHUP`) as `read_closed`, which lets a short read clear readiness
//! safely (`Registration::poll_io_drain`). Measured on the echo benchmark
//! (`spindle-bench echo`): see `docs/bench.md`.
//!
//! Each registered file descriptor is a `Source` with a readiness record per
//! direction (read, write). Sources are registered once, edge-triggered, for
//! both directions, and start out ready in both (see `register`).
//!
//! The protocol per direction, all under the source's lock:
//! - an event sets `ready`, bumps `tick`, and takes every stored waker, which
//!   `dispatch` wakes after dropping its locks;
//! - `poll_ready` returns `Ready(tick)` while `ready` is set; otherwise it
//!   stores the caller's waker (under the same lock the event takes, so an
//!   event after the check finds it) and returns `Pending`;
//! - a task whose attempt got `WouldBlock` calls `clear_ready(tick)` with the
//!   tick `poll_ready` gave it: `ready` is cleared only if no event came
//!   since (`tick` unchanged). An edge that arrived during the attempt leaves
//!   `ready` set, so the next `poll_ready` retries instead of sleeping on an
//!   edge that will never come again.
//!
//! Why no wake-up is lost: edge-triggered epoll reports a transition once.
//! A transition after the attempt's syscall produces an event; that event
//! either precedes `clear_ready` (then `tick` moved and `ready` stays set) or
//! follows it (then it sets `ready` again and wakes whatever `poll_ready`
//! stored, or `poll_ready` sees `ready`). A transition before the syscall is
//! seen by the syscall itself.
//!
//! Several tasks may wait on one direction (a `UdpSocket` shared by
//! reference, a stream behind an `Arc`): each distinct waker is kept and all
//! are woken by the next event. A waiter that went away leaves a stale waker
//! until then (a spurious wake-up at worst); past a limit of distinct
//! wakers (`MAX_WAITERS` at first) the stored ones are woken at once and
//! forgotten, so a pathological waiter cannot grow the list without bound,
//! and none is lost (a woken task that still waits registers again). Each
//! flush doubles the direction's limit, up to `MAX_WAITERS_CAP`: N tasks
//! that all really wait (an `Arc<UdpSocket>` with 100 receive loops) settle
//! after a few flushes. With a fixed limit below N they would wake each
//! other for ever, each one's registration flushing the others.
//!
//! `closed` is sticky: once an event says the direction is closed for good
//! (a FIN for reading, a hang-up for both), `clear_ready` no longer clears
//! it, as no edge will ever come again while the attempt would succeed at
//! once (end of stream, or the error). An error alone is not: the attempt
//! it wakes returns it and clears it (a connected UDP socket's ICMP
//! "refused"), and a later `WouldBlock` must wait for the next edge (were
//! errors sticky, a second receive on such a socket would spin inside one
//! poll).
//!
//! Only the driver-lock holder waits on the poller and dispatches events;
//! `notify` (any thread) makes the current or next wait return: mio's waker
//! is an eventfd whose write makes the current or next `epoll_wait` return.
//! The `notified` flag skips that write while one is already pending: it is
//! set by `notify` before writing and cleared after a wait returns, and the
//! caller of `wait` re-reads its state after that, so a notification whose
//! write was skipped is seen anyway.

use crate::loom::{lock, AtomicBool, AtomicUsize, Mutex, Ordering::*};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll as MioPoll, Registry, Token, Waker as MioWaker};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Distinct wakers kept per direction before they are flushed, at first;
/// each flush doubles a direction's limit up to `MAX_WAITERS_CAP` (see the
/// module docs).
const MAX_WAITERS: usize = 64;
const MAX_WAITERS_CAP: usize = 1 << 16;

/// The token of the reactor's own waker (no source has it: a source's key,
/// its token's low half, is a slab index, never `KEY_MASK`).
const WAKE: Token = Token(usize::MAX);

/// A source's token: its slab key in the low half, the key's generation
/// (how many sources held the key before, wrapping) in the high half. An
/// event that a `wait` returned for a source deregistered since, whose key
/// a new source took before `dispatch`, carries the old generation and is
/// dropped instead of reaching the new source (where a stale hang-up would
/// mark it closed for good).
const KEY_BITS: u32 = usize::BITS / 2;
const KEY_MASK: usize = (1 << KEY_BITS) - 1;

/// Events taken per wait.
const EVENTS: usize = 1024;

/// Read or write readiness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read = 0,
    Write = 1,
}

#[derive(Default)]
struct Readiness {
    ready: bool,
    /// Closed for good (see the module docs): `ready` stays set.
    closed: bool,
    tick: u64,
    /// The usual single waiter.
    waker: Option<Waker>,
    /// Further distinct waiters (rare).
    more: Vec<Waker>,
    /// How many `more` may hold before a flush; 0 until the first flush
    /// (read as `MAX_WAITERS`).
    limit: usize,
}

impl Readiness {
    /// An event: ready, a new tick, and every waiter moved to `out`.
    fn fire(&mut self, closed: bool, out: &mut Vec<Waker>) {
        self.ready = true;
        self.closed |= closed;
        self.tick = self.tick.wrapping_add(1);
        self.take_wakers(out);
    }

    fn take_wakers(&mut self, out: &mut Vec<Waker>) {
        out.extend(self.waker.take());
        out.append(&mut self.more);
    }

    /// Stores `waker` unless an equivalent one is already stored; returns
    /// wakers to wake now (the list overflowed).
    fn store(&mut self, waker: &Waker) -> Vec<Waker> {
        match &mut self.waker {
            None => self.waker = Some(waker.clone()),
            Some(w) if w.will_wake(waker) => {}
            Some(_) => {
                if !self.more.iter().any(|w| w.will_wake(waker)) {
                    let limit = self.limit.max(MAX_WAITERS);
                    if self.more.len() >= limit {
                        self.limit = (2 * limit).min(MAX_WAITERS_CAP);
                        let mut flushed = Vec::new();
                        self.take_wakers(&mut flushed);
                        self.waker = Some(waker.clone());
                        return flushed;
                    }
                    self.more.push(waker.clone());
                }
            }
        }
        Vec::new()
    }
}

/// A registered file descriptor's readiness.
pub(crate) struct Source {
    fd: RawFd,
    /// Its slab key and the key's generation (see `KEY_BITS`).
    token: usize,
    state: Mutex<[Readiness; 2]>,
}

pub(crate) struct Reactor {
    /// What the driver-lock holder alone touches: the poll instance, the
    /// events the last `wait` filled (drained by `dispatch`), and the buffer
    /// `dispatch` collects wakers in (kept to avoid an allocation per turn).
    driven: Mutex<Driven>,
    /// Registers and deregisters from any thread.
    registry: Registry,
    waker: MioWaker,
    notified: AtomicBool,
    sources: Mutex<Slab>,
    registered: AtomicUsize,
}

struct Driven {
    poll: MioPoll,
    events: Events,
    wakers: Vec<Waker>,
}

/// Sources by key, with a free list.
#[derive(Default)]
struct Slab {
    entries: Vec<Option<Arc<Source>>>,
    /// Per key: the generation its next source gets.
    generations: Vec<usize>,
    free: Vec<usize>,
}

impl Reactor {
    pub(crate) fn new() -> io::Result<Reactor> {
        let poll = MioPoll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = MioWaker::new(&registry, WAKE)?;
        Ok(Reactor {
            driven: Mutex::new(Driven {
                poll,
                events: Events::with_capacity(EVENTS),
                wakers: Vec::new(),
            }),
            registry,
            waker,
            notified: AtomicBool::new(false),
            sources: Mutex::new(Slab::default()),
            registered: AtomicUsize::new(0),
        })
    }

    /// Registers `fd` (non-blocking, owned by the caller until `deregister`).
    ///
    /// The source starts ready in both directions: a socket is writable
    /// until its buffer fills, and may hold data already (an accepted
    /// connection often does). The first attempt finds out; a `WouldBlock`
    /// then clears the direction as usual.
    pub(crate) fn register(&self, fd: RawFd) -> io::Result<Arc<Source>> {
        let mut slab = lock(&self.sources);
        let key = slab.free.pop().unwrap_or(slab.entries.len());
        if key >= KEY_MASK {
            return Err(io::Error::other("spindle: too many sockets registered"));
        }
        if key == slab.generations.len() {
            slab.generations.push(0);
        }
        let token = key | (slab.generations[key] << KEY_BITS);
        let ready = || Readiness {
            ready: true,
            ..Readiness::default()
        };
        let source = Arc::new(Source {
            fd,
            token,
            state: Mutex::new([ready(), ready()]),
        });
        // The caller keeps `fd` open until `deregister`, which removes it
        // from the poller before the fd can be closed. mio registers
        // edge-triggered.
        let added = self.registry.register(
            &mut SourceFd(&fd),
            Token(token),
            Interest::READABLE | Interest::WRITABLE,
        );
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
        // The fd is still open (the caller closes it after this).
        let _ = self.registry.deregister(&mut SourceFd(&source.fd));
        let mut wakers = Vec::new();
        {
            let mut slab = lock(&self.sources);
            let key = source.key();
            slab.entries[key] = None;
            let next = &mut slab.generations[key];
            *next = next.wrapping_add(1) & (usize::MAX >> KEY_BITS);
            slab.free.push(key);
            self.registered.fetch_sub(1, SeqCst);
            // Wake anyone still waiting: their next attempt sees the fd gone.
            for r in lock(&source.state).iter_mut() {
                r.take_wakers(&mut wakers);
            }
        }
        crate::task::wake_all(&mut wakers);
    }

    /// Whether any source is registered (busy workers then poll for events).
    pub(crate) fn has_sources(&self) -> bool {
        self.registered.load(Relaxed) > 0
    }

    /// Blocks until an event, `notify`, or `timeout` (`None`: no limit).
    pub(crate) fn wait(&self, timeout: Option<Duration>) {
        let mut driven = lock(&self.driven);
        let Driven { poll, events, .. } = &mut *driven;
        // An error here (EINTR) is a spurious wake-up: the caller re-checks.
        if poll.poll(events, timeout).is_err() {
            events.clear();
        }
        // After the wait: a `notify` from here on writes again (see the
        // module docs for why one skipped before this is not lost).
        self.notified.store(false, SeqCst);
    }

    /// Makes the current or next `wait` return.
    pub(crate) fn notify(&self) {
        if !self.notified.swap(true, SeqCst) {
            let _ = self.waker.wake();
        }
    }

    /// Wakes the tasks the last `wait` found ready; returns how many events.
    pub(crate) fn dispatch(&self) -> usize {
        let mut driven = lock(&self.driven);
        let Driven { events, wakers, .. } = &mut *driven;
        if events.is_empty() {
            return 0;
        }
        let mut n = 0;
        {
            let slab = lock(&self.sources);
            for ev in events.iter() {
                let token = ev.token().0;
                let Some(Some(source)) = slab.entries.get(token & KEY_MASK) else {
                    continue; // the waker's token, or deregistered since
                };
                if source.token != token {
                    continue; // for the key's previous source
                }
                n += 1;
                // An error wakes both directions, whose next attempt
                // returns it, but closes neither for good: a connected UDP
                // socket's ICMP "refused" is reported once, after which a
                // receive blocks again. Closed for good: a hang-up, or a
                // FIN for reading; a write error (`EPOLLOUT | EPOLLERR`)
                // only with the read side closed too.
                let error = ev.is_error();
                let read_closed = ev.is_read_closed();
                let write_closed = ev.is_write_closed() && (!error || read_closed);
                let mut state = lock(&source.state);
                if ev.is_readable() || read_closed || error {
                    state[Direction::Read as usize].fire(read_closed, wakers);
                }
                if ev.is_writable() || ev.is_write_closed() || error {
                    state[Direction::Write as usize].fire(write_closed, wakers);
                }
            }
        }
        events.clear();
        // Woken outside the slab lock: a wake may schedule a task, never
        // re-enter the reactor, but other threads register meanwhile. A
        // foreign waker's panic stays here: the events are consumed, and
        // an edge-triggered event never comes again for the others.
        crate::task::wake_all(wakers);
        n
    }

    /// Runtime shutdown: drops every waiting task's waker.
    pub(crate) fn shut_down(&self) {
        let mut wakers = Vec::new();
        {
            let slab = lock(&self.sources);
            for source in slab.entries.iter().flatten() {
                for r in lock(&source.state).iter_mut() {
                    r.take_wakers(&mut wakers);
                }
            }
        }
        drop(wakers);
    }
}

impl Source {
    /// Its index in the reactor's slab.
    fn key(&self) -> usize {
        self.token & KEY_MASK
    }

    /// `Ready(tick)` while `dir` is ready; otherwise stores the waker.
    /// A readiness that completes spends a unit of the task's cooperative
    /// budget (`task/coop/`).
    pub(crate) fn poll_ready(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<u64> {
        crate::task::coop::spend(cx, |cx| self.poll_ready_unbudgeted(dir, cx))
    }

    fn poll_ready_unbudgeted(&self, dir: Direction, cx: &mut Context<'_>) -> Poll<u64> {
        let mut flushed = {
            let mut state = lock(&self.state);
            let r = &mut state[dir as usize];
            if r.ready {
                return Poll::Ready(r.tick);
            }
            r.store(cx.waker())
        };
        crate::task::wake_all(&mut flushed);
        Poll::Pending
    }

    /// After `WouldBlock`: not ready any more, unless an event came since
    /// `tick` (the value `poll_ready` returned before the attempt).
    pub(crate) fn clear_ready(&self, dir: Direction, tick: u64) {
        let mut state = lock(&self.state);
        let r = &mut state[dir as usize];
        if r.tick == tick && !r.closed {
            r.ready = false;
        }
    }
}

impl AsRawFd for Source {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

#[cfg(all(test, not(any(loom, miri))))]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    /// An event a `wait` returned for a source deregistered before
    /// `dispatch` must not reach the source that took its key since.
    #[test]
    fn a_stale_event_does_not_reach_the_next_source_of_its_key() {
        let r = Reactor::new().unwrap();
        let (a, a_peer) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let src_a = r.register(a.as_raw_fd()).unwrap();
        drop(a_peer); // a hang-up on `a`
        r.wait(Some(Duration::from_millis(100)));
        r.deregister(&src_a);
        drop((src_a, a));
        let (b, _b_peer) = UnixStream::pair().unwrap();
        b.set_nonblocking(true).unwrap();
        let src_b = r.register(b.as_raw_fd()).unwrap();
        assert_eq!(src_b.key(), 0, "the key was reused");
        assert_eq!(r.dispatch(), 0, "the stale hang-up was dropped");
        let mut cx = Context::from_waker(Waker::noop());
        let Poll::Ready(tick) = src_b.poll_ready(Direction::Read, &mut cx) else {
            panic!("a new source starts ready");
        };
        src_b.clear_ready(Direction::Read, tick); // as after a `WouldBlock`
        assert!(
            src_b.poll_ready(Direction::Read, &mut cx).is_pending(),
            "the new source was marked closed by its key's previous one"
        );
    }
}
