//! Unit tests of `join_all`, `race` and `when_n`: output order, which
//! futures each poll polls, drops, pinning and panics.

use super::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;

/// What the test and one probe future share.
#[derive(Default)]
struct Shared {
    output: Mutex<Option<u32>>,
    waker: Mutex<Option<Waker>>,
    polls: AtomicUsize,
    drops: AtomicUsize,
}

/// A future that finishes when its test says so, counting its polls
/// and drops.
struct Probe(Arc<Shared>);

impl Future for Probe {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        self.0.polls.fetch_add(1, SeqCst);
        if let Some(v) = *lock(&self.0.output) {
            return Poll::Ready(v);
        }
        *lock(&self.0.waker) = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.0.drops.fetch_add(1, SeqCst);
    }
}

fn probes(n: usize) -> (Vec<Arc<Shared>>, Vec<Probe>) {
    let shared: Vec<_> = (0..n).map(|_| Arc::new(Shared::default())).collect();
    let futures = shared.iter().map(|s| Probe(s.clone())).collect();
    (shared, futures)
}

/// Finishes probe `s` with `v`, waking whoever polled it last.
fn finish(s: &Shared, v: u32) {
    *lock(&s.output) = Some(v);
    if let Some(w) = lock(&s.waker).take() {
        w.wake();
    }
}

fn polls(shared: &[Arc<Shared>]) -> Vec<usize> {
    shared.iter().map(|s| s.polls.load(SeqCst)).collect()
}

fn drops(shared: &[Arc<Shared>]) -> Vec<usize> {
    shared.iter().map(|s| s.drops.load(SeqCst)).collect()
}

/// The parent's waker, counting its wakes.
#[derive(Default)]
struct Parent(AtomicUsize);

impl Wake for Parent {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn poll<F: Future + Unpin>(f: &mut F, parent: &Arc<Parent>) -> Poll<F::Output> {
    let waker = Waker::from(parent.clone());
    Pin::new(f).poll(&mut Context::from_waker(&waker))
}

/// `n` probes under the combinator `make` builds, polled once: each
/// probe polled once, none finished.
fn started<C: Future + Unpin>(
    n: usize,
    make: impl FnOnce(Vec<Probe>) -> C,
) -> (Arc<Parent>, Vec<Arc<Shared>>, C) {
    let parent = Arc::new(Parent::default());
    let (shared, futures) = probes(n);
    let mut c = make(futures);
    assert!(poll(&mut c, &parent).is_pending());
    assert_eq!(polls(&shared), vec![1; n]);
    (parent, shared, c)
}

const SIZES: [usize; 5] = [1, 2, SMALL, SMALL + 1, 100];

/// Within one parent poll each future is polled at most once, also one
/// that wakes itself while polled (what `yield_now` does).
#[test]
fn a_future_that_wakes_itself_waits_for_the_next_parent_poll() {
    struct Yields(Arc<AtomicUsize>);
    impl Future for Yields {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0.fetch_add(1, SeqCst) == 2 {
                return Poll::Ready(());
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
    for n in SIZES {
        let parent = Arc::new(Parent::default());
        let counts: Vec<_> = (0..n).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let mut all = join_all(counts.iter().map(|c| Yields(c.clone())));
        for round in 1..=2 {
            assert!(poll(&mut all, &parent).is_pending(), "{n} futures");
            let polls: Vec<_> = counts.iter().map(|c| c.load(SeqCst)).collect();
            assert_eq!(polls, vec![round; n], "{n} futures, parent poll {round}");
            assert!(parent.0.load(SeqCst) >= 1, "the parent is woken to go on");
        }
        assert!(poll(&mut all, &parent).is_ready());
    }
}

#[test]
fn join_all_gives_outputs_in_input_order_however_they_finish() {
    for n in SIZES {
        let (parent, shared, mut all) = started(n, join_all);
        for (i, s) in shared.iter().enumerate().rev() {
            let woken = parent.0.load(SeqCst);
            finish(s, i as u32 * 3);
            assert_eq!(
                parent.0.load(SeqCst),
                woken + 1,
                "n={n}: a finish wakes the parent"
            );
            let r = poll(&mut all, &parent);
            if i > 0 {
                assert!(r.is_pending(), "n={n}: pending with {i} left");
            } else {
                let want: Vec<u32> = (0..n as u32).map(|i| i * 3).collect();
                assert_eq!(r, Poll::Ready(want), "n={n}");
            }
        }
        assert_eq!(
            drops(&shared),
            vec![1; n],
            "n={n}: each future dropped once"
        );
    }
    let empty: Vec<Probe> = Vec::new();
    assert_eq!(
        poll(&mut join_all(empty), &Arc::default()),
        Poll::Ready(vec![])
    );
}

#[test]
fn a_small_group_polls_each_unfinished_future_once_per_poll() {
    let (parent, shared, mut all) = started(10, join_all);
    finish(&shared[3], 0);
    assert!(poll(&mut all, &parent).is_pending());
    assert_eq!(
        polls(&shared),
        vec![2; 10],
        "every unfinished one polled again, once"
    );
    finish(&shared[7], 0);
    assert!(poll(&mut all, &parent).is_pending());
    let mut want = vec![3; 10];
    want[3] = 2; // finished: never polled again
    assert_eq!(polls(&shared), want);
}

#[test]
fn a_large_group_polls_only_the_woken_futures() {
    let (parent, shared, mut all) = started(100, join_all);
    finish(&shared[37], 0);
    finish(&shared[5], 0);
    assert!(poll(&mut all, &parent).is_pending());
    let mut want = vec![1; 100];
    want[37] = 2;
    want[5] = 2;
    assert_eq!(polls(&shared), want);
    // A poll with nothing woken polls nothing.
    assert!(poll(&mut all, &parent).is_pending());
    assert_eq!(polls(&shared), want);
}

#[test]
fn race_drops_the_losers_as_soon_as_it_has_a_winner() {
    for n in SIZES {
        let (parent, shared, mut race) = started(n, race);
        let k = n / 2;
        finish(&shared[k], 7);
        assert_eq!(poll(&mut race, &parent), Poll::Ready(Some((k, 7))), "n={n}");
        assert_eq!(
            drops(&shared),
            vec![1; n],
            "n={n}: losers dropped before the Race"
        );
        drop(race);
        assert_eq!(drops(&shared), vec![1; n], "n={n}: and only once");
    }
    let empty: Vec<Probe> = Vec::new();
    assert_eq!(poll(&mut race(empty), &Arc::default()), Poll::Ready(None));
}

#[test]
fn race_in_a_small_group_goes_to_the_lowest_index_finished_in_one_pass() {
    let (parent, shared, mut race) = started(4, race);
    finish(&shared[3], 3);
    finish(&shared[1], 1);
    assert_eq!(poll(&mut race, &parent), Poll::Ready(Some((1, 1))));
}

#[test]
fn when_n_reports_in_finish_order_and_drops_the_rest() {
    for n in SIZES.into_iter().filter(|&n| n >= 10) {
        let (parent, shared, mut first3) = started(n, |f| when_n(3, f));
        for k in [5, 2] {
            finish(&shared[k], k as u32);
            assert!(poll(&mut first3, &parent).is_pending(), "n={n}");
        }
        assert_eq!(
            drops(&shared).iter().sum::<usize>(),
            2,
            "n={n}: the finished ones"
        );
        finish(&shared[8], 8);
        assert_eq!(
            poll(&mut first3, &parent),
            Poll::Ready(vec![(5, 5), (2, 2), (8, 8)]),
            "n={n}"
        );
        assert_eq!(
            drops(&shared),
            vec![1; n],
            "n={n}: the rest dropped at once"
        );
    }
    // Asking for more than there are gives them all.
    let (shared, futures) = probes(3);
    for (i, s) in shared.iter().enumerate() {
        finish(s, i as u32);
    }
    let got = poll(&mut when_n(5, futures), &Arc::default());
    assert_eq!(got, Poll::Ready(vec![(0, 0), (1, 1), (2, 2)]));
}

/// A future that holds a reference into itself across a suspension:
/// moving it after its first poll would leave the reference dangling
/// (which miri reports).
async fn self_referential(gate: Probe) -> u32 {
    let local = [7u8; 32];
    let r = &local;
    gate.await;
    r.iter().map(|&b| u32::from(b)).sum()
}

#[test]
fn futures_stay_pinned_while_the_combinator_moves() {
    for n in SIZES {
        let parent = Arc::new(Parent::default());
        let (shared, gates) = probes(n);
        let all = join_all(gates.into_iter().map(self_referential));
        let mut all = Box::new(all);
        assert!(poll(&mut *all, &parent).is_pending());
        let mut moved = *all;
        for s in &shared {
            finish(s, 0);
        }
        assert_eq!(
            poll(&mut moved, &parent),
            Poll::Ready(vec![224; n]),
            "n={n}"
        );
    }
}

#[test]
fn a_panicking_future_leaves_the_others_to_be_dropped_once() {
    for n in SIZES.into_iter().filter(|&n| n >= 2) {
        let (shared, futures) = probes(n);
        let boom = n - 1;
        let mut all = join_all(futures.into_iter().enumerate().map(|(i, p)| async move {
            assert!(i != boom, "boom");
            p.await
        }));
        let r = catch_unwind(AssertUnwindSafe(|| poll(&mut all, &Arc::default())));
        assert!(r.is_err(), "n={n}: the panic reaches the poller");
        drop(all);
        // The panicking future's probe went as it unwound; the rest
        // with the group.
        assert_eq!(drops(&shared), vec![1; n], "n={n}");
    }
}

#[test]
#[should_panic(expected = "`join_all` polled after it completed")]
fn join_all_polled_after_completion_says_so() {
    let mut all = join_all(vec![std::future::ready(1)]);
    let parent = Arc::default();
    assert_eq!(poll(&mut all, &parent), Poll::Ready(vec![1]));
    let _ = poll(&mut all, &parent);
}

#[test]
#[should_panic(expected = "`race` polled after it completed")]
fn race_polled_after_completion_says_so() {
    let mut r = race(vec![std::future::ready(1)]);
    let parent = Arc::default();
    assert_eq!(poll(&mut r, &parent), Poll::Ready(Some((0, 1))));
    let _ = poll(&mut r, &parent);
}
