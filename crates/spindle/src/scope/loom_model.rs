//! Loom models of a scope's `live` count and its stocks.

use super::*;
use crate::loom_models::TestSched;

/// A child lists itself at its first suspension while another thread
/// cancels the scope: whichever comes first, the child is cancelled
/// (without the re-check after listing, a cancel that took the list
/// just before would leave it waiting for ever).
#[test]
fn a_child_listing_itself_races_a_cancel() {
    loom::model(|| {
        let inner = Arc::new(Inner::<Infallible>::new());
        let sched = TestSched::default();
        let (first_poll, handle) = sched.spawn(Child::new(
            std::future::pending::<()>(),
            Guard::new(&inner, CHILD),
        ));
        let canceller = {
            let inner = inner.clone();
            loom::thread::spawn(move || inner.cancel_all())
        };
        first_poll.run();
        canceller.join().unwrap();
        while let Some(task) = sched.pop() {
            task.run();
        }
        assert!(handle.is_finished(), "the child was cancelled");
        assert_eq!(inner.live.load(Acquire), 0);
    });
}

/// A spawn through an escaped `Scope` races the scope's return: while
/// the spawn holds a child's units the scope cannot close, and once it
/// closed the spawn is refused, `live` left at `CLOSED`.
#[test]
fn an_escaped_spawn_racing_the_scopes_return() {
    loom::model(|| {
        let inner = Arc::new(Inner::<Infallible>::new());
        let held = Arc::new(AtomicBool::new(false));
        let spawner = {
            let (inner, held) = (inner.clone(), held.clone());
            loom::thread::spawn(move || {
                let guard = Guard::try_new(&inner, CHILD)?;
                held.store(true, SeqCst);
                loom::thread::yield_now();
                held.store(false, SeqCst);
                drop(guard);
                Some(())
            })
        };
        let closed = inner.close();
        if closed {
            assert!(!held.load(SeqCst), "closed while a child's units were out");
        }
        let spawned = spawner.join().unwrap().is_some();
        assert!(
            closed || spawned,
            "the close fails only while a spawn holds units"
        );
        if closed {
            assert_eq!(inner.live.load(SeqCst), CLOSED);
        }
    });
}

/// A body's poll takes units ahead for two children and gives the one
/// left back; one child ends on another thread while the other ends
/// and the body finishes here. Whichever guard comes last, `live` ends
/// at 0 and the holders' strong count is given back exactly once.
#[test]
fn units_taken_ahead_by_a_body_and_children_ending_elsewhere() {
    loom::model(|| {
        let inner = Arc::new(Inner::<Infallible>::new());
        let body = Guard::new(&inner, BODY);
        let (first, second) = {
            let _stock = PollStock::open(&inner);
            let first = PollStock::take_child(&inner).expect("polling the body");
            let second = PollStock::take_child(&inner).expect("polling the body");
            assert_eq!(PollStock::held(&inner), 1, "refills of 1, then 2");
            (first, second)
        };
        assert_eq!(inner.live.load(Relaxed), BODY + 2 * CHILD);
        let elsewhere = loom::thread::spawn(move || drop(first));
        drop(second);
        drop(body);
        elsewhere.join().unwrap();
        assert_eq!(inner.live.load(Acquire), 0);
        assert_eq!(Arc::strong_count(&inner), 1);
    });
}
