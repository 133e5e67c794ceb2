//! A spin lock for the channels' short critical sections.
//!
//! Taking it is one CAS; giving it back is a plain Release store, where a
//! futex mutex (`std::sync::Mutex`) must swap on unlock to learn whether a
//! waiter sleeps in the kernel: one locked instruction per hold instead of
//! two (a rendezvous round trip takes six holds). The price: a waiter never
//! sleeps in the kernel; it spins, then yields its thread (`Backoff`). So a
//! hold must stay short and never wait for anything: the rendezvous
//! channel's holds only move values, wakers and keys (a waker's `clone`
//! runs inside; every `wake` runs after the release).
//!
//! # Invariants
//! - `locked` is true exactly while a [`SpinGuard`] exists, and the guard
//!   is the only way to `value`.
//! - The CAS that takes the lock (Acquire) reads the store that last gave
//!   it back (Release): everything done under one hold happens-before the
//!   next hold.
//!
//! Under loom the release is a swap (`crate::loom::ReleaseStore`), and the
//! model below checks the lock itself. The channel models lock loom's own
//! mutex instead ([`ChanLock`]): it has the same contract (one holder at a
//! time; each hold happens-before the next), and loom, bounding
//! preemptions, can wedge a model on a spinning waiter whose holder it will
//! not switch back to ("exceeded maximum number of branches").

use std::ops::{Deref, DerefMut};

use crate::chan::backoff::Backoff;
use crate::loom::{AtomicBool, Ordering, ReleaseStore, UnsafeCell};

/// The lock the channel flavors take: the spin lock, or loom's mutex in
/// the models (module docs).
#[cfg(not(loom))]
pub(crate) type ChanLock<T> = SpinLock<T>;

#[cfg(loom)]
pub(crate) struct ChanLock<T>(crate::loom::Mutex<T>);

#[cfg(loom)]
impl<T> ChanLock<T> {
    pub(crate) fn new(value: T) -> Self {
        ChanLock(crate::loom::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> crate::loom::MutexGuard<'_, T> {
        crate::loom::lock(&self.0)
    }
}

// Under loom only the spin lock's own model uses it.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands `value` to one thread at a time (module
// invariants), so sharing the lock moves `T` between threads: `T: Send`.
unsafe impl<T: Send> Sync for SpinLock<T> {}

/// Access to the locked value; dropping it gives the lock back.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
    value: *mut T,
}

#[cfg_attr(loom, allow(dead_code))]
impl<T> SpinLock<T> {
    pub(crate) fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock, spinning (then yielding) while another thread holds it.
    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        if self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        SpinGuard {
            lock: self,
            value: self.value.with_mut(|p| p),
        }
    }

    #[cold]
    fn lock_contended(&self) {
        let mut backoff = Backoff::new();
        loop {
            // Read-only while held: waiters do not fight over the line.
            // (Not under loom, whose relaxed loads may keep returning the
            // stale `true` and run a model out of branches: there each try
            // is the CAS, an RMW, which reads the latest value.)
            #[cfg(not(loom))]
            while self.locked.load(Ordering::Relaxed) {
                backoff.snooze();
            }
            if self
                .locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            #[cfg(loom)]
            backoff.snooze();
        }
    }
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock: no other access to the value.
        unsafe { &*self.value }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this access unique.
        unsafe { &mut *self.value }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.release_store(false);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::SpinLock;
    use std::sync::Arc;

    #[test]
    fn holds_exclude_each_other() {
        // Non-atomic read-modify-writes under the lock from four threads:
        // any overlap of two holds loses an increment.
        let iters = if cfg!(miri) { 200 } else { 20_000 };
        let lock = Arc::new(SpinLock::new((0u64, false)));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..iters {
                        let mut g = lock.lock();
                        assert!(!g.1, "two holders at once");
                        g.1 = true;
                        let n = g.0;
                        std::hint::black_box(&mut *g);
                        g.0 = n + 1;
                        g.1 = false;
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(lock.lock().0, 4 * iters);
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::SpinLock;
    use crate::loom::{Arc, AtomicUsize, Ordering::Relaxed};
    use loom::thread;

    /// Two threads take the lock: never both inside (checked on a counter
    /// loom interleaves), and each hold's access to the value happens-before
    /// the next one's (loom checks the cell's accesses for races).
    #[test]
    fn two_holds_never_overlap() {
        loom::model(|| {
            let lock = Arc::new(SpinLock::new(0u32));
            let inside = Arc::new(AtomicUsize::new(0));
            let hold = |lock: &SpinLock<u32>, inside: &AtomicUsize| {
                let mut g = lock.lock();
                assert_eq!(inside.fetch_add(1, Relaxed), 0, "two holders at once");
                *g += 1;
                inside.fetch_sub(1, Relaxed);
            };
            let other = {
                let (lock, inside) = (lock.clone(), inside.clone());
                thread::spawn(move || hold(&lock, &inside))
            };
            hold(&lock, &inside);
            other.join().unwrap();
            assert_eq!(*lock.lock(), 2);
        });
    }
}
