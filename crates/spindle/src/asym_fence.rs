//! An asymmetric fence (`light`, `heavy`): a cheap side for the hot path
//! and an expensive side for the rare one, which together order as two
//! `SeqCst` fences would.
//!
//! A worker borrows its own core many times a poll (every spawn, every wake
//! it queues, every inline run); the monitor takes a core from a stuck
//! thread a few times a run at most (`core_slot.rs`). Their handshake is
//! Dekker's: each writes its own flag, then reads the other's. That needs a
//! StoreLoad barrier on both sides, which on x86 is a locked instruction on
//! every borrow. With Linux's `membarrier(PRIVATE_EXPEDITED)` the rare side
//! pays instead: the syscall runs a full memory barrier on every CPU
//! that runs a thread of this process (an IPI; a thread not running has
//! been through a context switch, itself a full barrier), so any point of
//! the borrower's program order lies either before that barrier or after
//! it, which is all the borrower's `SeqCst` fence would have given. The
//! borrower then needs only a compiler fence, so that the compiler keeps
//! its store before its load.
//!
//! The bounded ring's owned claim words (`chan/flavors/bias.rs`) use the
//! same pair: the owner's plain claims are the hot side, a revocation the
//! rare one.
//!
//! The membarrier path is used once the process registered for it
//! (`register`, at runtime build; Linux 4.14+). Before that, where the
//! kernel refuses it, under loom (which models fences, not IPIs) and under
//! miri (no such syscall), both sides are `SeqCst` fences. `REGISTERED`
//! only goes from false to true, after the kernel accepted: a borrower that
//! still read false used a full fence, which is only stronger.

use crate::loom::{fence, Ordering::SeqCst};
#[cfg(all(target_os = "linux", not(loom), not(miri)))]
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// `MEMBARRIER_CMD_PRIVATE_EXPEDITED` and its registration (linux/membarrier.h).
#[cfg(all(target_os = "linux", not(loom), not(miri)))]
const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
#[cfg(all(target_os = "linux", not(loom), not(miri)))]
const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
fn membarrier(cmd: libc::c_long) -> bool {
    // SAFETY: membarrier takes two integers and touches no memory of ours.
    unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            cmd,
            0 as libc::c_long,
            0 as libc::c_long,
        ) == 0
    }
}

/// Lets `heavy` use membarrier from now on, if the kernel agrees. Idempotent.
pub(crate) fn register() {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    if !REGISTERED.load(Relaxed) && membarrier(REGISTER_PRIVATE_EXPEDITED) {
        REGISTERED.store(true, Relaxed);
    }
}

/// Whether [`light`] is only a compiler fence now (the process registered
/// for membarrier): where it is a full fence, a protocol that trades a
/// locked instruction on its hot path for it gains nothing.
pub(crate) fn light_is_cheap() -> bool {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    return REGISTERED.load(Relaxed);
    #[allow(unreachable_code)]
    false
}

/// The hot side: between the borrower's store to its own flag and its load
/// of the other side's.
#[inline(always)]
pub(crate) fn light() {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    if REGISTERED.load(Relaxed) {
        std::sync::atomic::compiler_fence(SeqCst);
        return;
    }
    fence(SeqCst);
}

/// The rare side: between the taker's write and its read of the borrower's flag.
///
/// It tries membarrier whatever `REGISTERED` says: a borrower can only have
/// read `true` after the kernel accepted the registration, and then the
/// call succeeds; where it fails, no borrower skipped its fence.
pub(crate) fn heavy() {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    if membarrier(PRIVATE_EXPEDITED) {
        return;
    }
    fence(SeqCst);
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn both_sides_run_before_and_after_registering() {
        super::light();
        super::heavy();
        super::register();
        super::register();
        super::light();
        super::heavy();
    }
}
