//! [`OnceCell`]: a value set at most once, by an async initializer, as
//! Tokio's.
//!
//! A flag says whether the value is there; a one-permit [`Semaphore`]
//! lets one initializer run at a time. Invariants:
//! - The value is written only by the holder of the permit, and only
//!   while the flag is false; then the flag is set (release) and the
//!   semaphore closed, for good. The flag, once true (read with acquire),
//!   means the value is there and never changes while shared.
//! - Waiting initializers queue on the semaphore in order. When the one
//!   running is cancelled, its permit goes back and the next waiter runs
//!   its own initializer; when it finishes, the closed semaphore fails
//!   every waiter, which then finds the value.

use super::semaphore::{Semaphore, TryAcquireError};
use crate::loom::{AtomicBool, Ordering};
use std::cell::UnsafeCell;
use std::fmt;
use std::future::Future;
use std::mem::MaybeUninit;

/// A cell set once, which tasks can wait on while one of them sets it.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let cell = spindle::sync::OnceCell::new();
/// assert_eq!(*cell.get_or_init(|| async { 7 }).await, 7);
/// assert_eq!(*cell.get_or_init(|| async { 8 }).await, 7);
/// assert!(cell.set(9).is_err());
/// # });
/// ```
pub struct OnceCell<T> {
    /// Whether `value` is initialised.
    value_set: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
    /// One permit: the right to initialise. Closed once the value is set.
    semaphore: Semaphore,
}

// SAFETY: `&OnceCell<T>` lets threads share `&T` (so `T: Sync`) and lets
// the initialising thread store a `T` that another thread later drops or
// takes (so `T: Send`).
unsafe impl<T: Send + Sync> Sync for OnceCell<T> {}
// SAFETY: moving the cell moves the `T` in it.
unsafe impl<T: Send> Send for OnceCell<T> {}

/// Why [`OnceCell::set`] failed; holds the value it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetError<T> {
    /// The cell already has a value.
    AlreadyInitializedError(T),
    /// An initializer is running right now.
    InitializingError(T),
}

impl<T> SetError<T> {
    /// Whether the cell already had a value.
    pub fn is_already_init_err(&self) -> bool {
        matches!(self, SetError::AlreadyInitializedError(_))
    }

    /// Whether an initializer was running.
    pub fn is_initializing_err(&self) -> bool {
        matches!(self, SetError::InitializingError(_))
    }
}

impl<T> fmt::Display for SetError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::AlreadyInitializedError(_) => f.write_str("AlreadyInitializedError"),
            SetError::InitializingError(_) => f.write_str("InitializingError"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for SetError<T> {}

impl<T> OnceCell<T> {
    /// An empty cell.
    pub fn new() -> OnceCell<T> {
        OnceCell {
            value_set: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
            semaphore: Semaphore::new(1),
        }
    }

    /// A cell holding `value`, or empty for `None`.
    pub fn new_with(value: Option<T>) -> OnceCell<T> {
        let cell = OnceCell::new();
        if let Some(v) = value {
            // Nobody else can see the cell yet: the permit is free.
            let _ = cell.set(v);
        }
        cell
    }

    /// Whether the value is set.
    pub fn initialized(&self) -> bool {
        self.value_set.load(Ordering::Acquire)
    }

    /// The value, if set.
    pub fn get(&self) -> Option<&T> {
        self.initialized().then(|| {
            // SAFETY: `initialized` (acquire) saw the flag the writer set
            // (release) after writing the value, which never changes again
            // while the cell is shared.
            unsafe { (*self.value.get()).assume_init_ref() }
        })
    }

    /// The value, if set, through `&mut self`.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        if !self.value_set.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: the flag says the value is initialised; `&mut self`
        // rules out every other access.
        Some(unsafe { self.value.get_mut().assume_init_mut() })
    }

    /// Sets the value if there is none and no initializer is running.
    ///
    /// # Errors
    /// [`SetError`], with `value` in it, when the value is set or being set.
    pub fn set(&self, value: T) -> Result<(), SetError<T>> {
        match self.semaphore.try_acquire() {
            Ok(permit) => {
                permit.forget();
                self.store(value);
                Ok(())
            }
            Err(TryAcquireError::Closed) => Err(SetError::AlreadyInitializedError(value)),
            Err(TryAcquireError::NoPermits) => Err(SetError::InitializingError(value)),
        }
    }

    /// The value, running `f` to make it if there is none. Only one
    /// initializer runs at a time; the others wait for it in order. If the
    /// running one is cancelled (its future dropped), the next waiter runs
    /// its own `f`.
    pub async fn get_or_init<F, Fut>(&self, f: F) -> &T
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        let res: Result<&T, std::convert::Infallible> =
            self.get_or_try_init(|| async move { Ok(f().await) }).await;
        match res {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// [`get_or_init`](OnceCell::get_or_init) with an initializer that may
    /// fail: on `Err` the cell stays empty and the next waiter tries.
    ///
    /// # Errors
    /// The error of `f`, when this call ran it and it failed.
    pub async fn get_or_try_init<E, F, Fut>(&self, f: F) -> Result<&T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        if let Some(v) = self.get() {
            return Ok(v);
        }
        let Ok(permit) = self.semaphore.acquire().await else {
            // Closed: set by another initializer while this one waited.
            return Ok(self.get().expect("a closed OnceCell has its value"));
        };
        // The permit is held until the value is stored, so a cancel in
        // `f` gives it to the next waiter.
        let value = f().await?;
        permit.forget();
        self.store(value);
        Ok(self.get().expect("the value was just stored"))
    }

    /// The value, taking the cell apart.
    pub fn into_inner(mut self) -> Option<T> {
        if !self.value_set.swap(false, Ordering::Acquire) {
            return None;
        }
        // SAFETY: the flag said the value is initialised, and clearing it
        // keeps `Drop` from dropping it again.
        Some(unsafe { self.value.get_mut().assume_init_read() })
    }

    /// Takes the value out, leaving the cell empty and ready to be set
    /// again.
    pub fn take(&mut self) -> Option<T> {
        std::mem::take(self).into_inner()
    }

    /// Stores the value; the caller holds the permit and forgot it, so no
    /// one else reads or writes the cell until the flag is set.
    fn store(&self, value: T) {
        // SAFETY: only the holder of the one permit writes, once (the
        // semaphore is closed right after), and readers look only after
        // they see the flag set below.
        unsafe { (*self.value.get()).write(value) };
        self.value_set.store(true, Ordering::Release);
        self.semaphore.close();
    }
}

impl<T> Drop for OnceCell<T> {
    fn drop(&mut self) {
        if self.value_set.load(Ordering::Acquire) {
            // SAFETY: the flag says the value is initialised; it is
            // dropped once, here.
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}

impl<T> Default for OnceCell<T> {
    fn default() -> OnceCell<T> {
        OnceCell::new()
    }
}

impl<T> From<T> for OnceCell<T> {
    fn from(value: T) -> OnceCell<T> {
        OnceCell::new_with(Some(value))
    }
}

impl<T: Clone> Clone for OnceCell<T> {
    fn clone(&self) -> OnceCell<T> {
        OnceCell::new_with(self.get().cloned())
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnceCell")
            .field("value", &self.get())
            .finish()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::chan::blocking::block_on;
    use crate::loom::AtomicUsize;
    use loom::thread;

    /// Two threads initialise at once: one initializer runs, and both see
    /// its value (set with release, read with acquire).
    #[test]
    fn two_initializers_race() {
        loom::model(|| {
            let cell = crate::loom::Arc::new(OnceCell::new());
            let runs = crate::loom::Arc::new(AtomicUsize::new(0));
            let init = |cell: &OnceCell<usize>, runs: &AtomicUsize, v: usize| {
                *block_on(std::pin::pin!(cell.get_or_init(|| async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    v
                })))
            };
            let other = {
                let (cell, runs) = (cell.clone(), runs.clone());
                thread::spawn(move || init(&cell, &runs, 1))
            };
            let here = init(&cell, &runs, 2);
            assert_eq!(other.join().unwrap(), here);
            assert_eq!(runs.load(Ordering::SeqCst), 1);
        });
    }
}
