//! [`Mutex`]: an async mutex on a one-permit [`Semaphore`], as Tokio's.
//!
//! Holding the semaphore's one permit is holding the lock: a guard is that
//! permit plus access to the value, so the lock is fair (FIFO) and a
//! cancelled `lock()` loses nothing, both from the semaphore. The value is
//! touched only through a guard, `get_mut` (`&mut self`) or `into_inner`
//! (`self`), each of which rules out every other access. No poisoning: a
//! panic while holding a guard just releases the lock.

use super::semaphore::{Acquire, Semaphore};
use std::cell::UnsafeCell;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// An async mutual-exclusion lock whose waiters get it in the order they
/// asked.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let m = spindle::sync::Mutex::new(1);
/// *m.lock().await += 1;
/// assert_eq!(*m.lock().await, 2);
/// # });
/// ```
pub struct Mutex<T: ?Sized> {
    sem: Semaphore,
    value: UnsafeCell<T>,
}

// SAFETY: the mutex hands the value to one thread at a time (the one
// holding the permit), so moving `T` between threads is all it needs.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: as for `Send`: `&Mutex<T>` gives `&mut T` to one holder at a
// time, never `&T` to two threads at once.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

/// The future of [`Mutex::lock`]. Its first poll takes a free lock with
/// one compare-exchange (`Semaphore::try_take_sole`) and builds no
/// acquire; only a lock that is held queues (and the queue is the
/// semaphore's, so fair and cancel-safe).
#[must_use = "futures do nothing unless polled"]
pub struct Lock<'a, T: ?Sized> {
    mutex: &'a Mutex<T>,
    /// The queued acquire of the one permit, once the lock was found held.
    acquire: Option<Acquire<'a>>,
}

impl<'a, T: ?Sized> Future for Lock<'a, T> {
    type Output = MutexGuard<'a, T>;

    /// Spends a unit of the task's budget when it takes the lock, as an
    /// acquire does, so that a loop of uncontended locks still yields.
    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<MutexGuard<'a, T>> {
        // SAFETY: `acquire` is structurally pinned: once set it is never
        // moved out or replaced, only dropped in place with the `Lock`
        // (`poll_unbudgeted` keeps to that).
        let this = unsafe { self.get_unchecked_mut() };
        crate::task::coop::spend(cx, |cx| this.poll_unbudgeted(cx))
    }
}

impl<'a, T: ?Sized> Lock<'a, T> {
    /// One poll of the pinned `Lock` (see `poll`), spending no budget.
    #[inline]
    fn poll_unbudgeted(&mut self, cx: &mut Context<'_>) -> Poll<MutexGuard<'a, T>> {
        let mutex = self.mutex;
        let acquire = match &mut self.acquire {
            Some(acquire) => acquire,
            None if mutex.sem.try_take_sole() => return Poll::Ready(mutex.guard()),
            None => self.acquire.insert(Acquire::new(&mutex.sem, 1)),
        };
        // SAFETY: `self` is the pinned `Lock` (`poll`), and `acquire` stays
        // where it is until dropped with it.
        match unsafe { Pin::new_unchecked(acquire) }.poll_unbudgeted(cx) {
            // The permit is ours now; the guard gives it back.
            Poll::Ready(Ok(())) => Poll::Ready(mutex.guard()),
            Poll::Ready(Err(_)) => unreachable!("a mutex's semaphore is never closed"),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: ?Sized> fmt::Debug for Lock<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lock")
            .field("queued", &self.acquire.is_some())
            .finish_non_exhaustive()
    }
}

/// `try_lock` found the mutex locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TryLockError(pub(super) ());

impl fmt::Display for TryLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("operation would block")
    }
}

impl std::error::Error for TryLockError {}

impl<T> Mutex<T> {
    /// An unlocked mutex holding `value`.
    pub fn new(value: T) -> Mutex<T> {
        Mutex {
            sem: Semaphore::new(1),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, taking the mutex apart.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits for the lock. Cancel-safe: dropped while waiting, it gives
    /// up its place and passes on a hand-over it had already received.
    pub fn lock(&self) -> Lock<'_, T> {
        Lock {
            mutex: self,
            acquire: None,
        }
    }

    /// The lock if it is free and no one is waiting for it.
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        if self.sem.try_take_sole() {
            Ok(self.guard())
        } else {
            Err(TryLockError(()))
        }
    }

    /// Waits for the lock from a plain thread, blocking it.
    ///
    /// # Panics
    /// On a runtime's worker thread (or inside a current-thread
    /// `block_on`), where blocking would stall the tasks the thread runs:
    /// await [`lock`](Mutex::lock) there, or, on a multi-thread worker,
    /// wrap the call in `spindle::block_in_place` (which gives the
    /// worker's tasks to a new thread first; on the current-thread runtime
    /// it runs in place, and the call still panics).
    pub fn blocking_lock(&self) -> MutexGuard<'_, T> {
        assert!(
            !crate::sched::on_scheduler_thread(),
            "Mutex::blocking_lock called on a spindle runtime thread, where \
             it would block the tasks that thread runs: use `lock().await`"
        );
        let fut = std::pin::pin!(self.lock());
        crate::chan::blocking::block_on(fut)
    }

    /// The value, through `&mut self`: no lock needed.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    fn unlock(&self) {
        self.sem.release_sole();
    }

    /// The guard of a lock just taken (its permit held and forgotten).
    fn guard(&self) -> MutexGuard<'_, T> {
        MutexGuard {
            lock: self,
            _value: PhantomData,
        }
    }
}

impl<T: ?Sized> Mutex<T> {
    /// [`lock`](Mutex::lock) for a guard that owns the mutex through an `Arc`.
    pub async fn lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        // The borrowed lock's path (fast first try, then the queue); its
        // guard is forgotten, so the lock passes to the owned guard.
        std::mem::forget(self.lock().await);
        OwnedMutexGuard { lock: self }
    }

    /// [`try_lock`](Mutex::try_lock), owned.
    pub fn try_lock_owned(self: Arc<Self>) -> Result<OwnedMutexGuard<T>, TryLockError> {
        if self.sem.try_take_sole() {
            Ok(OwnedMutexGuard { lock: self })
        } else {
            Err(TryLockError(()))
        }
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Mutex<T> {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Mutex<T> {
        Mutex::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Ok(guard) => d.field("data", &&*guard),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// The lock held; gives it back on drop.
#[must_use = "the lock is released at once if the guard is not kept"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
    /// Sends and shares as `&mut T` does.
    _value: PhantomData<&'a mut T>,
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex's only permit, so no other
        // access to the value exists while it lives.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the one borrow.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock();
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// The lock held through an `Arc` of the mutex; gives it back on drop.
#[must_use = "the lock is released at once if the guard is not kept"]
pub struct OwnedMutexGuard<T: ?Sized> {
    lock: Arc<Mutex<T>>,
}

// SAFETY: a shared guard gives `&T` to every thread that has it, which
// needs `T: Sync`; the `Arc<Mutex<T>>` alone would ask only `T: Send`.
unsafe impl<T: ?Sized + Send + Sync> Sync for OwnedMutexGuard<T> {}

impl<T: ?Sized> OwnedMutexGuard<T> {
    /// The mutex this guard holds.
    pub fn mutex(&self) -> &Arc<Mutex<T>> {
        &self.lock
    }
}

impl<T: ?Sized> Deref for OwnedMutexGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex's only permit.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for OwnedMutexGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the mutex's only permit; `&mut self`
        // makes this the one borrow.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for OwnedMutexGuard<T> {
    fn drop(&mut self) {
        self.lock.unlock();
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
