//! Inline runs: awaiting a task that this thread would run soon anyway (it
//! was just spawned or woken here and has not started) runs it right there,
//! inside the await (`JoinHandle::poll` -> `run_inline_if_next`): on a
//! worker only for a `Fork` (the caller asked for it), on the current-thread
//! runtime for every await (nobody could see the difference).
//!
//! Inline runs nest: an inlined task awaiting its own fresh child runs that
//! child inline too, so a fork-join tree or a chain of stages awaiting each
//! other runs depth first on the stack, each task polled once. The nesting
//! is bounded by the stack it uses, not by a count: the first inline run
//! notes the stack pointer, and a nested one is refused (the await suspends
//! as usual) once the stack has grown by `budget` bytes since. A count would
//! either cut chains short (a chain a little longer than the count has most
//! of its stages suspend, which costs more than inlining none) or trust
//! every poll frame to be small.
//!
//! Invariants:
//! - `outermost_sp` is 0 outside inline runs, else the stack pointer noted by
//!   the outermost one; it is restored on the way out of each run (a task's
//!   panic is caught inside `Notified::run`, so nothing unwinds through here).
//! - Stacks grow downwards (on every target Rust has threads for).
//! - `stack_pointer` reads the real register where it can: under
//!   AddressSanitizer a local's address may lie in a heap-allocated fake frame.

use crate::task::Notified;
use std::cell::Cell;

/// Stack an inline nest may use: an eighth of a 2 MiB worker stack.
const DEFAULT_BUDGET: usize = 256 * 1024;

pub(crate) struct InlineRuns {
    outermost_sp: Cell<usize>,
    budget: usize,
}

impl InlineRuns {
    /// `stack_size`: the thread's stack, or what is left of it, when known
    /// (the budget is then at most an eighth of it).
    pub(crate) fn new(stack_size: Option<usize>) -> InlineRuns {
        InlineRuns {
            outermost_sp: Cell::new(0),
            budget: stack_size.map_or(DEFAULT_BUDGET, |s| (s / 8).min(DEFAULT_BUDGET)),
        }
    }

    /// Whether one more nested run fits.
    pub(crate) fn has_room(&self) -> bool {
        let outermost = self.outermost_sp.get();
        outermost == 0 || outermost.saturating_sub(stack_pointer()) < self.budget
    }

    /// Runs `task` here for its awaiting `JoinHandle`, as one (possibly
    /// nested) inline run; `true` when the output was written to `dst` and
    /// the cell freed (`Notified::run_joined`).
    ///
    /// # Safety
    /// As `Notified::run_joined`.
    pub(crate) unsafe fn run_joined(&self, task: Notified, dst: *mut ()) -> bool {
        let outermost = self.outermost_sp.get();
        if outermost == 0 {
            self.outermost_sp.set(stack_pointer());
        }
        // SAFETY: forwarded from the caller.
        let joined = unsafe { task.run_joined(dst) };
        self.outermost_sp.set(outermost);
        joined
    }
}

/// What is left of this thread's stack below the caller's frame, where the
/// platform says: for a `block_on` on a thread the runtime did not make,
/// whose stack may be small. The stack's bounds are looked up once a thread
/// (for the main thread glibc reads `/proc/self/maps`), a failed lookup
/// included; `None` where they are unknown, or where the caller runs on
/// another stack than the thread's own (a coroutine's, a signal stack).
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
pub(crate) fn stack_left() -> Option<usize> {
    thread_local! {
        /// The thread's stack as `low..high`, once looked up; `None` inside
        /// if the lookup failed.
        static BOUNDS: Cell<Option<Option<(usize, usize)>>> = const { Cell::new(None) };
    }
    let bounds = BOUNDS.with(|b| match b.get() {
        Some(known) => known,
        None => {
            let found = stack_bounds();
            b.set(Some(found));
            found
        }
    });
    let (low, high) = bounds?;
    let sp = stack_pointer();
    (low..high).contains(&sp).then(|| sp - low)
}

#[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
pub(crate) fn stack_left() -> Option<usize> {
    None
}

/// This thread's stack, `(lowest address, one past the highest)`
/// (`pthread_getattr_np`).
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
fn stack_bounds() -> Option<(usize, usize)> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: `pthread_getattr_np` initialises `attr` when it returns 0,
    // and only then is it read, and destroyed once.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        let low = addr as usize;
        (got == 0).then_some((low, low.checked_add(size)?))
    }
}

/// The stack pointer register, where we can read it.
///
/// Not the address of a local: AddressSanitizer's use-after-return check
/// moves locals to heap-allocated fake frames, whose addresses say nothing
/// of stack depth (inline runs were then refused at random).
#[cfg(all(not(miri), target_arch = "x86_64"))]
#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: copies the stack pointer register into a local; reads and
    // writes no memory, leaves the flags and the stack as they were.
    unsafe {
        std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags))
    };
    sp
}

#[cfg(all(not(miri), target_arch = "aarch64"))]
#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: as above (`sp` copied into a general register).
    unsafe { std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

/// Elsewhere (and under miri, which runs no assembly): about where the stack
/// is, as the address of a local.
#[cfg(any(miri, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::ptr::from_ref(std::hint::black_box(&marker)).addr()
}
