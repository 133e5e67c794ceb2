//! The one place that picks `std` or `loom` primitives.
//!
//! Every atomic, cell, lock, condvar and thread the runtime uses comes from
//! here, so that the loom models (`RUSTFLAGS="--cfg loom" cargo test -p
//! spindle --release --test loom_*`) explore the real code, not a copy.
//!
//! `UnsafeCell` follows loom's closure API (`with`, `with_mut`) in both
//! builds, so that loom can check every access for data races.

#[cfg(loom)]
pub(crate) use loom::{
    cell::UnsafeCell,
    hint::spin_loop,
    sync::{
        atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
        Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
};

#[cfg(loom)]
pub(crate) fn yield_now() {
    loom::thread::yield_now();
}

#[cfg(not(loom))]
pub(crate) use std::{
    hint::spin_loop,
    sync::{
        atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering},
        Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
    },
};

#[cfg(not(loom))]
pub(crate) fn yield_now() {
    std::thread::yield_now();
}

/// `std::cell::UnsafeCell` with loom's closure-based access API.
#[cfg(not(loom))]
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    #[inline(always)]
    pub(crate) const fn new(data: T) -> Self {
        Self(std::cell::UnsafeCell::new(data))
    }
}

#[cfg(not(loom))]
impl<T: ?Sized> UnsafeCell<T> {
    /// Reads through a raw pointer; the caller proves no writer overlaps.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Writes through a raw pointer; the caller proves exclusive access.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Locks a mutex, ignoring poisoning: the runtime's own critical sections
/// never panic half-way, and a user panic elsewhere must not wedge it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        #[cfg(not(loom))]
        Err(p) => p.into_inner(),
        #[cfg(loom)]
        Err(_) => panic!("poisoned mutex under loom"),
    }
}

/// [`lock`] for the shared side of an `RwLock`.
pub(crate) fn read_lock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    match l.read() {
        Ok(g) => g,
        #[cfg(not(loom))]
        Err(p) => p.into_inner(),
        #[cfg(loom)]
        Err(_) => panic!("poisoned rwlock under loom"),
    }
}

/// [`lock`] for the exclusive side of an `RwLock`. A panic while it is
/// held (a user's closure, as `watch::Sender::send_modify` runs) leaves
/// what was written so far; the lock's owner says whether that stands.
pub(crate) fn write_lock<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    match l.write() {
        Ok(g) => g,
        #[cfg(not(loom))]
        Err(p) => p.into_inner(),
        #[cfg(loom)]
        Err(_) => panic!("poisoned rwlock under loom"),
    }
}

/// [`lock`] for a `std::sync::Mutex` that stays std under loom, guarding
/// state the models do not explore.
pub(crate) fn lock_std<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A Release store to an atomic that other threads change only by RMW
/// (a lock word, a hand-over slot). In the C++ model an RMW reads the last
/// value in the location's modification order ([atomics.order] p10), so
/// the store cannot land between another thread's read and write of one
/// RMW, and a plain `mov` does what a locked swap would.
///
/// Under loom it is a swap: loom lets a plain store slip between the read
/// and the write of another thread's RMW (tokio-rs/loom#254, #389; the fix,
/// loom#391, is not released) and would report states no real execution
/// reaches. A swap is the same protocol for every execution the C++ model
/// allows, so the models still check the real one.
pub(crate) trait ReleaseStore {
    type Value;
    fn release_store(&self, v: Self::Value);
}

impl ReleaseStore for AtomicBool {
    type Value = bool;
    #[inline(always)]
    fn release_store(&self, v: bool) {
        #[cfg(not(loom))]
        self.store(v, Ordering::Release);
        #[cfg(loom)]
        self.swap(v, Ordering::AcqRel);
    }
}

impl<T> ReleaseStore for AtomicPtr<T> {
    type Value = *mut T;
    #[inline(always)]
    fn release_store(&self, v: *mut T) {
        #[cfg(not(loom))]
        self.store(v, Ordering::Release);
        #[cfg(loom)]
        self.swap(v, Ordering::AcqRel);
    }
}

/// Pads and aligns a value to a cache line pair, so that two hot atomics
/// written by different threads never share a line (128 bytes covers the
/// adjacent-line prefetcher on x86-64).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
