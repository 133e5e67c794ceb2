//! [`Notify`]: wakes one waiting task, or all of them, as Tokio's.
//!
//! One lock guards the state: a stored permit (a `notify_one` that found
//! no waiter), the queue of waiting `Notified` futures oldest first (keyed
//! by a ticket that only grows), the tickets `notify_one` picked whose
//! futures have not yet seen it, and a count of `notify_waiters` calls.
//!
//! Invariants, each kept under the lock:
//! - A `notify_one` goes to exactly one place: the oldest queued waiter
//!   (moved to `picked` and woken) or the stored permit (at most one).
//! - A `Notified` dropped while in `picked` passes its notification on by
//!   running `notify_one` again, so a cancelled waiter loses none.
//! - `notify_waiters` empties the queue and bumps the count; a `Notified`
//!   created before the bump completes even if first polled after it, and
//!   it stores no permit.
//! - Wakers are woken after the lock is released.

use crate::loom::{lock, Mutex};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Wakes tasks waiting for an event.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// use std::sync::Arc;
/// let notify = Arc::new(spindle::sync::Notify::new());
/// let n = notify.clone();
/// let waiter = spindle::spawn(async move { n.notified().await });
/// notify.notify_one(); // stored if the waiter has not started yet
/// waiter.await.unwrap();
/// # });
/// ```
pub struct Notify {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// A `notify_one` that found no waiter, for the next `notified()`.
    permit: bool,
    /// Waiting futures, oldest first, with the waker to call.
    waiting: BTreeMap<u64, Option<Waker>>,
    /// Futures that `notify_one` picked and that have not yet completed.
    picked: BTreeSet<u64>,
    /// How many `notify_waiters` calls there have been.
    rounds: u64,
    next_ticket: u64,
}

impl State {
    /// Picks the oldest waiter, or stores the permit; returns the waker.
    fn notify_one(&mut self) -> Option<Waker> {
        match self.waiting.pop_first() {
            Some((ticket, waker)) => {
                self.picked.insert(ticket);
                waker
            }
            None => {
                self.permit = true;
                None
            }
        }
    }
}

impl Notify {
    /// A `Notify` with no stored permit.
    pub fn new() -> Notify {
        Notify {
            state: Mutex::new(State::default()),
        }
    }

    /// A future that completes on a `notify_one` (or a stored permit) or
    /// on a `notify_waiters` called after this call.
    pub fn notified(&self) -> Notified<'_> {
        let rounds = lock(&self.state).rounds;
        Notified {
            notify: self,
            rounds,
            step: Step::Init,
        }
    }

    /// Wakes the oldest waiting `Notified`, or, with none waiting, stores
    /// one permit that the next `notified()` takes at once.
    pub fn notify_one(&self) {
        let waker = lock(&self.state).notify_one();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Wakes every `Notified` created before this call; stores nothing.
    pub fn notify_waiters(&self) {
        let wakers: Vec<Waker> = {
            let mut st = lock(&self.state);
            st.rounds += 1;
            std::mem::take(&mut st.waiting)
                .into_values()
                .flatten()
                .collect()
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl Default for Notify {
    fn default() -> Notify {
        Notify::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.state);
        f.debug_struct("Notify")
            .field("permit", &st.permit)
            .field("waiting", &st.waiting.len())
            .finish()
    }
}

/// The future of [`Notify::notified`].
#[must_use = "futures do nothing unless polled"]
pub struct Notified<'a> {
    notify: &'a Notify,
    /// `notify_waiters` calls seen when it was made.
    rounds: u64,
    step: Step,
}

/// Where a [`Notified`] is.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Not polled yet.
    Init,
    /// Queued with this ticket.
    Waiting(u64),
    /// Completed: later polls are ready at once.
    Done,
}

impl Notified<'_> {
    fn start(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = lock(&self.notify.state);
        if st.rounds != self.rounds || std::mem::take(&mut st.permit) {
            self.step = Step::Done;
            return Poll::Ready(());
        }
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.waiting.insert(ticket, Some(cx.waker().clone()));
        self.step = Step::Waiting(ticket);
        Poll::Pending
    }

    fn check(&mut self, ticket: u64, cx: &mut Context<'_>) -> Poll<()> {
        let mut st = lock(&self.notify.state);
        if st.picked.remove(&ticket) {
            self.step = Step::Done;
            return Poll::Ready(());
        }
        match st.waiting.get_mut(&ticket) {
            Some(slot) => {
                match slot {
                    Some(old) if old.will_wake(cx.waker()) => {}
                    slot => *slot = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
            None => {
                // Neither queued nor picked: `notify_waiters` took it.
                self.step = Step::Done;
                Poll::Ready(())
            }
        }
    }
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // A wait that completes spends a unit of the task's budget, as a
        // lock or a receive does: a loop over notifications that are
        // always there still yields (`task/coop/`). A refused poll
        // changes nothing: a picked waiter stays picked for the next one.
        crate::task::coop::spend(cx, |cx| match self.step {
            Step::Init => self.start(cx),
            Step::Waiting(ticket) => self.check(ticket, cx),
            Step::Done => Poll::Ready(()),
        })
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        let Step::Waiting(ticket) = self.step else {
            return; // never queued, or finished
        };
        let waker = {
            let mut st = lock(&self.notify.state);
            if st.waiting.remove(&ticket).is_some() || !st.picked.remove(&ticket) {
                return; // not notified, or notified by `notify_waiters`
            }
            st.notify_one()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl fmt::Debug for Notified<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notified")
            .field("step", &self.step)
            .finish()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::super::loom_support::Count;
    use super::*;
    use loom::thread;

    /// `notify_one` races the drop of the oldest waiter, with a second one
    /// behind it: the notification reaches the second either way (straight,
    /// or passed on by the dropped one), and no permit is left stored.
    #[test]
    fn notify_one_racing_a_dropped_notified() {
        loom::model(|| {
            let notify = crate::loom::Arc::new(Notify::new());
            let count = std::sync::Arc::new(Count::default());
            let waker = Waker::from(count.clone());
            let mut cx = Context::from_waker(&waker);
            let first_waker = Waker::from(std::sync::Arc::new(Count::default()));
            let mut first = Box::pin(notify.notified());
            let mut second = Box::pin(notify.notified());
            assert!(first
                .as_mut()
                .poll(&mut Context::from_waker(&first_waker))
                .is_pending());
            assert!(second.as_mut().poll(&mut cx).is_pending());
            let notifier = {
                let notify = notify.clone();
                thread::spawn(move || notify.notify_one())
            };
            drop(first);
            notifier.join().unwrap();
            assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
            assert!(second.as_mut().poll(&mut cx).is_ready());
            assert!(!lock(&notify.state).permit, "a notification was doubled");
        });
    }

    /// `notify_waiters` races a waiter's first poll: a `Notified` made
    /// before the call completes whether it queued before or after it.
    #[test]
    fn notify_waiters_racing_a_first_poll() {
        loom::model(|| {
            let notify = crate::loom::Arc::new(Notify::new());
            let count = std::sync::Arc::new(Count::default());
            let waker = Waker::from(count.clone());
            let mut cx = Context::from_waker(&waker);
            let mut waiting = Box::pin(notify.notified());
            let notifier = {
                let notify = notify.clone();
                thread::spawn(move || notify.notify_waiters())
            };
            let first = waiting.as_mut().poll(&mut cx);
            notifier.join().unwrap();
            if first.is_pending() {
                assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
                assert!(waiting.as_mut().poll(&mut cx).is_ready());
            }
        });
    }
}
