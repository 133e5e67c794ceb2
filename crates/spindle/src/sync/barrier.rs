//! [`Barrier`]: lets `n` tasks wait until all of them have arrived, as
//! Tokio's, reusable round after round.
//!
//! One lock guards the arrivals of the current round and the round number.
//! The `n`th arrival starts the next round (arrivals back to zero, round
//! number up) and wakes the round's waiters with
//! [`Notify::notify_waiters`]. A waiter makes its `Notified` while it holds
//! the lock, before the round it joined can end, so the wake-up cannot
//! pass it by. A wake-up means that *a* round ended: the leader notifies
//! after letting go of the lock, so a task that arrived for the next round
//! meanwhile is woken too; each waiter returns only once the round number
//! passed the one it joined, and waits again otherwise.
//!
//! Not cancel-safe (as Tokio's): an arrival counts from the first poll of
//! `wait`, and a waiter dropped after that still counts for its round.

use super::notify::{Notified, Notify};
use crate::loom::{lock, Mutex};
use std::fmt;

/// Makes `n` tasks wait for each other, then lets them all go on.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// use std::sync::Arc;
/// let barrier = Arc::new(spindle::sync::Barrier::new(3));
/// let handles: Vec<_> = (0..3)
///     .map(|_| {
///         let b = barrier.clone();
///         spindle::spawn(async move { b.wait().await.is_leader() })
///     })
///     .collect();
/// let mut leaders = 0;
/// for h in handles {
///     leaders += h.await.unwrap() as usize;
/// }
/// assert_eq!(leaders, 1);
/// # });
/// ```
pub struct Barrier {
    state: Mutex<Round>,
    /// Wakes the waiters of a round when it ends.
    round_over: Notify,
    n: usize,
}

struct Round {
    /// Tasks that have arrived in this round: fewer than `n`.
    arrived: usize,
    /// Rounds ended so far.
    number: u64,
}

/// What [`Barrier::wait`] returns: whether this task was the leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this task was the one that ended the round (its last
    /// arrival); exactly one task per round is.
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier for `n` tasks. `Barrier::new(0)` acts as `Barrier::new(1)`
    /// (as Tokio's and `std`'s): every `wait` returns at once, as leader.
    pub fn new(n: usize) -> Barrier {
        Barrier {
            state: Mutex::new(Round {
                arrived: 0,
                number: 0,
            }),
            round_over: Notify::new(),
            n: n.max(1),
        }
    }

    /// Waits until `n` tasks have called `wait` in this round; the last of
    /// them returns at once, as leader, and wakes the others.
    pub async fn wait(&self) -> BarrierWaitResult {
        let (joined, mut round_over) = match self.arrive() {
            Arrival::Leader => {
                // The leader's wait ends at once: it spends a unit of the
                // budget, as every wait (`task/coop/`), once the round
                // is over for the others.
                crate::task::coop::consume_budget().await;
                return BarrierWaitResult(true);
            }
            Arrival::Waiter { joined, round_over } => (joined, round_over),
        };
        loop {
            round_over.await;
            let round = lock(&self.state);
            if round.number > joined {
                return BarrierWaitResult(false);
            }
            // Woken by the end of the round before ours (its leader
            // notifies after letting go of the lock, when this task may
            // already have arrived): wait again, again made under the lock.
            round_over = self.round_over.notified();
        }
    }

    /// Counts this task in. The last of the round ends it and wakes the
    /// others; any other gets its round's number and a `Notified` made
    /// under the lock, so the round cannot end before it.
    fn arrive(&self) -> Arrival<'_> {
        let mut round = lock(&self.state);
        round.arrived += 1;
        if round.arrived == self.n {
            round.arrived = 0;
            round.number += 1;
            drop(round);
            self.round_over.notify_waiters();
            return Arrival::Leader;
        }
        Arrival::Waiter {
            joined: round.number,
            round_over: self.round_over.notified(),
        }
    }
}

/// What [`Barrier::arrive`] made of a task's arrival.
enum Arrival<'a> {
    /// The round is over: this task ended it.
    Leader,
    /// The task waits for the end of round `joined`.
    Waiter {
        joined: u64,
        round_over: Notified<'a>,
    },
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let round = lock(&self.state);
        f.debug_struct("Barrier")
            .field("n", &self.n)
            .field("arrived", &round.arrived)
            .field("round", &round.number)
            .finish()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::chan::blocking::block_on;
    use loom::thread;

    /// Two tasks meet at the barrier in either order: both return (a
    /// missed wake-up is a loom deadlock) and exactly one leads.
    #[test]
    fn two_arrivals_in_either_order() {
        loom::model(|| {
            let barrier = crate::loom::Arc::new(Barrier::new(2));
            let other = {
                let barrier = barrier.clone();
                thread::spawn(move || block_on(std::pin::pin!(barrier.wait())).is_leader())
            };
            let here = block_on(std::pin::pin!(barrier.wait())).is_leader();
            let there = other.join().unwrap();
            assert!(here != there, "leaders: {here} and {there}");
        });
    }
}
