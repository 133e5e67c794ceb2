//! Diagnostics: slow polls, the stall detector, and runtime dumps.
//!
//! - **Slow polls** (opt-in: `Builder::slow_poll_threshold`). Each worker
//!   times its polls with the CPU's cycle counter (one `rdtsc` before and
//!   after; the portable fallback is `Instant`)
//!   once the monitor has calibrated cycles to time, and counts those longer
//!   than the threshold (50 µs usually), keeping the `WORST` longest with
//!   the task's address. Only a slow poll takes a lock.
//! - **Stall detector** (monitor): every worker asleep, nothing queued, no
//!   timer armed, no I/O source registered, no blocking job, yet tasks
//!   parked — for `stall_after` with no poll in between — is reported once
//!   (until something runs again) through the `on_stall` callback, by
//!   default a report on stderr. Only a *possible* deadlock: a thread
//!   outside the runtime may still wake those tasks.
//! - **Dump** (`Runtime::dump`, or `SIGQUIT` with
//!   `Builder::dump_on_sigquit`): workers, queues, injector, timers, the
//!   blocking pool and the worst slow polls, as text on stderr.

use crate::loom::{lock, AtomicU64, Mutex, Ordering::Relaxed};
use std::fmt;
use std::time::{Duration, Instant};

/// Slow polls kept per worker.
const WORST: usize = 8;

/// One slow poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowPoll {
    /// How long the poll ran.
    pub duration: Duration,
    /// The task's address (its identity while it lives).
    pub task: usize,
}

/// A cycle (or nanosecond) stamp.
#[inline(always)]
pub(crate) fn stamp() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    {
        // SAFETY: `rdtsc` has no preconditions on x86-64; it only reads
        // the time-stamp counter.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    {
        static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Slow-poll bookkeeping shared by a runtime's workers.
pub(crate) struct SlowPolls {
    threshold: Option<Duration>,
    /// Threshold in stamps; `u64::MAX` until calibrated (or when off).
    limit: AtomicU64,
    /// Stamps per microsecond × 1024, set by the calibration.
    per_us_x1024: AtomicU64,
    calibration: Mutex<Option<(u64, Instant)>>,
    worst: Box<[Mutex<Vec<SlowPoll>>]>,
}

impl SlowPolls {
    pub(crate) fn new(workers: usize, threshold: Option<Duration>) -> SlowPolls {
        SlowPolls {
            threshold,
            limit: AtomicU64::new(u64::MAX),
            per_us_x1024: AtomicU64::new(0),
            calibration: Mutex::new(None),
            worst: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    /// The monitor's calls: the first marks a start, a later one (≥ 1 ms
    /// on) fixes the stamp rate and turns timing on.
    pub(crate) fn calibrate(&self) {
        let Some(threshold) = self.threshold else {
            return;
        };
        if self.limit.load(Relaxed) != u64::MAX {
            return;
        }
        let mut cal = lock(&self.calibration);
        match *cal {
            None => *cal = Some((stamp(), Instant::now())),
            Some((s0, t0)) => {
                let us = t0.elapsed().as_micros() as u64;
                if us < 1000 {
                    return;
                }
                let per_us_x1024 = ((stamp() - s0) << 10) / us;
                let limit = (threshold.as_micros() as u64 * per_us_x1024) >> 10;
                self.per_us_x1024.store(per_us_x1024.max(1), Relaxed);
                self.limit.store(limit.max(1), Relaxed);
            }
        }
    }

    /// The limit a poll's stamp difference is compared with (`u64::MAX`: off).
    #[inline(always)]
    pub(crate) fn limit(&self) -> u64 {
        self.limit.load(Relaxed)
    }

    /// Records a slow poll of `stamps` on worker `index`.
    #[cold]
    pub(crate) fn record(&self, index: usize, task: usize, stamps: u64) {
        let per_us = self.per_us_x1024.load(Relaxed).max(1);
        let duration = Duration::from_nanos(((stamps << 10) / per_us).saturating_mul(1000));
        let mut worst = lock(&self.worst[index]);
        worst.push(SlowPoll { duration, task });
        worst.sort_by_key(|p| std::cmp::Reverse(p.duration));
        worst.truncate(WORST);
        drop(worst);
        crate::report::emit(
            crate::report::Kind::SlowPoll,
            crate::report::Level::Debug,
            format_args!(
                "spindle: worker {index} polled task {} for {duration:?}",
                crate::task::names::describe(task)
            ),
        );
    }

    /// The longest slow polls seen on worker `index`, longest first.
    pub(crate) fn worst(&self, index: usize) -> Vec<SlowPoll> {
        lock(&self.worst[index]).clone()
    }
}

/// What the stall detector saw (`Builder::on_stall`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StallReport {
    /// Tasks parked (registered) with nothing in the runtime to wake them.
    pub parked_tasks: usize,
    /// Workers, all asleep.
    pub workers: usize,
    /// How long nothing has run.
    pub idle_for: Duration,
    /// Where the waiting tasks were spawned (`file:line:column`) and how
    /// many came from each, most first; empty unless spawn tracking is on
    /// (`Builder::track_spawns`, `SPINDLE_TRACK_SPAWNS=1`).
    pub spawned_at: Vec<(String, usize)>,
    /// Whether spawn tracking was on.
    pub tracking_spawns: bool,
    /// The waiting tasks spawned with a name (`task::Builder::name`), as
    /// `0x55d0c1a2b3c0 "flusher"`: id and name.
    pub named: Vec<String>,
}

impl fmt::Display for StallReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "spindle: possible deadlock: all {} workers idle for {:?} while {} task(s) wait \
             with no timer, I/O or blocking job that could wake them (only a thread outside \
             the runtime could)",
            self.workers, self.idle_for, self.parked_tasks
        )?;
        for task in &self.named {
            write!(f, "\n  waiting: task {task}")?;
        }
        if !self.tracking_spawns {
            return write!(
                f,
                "\n  (Builder::track_spawns(true) or SPINDLE_TRACK_SPAWNS=1 says where they were spawned)"
            );
        }
        for (site, n) in &self.spawned_at {
            write!(f, "\n  {n:>6} task(s) spawned at {site}")?;
        }
        Ok(())
    }
}

/// The callback type of `Builder::on_stall`.
pub(crate) type OnStall = std::sync::Arc<dyn Fn(&StallReport) + Send + Sync>;

/// Reports the runtime's dump at every `SIGQUIT` (a `signal::unix`
/// listener on a small thread) for as long as the runtime lives.
#[cfg(not(any(loom, miri)))]
pub(crate) fn dump_on_sigquit(handle: &super::Handle) -> std::io::Result<()> {
    use crate::signal::unix::{signal, SignalKind};
    let runtime = handle.downgrade();
    let mut quit = signal(SignalKind::quit())?;
    std::thread::Builder::new()
        .name("spindle-dump".into())
        .spawn(move || loop {
            crate::driver::park::block_on_thread(quit.recv());
            match runtime.upgrade() {
                Some(h) => {
                    crate::report::warn(crate::report::Kind::Dump, format_args!("{}", h.dump()))
                }
                None => return, // the runtime is gone
            }
        })?;
    Ok(())
}

/// The default `on_stall`: the report through `report::warn` (on stderr
/// unless the program routes reports elsewhere).
pub(crate) fn print_stall(report: &StallReport) {
    crate::report::warn(crate::report::Kind::Stall, format_args!("{report}"));
}
