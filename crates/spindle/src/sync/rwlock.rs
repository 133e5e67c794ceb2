//! [`RwLock`]: an async reader-writer lock on a [`Semaphore`] of
//! [`MAX_READS`](RwLock::MAX_READS) permits, as Tokio's.
//!
//! A reader holds one permit, a writer holds all of them, so a writer
//! excludes everyone and readers share. The semaphore serves its queue in
//! order and lets no one take permits past a queued waiter, so a queued
//! writer holds back every reader that comes after it: the lock is
//! writer-preferring and no writer starves. A cancelled `read()` or
//! `write()` loses nothing, from the semaphore too. The value is touched
//! only through a guard, `get_mut` (`&mut self`) or `into_inner` (`self`).
//! No poisoning: a panic while holding a guard just releases it.

use super::mutex::TryLockError;
use super::semaphore::Semaphore;
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// An async reader-writer lock: many readers or one writer, served in
/// the order they asked.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let lock = spindle::sync::RwLock::new(1);
/// {
///     let (a, b) = (lock.read().await, lock.read().await);
///     assert_eq!(*a + *b, 2);
/// }
/// *lock.write().await += 1;
/// assert_eq!(*lock.read().await, 2);
/// # });
/// ```
pub struct RwLock<T: ?Sized> {
    /// Permits a writer takes: the most readers at once.
    max_reads: u32,
    sem: Semaphore,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands `&mut T` to one thread at a time and `&T` to
// several, so moving the lock between threads needs `T: Send`.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: `&RwLock<T>` gives `&mut T` to one writer (so `T: Send`) or
// `&T` to readers on several threads at once (so `T: Sync`).
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

impl<T> RwLock<T> {
    /// The most readers at once, and the permits a writer takes (as Tokio's).
    pub const MAX_READS: u32 = u32::MAX >> 3;

    /// An unlocked lock holding `value`.
    pub fn new(value: T) -> RwLock<T> {
        RwLock::with_max_readers(value, Self::MAX_READS)
    }

    /// An unlocked lock that lets at most `max_reads` readers in at once.
    ///
    /// # Panics
    /// If `max_reads` is 0 or more than [`MAX_READS`](RwLock::MAX_READS).
    pub fn with_max_readers(value: T, max_reads: u32) -> RwLock<T> {
        assert!(
            max_reads != 0 && max_reads <= Self::MAX_READS,
            "an RwLock's max_reads must be 1 to MAX_READS ({})",
            Self::MAX_READS
        );
        RwLock {
            max_reads,
            sem: Semaphore::new(max_reads as usize),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, taking the lock apart.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Waits for shared access. Behind a queued writer, it waits for that
    /// writer. Cancel-safe, as [`Semaphore::acquire`].
    pub async fn read(&self) -> RwLockReadGuard<'_, T> {
        self.acquire(1).await;
        RwLockReadGuard {
            lock: self,
            _value: PhantomData,
        }
    }

    /// Waits for exclusive access. Cancel-safe, as [`Semaphore::acquire`].
    pub async fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.acquire(self.max_reads).await;
        RwLockWriteGuard {
            lock: self,
            _value: PhantomData,
        }
    }

    /// Shared access if no writer holds the lock or waits for it.
    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        self.try_take(1)?;
        Ok(RwLockReadGuard {
            lock: self,
            _value: PhantomData,
        })
    }

    /// Exclusive access if no one holds the lock or waits for it.
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        self.try_take(self.max_reads)?;
        Ok(RwLockWriteGuard {
            lock: self,
            _value: PhantomData,
        })
    }

    /// [`read`](RwLock::read) from a plain thread, blocking it.
    ///
    /// # Panics
    /// On a runtime's worker thread (or inside a current-thread
    /// `block_on`), as [`Mutex::blocking_lock`](super::Mutex::blocking_lock).
    pub fn blocking_read(&self) -> RwLockReadGuard<'_, T> {
        assert_off_runtime("RwLock::blocking_read", "read");
        crate::chan::blocking::block_on(std::pin::pin!(self.read()))
    }

    /// [`write`](RwLock::write) from a plain thread, blocking it.
    ///
    /// # Panics
    /// On a runtime's worker thread (or inside a current-thread
    /// `block_on`), as [`Mutex::blocking_lock`](super::Mutex::blocking_lock).
    pub fn blocking_write(&self) -> RwLockWriteGuard<'_, T> {
        assert_off_runtime("RwLock::blocking_write", "write");
        crate::chan::blocking::block_on(std::pin::pin!(self.write()))
    }

    /// [`read`](RwLock::read) for a guard that owns the lock through an `Arc`.
    pub async fn read_owned(self: Arc<Self>) -> OwnedRwLockReadGuard<T> {
        self.acquire(1).await;
        OwnedRwLockReadGuard { lock: self }
    }

    /// [`write`](RwLock::write) for a guard that owns the lock through an `Arc`.
    pub async fn write_owned(self: Arc<Self>) -> OwnedRwLockWriteGuard<T> {
        self.acquire(self.max_reads).await;
        OwnedRwLockWriteGuard { lock: self }
    }

    /// [`try_read`](RwLock::try_read), owned.
    pub fn try_read_owned(self: Arc<Self>) -> Result<OwnedRwLockReadGuard<T>, TryLockError> {
        self.try_take(1)?;
        Ok(OwnedRwLockReadGuard { lock: self })
    }

    /// [`try_write`](RwLock::try_write), owned.
    pub fn try_write_owned(self: Arc<Self>) -> Result<OwnedRwLockWriteGuard<T>, TryLockError> {
        self.try_take(self.max_reads)?;
        Ok(OwnedRwLockWriteGuard { lock: self })
    }

    /// The value, through `&mut self`: no lock needed.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// Takes `n` permits for a guard, which gives them back on drop.
    async fn acquire(&self, n: u32) {
        let permit = self.sem.acquire_many(n).await;
        // The semaphore is never closed, and `n` is at most MAX_READS.
        permit.expect("an RwLock is never closed").forget();
    }

    fn try_take(&self, n: u32) -> Result<(), TryLockError> {
        let permit = self.sem.try_acquire_many(n).map_err(|_| TryLockError(()))?;
        permit.forget();
        Ok(())
    }

    fn release(&self, n: u32) {
        self.sem.release(n as usize);
    }
}

/// Panics when called on a runtime thread, where blocking would stall the
/// tasks that thread runs.
fn assert_off_runtime(what: &str, method: &str) {
    assert!(
        !crate::sched::on_scheduler_thread(),
        "{what} called on a spindle runtime thread, where it would block \
         the tasks that thread runs: use `{method}().await`"
    );
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> RwLock<T> {
        RwLock::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(value: T) -> RwLock<T> {
        RwLock::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RwLock");
        match self.try_read() {
            Ok(guard) => d.field("data", &&*guard),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// Shared access held; gives its permit back on drop.
#[must_use = "the lock is released at once if the guard is not kept"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Sends and shares as `&T` does.
    _value: PhantomData<&'a T>,
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds a read permit, so no writer (which needs
        // every permit) exists while it lives; readers only share.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Exclusive access held; gives its permits back on drop.
#[must_use = "the lock is released at once if the guard is not kept"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Sends and shares as `&mut T` does.
    _value: PhantomData<&'a mut T>,
}

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// Turns exclusive access into shared access without letting a writer
    /// in between; readers queued behind this writer may then enter.
    pub fn downgrade(self) -> RwLockReadGuard<'a, T> {
        let lock = self.lock;
        std::mem::forget(self);
        lock.release(lock.max_reads - 1);
        RwLockReadGuard {
            lock,
            _value: PhantomData,
        }
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds every permit, so no other access to the
        // value exists while it lives.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the one borrow.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.release(self.lock.max_reads);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Shared access held through an `Arc` of the lock; gives it back on drop.
#[must_use = "the lock is released at once if the guard is not kept"]
pub struct OwnedRwLockReadGuard<T: ?Sized> {
    lock: Arc<RwLock<T>>,
}

impl<T: ?Sized> OwnedRwLockReadGuard<T> {
    /// The lock this guard holds.
    pub fn rwlock(&self) -> &Arc<RwLock<T>> {
        &self.lock
    }
}

impl<T: ?Sized> Deref for OwnedRwLockReadGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds a read permit, so no writer exists.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for OwnedRwLockReadGuard<T> {
    fn drop(&mut self) {
        self.lock.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedRwLockReadGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Exclusive access held through an `Arc` of the lock; gives it back on drop.
#[must_use = "the lock is released at once if the guard is not kept"]
pub struct OwnedRwLockWriteGuard<T: ?Sized> {
    lock: Arc<RwLock<T>>,
}

impl<T: ?Sized> OwnedRwLockWriteGuard<T> {
    /// The lock this guard holds.
    pub fn rwlock(&self) -> &Arc<RwLock<T>> {
        &self.lock
    }

    /// [`RwLockWriteGuard::downgrade`], owned.
    pub fn downgrade(self) -> OwnedRwLockReadGuard<T> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the `Arc` is
        // moved out exactly once.
        let lock = unsafe { std::ptr::read(&this.lock) };
        lock.release(lock.max_reads - 1);
        OwnedRwLockReadGuard { lock }
    }
}

impl<T: ?Sized> Deref for OwnedRwLockWriteGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds every permit.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for OwnedRwLockWriteGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds every permit; `&mut self` makes this the
        // one borrow.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for OwnedRwLockWriteGuard<T> {
    fn drop(&mut self) {
        self.lock.release(self.lock.max_reads);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedRwLockWriteGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
