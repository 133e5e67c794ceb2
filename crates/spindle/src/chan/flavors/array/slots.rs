//! The ring's slots: each a message and its stamp (the stamp protocol is
//! in `mod.rs`).
//!
//! # Slot layout
//! A slot holds its message first, then its stamp. Messages of
//! [`LINED_FROM`] bytes or more get slots that start on a cache line
//! ([`Lined`]), so that each message does too: the copies in and out of the
//! ring then start on a line, and move whole aligned 64-byte vectors when
//! the message's size is a multiple of 64, which `memcpy` does faster than
//! unaligned ones (`docs/profiles.md`). The price is padding up to the next
//! line: a 128-byte message's slot takes 192 bytes instead of 136. Smaller
//! messages stay packed, a slot right after the other, where padding would
//! cost more lines than it saves.

use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};
use std::ptr::{self, NonNull};

use crate::loom::{AtomicU64, UnsafeCell};

/// The message first, so that a slot on a cache line has its message there
/// too ("Slot layout").
#[repr(C)]
pub(super) struct Slot<T> {
    pub(super) msg: UnsafeCell<MaybeUninit<T>>,
    pub(super) stamp: AtomicU64,
}

impl<T> Slot<T> {
    fn new(index: u64) -> Self {
        Slot {
            msg: UnsafeCell::new(MaybeUninit::uninit()),
            stamp: AtomicU64::new(2 * index),
        }
    }
}

/// Messages of this many bytes or more get [`Lined`] slots.
const LINED_FROM: usize = 128;

/// A slot that starts on a cache line ("Slot layout").
#[repr(C, align(64))]
struct Lined<T>(Slot<T>);

/// The ring's `cap` slots: a `Box<[Slot<T>]>`, or for messages of
/// [`LINED_FROM`] bytes or more a `Box<[Lined<T>]>`, held by a pointer to
/// the first slot (the choice is a constant of `T`).
pub(super) struct Slots<T> {
    first: NonNull<Slot<T>>,
    cap: usize,
    /// Owns the slots, as the box it was made from did.
    _owns: PhantomData<Slot<T>>,
}

impl<T> Slots<T> {
    const LINED: bool = size_of::<T>() >= LINED_FROM;

    pub(super) fn new(cap: usize) -> Self {
        let first = if Self::LINED {
            let b: Box<[Lined<T>]> = (0..cap as u64).map(|i| Lined(Slot::new(i))).collect();
            NonNull::from(Box::leak(b)).cast()
        } else {
            let b: Box<[Slot<T>]> = (0..cap as u64).map(Slot::new).collect();
            NonNull::from(Box::leak(b)).cast()
        };
        Slots {
            first,
            cap,
            _owns: PhantomData,
        }
    }

    /// Slot `index`, below `cap`.
    ///
    /// # Safety
    /// `index < cap`.
    #[inline(always)]
    pub(super) unsafe fn get_unchecked(&self, index: usize) -> &Slot<T> {
        debug_assert!(index < self.cap);
        // A `Lined` is `repr(C)`, its slot at offset 0.
        // SAFETY: `first` points to `cap` live slots of the type `LINED`
        // picks (`new`); the caller keeps `index` below `cap`.
        unsafe {
            if Self::LINED {
                &(*self.first.cast::<Lined<T>>().as_ptr().add(index)).0
            } else {
                &*self.first.as_ptr().add(index)
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
impl<T> Slots<T> {
    /// Slot `index`, bounds checked.
    pub(super) fn get(&self, index: usize) -> &Slot<T> {
        assert!(index < self.cap);
        // SAFETY: checked just above.
        unsafe { self.get_unchecked(index) }
    }
}

impl<T> Drop for Slots<T> {
    fn drop(&mut self) {
        // Frees the slots (their stamps; messages are the ring's to drop,
        // `MaybeUninit` drops nothing).
        // SAFETY: `first` and `cap` are the boxed slice `new` leaked, of the
        // type `LINED` picks; rebuilt and freed once, here.
        unsafe {
            if Self::LINED {
                let all =
                    ptr::slice_from_raw_parts_mut(self.first.cast::<Lined<T>>().as_ptr(), self.cap);
                drop(Box::from_raw(all));
            } else {
                let all = ptr::slice_from_raw_parts_mut(self.first.as_ptr(), self.cap);
                drop(Box::from_raw(all));
            }
        }
    }
}
