//! `SchedRef`: the reference each task holds to its runtime's shared state
//! (`task/raw.rs`'s `S`), and armed timers and registered sockets to their
//! runtime's driver. It keeps the state alive as an `Arc` clone would,
//! without an atomic read-modify-write per task.
//!
//! An `Arc` clone at every spawn and a drop at every free were two of the
//! locked instructions a fork-join cost (`docs/profiles.md`). Instead,
//! the state counts its `SchedRef`s in a [`RefCount`], and the refs out,
//! together, hold one strong count of the state's `Arc`:
//!
//! - `RefCount::out` counts the refs handed out and not yet given back.
//!   Whoever moves it from 0 takes one strong count on their behalf
//!   (`Arc::increment_strong_count`); whoever moves it back to 0 gives that
//!   count up (and may free the state). Only a holder of a strong count of
//!   its own takes refs, so the state cannot be freed between its
//!   `fetch_add` and its increment; a ref reaches anybody else only after
//!   its take is over, so every move back to 0 follows the increment of the
//!   move from 0 before it. The increments and decrements made here thus
//!   pair up, and at every moment the count still to be given up is held.
//! - A scheduler thread (a worker, a current-thread driver inside
//!   `block_on`) keeps a [`RefStock`] for its runtime: refs counted in
//!   `out` ahead of need. A spawn there takes its task's ref from the
//!   stock, a task freed there puts its ref back, and the stock trades
//!   with `out` only `BATCH` refs at a time. Fork-join work, which frees
//!   on the thread that spawned, never does. A stock holds its own strong
//!   count, and gives every ref back when its thread stops running the
//!   scheduler, before letting go of that count.
//! - Elsewhere (`Handle::spawn` from a plain thread, a task freed on a
//!   thread that runs no core of this runtime) one ref is taken or given
//!   back alone, as an `Arc` clone or drop would.
//!
//! `scope/` counts a scope's children the same way (units out holding one
//! strong count, some taken ahead) but not with these types: its count
//! also carries the scope's "returned" bit and wakes the scope at 0, and
//! its stock lives for one poll of the body, refilled in doubling steps,
//! where this one lives as long as its scheduler thread.

use crate::loom::{Arc, AtomicUsize, Ordering::*};
use std::cell::Cell;
use std::ops::Deref;
use std::ptr::NonNull;

/// Refs a stock takes at once; it gives refs back once it holds twice as
/// many (keeping `BATCH`). Small under loom, so the models cross both edges.
#[cfg(not(loom))]
const BATCH: usize = 256;
#[cfg(loom)]
const BATCH: usize = 1;

/// How many `SchedRef`s of one runtime's state are out (module docs).
#[derive(Default)]
pub(crate) struct RefCount {
    out: AtomicUsize,
}

/// A runtime's shared state, which its tasks hold through `SchedRef`s.
pub(crate) trait RefCounted: Send + Sync + Sized + 'static {
    fn ref_count(&self) -> &RefCount;

    /// Calls `f` with this thread's stock if this thread runs a scheduler
    /// core of the runtime whose state is `this`, right now.
    fn with_local_stock<R>(this: *const Self, f: impl FnOnce(&RefStock<Self>) -> R) -> Option<R>;
}

/// `owner`'s state as the refs hold it. From `Arc::as_ptr`, not from a
/// `&T`: the pointer must reach the whole `Arc` allocation, whose counts
/// `decrement_strong_count` finds before the value.
fn state_ptr<T>(owner: &Arc<T>) -> NonNull<T> {
    NonNull::new(Arc::as_ptr(owner).cast_mut()).expect("an Arc's value is never at null")
}

/// Takes `n` refs of `owner`. The caller's own strong count (`owner`)
/// keeps the state alive until the increment is made.
fn take_refs<T: RefCounted>(owner: &Arc<T>, n: usize) {
    // Relaxed: as `Arc::clone`, a count made from one already held.
    if owner.ref_count().out.fetch_add(n, Relaxed) == 0 {
        // SAFETY: `owner` is a live `Arc` of this state.
        unsafe { Arc::increment_strong_count(Arc::as_ptr(owner)) };
    }
}

/// Gives back `n` refs of the state at `ptr`.
///
/// # Safety
/// The caller holds `n` refs of that state, and does not touch it after.
unsafe fn give_back_refs<T: RefCounted>(ptr: NonNull<T>, n: usize) {
    // SAFETY: the caller's refs keep the state alive up to this RMW.
    let count = unsafe { ptr.as_ref() }.ref_count();
    // AcqRel, as `Arc`'s drop: Release orders our uses of the state before
    // whichever decrement frees it; Acquire, when we move `out` to 0, makes
    // every earlier giver's uses happen before our decrement.
    if count.out.fetch_sub(n, AcqRel) == n {
        // SAFETY: moving `out` to 0 gives up the one strong count the refs
        // held (module docs); the pointer came from that `Arc`.
        unsafe { Arc::decrement_strong_count(ptr.as_ptr().cast_const()) };
    }
}

/// A task's reference to its runtime's shared state, counted in the
/// state's `RefCount` (module docs).
pub(crate) struct SchedRef<T: RefCounted>(NonNull<T>);

// SAFETY: a `SchedRef` only hands out `&T` (and `T: Send + Sync`); it is
// given back through atomics or the stock of the thread it is dropped on.
unsafe impl<T: RefCounted> Send for SchedRef<T> {}
// SAFETY: as above.
unsafe impl<T: RefCounted> Sync for SchedRef<T> {}

impl<T: RefCounted> SchedRef<T> {
    /// A ref taken alone: for a spawn from a thread with no stock of
    /// this runtime.
    pub(crate) fn new(owner: &Arc<T>) -> SchedRef<T> {
        take_refs(owner, 1);
        SchedRef(state_ptr(owner))
    }

    /// The state's address, to compare with a scheduler thread's own.
    pub(crate) fn as_ptr(&self) -> *const T {
        self.0.as_ptr()
    }

    /// A second ref, the caller's own: for code that goes on using the
    /// state after handing this ref's task to another thread, which may
    /// run and free the task (and this ref, perhaps the state's last
    /// one) at once, as a wake from outside the runtime does between its
    /// push to the injector and its unpark.
    pub(crate) fn hold(&self) -> SchedRef<T> {
        // Relaxed, as `Arc::clone`: this ref is out, so `out` is not 0
        // and the strong count the refs hold is already taken.
        self.ref_count().out.fetch_add(1, Relaxed);
        SchedRef(self.0)
    }
}

impl<T: RefCounted> Deref for SchedRef<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this ref keeps the state alive (module docs).
        unsafe { self.0.as_ref() }
    }
}

impl<T: RefCounted> Drop for SchedRef<T> {
    fn drop(&mut self) {
        if T::with_local_stock(self.as_ptr(), RefStock::put_back).is_none() {
            // SAFETY: the ref is this one, which is going.
            unsafe { give_back_refs(self.0, 1) }
        }
    }
}

/// A scheduler thread's refs of its runtime taken ahead (module docs). Only
/// its thread touches it; it lives in that thread's scheduler context.
pub(crate) struct RefStock<T: RefCounted> {
    owner: Arc<T>,
    /// Refs counted in `out` that no `SchedRef` holds yet.
    held: Cell<usize>,
}

impl<T: RefCounted> RefStock<T> {
    pub(crate) fn new(owner: Arc<T>) -> RefStock<T> {
        RefStock {
            owner,
            held: Cell::new(0),
        }
    }

    /// The runtime's state (the stock's own strong count).
    pub(crate) fn owner(&self) -> &Arc<T> {
        &self.owner
    }

    /// A ref for a task spawned on this thread.
    #[inline]
    pub(crate) fn take_ref(&self) -> SchedRef<T> {
        let n = match self.held.get() {
            0 => {
                take_refs(&self.owner, BATCH);
                BATCH
            }
            n => n,
        };
        self.held.set(n - 1);
        SchedRef(state_ptr(&self.owner))
    }

    /// A ref of this runtime was dropped on this thread: it comes back here.
    fn put_back(&self) {
        let mut n = self.held.get() + 1;
        if n >= 2 * BATCH {
            // SAFETY: the stock holds those refs; `owner` keeps the state alive.
            unsafe { give_back_refs(state_ptr(&self.owner), BATCH) };
            n -= BATCH;
        }
        self.held.set(n);
    }
}

impl<T: RefCounted> Drop for RefStock<T> {
    fn drop(&mut self) {
        let n = self.held.replace(0);
        if n > 0 {
            // SAFETY: the stock holds those refs; `owner`, dropped after
            // this, keeps the state alive until then.
            unsafe { give_back_refs(state_ptr(&self.owner), n) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A state whose stock is a thread-local one, for the tests.
    #[derive(Default)]
    struct State {
        refs_out: RefCount,
    }

    std::thread_local! {
        static STOCK: std::cell::RefCell<Option<RefStock<State>>> = const { std::cell::RefCell::new(None) };
    }

    impl RefCounted for State {
        fn ref_count(&self) -> &RefCount {
            &self.refs_out
        }
        fn with_local_stock<R>(
            this: *const Self,
            f: impl FnOnce(&RefStock<Self>) -> R,
        ) -> Option<R> {
            STOCK.with(|p| {
                let p = p.borrow();
                let p = p.as_ref().filter(|p| Arc::as_ptr(p.owner()) == this)?;
                Some(f(p))
            })
        }
    }

    fn out(s: &Arc<State>) -> usize {
        s.refs_out.out.load(SeqCst)
    }

    #[test]
    fn refs_out_hold_one_strong_count() {
        let s = Arc::new(State::default());
        let a = SchedRef::new(&s);
        let b = SchedRef::new(&s);
        assert_eq!((out(&s), Arc::strong_count(&s)), (2, 2));
        drop(a);
        assert_eq!((out(&s), Arc::strong_count(&s)), (1, 2));
        drop(b);
        assert_eq!((out(&s), Arc::strong_count(&s)), (0, 1));
    }

    #[test]
    fn a_sched_ref_keeps_the_state_alive_after_every_arc_is_gone() {
        let s = Arc::new(State::default());
        let weak = Arc::downgrade(&s);
        let h = SchedRef::new(&s);
        drop(s);
        assert!(weak.upgrade().is_some());
        drop(h);
        assert!(weak.upgrade().is_none(), "the last ref freed the state");
    }

    #[test]
    fn a_stock_trades_in_batches_and_gives_everything_back() {
        let s = Arc::new(State::default());
        STOCK.with(|p| *p.borrow_mut() = Some(RefStock::new(s.clone())));
        let refs: Vec<_> = (0..3 * BATCH)
            .map(|_| STOCK.with(|p| p.borrow().as_ref().unwrap().take_ref()))
            .collect();
        assert_eq!(out(&s), 3 * BATCH, "taken a batch at a time");
        drop(refs); // back into the stock, which keeps at most 2 * BATCH
        let kept = STOCK.with(|p| p.borrow().as_ref().unwrap().held.get());
        assert!(kept < 2 * BATCH, "{kept}");
        assert_eq!(out(&s), kept);
        // Freed on another thread (no stock there): one at a time.
        let h = STOCK.with(|p| p.borrow().as_ref().unwrap().take_ref());
        std::thread::spawn(move || drop(h)).join().unwrap();
        STOCK.with(|p| p.borrow_mut().take());
        assert_eq!((out(&s), Arc::strong_count(&s)), (0, 1));
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::thread;

    /// Counts its frees, and checks that no ref was out when it went.
    struct State {
        refs_out: RefCount,
        freed: Arc<AtomicUsize>,
    }

    impl Drop for State {
        fn drop(&mut self) {
            assert_eq!(self.refs_out.out.load(SeqCst), 0, "freed with refs out");
            self.freed.fetch_add(1, SeqCst);
        }
    }

    impl RefCounted for State {
        fn ref_count(&self) -> &RefCount {
            &self.refs_out
        }
        fn with_local_stock<R>(_: *const Self, _: impl FnOnce(&RefStock<Self>) -> R) -> Option<R> {
            None // every ref here is given back alone
        }
    }

    /// A ref given back on another thread races a stock taking refs from
    /// zero again (the two strong-count moves of `out` crossing), then
    /// everything goes: the state is freed once, at the very end.
    #[test]
    fn refs_racing_back_to_zero_free_the_state_once() {
        loom::model(|| {
            let freed = Arc::new(AtomicUsize::new(0));
            let state = Arc::new(State {
                refs_out: RefCount::default(),
                freed: freed.clone(),
            });
            let stock = RefStock::new(state.clone());
            drop(state);
            let first = stock.take_ref(); // takes a batch (1 under loom)
            let t = thread::spawn(move || drop(first));
            let second = stock.take_ref(); // may take from 0 again
            let t2 = thread::spawn(move || drop(second));
            drop(stock);
            t.join().unwrap();
            t2.join().unwrap();
            assert_eq!(freed.load(SeqCst), 1);
        });
    }
}
