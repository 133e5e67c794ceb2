//! How an idle worker goes to sleep: it keeps stealing for a while, gives
//! its CPU away once, then parks.
//!
//! ## Stealing rounds (`SpinBudget`)
//!
//! A worker out of work steals in rounds (every other worker's ring, then
//! the injector), pausing between rounds, and parks after the last. Parking
//! and being woken costs a futex round trip and a context switch, so when
//! work turns up within a few microseconds (a select's producers, a batch
//! being spawned) the later rounds pay for themselves. When it does not (a
//! server whose next request is a network round trip away) they only burn a
//! CPU the other threads need: workers that always spin every round spend
//! more CPU per request than ones that park after one pass, as Tokio's do
//! (`docs/profiles.md`, echo).
//!
//! So the budget adapts, per worker:
//! - `rounds` starts at the most (`MAX_ROUNDS`); a search that found work
//!   only after its first round sets it back to the most;
//! - a search that found nothing (the worker parks) takes one round off,
//!   down to one: a single pass, no pause;
//! - every `EXPLORE`th search spins the most rounds whatever the budget,
//!   so a worker that stopped spinning notices when spinning pays again.
//!
//! ## One yield before parking (`ParkYield`)
//!
//! Before it counts itself asleep, a worker calls `sched_yield` once, as
//! `parking_lot`'s spin-then-yield-then-park does. Where a CPU is free it
//! returns at once (one syscall). Where the worker shares its CPU with a
//! runnable thread that feeds it (a load generator on the same machine, a
//! thread sending into a channel), that thread runs first and usually
//! queues a batch of work: a worker that parked instead would be woken by
//! the first item of it, and preempt the feeder, item after item. On the
//! echo benchmark (load generator beside the server) the yield saves the
//! workers `epoll_wait`s and futex wake-ups, and the server answers more
//! requests a second (`docs/profiles.md`).
//!
//! The cost is latency where the runnable thread is not a feeder but a CPU
//! hog: the yield hands it a time slice (1-3 ms under Linux's EEVDF), while
//! a parked worker would have preempted it at its next wake-up. Beside a
//! busy loop pinned to the same CPU, a one-worker server that yields at
//! every park serves a small fraction of the requests it serves without
//! yielding. Yet a long yield alone proves nothing: beside a feeder, a few
//! yields last milliseconds too (the load generator's or the other
//! worker's turn) and the gain comes with them. What marks a hog is
//! how often: so the policy keeps a moving share of yields that kept the
//! CPU away for `LONG_YIELD` or more, and while that share is high each long
//! yield suspends yielding for `FIRST_SKIP << level` parks, the level rising
//! with each one (up to `MAX_LEVEL`) and falling back to 0 once short yields
//! bring the share down. Next to a hog the server then does nearly as well
//! as without any yield, and echo keeps its gain (`docs/profiles.md`).
//!
//! Only the worker owning the core reads or writes either (no atomics).

use std::time::{Duration, Instant};

/// The most rounds of stealing before parking (one under loom, to keep the
/// models small).
const MAX_ROUNDS: u8 = if cfg!(loom) { 1 } else { 4 };
/// One search in this many spins `MAX_ROUNDS` regardless of the budget.
const EXPLORE: u8 = 8;

/// Small integers throughout (here and in `ParkYield`): both live in the
/// worker's `Core`, which they keep small: a `Core` that grows into a
/// larger allocation size class slows the run loop with the same code
/// (`docs/profiles.md`, "Layout, twice").
pub(crate) struct SpinBudget {
    rounds: u8,
    /// Wraps; 256 is a multiple of `EXPLORE`.
    searches: u8,
}

impl SpinBudget {
    pub(crate) fn new() -> SpinBudget {
        SpinBudget {
            rounds: MAX_ROUNDS,
            searches: 0,
        }
    }

    /// Rounds for the search now starting.
    pub(crate) fn rounds(&mut self) -> u8 {
        self.searches = self.searches.wrapping_add(1);
        if self.searches.is_multiple_of(EXPLORE) {
            MAX_ROUNDS
        } else {
            self.rounds
        }
    }

    /// The search found work in round `round` (0: the first).
    pub(crate) fn found(&mut self, round: u8) {
        if round > 0 {
            self.rounds = MAX_ROUNDS;
        }
    }

    /// The search found nothing: the worker parks.
    pub(crate) fn missed(&mut self) {
        self.rounds = self.rounds.saturating_sub(1).max(1);
    }
}

/// A yield that kept the CPU away this long handed it to a thread that
/// wanted more than a short batch (module docs).
const LONG_YIELD: Duration = Duration::from_millis(1);
/// The share of long yields is a moving average in `1 / RATE_ONE`ths, each
/// yield moving it `1 / RATE_WEIGHT` of the way to 0 or 1 (ten long yields
/// in a row from none take it past `MAX_LONG_RATE`).
const RATE_ONE: u16 = 1024;
const RATE_WEIGHT: u16 = 32;
/// Above this share, each long yield is followed by `FIRST_SKIP << level`
/// parks without one, the level rising with each (up to `MAX_LEVEL`) and
/// back to 0 once the share is low. Short yields skip nothing: they are
/// what brings the share down.
const MAX_LONG_RATE: u16 = RATE_ONE / 4;
const FIRST_SKIP: u16 = 16;
const MAX_LEVEL: u8 = 8;

/// Whether a worker yields before it parks (module docs).
pub(crate) struct ParkYield {
    /// Parks left to go without a yield.
    skip: u16,
    /// The moving share of long yields (`RATE_ONE` is all of them).
    long_rate: u16,
    /// While the share is high, each long yield skips `FIRST_SKIP << level`
    /// parks and raises the level.
    level: u8,
    /// `Builder::yield_before_park(false)`: never yields.
    off: bool,
}

impl ParkYield {
    pub(crate) fn new(on: bool) -> ParkYield {
        ParkYield {
            skip: 0,
            long_rate: 0,
            level: 0,
            off: !on,
        }
    }

    /// Called by a worker about to count itself asleep: yields its CPU
    /// once, unless recent yields kept it away for long. Out of line: the
    /// run loop's frame, under every task poll, stays small: inlined, it
    /// grows that frame and moves every task poll's stack offset, which
    /// some rows' times depend on (`docs/profiles.md`, "Layout, twice").
    #[inline(never)]
    pub(crate) fn before_park(&mut self) {
        if !self.should_yield() {
            return;
        }
        let start = Instant::now();
        yield_cpu();
        self.yielded(start.elapsed());
    }

    fn should_yield(&mut self) -> bool {
        if self.off {
            return false;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        true
    }

    /// How long the yield kept the CPU away.
    fn yielded(&mut self, took: Duration) {
        let long = took >= LONG_YIELD;
        let sample = if long { RATE_ONE } else { 0 };
        self.long_rate = self.long_rate - self.long_rate / RATE_WEIGHT + sample / RATE_WEIGHT;
        if self.long_rate < MAX_LONG_RATE {
            self.level = 0;
        } else if long {
            self.skip = FIRST_SKIP << self.level;
            self.level = (self.level + 1).min(MAX_LEVEL);
        }
    }
}

/// `sched_yield`; nothing under loom and miri (a loom yield is a scheduling
/// point of the model, not a gift of the CPU, and would only grow it).
fn yield_cpu() {
    #[cfg(not(any(loom, miri)))]
    std::thread::yield_now();
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

    /// Parks until the next yield, given the yields so far.
    fn parks_skipped(y: &mut ParkYield) -> u16 {
        let mut n = 0;
        while !y.should_yield() {
            n += 1;
        }
        n
    }

    /// Long yields in a row until one suspends yielding: how many, and for
    /// how many parks.
    fn longs_until_skip(y: &mut ParkYield) -> (u32, u16) {
        for longs in 1..100 {
            y.yielded(LONG_YIELD);
            match parks_skipped(y) {
                0 => {}
                n => return (longs, n),
            }
        }
        panic!("still yielding after 100 long yields in a row");
    }

    #[test]
    fn a_high_share_of_long_yields_suspends_yielding_for_doubling_runs_of_parks() {
        let short = LONG_YIELD / 10;
        let mut y = ParkYield::new(true);
        // A few long yields among short ones (a feeder's batches, a sibling
        // worker's): every park keeps its yield.
        for i in 0..1000 {
            y.yielded(if i % 20 == 0 { LONG_YIELD * 3 } else { short });
            assert_eq!(parks_skipped(&mut y), 0, "yield {i}");
        }
        // Long yields in a row (a hog): yielding stops after about ten,
        // then for twice as many parks after each long one, up to the cap.
        let (longs, skipped) = longs_until_skip(&mut y);
        assert!(longs <= 12, "{longs} long yields before the first skip");
        assert_eq!(skipped, FIRST_SKIP);
        y.yielded(LONG_YIELD);
        assert_eq!(parks_skipped(&mut y), 2 * FIRST_SKIP);
        // Short yields between long ones (the hog's neighbour, a feeder)
        // skip nothing and leave the share high: the next long one goes on
        // climbing.
        y.yielded(short);
        assert_eq!(parks_skipped(&mut y), 0);
        y.yielded(LONG_YIELD);
        assert_eq!(parks_skipped(&mut y), 4 * FIRST_SKIP);
        for _ in 0..20 {
            y.yielded(short);
            parks_skipped(&mut y);
            y.yielded(LONG_YIELD);
            parks_skipped(&mut y);
        }
        y.yielded(LONG_YIELD);
        assert_eq!(parks_skipped(&mut y), FIRST_SKIP << MAX_LEVEL, "capped");
        // Short yields bring the share down, and the climb starts over.
        for _ in 0..100 {
            y.yielded(short);
            assert_eq!(parks_skipped(&mut y), 0);
        }
        let (longs, skipped) = longs_until_skip(&mut y);
        assert!(longs > 1, "one long yield alone suspends nothing");
        assert_eq!(skipped, FIRST_SKIP, "from the first level");
    }

    #[test]
    fn a_worker_told_not_to_yield_never_does() {
        let mut y = ParkYield::new(false);
        for _ in 0..100 {
            assert!(!y.should_yield());
        }
    }
}
