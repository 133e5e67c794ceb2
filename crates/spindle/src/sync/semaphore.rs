//! [`Semaphore`]: a fair counting semaphore, the base of [`Mutex`](super::Mutex).
//!
//! One lock guards the whole state: the free permit count, the closed flag,
//! and the queue of waiters in arrival order (a `BTreeMap` keyed by a
//! ticket that only grows, so the first entry is the oldest waiter).
//!
//! Invariants, each kept under the lock:
//! - While the semaphore is open, a release hands permits to the queued
//!   waiters front to back; a waiter that has all it asked for leaves the
//!   queue for `granted` and is woken. So when any waiter is queued,
//!   `permits` is zero: no `try_acquire` or new `acquire` can take permits
//!   ahead of it (no barging).
//! - A waiter's permits are in exactly one place: the free count, its own
//!   `assigned` tally (queued), or its whole request (`granted`). Dropping
//!   a pending acquire gives whatever it held back through the same
//!   release, so the next waiter gets it and nothing is lost.
//! - A fast path without the lock (an atomic count for uncontended
//!   acquires) is not there yet: it would need its own loom model.
//! - Wakers are woken after the lock is released.

use crate::loom::{lock, Mutex};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// A counting semaphore whose waiters are served in the order they came.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// use spindle::sync::{Semaphore, TryAcquireError};
/// let sem = Semaphore::new(3);
/// let one = sem.acquire().await.unwrap();
/// let two = sem.acquire_many(2).await.unwrap();
/// assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
/// drop((one, two));
/// assert_eq!(sem.available_permits(), 3);
/// # });
/// ```
pub struct Semaphore {
    state: Mutex<State>,
}

struct State {
    /// Free permits: zero whenever `waiters` is not empty.
    permits: usize,
    closed: bool,
    /// Waiters not yet served, oldest first.
    waiters: BTreeMap<u64, Waiter>,
    /// Waiters served in full whose futures have not yet seen it.
    granted: BTreeSet<u64>,
    next_ticket: u64,
}

struct Waiter {
    /// Permits still to come.
    needed: usize,
    /// Permits already handed to it.
    assigned: usize,
    waker: Option<Waker>,
}

/// `acquire` on a closed semaphore, or `acquire_many` of more than
/// [`Semaphore::MAX_PERMITS`] (which no semaphore can ever hold, so the
/// call fails at once rather than waiting forever).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireError {
    too_many: Option<usize>,
}

impl AcquireError {
    fn closed() -> AcquireError {
        AcquireError { too_many: None }
    }
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.too_many {
            None => f.write_str("semaphore closed"),
            Some(n) => write!(
                f,
                "acquire of {n} permits, more than Semaphore::MAX_PERMITS ({})",
                Semaphore::MAX_PERMITS
            ),
        }
    }
}

impl std::error::Error for AcquireError {}

/// Why a `try_acquire` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore is closed.
    Closed,
    /// Not enough free permits, or earlier waiters are queued for them.
    NoPermits,
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
        }
    }
}

impl std::error::Error for TryAcquireError {}

impl Semaphore {
    /// The most permits a semaphore holds (as Tokio's).
    pub const MAX_PERMITS: usize = usize::MAX >> 3;

    /// A semaphore with `permits` free permits.
    ///
    /// # Panics
    /// If `permits` is more than [`Semaphore::MAX_PERMITS`].
    pub fn new(permits: usize) -> Semaphore {
        assert!(
            permits <= Self::MAX_PERMITS,
            "a semaphore may not have more than MAX_PERMITS permits ({})",
            Self::MAX_PERMITS
        );
        Semaphore {
            state: Mutex::new(State {
                permits,
                closed: false,
                waiters: BTreeMap::new(),
                granted: BTreeSet::new(),
                next_ticket: 0,
            }),
        }
    }

    /// The permits free right now.
    pub fn available_permits(&self) -> usize {
        lock(&self.state).permits
    }

    /// Adds `n` permits, handing them to queued waiters first.
    ///
    /// # Panics
    /// If the free permits would be more than [`Semaphore::MAX_PERMITS`].
    pub fn add_permits(&self, n: usize) {
        self.release_checked(n, true);
    }

    /// Closes the semaphore: every queued acquire and every later one
    /// fails with [`AcquireError`]. Permits already held stay valid, and
    /// an acquire already served in full still succeeds.
    pub fn close(&self) {
        let wakers: Vec<Waker> = {
            let mut st = lock(&self.state);
            st.closed = true;
            st.waiters
                .values_mut()
                .filter_map(|w| w.waker.take())
                .collect()
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Whether [`close`](Semaphore::close) was called.
    pub fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// Waits for one permit.
    pub async fn acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.acquire_many(1).await
    }

    /// Waits for `n` permits, taken together: a large request at the front
    /// of the queue holds back smaller ones behind it (fairness).
    ///
    /// # Errors
    /// [`AcquireError`] when the semaphore is or becomes closed, or at once
    /// when `n` is more than [`Semaphore::MAX_PERMITS`] (possible only
    /// where `usize` is 32 bits or less).
    pub async fn acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        let permits = n as usize;
        Acquire::new(self, permits).await?;
        Ok(SemaphorePermit { sem: self, permits })
    }

    /// One permit, if one is free and no earlier waiter is queued.
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// `n` permits, if free and no earlier waiter is queued.
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        let permits = n as usize;
        self.try_take(permits)?;
        Ok(SemaphorePermit { sem: self, permits })
    }

    /// [`acquire`](Semaphore::acquire) for a permit that owns its semaphore.
    pub async fn acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.acquire_many_owned(1).await
    }

    /// [`acquire_many`](Semaphore::acquire_many), owned.
    pub async fn acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        let permits = n as usize;
        Acquire::new(&self, permits).await?;
        Ok(OwnedSemaphorePermit { sem: self, permits })
    }

    /// [`try_acquire`](Semaphore::try_acquire), owned.
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.try_acquire_many_owned(1)
    }

    /// [`try_acquire_many`](Semaphore::try_acquire_many), owned.
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        let permits = n as usize;
        self.try_take(permits)?;
        Ok(OwnedSemaphorePermit { sem: self, permits })
    }

    fn try_take(&self, n: usize) -> Result<(), TryAcquireError> {
        let mut st = lock(&self.state);
        if st.closed {
            Err(TryAcquireError::Closed)
        } else if st.permits >= n {
            // `permits > 0` means no one is queued, so this takes from no
            // earlier waiter; `n == 0` takes nothing.
            st.permits -= n;
            Ok(())
        } else {
            Err(TryAcquireError::NoPermits)
        }
    }

    /// Gives `n` permits back, serving queued waiters first.
    pub(crate) fn release(&self, n: usize) {
        self.release_checked(n, false);
    }

    fn release_checked(&self, n: usize, limit: bool) {
        if n == 0 {
            return;
        }
        let wakers = {
            let mut st = lock(&self.state);
            if limit && n > Self::MAX_PERMITS - st.permits {
                drop(st);
                panic!(
                    "a semaphore may not have more than MAX_PERMITS permits ({})",
                    Self::MAX_PERMITS
                );
            }
            st.hand_out(n)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl State {
    /// Adds `n` permits: to queued waiters front to back, the rest to the
    /// free count. Returns the wakers of the waiters it served in full.
    fn hand_out(&mut self, mut n: usize) -> Vec<Waker> {
        let mut wakers = Vec::new();
        while n > 0 {
            let Some(mut entry) = self.waiters.first_entry() else {
                break;
            };
            let w = entry.get_mut();
            let give = w.needed.min(n);
            w.needed -= give;
            w.assigned += give;
            n -= give;
            if w.needed > 0 {
                break;
            }
            let (ticket, w) = entry.remove_entry();
            self.granted.insert(ticket);
            wakers.extend(w.waker);
        }
        self.permits = self.permits.saturating_add(n);
        wakers
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.state);
        f.debug_struct("Semaphore")
            .field("permits", &st.permits)
            .field("closed", &st.closed)
            .field("waiters", &st.waiters.len())
            .finish()
    }
}

/// A pending acquire of `n` permits; its permits belong to the caller once
/// it returns `Ready(Ok)`. Dropped before that, it gives back what it held.
struct Acquire<'a> {
    sem: &'a Semaphore,
    n: usize,
    /// Its place in the queue, once queued.
    ticket: Option<u64>,
}

impl<'a> Acquire<'a> {
    fn new(sem: &'a Semaphore, n: usize) -> Acquire<'a> {
        Acquire {
            sem,
            n,
            ticket: None,
        }
    }

    /// The first poll: take the permits, or queue with those free now.
    fn start(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
        if self.n > Semaphore::MAX_PERMITS {
            return Poll::Ready(Err(AcquireError {
                too_many: Some(self.n),
            }));
        }
        let mut st = lock(&self.sem.state);
        if st.closed {
            return Poll::Ready(Err(AcquireError::closed()));
        }
        if st.permits >= self.n {
            st.permits -= self.n;
            return Poll::Ready(Ok(()));
        }
        // Fewer than `n` free, so this waiter takes them all; free permits
        // also mean the queue was empty, so it is at the front.
        let assigned = std::mem::take(&mut st.permits);
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        let waiter = Waiter {
            needed: self.n - assigned,
            assigned,
            waker: Some(cx.waker().clone()),
        };
        st.waiters.insert(ticket, waiter);
        self.ticket = Some(ticket);
        Poll::Pending
    }

    /// A later poll: served, closed, or still waiting.
    fn check(&mut self, ticket: u64, cx: &mut Context<'_>) -> Poll<Result<(), AcquireError>> {
        let mut st = lock(&self.sem.state);
        if st.granted.remove(&ticket) {
            self.ticket = None;
            return Poll::Ready(Ok(()));
        }
        let closed = st.closed;
        let Some(w) = st.waiters.get_mut(&ticket) else {
            unreachable!("an acquire's ticket is queued or granted");
        };
        if !closed {
            match &mut w.waker {
                Some(old) if old.will_wake(cx.waker()) => {}
                slot => *slot = Some(cx.waker().clone()),
            }
            return Poll::Pending;
        }
        // Closed: what it held goes back to the free count; the other
        // queued waiters fail on their next poll, so none is owed it.
        let held = w.assigned;
        st.waiters.remove(&ticket);
        st.permits += held;
        self.ticket = None;
        Poll::Ready(Err(AcquireError::closed()))
    }
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.ticket {
            None => self.start(cx),
            Some(ticket) => self.check(ticket, cx),
        }
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket else {
            return; // never queued, or finished
        };
        let wakers = {
            let mut st = lock(&self.sem.state);
            // Served in full but never told: all `n` go on; still queued:
            // what it was handed so far goes on.
            let held = if st.granted.remove(&ticket) {
                self.n
            } else {
                st.waiters.remove(&ticket).map_or(0, |w| w.assigned)
            };
            st.hand_out(held)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

/// Permits borrowed from a [`Semaphore`], given back on drop.
#[must_use = "the permits go back at once if the permit is not kept"]
pub struct SemaphorePermit<'a> {
    sem: &'a Semaphore,
    permits: usize,
}

impl SemaphorePermit<'_> {
    /// Keeps the permits out of the semaphore for good.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// How many permits this holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.sem.release(self.permits);
    }
}

impl fmt::Debug for SemaphorePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemaphorePermit")
            .field("permits", &self.permits)
            .finish()
    }
}

/// Permits that own their [`Semaphore`] through an `Arc`, given back on drop.
#[must_use = "the permits go back at once if the permit is not kept"]
pub struct OwnedSemaphorePermit {
    sem: Arc<Semaphore>,
    permits: usize,
}

impl OwnedSemaphorePermit {
    /// Keeps the permits out of the semaphore for good.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// How many permits this holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// The semaphore the permits came from.
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        self.sem.release(self.permits);
    }
}

impl fmt::Debug for OwnedSemaphorePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSemaphorePermit")
            .field("permits", &self.permits)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// More than `MAX_PERMITS` fails at once (reachable from `acquire_many`
    /// only where `usize` is 32 bits, so checked here on the inner future).
    #[test]
    fn acquire_of_more_than_the_maximum_fails_at_once() {
        let sem = Semaphore::new(0);
        let mut acquire = std::pin::pin!(Acquire::new(&sem, Semaphore::MAX_PERMITS + 1));
        let poll = acquire
            .as_mut()
            .poll(&mut Context::from_waker(std::task::Waker::noop()));
        match poll {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("MAX_PERMITS"), "{e}"),
            _ => panic!("an impossible acquire did not fail"),
        }
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::super::loom_support::Count;
    use super::*;
    use crate::chan::blocking::block_on;
    use crate::loom::{AtomicUsize, Ordering::SeqCst};
    use loom::thread;

    fn poll_once(f: Pin<&mut Acquire<'_>>, waker: &Waker) -> Poll<Result<(), AcquireError>> {
        f.poll(&mut Context::from_waker(waker))
    }

    /// A release races the cancel of the waiter at the front, with a second
    /// waiter behind it: whichever comes first, the permit ends with the
    /// second waiter (woken and served), never lost with the first.
    #[test]
    fn a_release_racing_a_cancelled_waiter_loses_no_permit() {
        loom::model(|| {
            let sem = crate::loom::Arc::new(Semaphore::new(0));
            let count = std::sync::Arc::new(Count::default());
            let waker = Waker::from(count.clone());
            let first_waker = Waker::from(std::sync::Arc::new(Count::default()));
            let mut first = Box::pin(Acquire::new(&sem, 1));
            let mut second = Box::pin(Acquire::new(&sem, 1));
            assert!(poll_once(first.as_mut(), &first_waker).is_pending());
            assert!(poll_once(second.as_mut(), &waker).is_pending());
            let releaser = {
                let sem = sem.clone();
                thread::spawn(move || sem.release(1))
            };
            drop(first);
            releaser.join().unwrap();
            assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
            assert!(matches!(
                poll_once(second.as_mut(), &waker),
                Poll::Ready(Ok(()))
            ));
            assert_eq!(sem.available_permits(), 0);
            drop(second);
            sem.release(1);
            assert_eq!(sem.available_permits(), 1);
        });
    }

    /// Two threads acquire the one permit that a third gives back: each
    /// gets it in turn (a lost wake-up is a loom deadlock), never both at
    /// once, and it is back at the end.
    #[test]
    fn two_acquirers_and_one_releaser() {
        loom::model(|| {
            let sem = crate::loom::Arc::new(Semaphore::new(0));
            let inside = crate::loom::Arc::new(AtomicUsize::new(0));
            let acquirers: Vec<_> = (0..2)
                .map(|_| {
                    let (sem, inside) = (sem.clone(), inside.clone());
                    thread::spawn(move || {
                        let acquire = std::pin::pin!(Acquire::new(&sem, 1));
                        block_on(acquire).unwrap();
                        assert_eq!(inside.fetch_add(1, SeqCst), 0, "two holders");
                        inside.fetch_sub(1, SeqCst);
                        sem.release(1);
                    })
                })
                .collect();
            sem.release(1);
            for t in acquirers {
                t.join().unwrap();
            }
            assert_eq!(sem.available_permits(), 1);
        });
    }
}
