//! [`WaitGroup`]: Go's `sync.WaitGroup` for tasks: wait until a count of
//! outstanding pieces of work falls to zero.
//!
//! An atomic count and a [`Notify`]. The `done` that takes the count from
//! one to zero calls [`Notify::notify_waiters`], which wakes every
//! `Notified` made before it. A waiter makes its `Notified` first and
//! reads the count after, so either it reads zero, or the `done` that
//! reaches zero comes after its `Notified` was made and wakes it: no
//! waiter misses the transition. A woken waiter returns, even if `add`
//! has raised the count again since (as Go's).

use super::notify::Notify;
use crate::loom::{AtomicUsize, Ordering};
use std::fmt;

/// Waits for a count of tasks (or any pieces of work) to finish.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// use std::sync::Arc;
/// let wg = Arc::new(spindle::sync::WaitGroup::new());
/// for _ in 0..3 {
///     wg.add(1);
///     let wg = wg.clone();
///     spindle::spawn(async move { wg.done() });
/// }
/// wg.wait().await;
/// assert_eq!(wg.count(), 0);
/// # });
/// ```
pub struct WaitGroup {
    count: AtomicUsize,
    zero: Notify,
}

impl WaitGroup {
    /// A group with a count of zero.
    pub fn new() -> WaitGroup {
        WaitGroup {
            count: AtomicUsize::new(0),
            zero: Notify::new(),
        }
    }

    /// Adds `n` to the count; call it before starting the work that will
    /// call [`done`](WaitGroup::done).
    ///
    /// # Panics
    /// If the count would overflow.
    pub fn add(&self, n: usize) {
        let added = self
            .count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_add(n));
        assert!(added.is_ok(), "WaitGroup counter overflow");
    }

    /// Takes one from the count; the call that reaches zero wakes every
    /// waiter.
    ///
    /// # Panics
    /// If the count is already zero ("negative WaitGroup counter", as
    /// Go's): more `done` calls than `add`ed.
    pub fn done(&self) {
        let before = self
            .count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1));
        match before {
            Ok(1) => self.zero.notify_waiters(),
            Ok(_) => {}
            Err(_) => panic!("negative WaitGroup counter: done() called more times than add()"),
        }
    }

    /// Waits until the count is zero; returns at once if it is.
    pub async fn wait(&self) {
        // Made before the count is read, so a `done` that reaches zero
        // after the read wakes it.
        let zero = self.zero.notified();
        if self.count() == 0 {
            // Ready at once: still a unit of the budget, as every wait.
            crate::task::coop::consume_budget().await;
            return;
        }
        zero.await;
    }

    /// The count now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

impl Default for WaitGroup {
    fn default() -> WaitGroup {
        WaitGroup::new()
    }
}

impl fmt::Debug for WaitGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitGroup")
            .field("count", &self.count())
            .finish()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::chan::blocking::block_on;
    use loom::thread;

    /// The last `done` races a waiter between making its `Notified` and
    /// reading the count: the waiter returns either way (a missed wake-up
    /// is a loom deadlock).
    #[test]
    fn the_last_done_racing_a_waiter() {
        loom::model(|| {
            let wg = crate::loom::Arc::new(WaitGroup::new());
            wg.add(2);
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    let wg = wg.clone();
                    thread::spawn(move || wg.done())
                })
                .collect();
            block_on(std::pin::pin!(wg.wait()));
            assert_eq!(wg.count(), 0);
            for t in workers {
                t.join().unwrap();
            }
        });
    }
}
