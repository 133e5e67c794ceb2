//! The budget's unit tests: refusals, refills, scopes and sections.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Wake;

struct Count(AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn spend(cx: &mut Context<'_>) -> bool {
    match poll_proceed(cx) {
        Poll::Ready(p) => {
            p.made_progress();
            true
        }
        Poll::Pending => false,
    }
}

/// Operations that proceed before the first refusal (at most 1000).
fn spends_until_refused(cx: &mut Context<'_>) -> usize {
    (0..1000).take_while(|_| spend(cx)).count()
}

/// A scheduler's scope of `units`, and a poll started in it.
fn poll_in_scope(units: u32) -> Scope {
    let scope = Scope::enter(units);
    start_poll();
    scope
}

fn let_the_slice_pass() {
    std::thread::sleep(SLICE * 2);
}

#[test]
fn a_spent_budget_refuses_after_its_slice_wakes_and_reports_a_forced_yield() {
    let woken = Arc::new(Count(AtomicUsize::new(0)));
    let waker = std::task::Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    let scope = poll_in_scope(3);
    assert!((0..3).all(|_| spend(&mut cx)));
    assert!(spend(&mut cx), "a first spent budget is refilled");
    assert!(!poll_forced_yield());
    let_the_slice_pass();
    assert_eq!(spends_until_refused(&mut cx), 2, "the refill's last units");
    assert_eq!(woken.0.load(SeqCst), 1, "and the task woken to run again");
    assert!(poll_forced_yield());
    assert!(!spend(&mut cx), "refused from then on");
    drop(scope);
    assert_eq!(
        spends_until_refused(&mut cx),
        1000,
        "unlimited outside a poll"
    );
}

#[test]
fn refills_double_while_the_slice_has_room_and_halve_when_it_runs_short() {
    let units = 128;
    let max = units * MAX_REFILL;
    let next = |rest, took, last| next_refill(rest, took, last, units);
    assert_eq!(next(SLICE, SLICE / 10, units), Some(2 * units));
    assert_eq!(
        next(SLICE, SLICE / 10, max),
        Some(max),
        "at most MAX_REFILL"
    );
    assert_eq!(
        next(SLICE / 2, SLICE / 2, 512),
        Some(512),
        "as long as the rest"
    );
    assert_eq!(next(SLICE / 4, SLICE / 2, 512), Some(256));
    assert_eq!(
        next(SLICE / 4, SLICE / 2, units),
        Some(units),
        "never below"
    );
    assert_eq!(next(Duration::ZERO, SLICE / 10, 512), None, "slice over");
}

/// A poll of fast operations gets refills past its budget's size. In
/// any of five polls (a preempted one may see its slice run out
/// first).
#[test]
#[cfg_attr(miri, ignore = "times operations against the real clock")]
fn a_poll_of_fast_operations_gets_growing_refills() {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let units = 4;
    let _scope = Scope::enter(units);
    let grew = (0..5).any(|_| {
        start_poll();
        (0..1000)
            .take_while(|_| spend(&mut cx))
            .any(|_| STATE.with(|s| s.refill.get()) > units)
    });
    assert!(grew, "every refill stayed at the budget's size");
}

#[test]
fn a_unit_comes_back_when_the_operation_did_not_complete() {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let _budget = poll_in_scope(5);
    for _ in 0..10 {
        let p = poll_proceed(&mut cx);
        assert!(p.is_ready());
        drop(p); // Pending for its own reasons: refunded
    }
    assert!((0..5).all(|_| spend(&mut cx)), "all five units are left");
    assert!(spend(&mut cx), "refilled: the slice starts");
    let_the_slice_pass();
    assert_eq!(spends_until_refused(&mut cx), 4);
}

#[test]
fn a_unit_taken_before_a_refusal_is_not_given_back() {
    // An operation waiting on a child run inline, whose own operation
    // was refused: the budget stays spent for the rest of the poll.
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let _budget = poll_in_scope(1);
    let pending = poll_proceed(&mut cx);
    assert!(pending.is_ready());
    assert!(spend(&mut cx), "refilled: the slice starts");
    let_the_slice_pass();
    assert!(!spend(&mut cx), "refused");
    drop(pending);
    assert!(!spend(&mut cx), "still refused");
}

#[test]
fn a_counted_budget_refuses_when_its_units_are_spent_without_a_clock() {
    let woken = Arc::new(Count(AtomicUsize::new(0)));
    let waker = std::task::Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    let _scope = Scope::enter_counted(3);
    start_poll();
    assert_eq!(spends_until_refused(&mut cx), 3, "no refill");
    assert_eq!(woken.0.load(SeqCst), 1);
    assert!(poll_forced_yield());
    start_poll();
    assert_eq!(spends_until_refused(&mut cx), 3, "a new poll, a new budget");
}

#[test]
fn unconstrained_sections_nest_and_leave_the_budget_as_it_was() {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let _budget = poll_in_scope(1);
    let spend_500 = || std::future::poll_fn(|cx| Poll::Ready((0..500).all(|_| spend(cx))));
    let mut outer = std::pin::pin!(unconstrained(async move {
        let inner = unconstrained(spend_500()).await;
        // Still off in the outer section once the inner one is over.
        inner && spend_500().await
    }));
    assert_eq!(outer.as_mut().poll(&mut cx), Poll::Ready(true));
    assert!(spend(&mut cx), "the poll's one unit is still there");
    assert!(spend(&mut cx), "refilled: the slice starts");
    let_the_slice_pass();
    assert!(!spend(&mut cx));
}

#[test]
fn a_nested_scope_restores_the_outer_one() {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let _outer = poll_in_scope(2);
    assert!(spend(&mut cx));
    {
        let _inner = poll_in_scope(1);
        assert!(spend(&mut cx) && spend(&mut cx));
        let_the_slice_pass();
        assert!(!spend(&mut cx));
        assert!(poll_forced_yield());
    }
    assert!(!poll_forced_yield());
    assert!(spend(&mut cx), "the outer poll's last unit");
    assert!(spend(&mut cx), "refilled: its own slice starts only now");
    let_the_slice_pass();
    assert_eq!(spends_until_refused(&mut cx), 1);
}
