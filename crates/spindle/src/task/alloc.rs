//! Task memory: task cells come from a slab (`slab.rs`), each thread
//! drawing on its own magazines, in front of the global allocator.
//!
//! Spawn-heavy programs allocate and free a cell per task, often a million
//! of them alive at once; glibc's malloc and free were about a third of the
//! instructions of spawning and joining an empty task (callgrind, spawn_1m),
//! and its 16-byte chunk header made an 80-byte cell cost 96.
//!
//! Invariants:
//! - A block from [`alloc`] is freed with [`dealloc`] and the same layout,
//!   on any thread: a thread's magazines take blocks of any thread, and a
//!   thread that is exiting (its magazines gone) uses the depot directly.
//! - Cells larger than the slab's largest class or aligned beyond it, and
//!   every cell under loom or with `--cfg spindle_malloc_cells` (the
//!   AddressSanitizer stage, so that it sees each cell's lifetime), are
//!   global allocations of their own.
//! - The slab never returns memory (`slab.rs`): what tasks took at their
//!   peak stays for later tasks.

use std::alloc::Layout;
use std::ptr::NonNull;

#[cfg(not(any(loom, spindle_malloc_cells)))]
mod thread {
    use super::super::slab::{Depot, Magazines};
    use std::cell::UnsafeCell;
    use std::ptr::NonNull;

    pub(super) static DEPOT: Depot = Depot::new();

    thread_local! {
        /// Flushed into the depot when the thread exits (`Magazines::drop`).
        static SLAB: UnsafeCell<Magazines<'static>> = const {
            UnsafeCell::new(Magazines::new(&DEPOT))
        };
    }

    #[inline]
    pub(super) fn alloc(class: usize) -> NonNull<u8> {
        SLAB.try_with(|t| {
            // SAFETY: thread-local, and `alloc` does not re-enter the slab
            // (the depot's own bookkeeping uses the global allocator).
            unsafe { &mut *t.get() }.alloc(class)
        })
        .unwrap_or_else(|_| DEPOT.alloc_unowned(class))
    }

    /// # Safety
    /// As `Magazines::free`.
    #[inline]
    pub(super) unsafe fn free(class: usize, block: NonNull<u8>) {
        let kept = SLAB.try_with(|t| {
            // SAFETY: as in `alloc`; the caller hands over a block of `class`.
            unsafe { (*t.get()).free(class, block) }
        });
        if kept.is_err() {
            // SAFETY: as above.
            unsafe { DEPOT.free_unowned(class, block) }
        }
    }
}

/// Allocates a block for `layout`.
#[inline]
pub(crate) fn alloc(layout: Layout) -> NonNull<u8> {
    #[cfg(not(any(loom, spindle_malloc_cells)))]
    if let Some(class) = super::slab::class_of(layout) {
        return thread::alloc(class);
    }
    // SAFETY: task cells are never zero-sized (they hold a header).
    let p = unsafe { std::alloc::alloc(layout) };
    NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
}

/// Frees a block from [`alloc`] with the same `layout`.
///
/// # Safety
/// `ptr` came from `alloc(layout)` and is not used afterwards.
#[inline]
pub(crate) unsafe fn dealloc(ptr: NonNull<u8>, layout: Layout) {
    #[cfg(not(any(loom, spindle_malloc_cells)))]
    if let Some(class) = super::slab::class_of(layout) {
        // SAFETY: `alloc` served this layout from the slab, class `class`.
        return unsafe { thread::free(class, ptr) };
    }
    // SAFETY: `alloc` took this block from the global allocator with this
    // layout (the caller's contract).
    unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) }
}

#[cfg(all(test, not(any(loom, spindle_malloc_cells))))]
mod tests {
    use super::*;

    #[test]
    fn a_freed_cell_is_reused_on_this_thread_by_any_size_of_its_class() {
        let l = Layout::from_size_align(80, 8).unwrap();
        let a = alloc(l);
        // SAFETY: `a` came from alloc(l) and is not used again.
        unsafe { dealloc(a, l) };
        let l2 = Layout::from_size_align(73, 8).unwrap(); // same class (rounds to 80)
        let b = alloc(l2);
        assert_eq!(a, b);
        // SAFETY: as above.
        unsafe { dealloc(b, l2) };
    }

    #[test]
    fn large_cells_bypass_the_slab() {
        let l = Layout::from_size_align(4096, 8).unwrap();
        let a = alloc(l);
        // SAFETY: a 4096-byte block of ours.
        unsafe { a.as_ptr().write_bytes(7, 4096) };
        // SAFETY: from alloc(l), not used again.
        unsafe { dealloc(a, l) };
    }
}
