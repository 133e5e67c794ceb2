//! How long an idle worker keeps stealing before it parks.
//!
//! A worker out of work steals in rounds (every other worker's ring, then
//! the injector), pausing between rounds, and parks after the last. Parking
//! and being woken costs a futex round trip and a context switch, so when
//! work turns up within a few microseconds (a select's producers, a batch
//! being spawned) the later rounds pay for themselves. When it does not (a
//! server whose next request is a network round trip away) they only burn a
//! CPU the other threads need: on the 2-vCPU echo benchmark, spindle's
//! workers spent ~10 % more CPU per request than Tokio's, whose workers
//! park after one pass (`docs/profiles.md`, echo).
//!
//! So the budget adapts, per worker:
//! - `rounds` starts at the most (`MAX_ROUNDS`); a search that found work
//!   only after its first round sets it back to the most;
//! - a search that found nothing (the worker parks) takes one round off,
//!   down to one: a single pass, no pause;
//! - every `EXPLORE`th search spins the most rounds whatever the budget,
//!   so a worker that stopped spinning notices when spinning pays again.
//!
//! Only the worker owning the core reads or writes it (no atomics).

/// The most rounds of stealing before parking (one under loom, to keep the
/// models small).
const MAX_ROUNDS: u32 = if cfg!(loom) { 1 } else { 4 };
/// One search in this many spins `MAX_ROUNDS` regardless of the budget.
const EXPLORE: u32 = 8;

pub(crate) struct SpinBudget {
    rounds: u32,
    searches: u32,
}

impl SpinBudget {
    pub(crate) fn new() -> SpinBudget {
        SpinBudget {
            rounds: MAX_ROUNDS,
            searches: 0,
        }
    }

    /// Rounds for the search now starting.
    pub(crate) fn rounds(&mut self) -> u32 {
        self.searches = self.searches.wrapping_add(1);
        if self.searches.is_multiple_of(EXPLORE) {
            MAX_ROUNDS
        } else {
            self.rounds
        }
    }

    /// The search found work in round `round` (0: the first).
    pub(crate) fn found(&mut self, round: u32) {
        if round > 0 {
            self.rounds = MAX_ROUNDS;
        }
    }

    /// The search found nothing: the worker parks.
    pub(crate) fn missed(&mut self) {
        self.rounds = self.rounds.saturating_sub(1).max(1);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn misses_wind_the_budget_down_to_one_pass_and_a_late_find_restores_it() {
        let mut b = SpinBudget::new();
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(b.rounds());
            b.missed();
        }
        // 4, 3, 2, 1, 1, 1 — except that every EXPLORE-th search spins fully.
        assert_eq!(seen, vec![4, 3, 2, 1, 1, 1]);
        assert_eq!(b.rounds(), 1); // 7th
        assert_eq!(b.rounds(), MAX_ROUNDS); // 8th: explores
        b.found(2); // spinning paid
        assert_eq!(b.rounds(), MAX_ROUNDS);
        b.found(0); // found at once: no verdict on spinning
        assert_eq!(b.rounds(), MAX_ROUNDS);
    }
}
