//! The monitor: one thread per multi-thread runtime (Go's sysmon).
//!
//! Every round (`handoff_after / 2`, at least `MIN_ROUND`, while a worker
//! may be stuck in a poll; doubling up to `BUSY_BACKOFF` times that while
//! every busy worker keeps moving from poll to poll, and up to `MAX_ROUND`
//! while every worker sleeps: the first worker to wake then wakes the
//! monitor, `doze.rs`) it
//! - notices a worker whose thread has been inside one poll (its core lent
//!   out, its poll counter unchanged) for `handoff_after` or longer *and is
//!   blocked*: over one more round it ran on a CPU less than half the time
//!   (its thread CPU clock), and it is not runnable now (state `R`: on a
//!   CPU or waiting for one; Linux, elsewhere every stuck thread counts as
//!   blocked). It takes the core from that thread's lending slot and starts
//!   a new thread on it (`Shared::retake`), so the tasks queued behind a
//!   blocking call keep running; the stuck thread finishes its poll and
//!   exits. A thread only waiting for a CPU is not blocked: one more thread
//!   would make the wait longer. (Neither test alone does: a thread back
//!   from a 1 ms sleep waits for a CPU in state `R` on a busy machine, and a
//!   thread that waits for a CPU runs little.) The CPU time is the
//!   thread's own clock, not `schedstat`'s, which is stale while a thread
//!   runs: with that and no state, busy cores would be handed off as
//!   blocked.
//! - hands off a thread that keeps a CPU busy (a long CPU-bound poll, say a
//!   loop spawning a million tasks) only after `HOG_FACTOR` times the
//!   threshold, and only where others cannot reach what waits behind it:
//!   its ring holds tasks that nobody took over the last round, or every
//!   worker is inside a long poll (a single worker always is). Fresh
//!   tasks hidden behind it are no reason: a sleeping worker is woken to
//!   take them (below). (Handing off for them instead hands off every
//!   long spawn loop once there are a few workers, and makes spawning
//!   slower with more workers rather than faster: `docs/scaling.md`.)
//!   Otherwise the hand-off
//!   only adds a thread competing for the same cores, and sends every
//!   later spawn of the busy poll through the injector: a spawn loop
//!   publishes its tasks as it goes while a worker idles, so a worker that
//!   sleeps a moment beside it is no reason (a spawn loop handed off for
//!   that runs slower, not faster). Each of these must hold `HOG_CONFIRM`
//!   rounds in a row: a virtual CPU its host stalls for a round makes any
//!   of them true for that round.
//! - wakes a sleeping worker for the tasks queued behind a worker inside
//!   the same poll as last round: those in its ring (pushed there without
//!   a wake-up: a yield, a task capped out of the LIFO slot) and its fresh
//!   ones, the LIFO slot's included, which the woken worker takes by
//!   visiting that worker's core (`WorkerCtx::steal_hidden`; the monitor
//!   names the poll, and only a poll that lasted a round is visited). So
//!   a task queued by a long poll waits about one round (0.5-2 ms) while
//!   a worker idles.
//! - serves due timers and ready I/O when nobody took a turn at the driver
//!   for a whole round (every worker inside a long poll; busy workers with
//!   short polls take turns every few dozen polls, and a parked worker waits
//!   on it): the woken tasks go through the injector.
//!
//! - calibrates the slow-poll clock once, and runs the stall detector
//!   (`diagnostics.rs`).
//!
//! A poll counter that moved, or a core that is not lent, resets the
//! worker's clock; so a worker is only retaken after a single poll spanned
//! the whole threshold (sampling may add up to one round).

use super::diagnostics::StallReport;
use super::lent::Lent;
use super::multi_thread::Shared;
use crate::loom::{lock, Arc, Ordering::Relaxed};
use std::time::{Duration, Instant};

const MIN_ROUND: Duration = Duration::from_micros(100);
const BUSY_ROUND: Duration = Duration::from_millis(1);
const MAX_ROUND: Duration = Duration::from_millis(10);
/// While workers are busy but none sits in one poll across a round, rounds
/// grow to this many times the busy round: fewer wake-ups of a monitor that
/// finds nothing to do (each one takes a CPU from a worker for a moment),
/// for at most this many rounds more before a blocking poll is noticed.
const BUSY_BACKOFF: u32 = 4;
/// A running (not blocked) thread is retaken after this many thresholds
/// when tasks queued behind it wait (its ring untouched, or every worker
/// inside a long poll),
const HOG_FACTOR: u32 = 20;
/// ... and once what waits behind it has been out of others' reach this
/// many rounds in a row: a virtual machine's CPU stalled by its host for a
/// round looks like all of that for a moment, and a spawn loop handed off
/// for such a stall runs slower, not faster.
const HOG_CONFIRM: u32 = 3;

/// The monitor thread's body; returns at runtime shutdown.
pub(crate) fn run(shared: Arc<Shared>) {
    let threshold = shared.config.handoff_after;
    let busy_round = threshold.map_or(BUSY_ROUND, |t| (t / 2).clamp(MIN_ROUND, BUSY_ROUND));
    let n = shared.remotes().len();
    // Per worker: the poll count last seen and since when it has not moved.
    let mut seen = vec![(u64::MAX, Instant::now()); n];
    // Per stuck worker: when its CPU time was first sampled, and that time.
    let mut probe: Vec<Option<(Instant, u64)>> = vec![None; n];
    // Per stuck worker: rounds in a row its queued work looked out of reach.
    let mut unreachable_rounds = vec![0u32; n];
    // Per worker: its ring's `taken` count last round.
    let mut ring_taken = vec![0u32; n];
    // This round's look at each worker: its thread's lending slot, whether a
    // core is lent there, and its poll count.
    let mut sampled: Vec<(Arc<Lent>, bool, u64)> = Vec::with_capacity(n);
    let mut round = busy_round;
    let mut stall = Stall::default();
    let mut turns = shared.driver.turns();
    while !shared.is_shutdown() {
        shared.slow_polls.calibrate();
        // A long round only while every worker sleeps; one waking wakes us
        // (`doze.rs`), and the next round is a busy one.
        let short = busy_round * BUSY_BACKOFF;
        let dozing = round > short && shared.monitor_may_doze();
        shared
            .monitor
            .park_timeout(Some(if dozing { round } else { round.min(short) }));
        if shared.is_shutdown() {
            break;
        }
        if dozing && shared.doze.end() {
            round = busy_round;
        }
        let now = Instant::now();
        let mut busy = false;
        // A worker inside the same poll as last round (maybe blocked).
        let mut lingering = false;
        // (Emptied by the `drain` below each round.)
        sampled.extend(shared.remotes().iter().map(|r| {
            let active = lock(&r.active).clone();
            let lent = active.is_lent();
            (active, lent, r.counters.polls.load(Relaxed))
        }));
        // Every worker inside the same poll as last round: nobody else can
        // take anything over.
        let all_stuck = sampled
            .iter()
            .enumerate()
            .all(|(i, &(_, lent, polls))| lent && polls == seen[i].0);
        for (i, (remote, (active, lent, polls))) in
            shared.remotes().iter().zip(sampled.drain(..)).enumerate()
        {
            let (waiting, taken) = remote.ring();
            let ring_untouched = waiting > 0 && taken == ring_taken[i];
            ring_taken[i] = taken;
            if !lent || polls != seen[i].0 {
                seen[i] = (polls, now);
                probe[i] = None;
                unreachable_rounds[i] = 0;
                busy |= lent;
                continue;
            }
            busy = true;
            lingering = true;
            let hides = remote.counters.hides_fresh.load(Relaxed);
            if hides {
                remote.want_visit(polls);
            }
            if (waiting > 0 || hides) && shared.sleeping_workers() > 0 {
                // Tasks behind a poll that has lasted a round: wake a
                // sleeper, which steals them from the ring, or takes the
                // fresh ones (`WorkerCtx::steal_hidden`).
                shared.notify_parked();
            }
            let stuck = now - seen[i].1;
            let due = match threshold {
                Some(t) if stuck >= t => {
                    let blocked = match (probe[i], active.owner_activity()) {
                        (_, None) => true, // cannot tell: treat as blocked
                        (None, Some(a)) => {
                            probe[i] = Some((now, a.cpu_ns));
                            false
                        }
                        (Some((t0, cpu0)), Some(a)) => {
                            // Mostly off-CPU since the first sample, and not
                            // waiting for one now.
                            let ran = a.cpu_ns.saturating_sub(cpu0) as u128;
                            !a.runnable && ran < (now - t0).as_nanos() / 2
                        }
                    };
                    // Busy this long: hand off only what others cannot reach.
                    let unreachable = &mut unreachable_rounds[i];
                    if ring_untouched || all_stuck {
                        *unreachable += 1;
                    } else {
                        *unreachable = 0;
                    }
                    blocked || (stuck >= t * HOG_FACTOR && *unreachable >= HOG_CONFIRM)
                }
                _ => false,
            };
            if due && Shared::retake(&shared, i) {
                seen[i] = (polls, now);
                probe[i] = None;
                unreachable_rounds[i] = 0;
            }
        }
        // Served by somebody else since the last round: nothing to do (a
        // zero-timeout epoll_wait every round is measurable under I/O load).
        if shared.driver.turns() == turns && shared.driver.has_work() {
            if let Some(driver) = shared.driver.try_lock() {
                driver.poll_now();
                driver.dispatch();
                drop(driver);
                shared.after_monitor_turn();
            }
        }
        turns = shared.driver.turns(); // our own turn included
        stall.check(&shared, now);
        round = if lingering {
            busy_round
        } else if busy {
            (round * 2).clamp(busy_round, busy_round * BUSY_BACKOFF)
        } else {
            (round * 2).min(MAX_ROUND)
        };
    }
}

/// The stall detector's memory between rounds.
#[derive(Default)]
struct Stall {
    /// Since when the runtime has looked stalled, and the total poll count then.
    since: Option<(Instant, u64)>,
    reported: bool,
}

impl Stall {
    fn check(&mut self, shared: &Shared, now: Instant) {
        let Some(after) = shared.config.stall_after else {
            return;
        };
        let polls: u64 = shared
            .remotes()
            .iter()
            .map(|r| r.counters.polls.load(Relaxed))
            .sum();
        let stalled = shared.is_quiescent()
            && shared.registry.len() > 0
            && !shared.driver.has_io()
            && shared.driver.timers.armed() == 0
            && {
                let b = shared.blocking.metrics();
                b.threads == b.idle_threads && b.queue_depth == 0
            };
        match self.since {
            Some((_, p)) if !stalled || p != polls => {
                *self = Stall::default();
            }
            None if stalled => self.since = Some((now, polls)),
            Some((t, _)) if !self.reported && now - t >= after => {
                self.reported = true;
                shared.stalls.fetch_add(1, Relaxed);
                let report = StallReport {
                    parked_tasks: shared.registry.len(),
                    workers: shared.remotes().len(),
                    idle_for: now - t,
                    spawned_at: shared.spawn_sites(),
                    tracking_spawns: shared.config.track_spawns,
                };
                // The user's callback runs on the monitor: a panic in it must
                // not end the monitor (hand-offs, driver turns, later stalls).
                let on_stall = &shared.config.on_stall;
                let _ =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_stall(&report)));
            }
            _ => {}
        }
    }
}
