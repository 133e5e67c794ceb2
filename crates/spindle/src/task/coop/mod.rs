//! The cooperative budget: a task that keeps finding its operations ready
//! yields now and then, so that it cannot keep its worker (or the
//! current-thread runtime) from the other tasks and from its timers.
//!
//! Every poll the scheduler makes of a task (and of a `block_on` future)
//! starts with a budget (`Builder::coop_budget`, [`DEFAULT_BUDGET`] units).
//! Each operation that could have made the task wait spends one unit when
//! it completes: a channel send or receive, a `select!` (one its arms
//! spend, or its own), awaiting a `JoinHandle` or a `Fork` (an inline run
//! included), a timer, a socket's
//! readiness, a `Semaphore` acquire or a `Mutex` lock (and so an `RwLock`
//! or `OnceCell` wait), a `watch` change, a `Notify`, `WaitGroup` or
//! `Barrier` wait. An operation that returns `Pending` for its own reasons gets
//! its unit back ([`Progress`]).
//!
//! A spent budget is a moment to look at the clock, not yet a yield: the
//! first time in a poll, the time is noted and the budget refilled; from
//! then on it is refilled until the poll has run [`SLICE`] past that note,
//! and then the next operation wakes its task and returns `Pending`. Each
//! refill doubles while the last one ran out in under half of what is left
//! of the slice, up to [`MAX_REFILL`] budgets, and halves when the last
//! one took more than all of it: a task of fast operations looks at the
//! clock a few times a slice, not once every budget. The
//! task goes to the back of its worker's queue (a self-wake during a poll
//! is a yield) and everything queued before it runs first. So a poll runs
//! its first budget's operations, then a slice, then at most one refill:
//! a task of fast operations never keeps its worker for much more than a
//! slice, as Go's preemption bounds a goroutine by time, while a task
//! whose operations fill or drain a channel in a few microseconds is not
//! sent to the back of the queue in the middle of it. The clock is not
//! read before the first budget is spent (that would cost every poll a
//! clock read): a task that computes for long between ready operations
//! yields after a budget of them, as under Tokio's budget. (A budget of
//! units alone, as Tokio's, yields every 128 operations: a producer then
//! yields with its channel far from full, and channel-heavy work pays for
//! the extra polls and for the park and wake-up of its partner at each
//! one. The deterministic runtime uses one all the same
//! (`Scope::enter_counted`): there, where a task yields must not depend on
//! the clock.)
//!
//! Invariants:
//! - Outside a poll made by a spindle scheduler, the budget is unlimited
//!   (`units == 0`: a spindle channel driven by another executor never
//!   yields for it).
//! - A scheduler sets its threads' budget size for as long as it runs there
//!   (`Scope`) and starts each poll's budget (`start_poll`); the scope's
//!   drop restores what the thread had before (unlimited, or an enclosing
//!   scheduler's), so a scheduler's own polls never nest on one thread
//!   and the budget is three stores a poll. A poll of another task made
//!   from within a poll (a `LocalSet` task; an inline run inside an
//!   `unconstrained` section) nests a `Scope` around it
//!   (`with_own_budget`), which puts the outer poll's budget back after.
//! - Inline runs (`Fork`, the current-thread runtime's awaits) do not
//!   start a budget: the child's operations spend the parent's, as they
//!   run inside the parent's poll; but inside an `unconstrained` section
//!   the child gets a budget of its own (`with_own_budget`).
//! - A `select!` (and `JoinSet::join_next`) holds no unit while its arms
//!   (its handles) spend theirs, and spends one itself only where they
//!   spent none (`spend_around`); a refused arm makes the select yield,
//!   never run its `else` arm (`chan/select.rs`).
//! - Under loom the budget is always unlimited: loom's threads share one
//!   OS thread's locals, and the models check the protocols, not yields.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Units between two looks at the clock unless the runtime's builder says
/// otherwise (Tokio's budget has the same figure).
pub const DEFAULT_BUDGET: u32 = 128;

/// How long a poll may go on spending budgets before an operation makes it
/// yield (module docs): well under the timers' 1 ms resolution.
pub const SLICE: Duration = Duration::from_micros(50);

/// The largest refill within a slice, in budgets (module docs): bounds
/// how far past the slice a task can run when its operations turn slow
/// in the middle of a refill (8 budgets: 1024 operations by default,
/// where a budget's own bound is 128).
pub const MAX_REFILL: u32 = 8;

/// What a poll is left with: `left` counts down at every operation, and
/// only reaching 0 looks further (`at_zero`). An unlimited poll (`units ==
/// 0`) starts at `u32::MAX` and is refilled there if it ever gets to 0, so
/// the hot path is one load, one test and one store either way.
struct State {
    left: Cell<u32>,
    /// The budget's size on this thread (`Scope`), a poll's start and each
    /// refill; 0: unlimited.
    units: Cell<u32>,
    /// When this poll first spent its budget.
    slice_from: Cell<Option<Instant>>,
    /// Once the slice has started: the last refill's size and when it
    /// was given (read only while `slice_from` is set).
    refill: Cell<u32>,
    refilled_at: Cell<Option<Instant>>,
    /// An operation of this poll was refused (a forced yield).
    forced: Cell<bool>,
    /// The budget is of units alone (`Scope::enter_counted`): spent, it
    /// refuses at once, without a look at the clock.
    counted: Cell<bool>,
    /// Inside an `unlimited` section: the `units` it put aside (0 outside
    /// one, or where there were none), for the polls of other tasks made
    /// inside it (`task_units`, `with_own_budget`).
    set_aside: Cell<u32>,
}

thread_local! {
    static STATE: State = const {
        State {
            left: Cell::new(u32::MAX),
            units: Cell::new(0),
            slice_from: Cell::new(None),
            refill: Cell::new(0),
            refilled_at: Cell::new(None),
            forced: Cell::new(false),
            counted: Cell::new(false),
            set_aside: Cell::new(0),
        }
    };
}

/// A thread's budget while it runs a scheduler (a worker thread's life, a
/// current-thread `block_on`): polls started there (`start_poll`) get
/// `units`; its drop gives back the state from before, so that the
/// thread's other code, and a scheduler around this one, find theirs.
pub(crate) struct Scope {
    left: u32,
    units: u32,
    slice_from: Option<Instant>,
    refill: u32,
    refilled_at: Option<Instant>,
    forced: bool,
    counted: bool,
    set_aside: u32,
}

impl Scope {
    /// `units` at least 1 (the builder checks).
    pub(crate) fn enter(units: u32) -> Scope {
        Scope::enter_with(units, false)
    }

    /// A budget of units alone, with no look at the clock: a spent budget
    /// refuses the next operation, as Tokio's does. For the deterministic
    /// runtime, where the polls a task yields at must not depend on how
    /// fast it ran.
    pub(crate) fn enter_counted(units: u32) -> Scope {
        Scope::enter_with(units, true)
    }

    fn enter_with(units: u32, counted: bool) -> Scope {
        debug_assert!(units > 0, "checked by the builder");
        let units = if cfg!(loom) { 0 } else { units };
        STATE.with(|s| Scope {
            left: s.left.replace(u32::MAX),
            units: s.units.replace(units),
            slice_from: s.slice_from.replace(None),
            refill: s.refill.get(),
            refilled_at: s.refilled_at.get(),
            forced: s.forced.replace(false),
            counted: s.counted.replace(counted),
            set_aside: s.set_aside.replace(0),
        })
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        // `try_with`: also runs from destructors during thread teardown.
        let _ = STATE.try_with(|s| {
            s.left.set(self.left);
            s.units.set(self.units);
            s.slice_from.set(self.slice_from);
            s.refill.set(self.refill);
            s.refilled_at.set(self.refilled_at);
            s.forced.set(self.forced);
            s.counted.set(self.counted);
            s.set_aside.set(self.set_aside);
        });
    }
}

/// Starts the budget of the poll about to run (three stores: nothing to
/// save, as a scheduler polls one task at a time; a nested poll saves the
/// outer one's in a `Scope`, `with_own_budget`).
#[inline]
pub(crate) fn start_poll() {
    STATE.with(|s| {
        let units = s.units.get();
        s.left.set(if units == 0 { u32::MAX } else { units });
        s.slice_from.set(None);
        s.forced.set(false);
    });
}

/// Whether an operation of the poll that just ran was refused: it ended
/// in a forced yield (the scheduler counts it).
#[inline]
pub(crate) fn poll_forced_yield() -> bool {
    STATE.with(|s| s.forced.get())
}

/// Whether an operation of this poll was refused and the budget is still
/// in force (not inside `unconstrained`): every further operation of the
/// poll would be refused too (`select!`, `chan/select.rs`).
#[inline]
pub(crate) fn refused_in_poll() -> bool {
    STATE.with(|s| s.forced.get() && s.units.get() != 0)
}

/// One unit of the budget, taken by [`poll_proceed`]: given back when
/// dropped, unless [`Progress::made_progress`] says the operation completed.
#[must_use = "dropping it gives the unit back: call `made_progress` when the operation completed"]
#[derive(Debug)]
pub struct Progress(());

impl Progress {
    /// The operation completed: the unit stays spent.
    #[inline]
    pub fn made_progress(self) {
        std::mem::forget(self);
    }
}

impl Drop for Progress {
    /// Gives the unit back, unless an operation was refused meanwhile (a
    /// child run inline, say): a refused budget stays spent for the rest
    /// of the poll.
    #[inline]
    fn drop(&mut self) {
        let _ = STATE.try_with(|s| {
            if !s.forced.get() {
                s.left.set(s.left.get().saturating_add(1));
            }
        });
    }
}

/// Takes a unit of the running task's budget before an operation that may
/// complete at once. When the budget is spent, wakes the task and returns
/// `Pending`: return `Pending` from your own future too, and the task
/// yields. For leaf futures of your own that can be ready many times in a
/// row:
///
/// ```
/// use std::task::{Context, Poll};
/// fn poll_next_item(cx: &mut Context<'_>, queue: &mut Vec<u32>) -> Poll<u32> {
///     let progress = std::task::ready!(spindle::task::coop::poll_proceed(cx));
///     match queue.pop() {
///         Some(item) => {
///             progress.made_progress();
///             Poll::Ready(item)
///         }
///         None => Poll::Pending, // the unit goes back
///     }
/// }
/// ```
#[inline]
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<Progress> {
    let spent = STATE.with(|s| {
        let left = s.left.get();
        s.left.set(left.wrapping_sub(1));
        left != 0
    });
    if spent {
        Poll::Ready(Progress(()))
    } else {
        at_zero(cx)
    }
}

/// `poll_proceed` found the budget spent: an unlimited one is refilled;
/// a limited one is refilled too until the poll has run a [`SLICE`] past
/// its first spent budget, and refused after (module docs).
#[cold]
fn at_zero(cx: &mut Context<'_>) -> Poll<Progress> {
    let refused = STATE.with(|s| {
        let units = s.units.get();
        if units == 0 {
            s.left.set(u32::MAX - 1);
            return false;
        }
        if s.counted.get() {
            s.left.set(0);
            s.forced.set(true);
            return true;
        }
        let now = Instant::now();
        let refill = match s.slice_from.get() {
            None => {
                s.slice_from.set(Some(now));
                Some(units)
            }
            Some(from) => {
                let rest = SLICE.saturating_sub(now.saturating_duration_since(from));
                let took = now.saturating_duration_since(s.refilled_at.get().unwrap_or(from));
                next_refill(rest, took, s.refill.get(), units)
            }
        };
        // This operation's unit comes out of the refill; a refused poll
        // stays at 0 (undoing the wrap).
        let refused = refill.is_none();
        if let Some(refill) = refill {
            s.refill.set(refill);
            s.refilled_at.set(Some(now));
        }
        s.left.set(refill.map_or(0, |r| r - 1));
        s.forced.set(s.forced.get() | refused);
        refused
    });
    if refused {
        cx.waker().wake_by_ref();
        Poll::Pending
    } else {
        Poll::Ready(Progress(()))
    }
}

/// The refill after one of `last` units that ran out in `took`, with
/// `rest` of the slice left (module docs); `None` once the slice is over.
fn next_refill(rest: Duration, took: Duration, last: u32, units: u32) -> Option<u32> {
    if rest.is_zero() {
        None
    } else if took * 2 <= rest {
        Some(last.saturating_mul(2).min(units.saturating_mul(MAX_REFILL)))
    } else if took > rest {
        Some((last / 2).max(units))
    } else {
        Some(last)
    }
}

/// Spends one unit, yielding first if the budget is spent: for a long
/// computation made of steps that are all ready.
pub async fn consume_budget() {
    std::future::poll_fn(|cx| poll_proceed(cx).map(Progress::made_progress)).await
}

/// Runs `future` without a budget: none of its operations is ever refused
/// and none spends the task's units. For a section that must not yield
/// between its steps (and knows it stays short); nesting is harmless.
pub fn unconstrained<F: Future>(future: F) -> Unconstrained<F> {
    Unconstrained { future }
}

/// Future of [`unconstrained`].
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct Unconstrained<F> {
    future: F,
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned: never moved out.
        let future = unsafe { self.map_unchecked_mut(|u| &mut u.future) };
        unlimited(|| future.poll(cx))
    }
}

/// Runs `f` without a budget (as [`unconstrained`] does for a future).
pub(crate) fn unlimited<R>(f: impl FnOnce() -> R) -> R {
    /// What `unlimited` put aside, restored even if `f` unwinds.
    struct Restore {
        left: u32,
        units: u32,
        set_aside: u32,
    }
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = STATE.try_with(|s| {
                s.left.set(self.left);
                s.units.set(self.units);
                s.set_aside.set(self.set_aside);
            });
        }
    }
    let _restore = STATE.with(|s| {
        let units = s.units.replace(0);
        let set_aside = if units == 0 { s.set_aside.get() } else { units };
        Restore {
            left: s.left.replace(u32::MAX),
            units,
            set_aside: s.set_aside.replace(set_aside),
        }
    });
    f()
}

/// The `units` an `unconstrained` section around this code put aside; 0
/// outside one (`Scope` clears it, `unlimited` restores it). Not 0: an
/// inline run of another task here gets a budget of its own
/// ([`with_own_budget`]): the section opts its own steps out, not those
/// of the tasks it awaits, which would yield were they not run inline.
/// (Elsewhere an inline child spends the poll's budget, running inside
/// that poll: module docs.)
#[inline(always)]
pub(crate) fn set_aside() -> u32 {
    STATE.with(|s| s.set_aside.get())
}

/// The size of the budget a task polled on this thread gets: the
/// scheduler's, also inside an `unconstrained` section; 0 where there is
/// none (a thread no spindle scheduler runs).
pub(crate) fn task_units() -> u32 {
    STATE.with(|s| match s.units.get() {
        0 => s.set_aside.get(),
        units => units,
    })
}

/// Runs `f`, a poll of another task made from within this one (an inline
/// run inside an `unconstrained` section, a `LocalSet` task), under a
/// budget of its own of `units`; the caller's comes back after it. With
/// `units` 0 (no budget here), `f` simply runs.
pub(crate) fn with_own_budget<R>(units: u32, f: impl FnOnce() -> R) -> R {
    if units == 0 {
        return f();
    }
    let _scope = Scope::enter_with(units, STATE.with(|s| s.counted.get()));
    start_poll();
    f()
}

/// One budgeted operation: takes a unit (or refuses, yielding), runs `op`,
/// and gives the unit back unless `op` completed.
#[inline(always)]
pub(crate) fn spend<T>(
    cx: &mut Context<'_>,
    op: impl FnOnce(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    let progress = std::task::ready!(poll_proceed(cx));
    let out = op(cx);
    if out.is_ready() {
        progress.made_progress();
    }
    out
}

/// A budgeted operation made of others that spend units of their own (a
/// `select!`'s arms, `JoinSet`'s handles): refuses (yielding) if the
/// budget is spent already; else runs `op` holding no unit, and spends one
/// when `op` completed having spent none itself. Holding a unit across
/// `op`, as `spend` does, would leave a budget of one unit (or nesting
/// deeper than the budget) nothing for the operations inside: refused at
/// every poll, under a budget of units alone the task would never move.
#[inline(always)]
pub(crate) fn spend_around<T>(
    cx: &mut Context<'_>,
    op: impl FnOnce(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    // A look only: the unit goes back at once.
    drop(std::task::ready!(poll_proceed(cx)));
    let before = STATE.with(|s| s.left.get());
    let out = op(cx);
    if out.is_ready() {
        STATE.with(|s| {
            let left = s.left.get();
            if left == before {
                // Never a refusal: a spent budget refuses the next operation.
                s.left.set(left.saturating_sub(1));
            }
        });
    }
    out
}

#[cfg(all(test, not(loom)))]
mod tests;
