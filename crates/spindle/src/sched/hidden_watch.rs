//! `HiddenWatch`: the monitor's look for tasks hidden behind a long poll.
//!
//! A worker's fresh tasks (`lifo_stack.rs`: spawned or woken by the poll
//! now running) and the tasks it pushed to its ring without a wake-up (a
//! yield) wait for that poll to end unless an idle worker takes them.
//! Nobody wakes one as they are queued: a message-passing pair's polls
//! end within nanoseconds, and a worker woken for every message would
//! split the pair across cores. The monitor wakes one instead, for a poll
//! that it sees still running at two looks in a row with tasks behind it
//! (and names that poll, so that the woken worker visits its core for the
//! fresh ones: `WorkerCtx::steal_hidden`).
//!
//! The monitor's rounds pace hand-offs and are far apart for this, so
//! while the watch is *armed* it also looks every `WATCH_EVERY` between
//! rounds: a hidden task waits one or two looks, then the sleeper's
//! wake-up and visit (`docs/sleep-wake.md` has the figures). A look reads
//! a flag, a ring length and a counter per worker.
//!
//! Arming. A look arms the watch when some worker is awake and some
//! worker runs no task (a task could be hidden from a worker that could
//! take it); once armed it stays armed `LINGER_LOOKS` looks. Between
//! rounds nothing else runs the monitor, so two kinds of worker wake a
//! disarmed one (`Shared::poke_watch`, one wake-up per armed stretch:
//! `Watching`): a poll that hides its first task while a worker idles,
//! and a worker that falls asleep beside a poll that hides tasks.
//!
//! Invariants:
//! - a sleeper is woken only for a poll seen lent, with the same poll
//!   count, at this look and the last one;
//! - `Watching` is set while the watch is armed, and from a worker's poke
//!   until the monitor's next look; only the monitor clears it.

use super::multi_thread::{Remote, Shared};
use crate::loom::{lock, AtomicBool, Ordering::Relaxed};
use std::time::Duration;

/// How often the armed watch looks. Under miri, which runs every thread
/// a thousand times slower on the real clock, a look every 50 µs would
/// keep the monitor busy and slow every test it runs.
pub(crate) const WATCH_EVERY: Duration = if cfg!(miri) {
    Duration::from_millis(10)
} else {
    Duration::from_micros(50)
};
/// Once armed, the watch stays armed this many looks after the last that
/// armed it: a worker's poke then wakes the monitor at most once a
/// stretch of this many looks, however often the workers' state flickers.
const LINGER_LOOKS: u32 = 20;

/// What the watch remembers between looks.
pub(crate) struct HiddenWatch {
    /// Each worker's poll count at the last look; `None` where no core was
    /// lent (no task running).
    polls: Vec<Option<u64>>,
    /// Looks left before the watch disarms; armed while positive.
    linger: u32,
}

impl HiddenWatch {
    pub(crate) fn new(workers: usize) -> HiddenWatch {
        HiddenWatch {
            polls: vec![None; workers],
            linger: 0,
        }
    }

    /// Whether the monitor should look again after `WATCH_EVERY`.
    pub(crate) fn is_armed(&self) -> bool {
        self.linger > 0
    }

    /// One look at every worker: wakes a sleeper for what waits behind a
    /// poll that has run since the last look, and re-arms (or disarms).
    pub(crate) fn look(&mut self, shared: &Shared) {
        let mut idle = false;
        for (remote, last) in shared.remotes().iter().zip(&mut self.polls) {
            let now = lock(&remote.active)
                .is_lent()
                .then(|| remote.counters.polls.load(Relaxed));
            match now {
                Some(polls) => {
                    if Some(polls) == *last {
                        wake_for_queued(shared, remote, polls);
                    }
                }
                None => idle = true,
            }
            *last = now;
        }
        // Armed by a worker's poke (`Watching::take`) if not by this look.
        let poked = !self.is_armed() && shared.watching.is_set();
        if poked || (idle && shared.sleeping_workers() < self.polls.len()) {
            self.linger = LINGER_LOOKS;
        } else {
            self.linger = self.linger.saturating_sub(1);
        }
        shared.watching.set(self.is_armed());
    }
}

/// Tasks behind poll `polls` of `remote`'s worker, which has lasted since
/// the last look (in its ring, or fresh ones hidden): wakes a sleeper,
/// which steals them from the ring, or takes the fresh ones
/// (`WorkerCtx::steal_hidden`) from the poll named here.
fn wake_for_queued(shared: &Shared, remote: &Remote, polls: u64) {
    let fresh = remote.counters.hides_fresh.load(Relaxed);
    if fresh {
        remote.want_visit(polls);
    }
    if (fresh || remote.ring().0 > 0) && shared.sleeping_workers() > 0 {
        shared.notify_parked();
    }
}

/// Whether the watch is armed, for the workers (`Shared::poke_watch`).
/// Only a hint: a worker that reads it stale wakes the monitor once more
/// than needed, or leaves a hidden task to the next round.
#[derive(Default)]
pub(crate) struct Watching(AtomicBool);

impl Watching {
    /// Monitor, after a look.
    fn set(&self, armed: bool) {
        // Written only when it changes: workers read it on every poll that
        // hides a task.
        if self.0.load(Relaxed) != armed {
            self.0.store(armed, Relaxed);
        }
    }

    /// Monitor: whether the flag is set (armed, or a worker's poke).
    fn is_set(&self) -> bool {
        self.0.load(Relaxed)
    }

    /// Worker whose poll hid its first task: `true` when the watch is not
    /// armed, `any_idle` says a worker could take the task, and this
    /// worker took the flag (one wake-up of the monitor per disarmed
    /// stretch).
    pub(crate) fn take(&self, any_idle: impl FnOnce() -> bool) -> bool {
        !self.0.load(Relaxed) && any_idle() && !self.0.swap(true, Relaxed)
    }
}
