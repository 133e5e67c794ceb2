//! The scheduler hook each task holds (`raw.rs`'s `S`): a pointer to its
//! runtime's shared state that keeps the state alive as an `Arc` clone
//! would, without an atomic read-modify-write per task.
//!
//! An `Arc` clone at every spawn and a drop at every free were two of the
//! locked instructions a fork-join cost (`docs/profiles.md`). Instead,
//! a hook owns one *unit* of its state's [`Units`], and the units out,
//! together, hold one strong count of the state's `Arc`:
//!
//! - `Units::out` counts the units handed out and not yet given back.
//!   Whoever moves it from 0 takes one strong count on their behalf
//!   (`Arc::increment_strong_count`); whoever moves it back to 0 gives that
//!   count up (and may free the state). Only a holder of a strong count of
//!   its own takes units, so the state cannot be freed between its
//!   `fetch_add` and its increment; a unit reaches anybody else only after
//!   its take is over, so every move back to 0 follows the increment of the
//!   move from 0 before it. The increments and decrements made here thus
//!   pair up, and at every moment the count still to be given up is held.
//! - A scheduler thread (a worker, a current-thread driver inside
//!   `block_on`) keeps a [`Purse`] of units for its runtime: a spawn there
//!   takes its hook's unit from the purse, a task freed there puts its unit
//!   back, and the purse trades with `out` only `BATCH` units at a time.
//!   Fork-join work, which frees on the thread that spawned, never does. A
//!   purse holds its own strong count, and gives every unit back when its
//!   thread stops running the scheduler, before letting go of that count.
//! - Elsewhere (`Handle::spawn` from a plain thread, a task freed on a
//!   thread that runs no core of this runtime) one unit is taken or given
//!   back alone, as an `Arc` clone or drop would.

use crate::loom::{Arc, AtomicUsize, Ordering::*};
use std::cell::Cell;
use std::ops::Deref;
use std::ptr::NonNull;

/// Units a purse takes at once; it gives units back once it holds twice as
/// many (keeping `BATCH`). Small under loom, so the models cross both edges.
#[cfg(not(loom))]
const BATCH: usize = 256;
#[cfg(loom)]
const BATCH: usize = 1;

/// How many hooks of one runtime are out (module docs).
#[derive(Default)]
pub(crate) struct Units {
    out: AtomicUsize,
}

/// A runtime's shared state, which its tasks hold through hooks.
pub(crate) trait Owner: Send + Sync + Sized + 'static {
    fn units(&self) -> &Units;

    /// Calls `f` with this thread's purse if this thread runs a scheduler
    /// core of the runtime whose state is `this`, right now.
    fn with_local_purse<R>(this: *const Self, f: impl FnOnce(&Purse<Self>) -> R) -> Option<R>;
}

/// `owner`'s state as the hooks hold it. From `Arc::as_ptr`, not from a
/// `&T`: the pointer must reach the whole `Arc` allocation, whose counts
/// `decrement_strong_count` finds before the value.
fn state_ptr<T>(owner: &Arc<T>) -> NonNull<T> {
    NonNull::new(Arc::as_ptr(owner).cast_mut()).expect("an Arc's value is never at null")
}

/// Takes `n` units of `owner`. The caller's own strong count (`owner`)
/// keeps the state alive until the increment is made.
fn take<T: Owner>(owner: &Arc<T>, n: usize) {
    // Relaxed: as `Arc::clone`, a count made from one already held.
    if owner.units().out.fetch_add(n, Relaxed) == 0 {
        // SAFETY: `owner` is a live `Arc` of this state.
        unsafe { Arc::increment_strong_count(Arc::as_ptr(owner)) };
    }
}

/// Gives back `n` units of the state at `ptr`.
///
/// # Safety
/// The caller holds `n` units of that state, and does not touch it after.
unsafe fn give_back<T: Owner>(ptr: NonNull<T>, n: usize) {
    // SAFETY: the caller's units keep the state alive up to this RMW.
    let units = unsafe { ptr.as_ref() }.units();
    // AcqRel, as `Arc`'s drop: Release orders our uses of the state before
    // whichever decrement frees it; Acquire, when we move `out` to 0, makes
    // every earlier giver's uses happen before our decrement.
    if units.out.fetch_sub(n, AcqRel) == n {
        // SAFETY: moving `out` to 0 gives up the one strong count the units
        // held (module docs); the pointer came from that `Arc`.
        unsafe { Arc::decrement_strong_count(ptr.as_ptr().cast_const()) };
    }
}

/// A task's hold on its runtime's shared state: one unit (module docs).
pub(crate) struct Hook<T: Owner>(NonNull<T>);

// SAFETY: a hook only hands out `&T` (and `T: Send + Sync`); its unit is
// given back through atomics or the purse of the thread it is dropped on.
unsafe impl<T: Owner> Send for Hook<T> {}
// SAFETY: as above.
unsafe impl<T: Owner> Sync for Hook<T> {}

impl<T: Owner> Hook<T> {
    /// A hook taken alone: for a spawn from a thread with no purse of
    /// this runtime.
    pub(crate) fn new(owner: &Arc<T>) -> Hook<T> {
        take(owner, 1);
        Hook(state_ptr(owner))
    }

    /// The state's address, to compare with a scheduler thread's own.
    pub(crate) fn as_ptr(&self) -> *const T {
        self.0.as_ptr()
    }

    /// A second unit, the caller's own: for code that goes on using the
    /// state after handing this hook's task to another thread, which may
    /// run and free the task (and this hook, perhaps the state's last
    /// hold) at once, as a wake from outside the runtime does between its
    /// push to the injector and its unpark.
    pub(crate) fn hold(&self) -> Hook<T> {
        // Relaxed, as `Arc::clone`: this hook's unit is out, so `out` is
        // not 0 and the strong count the units hold is already taken.
        self.units().out.fetch_add(1, Relaxed);
        Hook(self.0)
    }
}

impl<T: Owner> Deref for Hook<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the hook's unit keeps the state alive (module docs).
        unsafe { self.0.as_ref() }
    }
}

impl<T: Owner> Drop for Hook<T> {
    fn drop(&mut self) {
        if T::with_local_purse(self.as_ptr(), Purse::put).is_none() {
            // SAFETY: the unit is this hook's, which is going.
            unsafe { give_back(self.0, 1) }
        }
    }
}

/// A scheduler thread's units for hooks of its runtime (module docs). Only
/// its thread touches it; it lives in that thread's scheduler context.
pub(crate) struct Purse<T: Owner> {
    owner: Arc<T>,
    units: Cell<usize>,
}

impl<T: Owner> Purse<T> {
    pub(crate) fn new(owner: Arc<T>) -> Purse<T> {
        Purse {
            owner,
            units: Cell::new(0),
        }
    }

    /// The runtime's state (the purse's own strong count).
    pub(crate) fn owner(&self) -> &Arc<T> {
        &self.owner
    }

    /// A hook for a task spawned on this thread.
    #[inline]
    pub(crate) fn hook(&self) -> Hook<T> {
        let n = match self.units.get() {
            0 => {
                take(&self.owner, BATCH);
                BATCH
            }
            n => n,
        };
        self.units.set(n - 1);
        Hook(state_ptr(&self.owner))
    }

    /// A hook of this runtime was dropped on this thread: its unit comes here.
    fn put(&self) {
        let mut n = self.units.get() + 1;
        if n >= 2 * BATCH {
            // SAFETY: the purse holds those units; `owner` keeps the state alive.
            unsafe { give_back(state_ptr(&self.owner), BATCH) };
            n -= BATCH;
        }
        self.units.set(n);
    }
}

impl<T: Owner> Drop for Purse<T> {
    fn drop(&mut self) {
        let n = self.units.replace(0);
        if n > 0 {
            // SAFETY: the purse holds those units; `owner`, dropped after
            // this, keeps the state alive until then.
            unsafe { give_back(state_ptr(&self.owner), n) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A state whose purse is a thread-local one, for the tests.
    #[derive(Default)]
    struct State {
        units: Units,
    }

    std::thread_local! {
        static PURSE: std::cell::RefCell<Option<Purse<State>>> = const { std::cell::RefCell::new(None) };
    }

    impl Owner for State {
        fn units(&self) -> &Units {
            &self.units
        }
        fn with_local_purse<R>(this: *const Self, f: impl FnOnce(&Purse<Self>) -> R) -> Option<R> {
            PURSE.with(|p| {
                let p = p.borrow();
                let p = p.as_ref().filter(|p| Arc::as_ptr(p.owner()) == this)?;
                Some(f(p))
            })
        }
    }

    fn out(s: &Arc<State>) -> usize {
        s.units.out.load(SeqCst)
    }

    #[test]
    fn units_out_hold_one_strong_count() {
        let s = Arc::new(State::default());
        let a = Hook::new(&s);
        let b = Hook::new(&s);
        assert_eq!((out(&s), Arc::strong_count(&s)), (2, 2));
        drop(a);
        assert_eq!((out(&s), Arc::strong_count(&s)), (1, 2));
        drop(b);
        assert_eq!((out(&s), Arc::strong_count(&s)), (0, 1));
    }

    #[test]
    fn a_hook_keeps_the_state_alive_after_every_arc_is_gone() {
        let s = Arc::new(State::default());
        let weak = Arc::downgrade(&s);
        let h = Hook::new(&s);
        drop(s);
        assert!(weak.upgrade().is_some());
        drop(h);
        assert!(weak.upgrade().is_none(), "the last unit freed the state");
    }

    #[test]
    fn a_purse_trades_in_batches_and_gives_everything_back() {
        let s = Arc::new(State::default());
        PURSE.with(|p| *p.borrow_mut() = Some(Purse::new(s.clone())));
        let hooks: Vec<_> = (0..3 * BATCH)
            .map(|_| PURSE.with(|p| p.borrow().as_ref().unwrap().hook()))
            .collect();
        assert_eq!(out(&s), 3 * BATCH, "taken a batch at a time");
        drop(hooks); // back into the purse, which keeps at most 2 * BATCH
        let kept = PURSE.with(|p| p.borrow().as_ref().unwrap().units.get());
        assert!(kept < 2 * BATCH, "{kept}");
        assert_eq!(out(&s), kept);
        // Freed on another thread (no purse there): one at a time.
        let h = PURSE.with(|p| p.borrow().as_ref().unwrap().hook());
        std::thread::spawn(move || drop(h)).join().unwrap();
        PURSE.with(|p| p.borrow_mut().take());
        assert_eq!((out(&s), Arc::strong_count(&s)), (0, 1));
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::thread;

    /// Counts its frees, and checks that no unit was out when it went.
    struct State {
        units: Units,
        freed: Arc<AtomicUsize>,
    }

    impl Drop for State {
        fn drop(&mut self) {
            assert_eq!(self.units.out.load(SeqCst), 0, "freed with units out");
            self.freed.fetch_add(1, SeqCst);
        }
    }

    impl Owner for State {
        fn units(&self) -> &Units {
            &self.units
        }
        fn with_local_purse<R>(_: *const Self, _: impl FnOnce(&Purse<Self>) -> R) -> Option<R> {
            None // every hook here is given back alone
        }
    }

    /// A hook given back on another thread races a purse taking units from
    /// zero again (the two strong-count moves of `out` crossing), then
    /// everything goes: the state is freed once, at the very end.
    #[test]
    fn units_racing_back_to_zero_free_the_state_once() {
        loom::model(|| {
            let freed = Arc::new(AtomicUsize::new(0));
            let state = Arc::new(State {
                units: Units::default(),
                freed: freed.clone(),
            });
            let purse = Purse::new(state.clone());
            drop(state);
            let first = purse.hook(); // takes a batch (1 under loom)
            let t = thread::spawn(move || drop(first));
            let second = purse.hook(); // may take from 0 again
            let t2 = thread::spawn(move || drop(second));
            drop(purse);
            t.join().unwrap();
            t2.join().unwrap();
            assert_eq!(freed.load(SeqCst), 1);
        });
    }
}
