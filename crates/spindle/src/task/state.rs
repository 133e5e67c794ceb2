//! The task state word: one `AtomicUsize` that says who may touch a task.
//!
//! ```text
//!  bit 0  RUNNING        a poller owns the future (set only by the one thread that
//!                        won the NOTIFIED -> RUNNING transition; excludes any other
//!                        poll, and excludes COMPLETE)
//!  bit 1  COMPLETE       the future is gone and the output (or the JoinError) is in
//!                        the stage; never cleared; excludes RUNNING and makes every
//!                        wake a no-op
//!  bit 2  NOTIFIED       a `Notified` reference exists (in a run queue, a LIFO slot,
//!                        the injector, or about to be pushed). Set by the waker that
//!                        found the task idle, or while RUNNING to ask the poller to
//!                        re-submit it; cleared when a poller takes it. At most one
//!                        `Notified` exists at any time.
//!  bit 3  CANCELLED      cancellation was asked for (abort, scope, shutdown); the next
//!                        poller drops the future instead of polling it. Never cleared.
//!  bit 4  JOIN_INTEREST  the JoinHandle is alive; while set and COMPLETE, the output
//!                        belongs to the JoinHandle, otherwise to the task.
//!  bit 5  JOIN_WAKER     the join waker slot holds a waker, and the slot belongs to the
//!                        task side (read-only for everyone) until the handle clears this
//!                        bit; only the handle sets or clears it, and only while not COMPLETE.
//!  bits 6..  REF_COUNT   references: JoinHandle, each Waker, the Notified, the running
//!                        poller's own and the registry's; the last one out frees the cell.
//! ```
//!
//! A new task starts `NOTIFIED | JOIN_INTEREST` with two references: the
//! `Notified` that is pushed to a queue and the `JoinHandle`. A `Notified`
//! turns into the poller's reference when it is run (see
//! [`State::transition_to_running`]); that reference is dropped when the
//! task goes idle or completes. A task that goes idle first registers in the
//! runtime's task registry, which holds a reference of its own until the
//! task completes, so an idle task always has at least that one.
//!
//! Every transition is a single CAS loop (or a fetch op) on this word, so each
//! one is atomic with respect to every other; the loom models `task_*` in
//! `src/loom_models.rs` explore wake-while-running, wake-after-complete,
//! abort-racing-completion, join-waker registration and the joiner's
//! exclusive run below.
//!
//! **The joiner alone** ([`State::claim_alone`], [`State::is_alone_running`]):
//! every thread that writes this word holds a reference, and a new reference
//! is only ever made from one already counted. So a thread holding both the
//! `Notified` and the `JoinHandle` that reads exactly two references owns
//! the task outright: no other thread can write the word until this one
//! hands out a reference (a waker, during the poll). An inline run from the
//! handle's own await (`sched/inline.rs`) uses this to claim the future
//! with a plain store, and, when the first poll returns `Ready` and the word
//! is still untouched (no waker left, no cancel, no wake, no registry entry),
//! to take the output and free the cell with no atomic read-modify-write:
//! three locked instructions fewer per fork-join (to-running, completion,
//! the handle's release).

use crate::loom::{AtomicUsize, Ordering::*};

pub(crate) const RUNNING: usize = 1 << 0;
pub(crate) const COMPLETE: usize = 1 << 1;
pub(crate) const NOTIFIED: usize = 1 << 2;
pub(crate) const CANCELLED: usize = 1 << 3;
pub(crate) const JOIN_INTEREST: usize = 1 << 4;
pub(crate) const JOIN_WAKER: usize = 1 << 5;
const REF_SHIFT: u32 = 6;
pub(crate) const REF_ONE: usize = 1 << REF_SHIFT;

/// A copy of the state word, for reading its fields.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshot(pub(crate) usize);

impl Snapshot {
    pub(crate) fn is(self, bits: usize) -> bool {
        self.0 & bits == bits
    }
    pub(crate) fn refs(self) -> usize {
        self.0 >> REF_SHIFT
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("running", &self.is(RUNNING))
            .field("complete", &self.is(COMPLETE))
            .field("notified", &self.is(NOTIFIED))
            .field("cancelled", &self.is(CANCELLED))
            .field("join_interest", &self.is(JOIN_INTEREST))
            .field("join_waker", &self.is(JOIN_WAKER))
            .field("refs", &self.refs())
            .finish()
    }
}

/// What a poller should do with a `Notified` it popped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToRunning {
    /// Poll the future.
    Poll,
    /// Cancellation was asked for: drop the future, complete as cancelled.
    Cancel,
    /// Already complete (cancelled by shutdown, say): just drop the reference.
    Done,
}

/// What a poller should do after a `Pending` poll.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ToIdle {
    /// Idle; the poller's reference is dropped.
    Idle,
    /// Woken while running: the poller's reference becomes the new `Notified`.
    Notified,
    /// Cancelled while running: cancel it now, still as the poller.
    Cancel,
}

/// What `complete_and_release` did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Completed {
    /// Completed and the references dropped; `last`: they were the last
    /// ones, the caller frees the cell.
    Released { last: bool },
    /// Completed; the references are still held (the state after is given).
    Kept(Snapshot),
}

/// What a waker found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// The task was idle: the caller now holds a `Notified` (one new reference
    /// taken, or its own reference converted when waking by value) and must
    /// schedule it.
    Submit,
    /// Nothing to do (running, already notified, or complete).
    Nothing,
}

pub(crate) struct State(AtomicUsize);

impl State {
    pub(crate) fn new() -> State {
        State(AtomicUsize::new(NOTIFIED | JOIN_INTEREST | (2 * REF_ONE)))
    }

    pub(crate) fn load(&self) -> Snapshot {
        Snapshot(self.0.load(Acquire))
    }

    /// CAS loop: `f` returns the new word and a result, or `None` to stop.
    fn update<R>(&self, mut f: impl FnMut(Snapshot) -> (Option<usize>, R)) -> R {
        let mut cur = self.0.load(Acquire);
        loop {
            let (next, r) = f(Snapshot(cur));
            let Some(next) = next else { return r };
            // AcqRel: Acquire sees the previous owner's writes to the stage
            // (a poller's output, a handle's waker); Release publishes ours.
            match self.0.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                Ok(_) => return r,
                Err(actual) => cur = actual,
            }
        }
    }

    /// A poller took the `Notified`: claim the future. The `Notified`
    /// reference becomes the poller's reference.
    pub(crate) fn transition_to_running(&self) -> ToRunning {
        self.update(|s| {
            debug_assert!(s.is(NOTIFIED), "{s:?}");
            debug_assert!(!s.is(RUNNING), "{s:?}");
            if s.is(COMPLETE) {
                return (Some(s.0 & !NOTIFIED), ToRunning::Done);
            }
            let next = (s.0 & !NOTIFIED) | RUNNING;
            let r = if s.is(CANCELLED) {
                ToRunning::Cancel
            } else {
                ToRunning::Poll
            };
            (Some(next), r)
        })
    }

    /// The caller holds the `Notified` and the `JoinHandle`: if they are the
    /// only references and nothing else was asked of the task, claim the
    /// future (as `transition_to_running` would: `Poll`) with a plain store
    /// and return `true` (module docs: the joiner alone). Otherwise change
    /// nothing and return `false`.
    pub(crate) fn claim_alone(&self) -> bool {
        // Acquire: the last other holder's release of its reference (an
        // AcqRel `ref_dec`) happens before our use of the cell.
        if self.0.load(Acquire) != NOTIFIED | JOIN_INTEREST | (2 * REF_ONE) {
            return false;
        }
        // No other thread holds a reference, so none can write the word
        // between the load and this store.
        self.0
            .store(RUNNING | JOIN_INTEREST | (2 * REF_ONE), Release);
        true
    }

    /// After a poll that followed `claim_alone` returned `Ready`: whether the
    /// poller and the handle are still the only references and nothing was
    /// asked of the task meanwhile (no wake, no cancel, no join waker). Then
    /// the caller owns the cell outright and may take the output and free
    /// it without writing the word; otherwise it completes as usual.
    pub(crate) fn is_alone_running(&self) -> bool {
        // Acquire: as in `claim_alone`, for wakers cloned during the poll and
        // dropped since, on any thread.
        self.0.load(Acquire) == RUNNING | JOIN_INTEREST | (2 * REF_ONE)
    }

    /// The future returned `Pending`. On `Idle` the poller's reference is
    /// dropped in the same step (the registry's keeps the cell alive), or,
    /// when `registered_now` (the task's first `Pending`: the registry has
    /// just taken it), it becomes the registry's: one atomic step fewer
    /// than taking a reference for the registry and dropping the poller's.
    /// On `Notified` the poller's reference becomes the Notified (and
    /// `registered_now` takes one more, the registry's). On `Cancel` nothing
    /// changes (the caller, still the poller, then takes the registry's
    /// reference itself if `registered_now`).
    pub(crate) fn transition_to_idle(&self, registered_now: bool) -> ToIdle {
        self.update(|s| {
            debug_assert!(s.is(RUNNING), "{s:?}");
            if s.is(CANCELLED) {
                return (None, ToIdle::Cancel);
            }
            if s.is(NOTIFIED) {
                let registry = if registered_now { REF_ONE } else { 0 };
                (Some((s.0 & !RUNNING) + registry), ToIdle::Notified)
            } else if registered_now {
                (Some(s.0 & !RUNNING), ToIdle::Idle)
            } else {
                debug_assert!(s.refs() >= 2, "idle task without registry ref: {s:?}");
                (Some((s.0 & !RUNNING) - REF_ONE), ToIdle::Idle)
            }
        })
    }

    /// The future finished (or was dropped) and the stage holds the output;
    /// the poller also gives up `refs` references (its own, and the
    /// registry's if it took it back) in the same step when nothing else is
    /// left to do: the JoinHandle will take the output and no join waker is
    /// set, or (`output_dropped`) nobody will read it and it is gone already.
    /// Otherwise only COMPLETE is published (`Kept`), and the caller wakes
    /// the joiner or drops the output before dropping its references.
    pub(crate) fn complete_and_release(&self, refs: usize, output_dropped: bool) -> Completed {
        self.update(|s| {
            debug_assert!(s.is(RUNNING) && !s.is(COMPLETE), "{s:?}");
            let done = s.0 ^ (RUNNING | COMPLETE);
            let nothing_left = if s.is(JOIN_INTEREST) {
                !s.is(JOIN_WAKER)
            } else {
                output_dropped
            };
            if nothing_left {
                let last = s.refs() == refs;
                (Some(done - refs * REF_ONE), Completed::Released { last })
            } else {
                (Some(done), Completed::Kept(Snapshot(done)))
            }
        })
    }

    /// A waker holding its own reference wants the task run (`wake` by value).
    /// On `Submit` the waker's reference becomes the `Notified`; on `Nothing`
    /// the caller must drop its reference.
    pub(crate) fn transition_to_notified_by_val(&self) -> Wake {
        self.update(|s| {
            if s.is(COMPLETE) || s.is(NOTIFIED) {
                (None, Wake::Nothing)
            } else if s.is(RUNNING) {
                (Some(s.0 | NOTIFIED), Wake::Nothing)
            } else {
                (Some(s.0 | NOTIFIED), Wake::Submit)
            }
        })
    }

    /// `wake_by_ref`: on `Submit` a new reference was taken for the `Notified`.
    pub(crate) fn transition_to_notified_by_ref(&self) -> Wake {
        self.update(|s| {
            if s.is(COMPLETE) || s.is(NOTIFIED) {
                (None, Wake::Nothing)
            } else if s.is(RUNNING) {
                (Some(s.0 | NOTIFIED), Wake::Nothing)
            } else {
                (Some((s.0 | NOTIFIED) + REF_ONE), Wake::Submit)
            }
        })
    }

    /// Ask for cancellation. Returns `Submit` when the task was idle: a new
    /// reference was taken for a `Notified` that the caller must schedule so
    /// that a poller drops the future on the runtime.
    pub(crate) fn transition_to_cancelled(&self) -> Wake {
        self.update(|s| {
            if s.is(COMPLETE) || s.is(CANCELLED) {
                (None, Wake::Nothing)
            } else if s.is(RUNNING) || s.is(NOTIFIED) {
                (Some(s.0 | CANCELLED), Wake::Nothing)
            } else {
                (Some((s.0 | CANCELLED | NOTIFIED) + REF_ONE), Wake::Submit)
            }
        })
    }

    /// Shutdown marks the task cancelled and claims it to cancel in place if
    /// it is idle and in no queue, taking a poller's reference. `false` if
    /// it is running, done, or queued (whoever drains that queue cancels it).
    pub(crate) fn transition_to_shutdown(&self) -> bool {
        self.update(|s| {
            if s.is(COMPLETE) {
                (None, false)
            } else if s.is(RUNNING) || s.is(NOTIFIED) {
                (Some(s.0 | CANCELLED), false)
            } else {
                (Some((s.0 | RUNNING | CANCELLED) + REF_ONE), true)
            }
        })
    }

    /// The JoinHandle is dropped. `Err` when the task is complete: the handle
    /// then owns the output and must drop it. `Ok`: JOIN_WAKER is cleared
    /// with the interest, so the waker slot is the handle's to empty.
    pub(crate) fn unset_join_interest(&self) -> Result<(), ()> {
        self.update(|s| {
            debug_assert!(s.is(JOIN_INTEREST));
            if s.is(COMPLETE) {
                (None, Err(()))
            } else {
                (Some(s.0 & !(JOIN_INTEREST | JOIN_WAKER)), Ok(()))
            }
        })
    }

    /// The handle stored a waker in the empty slot; publish it. `Err` with the
    /// current state when the task completed first (the slot stays the handle's).
    pub(crate) fn set_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            debug_assert!(s.is(JOIN_INTEREST) && !s.is(JOIN_WAKER));
            if s.is(COMPLETE) {
                (None, Err(s))
            } else {
                (Some(s.0 | JOIN_WAKER), Ok(Snapshot(s.0 | JOIN_WAKER)))
            }
        })
    }

    /// The handle takes the waker slot back to replace the waker. `Err` when
    /// the task completed (the slot is then read-only for good).
    pub(crate) fn unset_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|s| {
            debug_assert!(s.is(JOIN_INTEREST) && s.is(JOIN_WAKER));
            if s.is(COMPLETE) {
                (None, Err(s))
            } else {
                (Some(s.0 & !JOIN_WAKER), Ok(Snapshot(s.0 & !JOIN_WAKER)))
            }
        })
    }

    pub(crate) fn ref_inc(&self) {
        // Relaxed: a new reference is made from an existing one, which keeps
        // the cell alive; no data is published (as `Arc::clone`).
        let prev = self.0.fetch_add(REF_ONE, Relaxed);
        if prev > isize::MAX as usize {
            std::process::abort();
        }
    }

    /// Drops `n` references; `true` when they were the last ones.
    pub(crate) fn ref_dec(&self, n: usize) -> bool {
        // AcqRel: Release orders our uses of the cell before the free; the
        // last dropper's Acquire sees every other dropper's uses (as `Arc`).
        let prev = self.0.fetch_sub(n * REF_ONE, AcqRel);
        debug_assert!(Snapshot(prev).refs() >= n, "{:?}", Snapshot(prev));
        Snapshot(prev).refs() == n
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn new_task_is_notified_with_two_refs() {
        let s = State::new().load();
        assert!(s.is(NOTIFIED | JOIN_INTEREST));
        assert_eq!(s.refs(), 2);
    }

    #[test]
    fn wake_while_running_is_resubmitted_by_the_poller() {
        let st = State::new();
        assert_eq!(st.transition_to_running(), ToRunning::Poll);
        assert_eq!(st.transition_to_notified_by_ref(), Wake::Nothing);
        assert_eq!(st.transition_to_idle(false), ToIdle::Notified);
        assert!(st.load().is(NOTIFIED));
    }

    #[test]
    fn wake_after_complete_does_nothing() {
        let st = State::new();
        st.transition_to_running();
        st.complete_and_release(1, false);
        let s = st.load();
        assert!(s.is(COMPLETE) && !s.is(RUNNING));
        assert_eq!(st.transition_to_notified_by_ref(), Wake::Nothing);
        assert_eq!(st.transition_to_cancelled(), Wake::Nothing);
    }

    #[test]
    fn cancel_idle_task_takes_a_ref_and_asks_to_submit() {
        let st = State::new();
        st.transition_to_running();
        st.ref_inc(); // the registry's
        assert_eq!(st.transition_to_idle(false), ToIdle::Idle);
        let before = st.load().refs();
        assert_eq!(st.transition_to_cancelled(), Wake::Submit);
        assert_eq!(st.load().refs(), before + 1);
        assert_eq!(st.transition_to_running(), ToRunning::Cancel);
    }

    #[test]
    fn completion_releases_at_once_unless_a_joiner_waits_or_the_output_is_ours() {
        // A handle that has not polled yet: release with the completion.
        let st = State::new();
        st.transition_to_running();
        assert_eq!(
            st.complete_and_release(1, false),
            Completed::Released { last: false }
        );
        assert!(st.load().is(COMPLETE | JOIN_INTEREST) && st.load().refs() == 1);
        // A join waker is set: keep the reference to wake it.
        let st = State::new();
        st.transition_to_running();
        st.set_join_waker().unwrap();
        assert!(matches!(st.complete_and_release(1, false), Completed::Kept(s) if s.refs() == 2));
        // The handle went before completion and the output was not dropped yet.
        let st = State::new();
        st.transition_to_running();
        st.unset_join_interest().unwrap();
        assert!(matches!(
            st.complete_and_release(1, false),
            Completed::Kept(_)
        ));
        // ... and when it was: the last reference goes.
        let st = State::new();
        st.transition_to_running();
        st.unset_join_interest().unwrap();
        st.ref_dec(1); // the handle's
        assert_eq!(
            st.complete_and_release(1, true),
            Completed::Released { last: true }
        );
    }

    #[test]
    fn a_first_idle_hands_the_pollers_reference_to_the_registry() {
        let st = State::new(); // the Notified's reference and the handle's
        st.transition_to_running();
        assert_eq!(st.transition_to_idle(true), ToIdle::Idle);
        assert_eq!(st.load().refs(), 2, "the poller's is now the registry's");
        // Woken while running at the first Pending: the poller's reference
        // becomes the Notified, and the registry gets one of its own.
        let st = State::new();
        st.transition_to_running();
        assert_eq!(st.transition_to_notified_by_ref(), Wake::Nothing);
        assert_eq!(st.transition_to_idle(true), ToIdle::Notified);
        assert_eq!(st.load().refs(), 3);
        // Cancelled: nothing changes.
        let st = State::new();
        st.transition_to_running();
        st.transition_to_cancelled();
        assert_eq!(st.transition_to_idle(true), ToIdle::Cancel);
        assert_eq!(st.load().refs(), 2);
    }

    #[test]
    fn the_joiner_is_alone_only_with_two_untouched_references() {
        let st = State::new();
        assert!(st.claim_alone());
        assert!(st.load().is(RUNNING) && !st.load().is(NOTIFIED));
        assert!(st.is_alone_running());
        // A waker clone outlives the poll: not alone any more.
        st.ref_inc();
        assert!(!st.is_alone_running());
        st.ref_dec(1);
        assert!(st.is_alone_running());
        // A wake while running: the poller must re-submit, not free.
        assert_eq!(st.transition_to_notified_by_ref(), Wake::Nothing);
        assert!(!st.is_alone_running());

        // Cancelled, or a third reference (registry, abort handle): refused.
        let st = State::new();
        st.ref_inc();
        assert!(!st.claim_alone());
        let st = State::new();
        st.transition_to_cancelled();
        assert!(!st.claim_alone());
        assert_eq!(st.load().refs(), 2, "a refused claim changes nothing");
    }

    #[test]
    fn join_waker_slot_is_refused_after_complete() {
        let st = State::new();
        st.transition_to_running();
        st.complete_and_release(1, false);
        assert!(st.set_join_waker().is_err());
        assert!(st.unset_join_interest().is_err());
    }
}
