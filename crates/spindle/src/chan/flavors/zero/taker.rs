//! A taker of the rendezvous channel: a parked receive's boxed cell, which
//! a sender fills under the lock and the receive drains without it
//! (`mod.rs`, "Drained without the lock").

use std::ptr::NonNull;
use std::task::Waker;

use crate::loom::{AtomicUsize, Ordering, UnsafeCell};

/// A taker's value and state, boxed so that its address outlives the
/// growth of `takers` ("Drained without the lock"). `state` is one of:
/// - `FREE`: on `free_takers`; no value, no receive.
/// - `WAITING`: in `takers_waiting`; a receive is parked, `value` is `None`.
/// - `FILLED`: in `handed`; a sender put its value in, the owner has yet to
///   take it. Only the owner reads `value` or changes the state from here.
/// - `DRAINED`: in `handed`; the owner took the value (`None` again) and
///   gave up the key; reclaimed under the lock by the next `park_taker`.
///
/// Every change but the owner's `FILLED` -> `DRAINED` is made under the lock.
pub(super) struct TakerCell<T> {
    pub(super) value: UnsafeCell<Option<T>>,
    pub(super) state: AtomicUsize,
}

pub(super) const FREE: usize = 0;
pub(super) const WAITING: usize = 1;
pub(super) const FILLED: usize = 2;
pub(super) const DRAINED: usize = 3;

impl<T> TakerCell<T> {
    /// The owner's take of a filled taker's value, with or without the
    /// lock; `None` while the taker is not `FILLED`.
    #[inline(always)]
    pub(super) fn drain(&self) -> Option<T> {
        // Acquire: pairs with `give`'s Release store of `FILLED`.
        if self.state.load(Ordering::Acquire) != FILLED {
            return None;
        }
        // SAFETY: `FILLED` seen (Acquire) after the sender's write; only the
        // owner, the caller, touches the value until `DRAINED` (`mod.rs`,
        // "Drained without the lock").
        let v = self.value.with_mut(|p| unsafe { (*p).take() });
        // Release: the move out happens before a reclaim that sees it.
        self.state.store(DRAINED, Ordering::Release);
        debug_assert!(v.is_some(), "a filled taker holds a value");
        v
    }

    /// The state, read under the lock.
    pub(super) fn state(&self) -> usize {
        // Acquire: a `DRAINED` written without the lock orders the owner's
        // move before this reader's reuse of the cell.
        self.state.load(Ordering::Acquire)
    }
}

/// A taker: its cell, owned as a `Box` would own it but held raw, so that
/// the addresses mirrored in `Channel::cells` stay valid however the
/// `Taker` moves (a moved `Box` would claim unique access), and the
/// parked receive's waker, touched only under the lock.
pub(super) struct Taker<T> {
    pub(super) cell: NonNull<TakerCell<T>>,
    pub(super) waker: Option<Waker>,
}

// SAFETY: a `Taker` owns its cell as a `Box<TakerCell<T>>` would, and the
// cell holds at most one `T`: sending the taker sends that value.
unsafe impl<T: Send> Send for Taker<T> {}

impl<T> Taker<T> {
    pub(super) fn new() -> Self {
        let cell = Box::new(TakerCell {
            value: UnsafeCell::new(None),
            state: AtomicUsize::new(FREE),
        });
        Taker {
            cell: NonNull::from(Box::leak(cell)),
            waker: None,
        }
    }

    pub(super) fn cell(&self) -> &TakerCell<T> {
        // SAFETY: the cell lives until this taker drops (`Drop` below).
        unsafe { self.cell.as_ref() }
    }
}

impl<T> Drop for Taker<T> {
    fn drop(&mut self) {
        // SAFETY: made by `Box::leak` in `new`, freed only here; the channel
        // (and so every reader of the mirrored address) is being dropped.
        drop(unsafe { Box::from_raw(self.cell.as_ptr()) });
    }
}
