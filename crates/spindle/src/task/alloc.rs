//! Task memory: a small per-thread cache of freed task cells, by size class,
//! in front of the global allocator.
//!
//! Spawn-heavy programs free a task and allocate the next one on the same
//! worker many times per microsecond; recycling the cell a task just left
//! keeps it in cache and skips the allocator's slower paths (about a third
//! of the instructions of a spawn-and-join with glibc malloc, measured with
//! callgrind on skynet).
//!
//! Invariants:
//! - Only cells of `size <= MAX_CACHED` and `align <= ALIGN` are cached; every
//!   cached block was obtained from the global allocator with the layout of
//!   its class (`class_layout`), whatever the size it served before, so it
//!   can be handed to any request of that class and freed with that layout.
//! - Each thread caches at most `PER_CLASS` blocks per class; the cache is
//!   emptied back to the global allocator when the thread exits.
//! - A block freed on another thread than the one that allocated it simply
//!   joins that thread's cache: the global allocator lets any thread free.
//! - Under loom, everything goes straight to the global allocator.

use std::alloc::Layout;
use std::ptr::NonNull;

/// Size classes are multiples of this, which is also the largest alignment cached.
const ALIGN: usize = 16;
/// 16, not 32: a cell rounds up by at most 15 bytes (a 104-byte sleeping
/// task takes a 112-byte block, not 128; with glibc's header, 128 bytes of
/// heap, not 144).
const GRANULE: usize = 16;
const MAX_CACHED: usize = 512;
#[cfg(not(loom))]
const CLASSES: usize = MAX_CACHED / GRANULE;
/// Blocks kept per class and thread (bursts of spawns before their tasks
/// finish draw on it; at most 2 MiB a thread if every class fills).
#[cfg(not(loom))]
const PER_CLASS: usize = 256;

fn class_of(layout: Layout) -> Option<usize> {
    (layout.size() <= MAX_CACHED && layout.align() <= ALIGN && layout.size() > 0)
        .then(|| layout.size().div_ceil(GRANULE) - 1)
}

fn class_layout(class: usize) -> Layout {
    Layout::from_size_align((class + 1) * GRANULE, ALIGN).expect("valid class layout")
}

#[cfg(not(loom))]
mod cache {
    use super::*;
    use std::cell::UnsafeCell;

    pub(super) struct Cache {
        classes: UnsafeCell<[Vec<NonNull<u8>>; CLASSES]>,
    }

    impl Drop for Cache {
        fn drop(&mut self) {
            for (class, blocks) in self.classes.get_mut().iter_mut().enumerate() {
                for b in blocks.drain(..) {
                    // SAFETY: cached blocks came from the global allocator
                    // with their class layout (module invariant).
                    unsafe { std::alloc::dealloc(b.as_ptr(), class_layout(class)) };
                }
            }
        }
    }

    thread_local! {
        pub(super) static CACHE: Cache = const {
            Cache { classes: UnsafeCell::new([const { Vec::new() }; CLASSES]) }
        };
    }

    /// Runs `f` on this thread's list for `class`; `None` when the thread
    /// is exiting (its cache is gone).
    pub(super) fn with<R>(class: usize, f: impl FnOnce(&mut Vec<NonNull<u8>>) -> R) -> Option<R> {
        CACHE
            .try_with(|c| {
                // SAFETY: the cache is thread-local and `f` cannot re-enter it
                // (it only pushes or pops a pointer).
                let classes = unsafe { &mut *c.classes.get() };
                f(&mut classes[class])
            })
            .ok()
    }
}

/// Allocates a block for `layout`.
pub(crate) fn alloc(layout: Layout) -> NonNull<u8> {
    let Some(class) = class_of(layout) else {
        return global_alloc(layout);
    };
    #[cfg(not(loom))]
    if let Some(Some(b)) = cache::with(class, |v| v.pop()) {
        return b;
    }
    global_alloc(class_layout(class))
}

/// Frees a block from [`alloc`] with the same `layout`.
///
/// # Safety
/// `ptr` came from `alloc(layout)` and is not used afterwards.
pub(crate) unsafe fn dealloc(ptr: NonNull<u8>, layout: Layout) {
    let Some(class) = class_of(layout) else {
        // SAFETY: allocated with exactly this layout (the caller's contract).
        return unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
    };
    #[cfg(not(loom))]
    {
        let kept = cache::with(class, |v| {
            if v.len() < PER_CLASS {
                v.push(ptr);
                true
            } else {
                false
            }
        });
        if kept == Some(true) {
            return;
        }
    }
    // SAFETY: blocks of a class are allocated with the class layout.
    unsafe { std::alloc::dealloc(ptr.as_ptr(), class_layout(class)) }
}

fn global_alloc(layout: Layout) -> NonNull<u8> {
    // SAFETY: task cells are never zero-sized (they hold a header).
    let p = unsafe { std::alloc::alloc(layout) };
    NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_and_large_blocks_bypass() {
        assert_eq!(class_of(Layout::from_size_align(1, 8).unwrap()), Some(0));
        assert_eq!(class_of(Layout::from_size_align(16, 8).unwrap()), Some(0));
        assert_eq!(class_of(Layout::from_size_align(17, 8).unwrap()), Some(1));
        assert_eq!(class_of(Layout::from_size_align(104, 8).unwrap()), Some(6));
        assert_eq!(class_layout(6).size(), 112);
        assert_eq!(
            class_of(Layout::from_size_align(512, 16).unwrap()),
            Some(31)
        );
        assert_eq!(class_of(Layout::from_size_align(513, 8).unwrap()), None);
        assert_eq!(class_of(Layout::from_size_align(64, 64).unwrap()), None);
    }

    #[test]
    fn a_freed_block_is_reused_on_this_thread() {
        let l = Layout::from_size_align(80, 8).unwrap();
        let a = alloc(l);
        // SAFETY: `a` came from alloc(l) and is not used again.
        unsafe { dealloc(a, l) };
        let b = alloc(Layout::from_size_align(72, 8).unwrap()); // same class
        assert_eq!(a, b);
        // SAFETY: as above.
        unsafe { dealloc(b, Layout::from_size_align(72, 8).unwrap()) };
    }
}
