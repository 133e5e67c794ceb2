//! The one place that picks `std` or `loom` primitives (the pattern of
//! `spindle/src/loom.rs`, kept as a copy: spindle's facade is private to
//! it, and publishing it would make `loom` shims part of spindle's API).
//!
//! The ring (`ring/`) and its wake-up slots (`waker_slot.rs`) take every
//! atomic, cell and mutex from here, so the loom models
//! (`RUSTFLAGS="--cfg loom" cargo test -p spindle-actor --release --lib`)
//! explore the real code. `UnsafeCell` follows loom's closure API (`with`,
//! `with_mut`) in both builds.

#[cfg(loom)]
pub(crate) use loom::{
    cell::UnsafeCell,
    sync::{
        atomic::{fence, AtomicBool, AtomicU64, Ordering},
        Arc, Mutex, MutexGuard,
    },
};

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{fence, AtomicBool, AtomicU64, Ordering},
    Arc, Mutex, MutexGuard,
};

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

/// Locks a mutex, ignoring poisoning: the critical sections here never
/// panic half-way, and a user panic elsewhere must not wedge a channel.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        #[cfg(not(loom))]
        Err(p) => p.into_inner(),
        #[cfg(loom)]
        Err(_) => panic!("poisoned mutex under loom"),
    }
}

/// [`lock`] for a `std::sync::Mutex` that stays std under loom, guarding
/// state the models do not explore.
pub(crate) fn lock_std<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Pads and aligns a value to a cache line pair, so that the producer's and
/// the consumer's index never share a line (128 bytes also covers the
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
