//! What an endpoint's thread does while Aeron has nothing for it: no
//! frame to poll, or an offer refused for back pressure.
//!
//! Invariants:
//! - the endpoint actors run on threads of their own (`own_thread`), so
//!   parking the thread here delays only that endpoint, never another
//!   task;
//! - a park is never longer than `max_park`, so a frame that arrives
//!   while the thread sleeps waits at most that long (plus the kernel's
//!   timer slack), and a stop request is seen within it;
//! - any work done resets the back-off to the start.
//!
//! These are Aeron's own idle strategies: `Backoff` spins, then yields,
//! then parks for doubling times (Aeron's `BackoffIdleStrategy`);
//! `BusySpin` never gives the core up, for the lowest latency on a
//! machine with a core to spare for it.

use std::time::Duration;

/// How an endpoint waits while Aeron has nothing for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Spin a few times, yield a few times, then park the thread for
    /// doubling times from a microsecond up to `max_park`.
    Backoff { max_park: Duration },
    /// Never sleep: the thread polls continuously and keeps its core.
    BusySpin,
}

impl Default for Idle {
    /// Backoff up to one millisecond: Aeron's default.
    fn default() -> Self {
        Idle::Backoff {
            max_park: Duration::from_millis(1),
        }
    }
}

/// Spins before the first yield.
const SPINS: u32 = 10;
/// Yields before the first park.
const YIELDS: u32 = 5;
/// The first park.
const MIN_PARK: Duration = Duration::from_micros(1);

/// One endpoint's back-off state: how many idle rounds in a row.
#[derive(Debug)]
pub(crate) struct Idler {
    idle: Idle,
    rounds: u32,
}

impl Idler {
    pub(crate) fn new(idle: Idle) -> Idler {
        Idler { idle, rounds: 0 }
    }

    /// Work was done: the next idle round starts the back-off over.
    pub(crate) fn reset(&mut self) {
        self.rounds = 0;
    }

    /// One idle round: spin, yield or park, by how many came before.
    pub(crate) async fn idle(&mut self) {
        self.rounds = self.rounds.saturating_add(1);
        match self.idle {
            Idle::BusySpin => std::hint::spin_loop(),
            Idle::Backoff { max_park } => match self.rounds {
                r if r <= SPINS => std::hint::spin_loop(),
                r if r <= SPINS + YIELDS => spindle::yield_now().await,
                r => std::thread::sleep(park_for(r - SPINS - YIELDS, max_park)),
            },
        }
    }
}

/// The `k`th park (from 1): `MIN_PARK` doubled `k - 1` times, at most `max`.
fn park_for(k: u32, max: Duration) -> Duration {
    let doubled = MIN_PARK.saturating_mul(1u32 << (k - 1).min(20));
    doubled.min(max).max(MIN_PARK.min(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parks_double_from_a_microsecond_up_to_the_cap() {
        let max = Duration::from_millis(1);
        let parks: Vec<_> = (1..=12).map(|k| park_for(k, max).as_micros()).collect();
        assert_eq!(parks, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]);
        assert_eq!(park_for(u32::MAX, max), max);
    }

    #[test]
    fn a_cap_below_the_first_park_is_kept() {
        let max = Duration::from_nanos(200);
        assert_eq!(park_for(1, max), max);
        assert_eq!(park_for(9, max), max);
    }
}
