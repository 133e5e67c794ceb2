//! The monitor: one thread per multi-thread runtime (Go's sysmon).
//!
//! Every round (`handoff_after / 2`, at least `MIN_ROUND`, while a worker
//! may be stuck in a poll; doubling up to `BUSY_BACKOFF` times that while
//! every busy worker keeps moving from poll to poll, and up to `MAX_ROUND`
//! while every worker sleeps: the first worker to wake then wakes the
//! monitor, `monitor_sleep.rs`) it
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
//! - looks for tasks queued behind a poll that has lasted since its last
//!   look, and wakes a sleeping worker to take them (`hidden_watch.rs`).
//!   It looks at every round and, while the watch is armed (a worker
//!   idles beside a running task), every `WATCH_EVERY` between rounds, so
//!   a task a long poll woke or spawned waits a look or two, not a round.
//! - serves due timers and ready I/O when nobody took a turn at the driver
//!   for a whole round (every worker inside a long poll; busy workers with
//!   short polls take turns every few dozen polls, and a parked worker waits
//!   on it): the woken tasks go through the injector, where a busy worker
//!   takes them at its next tick (`Shared::inject_soon`).
//!
//! - calibrates the slow-poll clock once, and runs the stall detector
//!   (`diagnostics.rs`).
//!
//! A poll counter that moved, or a core that is not lent, resets the
//! worker's clock; so a worker is only retaken after a single poll spanned
//! the whole threshold (sampling may add up to one round).

use super::core_slot::CoreSlot;
use super::diagnostics::StallReport;
use super::hidden_watch::{HiddenWatch, WATCH_EVERY};
use super::multi_thread::{Remote, Shared};
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
    tighten_timer_slack();
    let mut monitor = Monitor::new(shared);
    while let Some(wake) = monitor.sleep() {
        monitor.hidden.look(&monitor.shared);
        if wake == Wake::Look {
            continue;
        }
        let now = Instant::now();
        let pace = monitor.watch_workers(now);
        monitor.turn_driver();
        monitor.stall.check(&monitor.shared, now);
        monitor.next_round(pace);
    }
}

/// The armed watch sleeps `WATCH_EVERY` at a time; Linux's default timer
/// slack for a thread would stretch each of those sleeps by as much again.
fn tighten_timer_slack() {
    #[cfg(all(target_os = "linux", not(miri), not(loom)))]
    // SAFETY: PR_SET_TIMERSLACK takes one integer (nanoseconds) and changes
    // only the calling thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 5_000 as libc::c_ulong);
    }
}

/// Why the monitor woke.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// For a round.
    Round,
    /// For a look only (`hidden_watch.rs`): the watch is armed, or a
    /// worker woke the monitor to arm it.
    Look,
}

/// The monitor's state between rounds.
struct Monitor {
    shared: Arc<Shared>,
    /// `Config::handoff_after`.
    threshold: Option<Duration>,
    /// The round while workers are busy (`handoff_after / 2`, within
    /// `MIN_ROUND..=BUSY_ROUND`).
    busy_round: Duration,
    /// The next round's length, from `round_ended`.
    round: Duration,
    /// When the last round ended.
    round_ended: Instant,
    /// The look for tasks hidden behind long polls, at every round and,
    /// while armed, between rounds.
    hidden: HiddenWatch,
    /// What the monitor remembers of each worker, by index.
    workers: Vec<WorkerWatch>,
    /// This round's look at each worker (emptied by `watch_workers` each
    /// round).
    sampled: Vec<Sample>,
    stall: Stall,
    /// The driver's turn count after the monitor's last look.
    turns: u64,
}

/// What the monitor remembers of one worker between rounds.
#[derive(Clone)]
struct WorkerWatch {
    /// The poll count last seen.
    polls: u64,
    /// Since when `polls` has not moved.
    since: Instant,
    /// While stuck: its thread's CPU time when first sampled.
    probe: Option<CpuProbe>,
    /// While stuck: rounds in a row its queued work looked out of reach.
    unreachable_rounds: u32,
    /// Its ring's `taken` count last round.
    ring_taken: u32,
}

/// A stuck worker's thread CPU time, and when it was read.
#[derive(Clone, Copy)]
struct CpuProbe {
    at: Instant,
    cpu_ns: u64,
}

/// One round's look at a worker.
struct Sample {
    /// Its thread's lending slot.
    active: Arc<CoreSlot>,
    /// Whether a core is lent there (a task is running).
    lent: bool,
    /// Its poll count.
    polls: u64,
}

/// What a round saw of the workers, least busy first; a round's is its
/// busiest worker's.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pace {
    /// Not running a task.
    Idle,
    /// Running tasks, each poll a new one since the last round.
    Busy,
    /// Inside the same poll as last round (maybe blocked).
    Lingering,
}

/// What every worker's look in a round shares.
struct Round<'a> {
    shared: &'a Arc<Shared>,
    threshold: Option<Duration>,
    now: Instant,
    /// Every worker inside the same poll as last round: nobody else can
    /// take anything over.
    all_stuck: bool,
}

impl Monitor {
    fn new(shared: Arc<Shared>) -> Monitor {
        let threshold = shared.config.handoff_after;
        let busy_round = threshold.map_or(BUSY_ROUND, |t| (t / 2).clamp(MIN_ROUND, BUSY_ROUND));
        let n = shared.remotes().len();
        let workers = vec![WorkerWatch::new(Instant::now()); n];
        let turns = shared.driver.turns();
        Monitor {
            threshold,
            busy_round,
            round: busy_round,
            round_ended: Instant::now(),
            hidden: HiddenWatch::new(n),
            workers,
            sampled: Vec::with_capacity(n),
            stall: Stall::default(),
            turns,
            shared,
        }
    }

    /// Sleeps until the next round, or the armed watch's next look;
    /// `None` at shutdown. A long round only while every worker sleeps;
    /// one waking wakes us (`monitor_sleep.rs`), and the next round is a
    /// busy one.
    fn sleep(&mut self) -> Option<Wake> {
        let shared = &self.shared;
        shared.slow_polls.calibrate();
        let short = self.busy_round * BUSY_BACKOFF;
        let armed = self.hidden.is_armed();
        let long_sleep = !armed && self.round > short && shared.monitor_may_sleep_long();
        let round = if long_sleep {
            self.round
        } else {
            self.round.min(short)
        };
        let left = round.saturating_sub(self.round_ended.elapsed());
        shared
            .monitor
            .park_timeout(Some(if armed { left.min(WATCH_EVERY) } else { left }));
        if shared.is_shutdown() {
            return None;
        }
        if long_sleep && shared.monitor_sleep.end() {
            self.round = self.busy_round;
            return Some(Wake::Round);
        }
        // Early (the armed watch's look, or a worker's `poke_watch`): a look.
        Some(if self.round_ended.elapsed() < round {
            Wake::Look
        } else {
            Wake::Round
        })
    }

    /// Looks at every worker (`WorkerWatch::look`); returns the round's pace.
    fn watch_workers(&mut self, now: Instant) -> Pace {
        let shared = &self.shared;
        self.sampled.extend(shared.remotes().iter().map(Sample::of));
        let all_stuck = self
            .sampled
            .iter()
            .zip(&self.workers)
            .all(|(s, w)| s.lent && s.polls == w.polls);
        let round = Round {
            shared,
            threshold: self.threshold,
            now,
            all_stuck,
        };
        let mut pace = Pace::Idle;
        for (i, (remote, sample)) in shared
            .remotes()
            .iter()
            .zip(self.sampled.drain(..))
            .enumerate()
        {
            pace = pace.max(self.workers[i].look(&round, i, remote, sample));
        }
        pace
    }

    /// Serves due timers and ready I/O when nobody took a turn at the
    /// driver since the last round.
    fn turn_driver(&mut self) {
        let shared = &self.shared;
        // Served by somebody else since the last round: nothing to do (a
        // zero-timeout epoll_wait every round is measurable under I/O load).
        if shared.driver.turns() == self.turns && shared.driver.has_work() {
            if let Some(driver) = shared.driver.try_lock() {
                driver.poll_now();
                driver.dispatch();
                drop(driver);
                shared.after_monitor_turn();
            }
        }
        self.turns = shared.driver.turns(); // our own turn included
    }

    /// The next round: a busy one while a worker lingers in a poll, growing
    /// up to `BUSY_BACKOFF` busy rounds while workers are busy, up to
    /// `MAX_ROUND` while all are idle.
    fn next_round(&mut self, pace: Pace) {
        self.round = match pace {
            Pace::Lingering => self.busy_round,
            Pace::Busy => (self.round * 2).clamp(self.busy_round, self.busy_round * BUSY_BACKOFF),
            Pace::Idle => (self.round * 2).min(MAX_ROUND),
        };
        self.round_ended = Instant::now();
    }
}

impl Sample {
    fn of(remote: &Remote) -> Sample {
        let active = lock(&remote.active).clone();
        let lent = active.is_lent();
        Sample {
            active,
            lent,
            polls: remote.counters.polls.load(Relaxed),
        }
    }
}

impl WorkerWatch {
    fn new(now: Instant) -> WorkerWatch {
        WorkerWatch {
            polls: u64::MAX,
            since: now,
            probe: None,
            unreachable_rounds: 0,
            ring_taken: 0,
        }
    }

    /// This round's look at worker `index`: wakes a sleeper for what waits
    /// behind a poll that has lasted a round, and hands its core to a new
    /// thread when due.
    fn look(&mut self, round: &Round<'_>, index: usize, remote: &Remote, sample: Sample) -> Pace {
        let (waiting, taken) = remote.ring();
        let ring_untouched = waiting > 0 && taken == self.ring_taken;
        self.ring_taken = taken;
        if !sample.lent || sample.polls != self.polls {
            self.restart(sample.polls, round.now);
            return if sample.lent { Pace::Busy } else { Pace::Idle };
        }
        let out_of_reach = ring_untouched || round.all_stuck;
        if self.hand_off_due(round, &sample.active, out_of_reach)
            && Shared::retake(round.shared, index)
        {
            self.restart(sample.polls, round.now);
        }
        Pace::Lingering
    }

    /// A new poll (or none): its clock starts now.
    fn restart(&mut self, polls: u64, now: Instant) {
        self.polls = polls;
        self.since = now;
        self.probe = None;
        self.unreachable_rounds = 0;
    }

    /// Whether the core is due for a hand-off: inside one poll for the
    /// threshold and blocked, or busy `HOG_FACTOR` times as long with what
    /// waits behind it out of others' reach (`out_of_reach`: its ring
    /// untouched, or every worker inside a long poll) `HOG_CONFIRM` rounds
    /// in a row.
    fn hand_off_due(&mut self, round: &Round<'_>, active: &CoreSlot, out_of_reach: bool) -> bool {
        let stuck = round.now - self.since;
        let Some(t) = round.threshold.filter(|&t| stuck >= t) else {
            return false;
        };
        let blocked = self.is_blocked(active, round.now);
        // Busy this long: hand off only what others cannot reach.
        if out_of_reach {
            self.unreachable_rounds += 1;
        } else {
            self.unreachable_rounds = 0;
        }
        blocked || (stuck >= t * HOG_FACTOR && self.unreachable_rounds >= HOG_CONFIRM)
    }

    /// Whether the thread inside the poll is blocked: mostly off-CPU since
    /// the first sample, and not waiting for one now. The first call only
    /// samples (`false`); a thread that cannot be read counts as blocked.
    fn is_blocked(&mut self, active: &CoreSlot, now: Instant) -> bool {
        match (self.probe, active.owner_activity()) {
            (_, None) => true, // cannot tell: treat as blocked
            (None, Some(a)) => {
                self.probe = Some(CpuProbe {
                    at: now,
                    cpu_ns: a.cpu_ns,
                });
                false
            }
            (Some(p), Some(a)) => {
                let ran = a.cpu_ns.saturating_sub(p.cpu_ns) as u128;
                !a.runnable && ran < (now - p.at).as_nanos() / 2
            }
        }
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
                    named: shared.named_waiting(),
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
