//! `CoreSlot`: the slot a worker thread lends its core through while a
//! task runs, so that the monitor (`monitor.rs`) can take the core away
//! from a thread stuck in a poll and hand it to a fresh thread (Go's
//! sysmon retaking a P from an M in a syscall), and `block_in_place` can
//! give it away.
//!
//! One `AtomicPtr<Core>` per worker *thread* (not per core index: a thread
//! that lost its core keeps its own, now empty, slot, and can never take
//! the replacement thread's core by mistake):
//!
//! ```text
//! null  --lend (owner thread, Release store)-----------> core
//! core  --take (owner thread, swap)---------------------> null   the run loop has it back
//! core  --take_away (monitor / block_in_place, swap)----> null   the core goes to a new thread
//! core  --borrow (owner thread, busy flag)-------------> core   used in place, stays lent
//! ```
//!
//! Whoever swaps a non-null pointer out owns the core: exactly one party
//! can. The owner thread finding null where it lent its core has lost it:
//! everything it schedules from then on goes through the injector, and its
//! run loop ends after the current poll.
//!
//! **Borrows.** Inside a poll the owner uses its lent core for a moment at
//! every spawn, local wake and inline run, and it leaves the core lent,
//! so the monitor can still take it if the poll then blocks. A borrow is
//! Dekker's handshake with `take_away`, not a swap out and a store back
//! (one locked instruction fewer per spawn and per wake):
//!
//! ```text
//! borrow:     busy := true;  asym_fence::light();  read core
//!             (null: lost, busy := false)
//!             ... use the core ...;  busy := false (Release)
//! take_away:  swap core := null;  asym_fence::heavy();
//!             wait while busy (Acquire)
//! ```
//!
//! The two fences (`asym_fence.rs`: a compiler fence against a membarrier,
//! or two `SeqCst` fences) order the pairs of write-then-read, so at least one
//! side sees the other's write: the borrow reads null, or the taker sees
//! `busy` and waits for the borrow to end, whose Release makes its writes
//! to the core visible to the taker. A borrow never holds a borrow (one
//! asked for inside another is refused, so `busy` is one flag), and it
//! runs no task code but a cancellation at shutdown (so it ends soon).
//!
//! **Visits.** An idle worker may use the core in place for a moment while
//! its owner is inside a long poll, to take the fresh tasks hidden there
//! (`WorkerCtx::steal_hidden`; Go's thieves take `runnext`). The core stays
//! lent; the visitor and the owner's borrows exclude each other with the
//! same handshake, the visitor on the rare side:
//!
//! ```text
//! visit:   CAS visitor false -> true (one visitor at a time);
//!          asym_fence::heavy();  wait while busy (Acquire);  read core (null: nothing to visit)
//!          ... use the core ...;  visitor := false (Release)
//! borrow:  busy := true;  asym_fence::light();  visitor?  -> busy := false,
//!          wait while visitor (Acquire), start again;  else read core
//! ```
//!
//! Either the borrow sees `visitor` (and waits for the visit to end, whose
//! Release hands over its writes), or the visitor sees `busy` (and waits
//! for the borrow to end). The owner's `take` is a borrow that swaps the
//! core out, so it never takes a core that is being visited; `take_away`
//! also waits for a visit to end (a `SeqCst` store-then-load pair on each
//! side: the visitor's CAS and fence before reading the core, the taker's
//! swap and fence before reading `visitor`). A visit runs no task code (it
//! moves `Notified`s; a cancellation at shutdown at most).

use super::multi_thread::Core;
use crate::asym_fence;
use crate::loom::{AtomicBool, AtomicPtr, Ordering::*, ReleaseStore};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

/// A worker thread's slot for its lent core (module docs). `C` is the
/// core; generic only so that the loom model can lend a probe.
pub(crate) struct CoreSlot<C = Core> {
    core: AtomicPtr<C>,
    /// The owner thread is inside a borrow of the core (module docs).
    busy: AtomicBool,
    /// Another thread is visiting the core (module docs).
    visitor: AtomicBool,
    /// The owner thread's OS id (Linux), for the monitor to ask how much
    /// CPU it is using; 0 where unknown.
    tid: i32,
}

impl<C> CoreSlot<C> {
    /// A slot for the calling thread.
    pub(crate) fn new() -> CoreSlot<C> {
        CoreSlot {
            core: AtomicPtr::new(ptr::null_mut()),
            busy: AtomicBool::new(false),
            visitor: AtomicBool::new(false),
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
    pub(crate) fn lend(&self, core: Box<C>) {
        debug_assert!(
            self.core.load(Relaxed).is_null(),
            "lent a core over another"
        );
        self.core.release_store(Box::into_raw(core));
    }

    /// The owner thread takes its core back, if it is still there (never
    /// inside a borrow of its own): a borrow that ends by swapping the core
    /// out, so that it waits for a visit to end first.
    pub(crate) fn take(&self) -> Option<Box<C>> {
        let borrowed = self.borrow()?;
        let p = self.core.swap(ptr::null_mut(), AcqRel);
        drop(borrowed);
        // AcqRel: the lender's writes to the core happen before our use of
        // it. Null: taken away since the borrow began.
        // SAFETY: non-null came from `Box::into_raw` in `lend`; the swap made us its only owner.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }

    /// Takes the core away from its owner thread, which may be inside a
    /// borrow of it right now: waits for that borrow, and for a visit, to
    /// end (module docs). For the monitor, and for `block_in_place` on the
    /// owner thread.
    pub(crate) fn take_away(&self) -> Option<Box<C>> {
        let p = self.core.swap(ptr::null_mut(), SeqCst);
        if p.is_null() {
            return None;
        }
        asym_fence::heavy();
        // Acquire: pairs with the borrow's (and the visit's) Release as it ends.
        while self.busy.load(Acquire) || self.visitor.load(Acquire) {
            crate::loom::yield_now();
        }
        // SAFETY: non-null came from `Box::into_raw` in `lend`; the swap made
        // us its only owner, and no borrow or visit of it is left (module docs).
        Some(unsafe { Box::from_raw(p) })
    }

    /// The owner thread's use of its lent core, in place (only the owner
    /// thread); `None` if the core was taken away, or if this thread is
    /// inside a borrow already: task code run from within one (a task
    /// cancelled because the injector it overflowed to is closed, at
    /// shutdown) must not reach the core a second time, so what it
    /// schedules goes through the injector. Waits for a visit to end.
    #[inline]
    pub(crate) fn borrow(&self) -> Option<Borrowed<'_, C>> {
        // Relaxed: only this thread writes `busy`.
        if self.busy.load(Relaxed) {
            return None;
        }
        loop {
            self.busy.store(true, Relaxed);
            asym_fence::light();
            // Acquire: a visit that ended hands its writes to the core over.
            if !self.visitor.load(Acquire) {
                break;
            }
            self.busy.store(false, Release);
            self.wait_for_visitor();
        }
        match NonNull::new(self.core.load(Acquire)) {
            Some(core) => Some(Borrowed { lent: self, core }),
            None => {
                self.busy.store(false, Relaxed);
                None
            }
        }
    }

    #[cold]
    fn wait_for_visitor(&self) {
        while self.visitor.load(Acquire) {
            crate::loom::spin_loop();
        }
    }

    /// Another thread's use of the lent core, in place, while its owner
    /// thread goes on with its poll (module docs); `None` if no core is
    /// lent here or another visit is under way. `f` must run no task code.
    pub(crate) fn visit<R>(&self, f: impl FnOnce(&mut C) -> R) -> Option<R> {
        if self
            .visitor
            .compare_exchange(false, true, SeqCst, Relaxed)
            .is_err()
        {
            return None;
        }
        asym_fence::heavy();
        // Acquire: pairs with the borrow's Release as it ends.
        while self.busy.load(Acquire) {
            crate::loom::yield_now();
        }
        let out = NonNull::new(self.core.load(Acquire)).map(|mut core| {
            // SAFETY: lent, and while `visitor` is set no borrow or take uses it.
            f(unsafe { core.as_mut() })
        });
        // Release: our writes to the core happen before the owner's next
        // borrow, or a taker's use of it.
        self.visitor.store(false, Release);
        out
    }

    /// Whether a core is lent now (the monitor's cheap check).
    pub(crate) fn is_lent(&self) -> bool {
        !self.core.load(Relaxed).is_null()
    }
}

/// A borrow of the lent core (`CoreSlot::borrow`); ends when dropped.
pub(crate) struct Borrowed<'a, C = Core> {
    lent: &'a CoreSlot<C>,
    core: NonNull<C>,
}

impl<C> Deref for Borrowed<'_, C> {
    type Target = C;
    fn deref(&self) -> &C {
        // SAFETY: seen in the slot with `busy` set, so no taker uses the
        // core until this borrow ends, and only this thread borrows.
        unsafe { self.core.as_ref() }
    }
}

impl<C> DerefMut for Borrowed<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        // SAFETY: as for `deref`; this guard is the only borrow.
        unsafe { self.core.as_mut() }
    }
}

impl<C> Drop for Borrowed<'_, C> {
    fn drop(&mut self) {
        // Release: our writes to the core happen before a taker's use of it.
        self.lent.busy.store(false, Release);
    }
}

impl<C> Drop for CoreSlot<C> {
    fn drop(&mut self) {
        drop(self.take()); // a core left behind is dropped (its tasks cancelled)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::CoreSlot;

    #[test]
    fn a_borrow_inside_a_borrow_is_refused_and_a_take_away_ends_borrowing() {
        let lent = CoreSlot::<u32>::new();
        assert!(lent.borrow().is_none(), "nothing lent yet");
        lent.lend(Box::new(7));
        {
            let mut outer = lent.borrow().expect("lent");
            assert!(lent.borrow().is_none(), "refused inside a borrow");
            *outer += 1;
        }
        assert_eq!(*lent.borrow().expect("lent again after the borrow"), 8);
        assert_eq!(lent.take_away().as_deref(), Some(&8));
        assert!(lent.borrow().is_none() && lent.take().is_none());
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::CoreSlot;
    use crate::loom::{Arc, UnsafeCell};
    use loom::thread;

    /// A core stand-in whose every use loom checks for a data race.
    struct Probe(UnsafeCell<u32>);

    impl Probe {
        fn touch(&self) {
            // SAFETY: exclusive if the protocol holds; loom checks that.
            self.0.with_mut(|p| unsafe { *p += 1 });
        }

        /// Uses counted so far (once every thread is done with it).
        fn uses(&self) -> u32 {
            // SAFETY: called after every other thread's last use.
            self.0.with(|p| unsafe { *p })
        }
    }

    /// A slot with a probe lent in it.
    fn lent_probe() -> Arc<CoreSlot<Probe>> {
        let lent = Arc::new(CoreSlot::new());
        lent.lend(Box::new(Probe(UnsafeCell::new(0))));
        lent
    }

    /// Another thread visits the slot once; joins to whether it found a core.
    fn spawn_visitor(lent: &Arc<CoreSlot<Probe>>) -> thread::JoinHandle<bool> {
        let lent = lent.clone();
        thread::spawn(move || lent.visit(|core| core.touch()).is_some())
    }

    /// The owner borrows its lent core twice while the monitor takes it
    /// away: every use of the core is ordered with every other (loom fails
    /// the model on a racing access), and a borrow after the take finds
    /// nothing. Fails without `asym_fence`'s fences.
    #[test]
    fn borrows_racing_a_take_away_never_share_the_core() {
        loom::model(|| {
            let lent = lent_probe();
            let taker = {
                let lent = lent.clone();
                thread::spawn(move || {
                    let core = lent.take_away();
                    if let Some(core) = &core {
                        core.touch();
                    }
                    core
                })
            };
            let mut used = 0;
            for _ in 0..2 {
                if let Some(core) = lent.borrow() {
                    core.touch();
                    used += 1;
                }
            }
            let taken = taker
                .join()
                .unwrap()
                .expect("the core was lent: the taker gets it");
            assert_eq!(taken.uses(), used + 1, "every use counted once");
            assert!(
                lent.borrow().is_none(),
                "a borrow after the take finds nothing"
            );
        });
    }

    /// An idle worker visits the core while its owner borrows it and then
    /// takes it back at the end of its poll: no use of the core overlaps
    /// another (loom fails the model on a racing access), and the owner's
    /// take finds every visit's writes. Fails without the borrow's check of
    /// `visitor`.
    #[test]
    fn a_visit_racing_borrows_and_the_owners_take_never_shares_the_core() {
        loom::model(|| {
            let lent = lent_probe();
            let visitor = spawn_visitor(&lent);
            let mut used = 0;
            if let Some(core) = lent.borrow() {
                core.touch();
                used += 1;
            }
            let core = lent.take().expect("only the owner takes the core");
            let visited = visitor.join().unwrap();
            assert_eq!(core.uses(), used + u32::from(visited));
        });
    }

    /// A visit racing the monitor's `take_away`: the taker waits for the
    /// visit to end, or the visit finds the core gone.
    #[test]
    fn a_visit_racing_a_take_away_never_shares_the_core() {
        loom::model(|| {
            let lent = lent_probe();
            let visitor = spawn_visitor(&lent);
            let core = lent.take_away().expect("lent: the taker gets it");
            core.touch();
            let visited = visitor.join().unwrap();
            assert_eq!(core.uses(), 1 + u32::from(visited));
            assert!(lent.visit(|_| ()).is_none(), "nothing to visit after");
        });
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
