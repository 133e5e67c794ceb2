//! The slot a worker thread lends its core through while a task runs, so
//! that the monitor (`monitor.rs`) can take the core away from a thread
//! stuck in a poll and hand it to a fresh thread (Go's sysmon retaking a P
//! from an M in a syscall), and `block_in_place` can give it away.
//!
//! One `AtomicPtr<Core>` per worker *thread* (not per core index: a thread
//! that lost its core keeps its own, now empty, slot, and can never take
//! the replacement thread's core by mistake):
//!
//! ```text
//! null  --lend (owner thread, Release store)--> core
//! core  --take (owner thread, swap)-----------> null   the owner uses it, then lends it again
//! core  --take (monitor / block_in_place)-----> null   the core now belongs to a new thread
//! ```
//!
//! Whoever swaps a non-null pointer out owns the core: exactly one party
//! can. The owner thread finding null where it lent its core has lost it:
//! everything it schedules from then on goes through the injector, and its
//! run loop ends after the current poll.

use super::multi_thread::Core;
use crate::loom::{AtomicPtr, Ordering::*, ReleaseStore};
use std::ptr;

pub(crate) struct Lent {
    core: AtomicPtr<Core>,
    /// The owner thread's OS id (Linux), for the monitor to ask how much
    /// CPU it is using; 0 where unknown.
    tid: i32,
}

impl Lent {
    /// A slot for the calling thread.
    pub(crate) fn new() -> Lent {
        Lent {
            core: AtomicPtr::new(ptr::null_mut()),
            tid: current_tid(),
        }
    }

    /// The owner thread's CPU time so far and whether it is runnable now
    /// (Linux); `None` where unknown.
    pub(crate) fn owner_activity(&self) -> Option<Activity> {
        thread_activity(self.tid)
    }

    /// Puts the core in the slot (only the owner thread, only when empty).
    /// A Release store (`ReleaseStore`): only the owner writes non-null
    /// here, and a racing `take` is an RMW, which finds the core or the
    /// owner's earlier null, never anything in between. One locked
    /// instruction less per poll and per local schedule than a swap.
    pub(crate) fn lend(&self, core: Box<Core>) {
        debug_assert!(
            self.core.load(Relaxed).is_null(),
            "lent a core over another"
        );
        self.core.release_store(Box::into_raw(core));
    }

    /// Takes the core out, if it is there.
    pub(crate) fn take(&self) -> Option<Box<Core>> {
        let p = self.core.swap(ptr::null_mut(), AcqRel);
        // AcqRel: the lender's writes to the core happen before our use of it.
        // SAFETY: non-null came from `Box::into_raw` in `lend`; the swap made us its only owner.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }

    /// Whether a core is lent now (the monitor's cheap check).
    pub(crate) fn is_lent(&self) -> bool {
        !self.core.load(Relaxed).is_null()
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        drop(self.take()); // a core left behind is dropped (its tasks cancelled)
    }
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
fn current_tid() -> i32 {
    0
}

/// What the monitor samples of a thread stuck in a poll.
#[derive(Clone, Copy)]
pub(crate) struct Activity {
    /// ns it has run on a CPU, up to date (its thread CPU clock).
    /// `/proc/.../schedstat` would not do: a running thread's figure there
    /// moves only at scheduler ticks, so a busy poll sampled twice within a
    /// tick looked blocked and was handed off (dozens of times a run).
    pub(crate) cpu_ns: u64,
    /// On a CPU or waiting in a run queue for one (state `R` in
    /// `/proc/self/task/<tid>/stat`), as opposed to blocked.
    pub(crate) runnable: bool,
}

#[cfg(all(target_os = "linux", not(loom), not(miri)))]
fn thread_activity(tid: i32) -> Option<Activity> {
    if tid == 0 {
        return None;
    }
    // The clock id of thread `tid`'s CPU clock: Linux's
    // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), as glibc's
    // `pthread_getcpuclockid` builds it; readable for threads of this process.
    let clock = ((!(tid as u32)) << 3) as libc::clockid_t | 6;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; a bad clock id only fails.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    let cpu_ns = (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64);
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // The state follows the command name, which is in parentheses and may
    // itself hold spaces or parentheses: split after the last ')'.
    let state = stat.rsplit_once(')')?.1.split_whitespace().next()?;
    Some(Activity {
        cpu_ns,
        runnable: state == "R",
    })
}

#[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
fn thread_activity(_tid: i32) -> Option<Activity> {
    None
}
