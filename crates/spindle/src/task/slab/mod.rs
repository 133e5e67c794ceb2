//! A size-class slab for task cells: bump-cut blocks, per-thread magazines
//! of free blocks, and a process-wide depot between threads.
//!
//! Memory comes from the global allocator in regions, cut into blocks by a
//! per-thread bump pointer (no per-block header: a 72-byte cell takes 72
//! bytes, not glibc's 80; classes step by 8 bytes). The first `HUGE_AFTER`
//! bytes come in `SMALL_REGION`s, so a program with a few thousand tasks
//! keeps a small footprint; after that each region is one 2 MiB
//! transparent huge page (`HUGE_REGION`, aligned to it and advised with
//! `MADV_HUGEPAGE` on Linux): a million fresh 72-byte cells then take ~36
//! page faults instead of ~18,000, and page faults are a large share of
//! spawn_1m's time otherwise (`docs/profiles.md`). The cost: each thread
//! cutting blocks holds a region tail, which a huge page backs whole on
//! first touch (up to 2 MiB per such thread beyond its blocks). A system
//! whose THP setting is `never` gets small pages in the same regions.
//!
//! Huge pages that come slowly: a virtual machine that hands free 2 MiB
//! blocks back to its host (free page reporting) must have the host back
//! such a block again before the guest can zero it: such a huge page faults
//! in many times more slowly than one the guest still holds, and more
//! slowly than the same 2 MiB of small pages, which cost the same either
//! way (measurements in `docs/profiles.md`). Those slow blocks come in
//! runs: once one huge page was slow, the next ones are too. So the first
//! touch of each huge region is timed (`region`), and one slower than
//! `SLOW_HUGE_FAULT` makes the next `HUGE_BACKOFF` bytes of regions plain
//! ones (not advised, small pages) before huge pages are tried again.
//!
//! A freed block goes on a free stack of its thread and class, linked
//! through the block itself, so free blocks cost nothing beyond themselves.
//!
//! Protocol (Bonwick's magazines): each thread holds two stacks per class,
//! `current`, which allocations pop and frees push, and `spare`.
//! - A free finding `current` full (`BATCH` blocks) makes it the new
//!   `spare`; the old `spare`, if it held blocks, goes to the depot.
//! - An allocation finding `current` empty swaps in `spare` if it holds
//!   blocks, else takes a stack from the depot, else cuts a new block.
//!
//! So a thread touches the depot's lock at most once per `BATCH` operations
//! of a class, and blocks freed on another thread than the one that cut
//! them (a producer spawning, a consumer joining) come back into use
//! through the depot instead of the heap growing forever.
//!
//! Invariants:
//! - A block of class `c` is `class_size(c)` bytes, aligned to
//!   `class_align(c)` (16 for sizes that are multiples of 16, else 8; a
//!   16-aligned layout always maps to a multiple of 16), and
//!   lies in a region or is a global allocation of `class_layout(c)`
//!   (cut when the thread's magazines were already gone), both recorded in
//!   the depot's `owned` list.
//! - A block is in exactly one place: handed out, on one stack of one
//!   thread, or on one stack in the depot. Stacks hold blocks of one class.
//! - `spare` is empty or full; `current` holds at most `BATCH` blocks.
//! - Memory goes back to the global allocator only when a depot is dropped
//!   (test depots; the process's depot lives forever): a program whose
//!   live tasks peak at N keeps N cells' worth of memory for later tasks.
//!   Magazines borrow their depot, so none outlives it.

use crate::loom::lock_std;
use std::alloc::Layout;
use std::mem;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

/// Size classes are multiples of this, which is also every block's least alignment.
const GRANULE: usize = 8;
/// The largest alignment served (blocks of sizes that are multiples of it).
const ALIGN: usize = 16;
/// Larger cells go straight to the global allocator.
const MAX_SIZE: usize = 512;
const CLASSES: usize = MAX_SIZE / GRANULE;
/// Blocks per full stack (the unit moved through the depot).
const BATCH: usize = 128;
/// Bytes per region taken from the global allocator while the slab is small.
const SMALL_REGION: usize = 64 << 10;
/// Bytes (and alignment) per region once the slab holds `HUGE_AFTER` bytes.
const HUGE_REGION: usize = 2 << 20;
/// Bytes of small regions taken before regions become huge pages (less
/// under miri, so that its test of the switch stays quick).
const HUGE_AFTER: usize = if cfg!(miri) { 256 << 10 } else { 4 << 20 };
/// A huge region whose first touch took longer than this came slowly.
const SLOW_HUGE_FAULT: std::time::Duration = std::time::Duration::from_millis(1);
/// Bytes of plain regions taken after a slow huge page, before trying again.
const HUGE_BACKOFF: usize = if cfg!(miri) { 4 << 20 } else { 64 << 20 };

/// The class serving `layout`, if the slab serves it.
#[inline]
pub(super) fn class_of(layout: Layout) -> Option<usize> {
    (layout.size() <= MAX_SIZE && layout.align() <= ALIGN && layout.size() > 0)
        .then(|| layout.size().next_multiple_of(layout.align().max(GRANULE)) / GRANULE - 1)
}

fn class_size(class: usize) -> usize {
    (class + 1) * GRANULE
}

fn class_align(class: usize) -> usize {
    if class_size(class).is_multiple_of(ALIGN) {
        ALIGN
    } else {
        GRANULE
    }
}

fn class_layout(class: usize) -> Layout {
    Layout::from_size_align(class_size(class), class_align(class)).expect("valid class layout")
}

fn global_alloc(layout: Layout) -> NonNull<u8> {
    // SAFETY: every layout asked for here has a non-zero size.
    let p = unsafe { std::alloc::alloc(layout) };
    NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
}

/// Asks the kernel to back `len` bytes at `start` (a region aligned to
/// `HUGE_REGION`) with transparent huge pages. Only advice: an error (a
/// kernel without THP) leaves small pages.
fn advise_huge_page(start: NonNull<u8>, len: usize) {
    advise(start, len, true)
}

/// Asks for small pages on a region that huge pages would otherwise back
/// (a system whose THP setting is `always`): the back-off after a slow one.
fn advise_small_pages(start: NonNull<u8>, len: usize) {
    advise(start, len, false)
}

fn advise(start: NonNull<u8>, len: usize, huge: bool) {
    #[cfg(all(target_os = "linux", not(miri), not(loom)))]
    // SAFETY: madvise only changes how the kernel backs this range, which is
    // ours (a fresh allocation) and holds no data yet.
    unsafe {
        let advice = if huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        libc::madvise(start.as_ptr().cast(), len, advice);
    }
    #[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
    let _ = (start, len, huge);
}

/// Touches the first byte of a fresh huge region (faulting its page in)
/// and says whether that took longer than `SLOW_HUGE_FAULT` (module docs).
fn first_touch_is_slow(start: NonNull<u8>) -> bool {
    #[cfg(not(miri))]
    {
        let t = std::time::Instant::now();
        // SAFETY: the region is ours, fresh, and at least a byte long; no
        // block of it is handed out yet.
        unsafe { start.as_ptr().write_volatile(0) };
        t.elapsed() > SLOW_HUGE_FAULT
    }
    #[cfg(miri)]
    {
        let _ = start;
        false
    }
}

/// A free block: its first word links to the next free block of its stack.
struct FreeBlock {
    next: *mut FreeBlock,
}

/// An intrusive stack of free blocks of one class.
struct Stack {
    head: *mut FreeBlock,
    len: usize,
}

// SAFETY: a stack owns its blocks exclusively (module invariant), so moving
// it to another thread moves that ownership with it.
unsafe impl Send for Stack {}

impl Stack {
    const EMPTY: Stack = Stack {
        head: ptr::null_mut(),
        len: 0,
    };

    /// # Safety
    /// `block` is a free block of this stack's class, owned by the caller.
    #[inline]
    unsafe fn push(&mut self, block: NonNull<u8>) {
        let b = block.cast::<FreeBlock>();
        // SAFETY: the block is at least GRANULE bytes, aligned to at least
        // GRANULE (a link's size and alignment), and ours to write (the
        // caller's contract).
        unsafe { b.as_ptr().write(FreeBlock { next: self.head }) };
        self.head = b.as_ptr();
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<NonNull<u8>> {
        let b = NonNull::new(self.head)?;
        // SAFETY: every block on a stack is free, owned by the stack, and
        // starts with the link `push` wrote.
        self.head = unsafe { b.as_ptr().read().next };
        self.len -= 1;
        Some(b.cast())
    }
}

/// The unused tail of a region: `next..end`.
struct Bump {
    next: *mut u8,
    end: *mut u8,
}

// SAFETY: the range is owned by whoever holds the `Bump` (module invariant).
unsafe impl Send for Bump {}

impl Bump {
    const EMPTY: Bump = Bump {
        next: ptr::null_mut(),
        end: ptr::null_mut(),
    };

    fn room(&self) -> usize {
        self.end.addr() - self.next.addr()
    }
}

/// What threads share: full stacks by class, leftover region tails, and
/// every allocation the slab ever took.
pub(super) struct Depot {
    full: [Mutex<Vec<Stack>>; CLASSES],
    /// `full[c].len()`, written under that lock and read without it, so an
    /// allocation cutting fresh blocks (no frees yet: every spawn of a
    /// spawn burst) skips the lock. Only a hint: a stale zero cuts a block
    /// while a stack waits (it is taken next time), a stale count takes the
    /// lock and finds none.
    stocked: [AtomicUsize; CLASSES],
    tails: Mutex<Vec<Bump>>,
    owned: Mutex<Vec<(OwnedPtr, Layout)>>,
    /// Bytes of regions taken so far (only `region` adds to it).
    regions: AtomicUsize,
    /// Regions stay plain until `regions` reaches this (set after a slow
    /// huge page: module docs).
    plain_until: AtomicUsize,
}

struct OwnedPtr(NonNull<u8>);

// SAFETY: only an address kept for `Depot::drop`; never read through.
unsafe impl Send for OwnedPtr {}

impl Depot {
    pub(super) const fn new() -> Depot {
        Depot {
            full: [const { Mutex::new(Vec::new()) }; CLASSES],
            stocked: [const { AtomicUsize::new(0) }; CLASSES],
            tails: Mutex::new(Vec::new()),
            owned: Mutex::new(Vec::new()),
            regions: AtomicUsize::new(0),
            plain_until: AtomicUsize::new(0),
        }
    }

    fn take(&self, class: usize) -> Option<Stack> {
        if self.stocked[class].load(Relaxed) == 0 {
            return None;
        }
        let mut full = lock_std(&self.full[class]);
        let stack = full.pop();
        self.stocked[class].store(full.len(), Relaxed);
        stack
    }

    fn give(&self, class: usize, stack: Stack) {
        debug_assert!(stack.len > 0);
        let mut full = lock_std(&self.full[class]);
        full.push(stack);
        self.stocked[class].store(full.len(), Relaxed);
    }

    fn global(&self, layout: Layout) -> NonNull<u8> {
        let p = global_alloc(layout);
        lock_std(&self.owned).push((OwnedPtr(p), layout));
        p
    }

    fn region(&self) -> Bump {
        if let Some(tail) = lock_std(&self.tails).pop() {
            return tail;
        }
        // Two threads may both see the slab just under `HUGE_AFTER`: one
        // more small region than planned, which is harmless (as is a race
        // on `plain_until`: one region more or less of either kind).
        let taken = self.regions.load(Relaxed);
        let (size, align, huge) = if taken < HUGE_AFTER {
            (SMALL_REGION, ALIGN, false)
        } else if taken < self.plain_until.load(Relaxed) {
            (HUGE_REGION, ALIGN, false)
        } else {
            (HUGE_REGION, HUGE_REGION, true)
        };
        let start = self.global(Layout::from_size_align(size, align).expect("region layout"));
        if huge {
            advise_huge_page(start, size);
            if first_touch_is_slow(start) {
                self.saw_slow_huge_page(taken);
            }
        } else if size == HUGE_REGION {
            advise_small_pages(start, size);
        }
        self.regions.fetch_add(size, Relaxed);
        Bump {
            next: start.as_ptr(),
            // SAFETY: one past the end of the region just allocated.
            end: unsafe { start.as_ptr().add(size) },
        }
    }

    /// A huge region cut when `taken` bytes were out came slowly: plain
    /// regions for the next `HUGE_BACKOFF` bytes.
    fn saw_slow_huge_page(&self, taken: usize) {
        self.plain_until
            .store(taken + HUGE_REGION + HUGE_BACKOFF, Relaxed);
    }

    /// Allocation for a thread whose magazines are gone (it is exiting).
    pub(super) fn alloc_unowned(&self, class: usize) -> NonNull<u8> {
        if let Some(mut stack) = self.take(class) {
            let b = stack.pop().expect("depot stacks are not empty");
            if stack.len > 0 {
                self.give(class, stack);
            }
            return b;
        }
        self.global(class_layout(class))
    }

    /// Free for a thread whose magazines are gone.
    ///
    /// # Safety
    /// As [`Magazines::free`].
    pub(super) unsafe fn free_unowned(&self, class: usize, block: NonNull<u8>) {
        let mut stack = Stack::EMPTY;
        // SAFETY: the caller hands over a block of this class.
        unsafe { stack.push(block) };
        self.give(class, stack);
    }
}

impl Drop for Depot {
    /// Frees all the slab's memory (test depots; magazines borrow their
    /// depot, so none is left). Blocks still handed out dangle from here on.
    fn drop(&mut self) {
        for (p, layout) in self
            .owned
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            // SAFETY: allocated by `Depot::global` with this layout, and no
            // block in it is used any more (the precondition above).
            unsafe { std::alloc::dealloc(p.0.as_ptr(), layout) };
        }
    }
}

/// One thread's free stacks and region tail, drawing on one depot (which
/// outlives them: their blocks are its memory).
pub(super) struct Magazines<'d> {
    depot: &'d Depot,
    current: [Stack; CLASSES],
    spare: [Stack; CLASSES],
    bump: Bump,
}

impl<'d> Magazines<'d> {
    pub(super) const fn new(depot: &'d Depot) -> Magazines<'d> {
        Magazines {
            depot,
            current: [const { Stack::EMPTY }; CLASSES],
            spare: [const { Stack::EMPTY }; CLASSES],
            bump: Bump::EMPTY,
        }
    }

    #[inline]
    pub(super) fn alloc(&mut self, class: usize) -> NonNull<u8> {
        match self.current[class].pop() {
            Some(b) => b,
            None => self.refill(class),
        }
    }

    /// `alloc` with `current` empty.
    #[inline(never)]
    fn refill(&mut self, class: usize) -> NonNull<u8> {
        if self.spare[class].len > 0 {
            mem::swap(&mut self.current[class], &mut self.spare[class]);
        } else if let Some(stack) = self.depot.take(class) {
            self.current[class] = stack;
        } else {
            return self.cut(class);
        }
        self.current[class]
            .pop()
            .expect("a full stack was swapped in")
    }

    /// # Safety
    /// `block` came from an allocation of `class` through this depot (on
    /// any thread) and is not used afterwards.
    #[inline]
    pub(super) unsafe fn free(&mut self, class: usize, block: NonNull<u8>) {
        if self.current[class].len == BATCH {
            self.retire(class);
        }
        // SAFETY: the caller hands over a block of this class.
        unsafe { self.current[class].push(block) };
    }

    /// `free` with `current` full: it becomes the spare.
    #[inline(never)]
    fn retire(&mut self, class: usize) {
        let full = mem::replace(&mut self.current[class], Stack::EMPTY);
        let old = mem::replace(&mut self.spare[class], full);
        if old.len > 0 {
            self.depot.give(class, old);
        }
    }

    /// Cuts a new block from the region tail, skipping up to 8 bytes to
    /// align it, and taking a new region when the tail is too short (its
    /// rest is left unused).
    fn cut(&mut self, class: usize) -> NonNull<u8> {
        let size = class_size(class);
        let mask = class_align(class) - 1;
        if self.bump.room() < (self.bump.next.addr().wrapping_neg() & mask) + size {
            // Regions and kept tails hold at least MAX_SIZE + GRANULE bytes,
            // enough for any block after any pad (pad < GRANULE).
            self.bump = self.depot.region();
        }
        let pad = self.bump.next.addr().wrapping_neg() & mask;
        // SAFETY: `room() >= pad + size` (checked, or a fresh tail: above),
        // so the block and the pointer one past it stay within the region.
        let b = unsafe { self.bump.next.add(pad) };
        // SAFETY: as above.
        self.bump.next = unsafe { b.add(size) };
        NonNull::new(b).expect("regions are not at address zero")
    }
}

impl Drop for Magazines<'_> {
    /// Hands every free block and the region tail to the depot (the
    /// thread is exiting).
    fn drop(&mut self) {
        for class in 0..CLASSES {
            for stack in [&mut self.current[class], &mut self.spare[class]] {
                let stack = mem::replace(stack, Stack::EMPTY);
                if stack.len > 0 {
                    self.depot.give(class, stack);
                }
            }
        }
        let tail = mem::replace(&mut self.bump, Bump::EMPTY);
        // Kept only if any block fits after any alignment pad (`cut`).
        if tail.room() >= MAX_SIZE + GRANULE {
            lock_std(&self.depot.tails).push(tail);
        }
    }
}

#[cfg(test)]
mod tests;
