//! [`Semaphore`]: a fair counting semaphore, the base of [`Mutex`](super::Mutex),
//! [`RwLock`](super::RwLock) and [`OnceCell`](super::OnceCell).
//!
//! The state is in two places: one atomic word (`free << 2 | WAITING |
//! CLOSED`, see [`word`]) and, under a lock, the queue of waiters in
//! arrival order (`queue.rs`, on the crate's `LinkedSlab`).
//!
//! Invariants:
//! - `WAITING` is set exactly while the queue is not empty, and only a
//!   holder of the queue's lock changes it (always by a compare-exchange,
//!   so that no fast path's update in between is lost).
//! - While the semaphore is open and `WAITING` is set, `free` is zero: the
//!   acquire that queues takes every free permit in the same
//!   compare-exchange that sets the bit, and a release that sees the bit
//!   hands its permits to the queue under the lock. So no `try_acquire` or
//!   new `acquire` can take permits ahead of a queued waiter (no barging).
//! - The fast paths (an uncontended acquire, a release with nobody queued)
//!   are one compare-exchange on the word and take no lock.
//! - A waiter's permits are in exactly one place: the free count, its own
//!   `assigned` tally (queued), or its whole request (`granted`). Dropping
//!   a pending acquire gives whatever it held back through the same
//!   hand-out as a release, so the next waiter gets it and nothing is lost.
//! - Wakers are woken after the lock is released.
//!
//! The proof sketch of the word's protocol is in `docs/sync.md`; the loom
//! models in `loom_model.rs` explore it.

mod acquire;
#[cfg(all(test, loom))]
mod loom_model;
mod permit;
mod queue;
mod word;

pub(in crate::sync) use acquire::Acquire;
pub use permit::{OwnedSemaphorePermit, SemaphorePermit};

use crate::loom::{lock, AtomicUsize, Mutex, Ordering};
use queue::Queue;
use std::fmt;
use std::sync::Arc;

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
    /// `free << 2 | WAITING | CLOSED` ([`word`]).
    word: AtomicUsize,
    queue: Mutex<Queue>,
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
            word: AtomicUsize::new(word::with_free(0, permits)),
            queue: Mutex::new(Queue::default()),
        }
    }

    /// The permits free right now.
    pub fn available_permits(&self) -> usize {
        word::free(self.word.load(Ordering::Acquire))
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
        let wakers = {
            let mut q = lock(&self.queue);
            self.word.fetch_or(word::CLOSED, Ordering::AcqRel);
            q.take_wakers()
        };
        wakers.wake();
    }

    /// Whether [`close`](Semaphore::close) was called.
    pub fn is_closed(&self) -> bool {
        word::closed(self.word.load(Ordering::Acquire))
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
        Ok(SemaphorePermit::new(self, permits))
    }

    /// One permit, if one is free and no earlier waiter is queued.
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// `n` permits, if free and no earlier waiter is queued.
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        let permits = n as usize;
        self.try_take(permits)?;
        Ok(SemaphorePermit::new(self, permits))
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
        Ok(OwnedSemaphorePermit::new(self, permits))
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
        Ok(OwnedSemaphorePermit::new(self, permits))
    }

    /// Takes `n` free permits without the lock. While anyone is queued
    /// (and the semaphore is open) `free` is zero, so this takes from no
    /// earlier waiter; `n == 0` takes nothing.
    #[inline]
    pub(in crate::sync) fn try_take(&self, n: usize) -> Result<(), TryAcquireError> {
        let mut cur = self.word.load(Ordering::Acquire);
        loop {
            if word::closed(cur) {
                return Err(TryAcquireError::Closed);
            }
            if word::free(cur) < n {
                return Err(TryAcquireError::NoPermits);
            }
            let new = word::with_free(cur, word::free(cur) - n);
            match self
                .word
                .compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// `try_take(1)` for a semaphore of one permit (a mutex's): one
    /// compare-exchange from the word of a free permit, open, with nobody
    /// queued. No load of the word comes first: right before a locked
    /// instruction on the same word, that load costs about as much as the
    /// instruction itself. `false` means the permit is held.
    #[inline]
    pub(in crate::sync) fn try_take_sole(&self) -> bool {
        self.word
            .compare_exchange(
                word::SOLE_FREE,
                word::SOLE_HELD,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// `release(1)` for a semaphore of one permit whose permit is held:
    /// one compare-exchange, with no load first, when nobody is queued;
    /// the hand-out to the queue otherwise.
    #[inline]
    pub(in crate::sync) fn release_sole(&self) {
        let unqueued = self
            .word
            .compare_exchange(
                word::SOLE_HELD,
                word::SOLE_FREE,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok();
        if !unqueued {
            self.release_checked(1, false);
        }
    }

    /// Gives `n` permits back, serving queued waiters first. Inlined for
    /// its first try, the one compare-exchange an unlock with nobody
    /// waiting needs; giving back none (a forgotten permit) touches
    /// nothing.
    #[inline]
    pub(crate) fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        let cur = self.word.load(Ordering::Acquire);
        let free = word::free(cur);
        if !word::waiting(cur) && n <= Self::MAX_PERMITS - free {
            let new = word::with_free(cur, free + n);
            let swapped =
                self.word
                    .compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire);
            if swapped.is_ok() {
                return;
            }
        }
        self.release_checked(n, false);
    }

    /// A release: one compare-exchange while nobody is queued, else the
    /// hand-out to the queue under its lock. `limit`: panic (and add
    /// nothing) if the free count would pass `MAX_PERMITS`.
    #[cold]
    fn release_checked(&self, n: usize, limit: bool) {
        if n == 0 {
            return;
        }
        let mut cur = self.word.load(Ordering::Acquire);
        while !word::waiting(cur) {
            let free = word::free(cur);
            if limit && n > Self::MAX_PERMITS - free {
                Self::too_many_permits();
            }
            let new = word::with_free(cur, free.saturating_add(n).min(Self::MAX_PERMITS));
            match self
                .word
                .compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
        let wakers = {
            let mut q = lock(&self.queue);
            let free = word::free(self.word.load(Ordering::Acquire));
            if limit && n > Self::MAX_PERMITS - free {
                drop(q);
                Self::too_many_permits();
            }
            q.hand_out(&self.word, n)
        };
        wakers.wake();
    }

    fn too_many_permits() -> ! {
        panic!(
            "a semaphore may not have more than MAX_PERMITS permits ({})",
            Self::MAX_PERMITS
        );
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.word.load(Ordering::Acquire);
        f.debug_struct("Semaphore")
            .field("permits", &word::free(w))
            .field("closed", &word::closed(w))
            .field("waiters", &lock(&self.queue).len())
            .finish()
    }
}
