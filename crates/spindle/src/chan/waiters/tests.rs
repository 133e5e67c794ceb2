//! Unit tests of the wait list's capped wake-ups: the limit, the baton a
//! re-registered waiter keeps, the valve (`nudge`) and close.

use super::*;
use std::sync::atomic::AtomicUsize as Count;
use std::sync::Arc;
use std::task::Wake;

/// A waker that counts its wake-ups.
struct Counter(Count);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

const FLAG: u64 = 2;

/// A list capped at one wake-up in flight, its flag word, and waiters
/// `0..n` registered in that order, each with a counting waker.
struct Fixture {
    word: ClaimWord,
    list: WaitList,
    counters: Vec<Arc<Counter>>,
    wakers: Vec<Waker>,
    keys: Vec<Option<usize>>,
}

impl Fixture {
    fn new(n: usize) -> Fixture {
        let counters: Vec<_> = (0..n).map(|_| Arc::new(Counter(Count::new(0)))).collect();
        let mut f = Fixture {
            word: ClaimWord::new(),
            list: WaitList::with_limit(1),
            wakers: counters.iter().map(|c| Waker::from(c.clone())).collect(),
            counters,
            keys: vec![None; n],
        };
        for i in 0..n {
            f.register(i);
        }
        f
    }

    fn signal(&self) -> Signal<'_> {
        Signal::Flag(&self.word, FLAG)
    }

    fn flag_up(&self) -> bool {
        self.word.load(Ordering::Relaxed) & FLAG != 0
    }

    /// Wake-ups each waiter got so far.
    fn woken(&self) -> Vec<usize> {
        self.counters
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .collect()
    }

    fn register(&mut self, i: usize) {
        let signal = Signal::Flag(&self.word, FLAG);
        self.list
            .register(&mut self.keys[i], &self.wakers[i], signal);
    }

    /// Waiter `i` completes its operation: whether it had been notified.
    fn complete(&mut self, i: usize) -> bool {
        let signal = Signal::Flag(&self.word, FLAG);
        self.list.complete(&mut self.keys[i], signal)
    }

    fn cancel(&mut self, i: usize) {
        let signal = Signal::Flag(&self.word, FLAG);
        self.list.cancel(&mut self.keys[i], signal);
    }
}

#[test]
fn a_limited_list_wakes_at_most_limit_and_the_woken_pass_it_on() {
    let mut f = Fixture::new(2);
    assert!(f.flag_up(), "a waiter is linked");
    f.list.notify_one(f.signal());
    assert_eq!(f.woken(), [1, 0]);
    assert!(!f.flag_up(), "saturated: the flag is down");
    // Absorbed: the one woken passes it on.
    f.list.notify_one(f.signal());
    f.list.notify_many(3, f.signal());
    assert_eq!(f.woken(), [1, 0]);

    // 0 completes its operation: its slot frees while 1 is linked, so
    // the flag is up again before the caller's re-check.
    assert!(f.complete(0));
    assert!(f.flag_up());
    f.list.wake_oldest(f.signal());
    assert_eq!(f.woken(), [1, 1]);
    assert!(!f.flag_up(), "nobody is linked");
    assert!(f.complete(1));
    assert_eq!(f.list.waiting(), 0);
}

#[test]
fn a_woken_waiter_that_registers_again_frees_its_slot() {
    let mut f = Fixture::new(2);
    f.list.notify_one(f.signal());
    // 0 found nothing and parks again, behind 1: 1 is wakeable now.
    f.register(0);
    assert!(f.flag_up());
    f.list.notify_one(f.signal());
    assert_eq!(f.woken(), [1, 1]);
    f.cancel(1);
    // 1's unused wake-up goes to 0.
    assert_eq!(f.woken(), [2, 1]);
    f.complete(0);
}

#[test]
fn a_woken_waiter_that_parks_again_keeps_the_baton() {
    let mut f = Fixture::new(2);
    f.list.notify_one(f.signal());
    f.register(0);
    // Its re-check then finds a message: the wake-up it held is
    // reported, for the caller to pass on; 1 was never woken.
    assert!(f.complete(0), "the baton is reported");
    assert!(!f.complete(1));
}

#[test]
fn a_nudge_wakes_past_the_limit_only_when_saturated() {
    let mut f = Fixture::new(3);
    f.list.nudge();
    assert_eq!(f.woken(), [0, 0, 0], "a free slot: notifies do the waking");
    f.list.notify_one(f.signal());
    // 0 was woken and is never polled: a nudge wakes 1 past the limit.
    f.list.nudge();
    assert_eq!(f.woken(), [1, 1, 0]);
    assert!(!f.flag_up());
    // Two woken, limit one: 1's completion frees no slot (2 stays down).
    f.complete(1);
    assert!(!f.flag_up());
    f.complete(0);
    assert!(f.flag_up(), "2 linked, a slot free");
    f.list.notify_one(f.signal());
    assert_eq!(f.woken(), [1, 1, 1]);
    f.complete(2);
}

#[test]
fn close_wakes_everyone_whatever_the_limit() {
    let mut f = Fixture::new(2);
    f.list.notify_one(f.signal());
    f.list.notify_all(f.signal());
    assert_eq!(f.woken(), [1, 1]);
    assert!(!f.flag_up());
    f.complete(0);
    f.complete(1);
    assert!(!f.flag_up());
}
