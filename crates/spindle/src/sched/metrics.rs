//! Per-worker counters and the runtime's metrics snapshot.
//!
//! Each worker's counters are written only by the thread holding that
//! worker's core, while it holds it (owned in the run loop, or inside a
//! borrow of the lent core, `core_slot.rs`), with a plain load-and-store (no
//! read-modify-write, no lock prefix): one writer at a time, even while a
//! thread that lost its core in a hand-off finishes its poll beside the
//! new one. Anyone reads them with Relaxed loads: a snapshot is a
//! consistent-enough view for telemetry, never used for synchronisation.

use crate::loom::{AtomicBool, AtomicU64, Ordering::Relaxed};

#[derive(Default)]
pub(crate) struct WorkerCounters {
    /// Not a metric: the monitor's hint that this worker holds fresh
    /// tasks, which no other worker can see until its poll ends or a
    /// visit takes them (set by the owner at every local schedule and
    /// publish, cleared by a visit; a stale `true` only costs a visit that
    /// finds nothing, and it is never stale `false`: `monitor.rs`). Here
    /// because the owner writes this line anyway.
    pub(crate) hides_fresh: AtomicBool,
    pub(crate) polls: AtomicU64,
    pub(crate) spawns: AtomicU64,
    pub(crate) local_schedules: AtomicU64,
    pub(crate) steals: AtomicU64,
    pub(crate) steal_ops: AtomicU64,
    pub(crate) parks: AtomicU64,
    pub(crate) lifo_hits: AtomicU64,
    pub(crate) overflows: AtomicU64,
    pub(crate) injector_pops: AtomicU64,
    pub(crate) slow_polls: AtomicU64,
    pub(crate) forced_yields: AtomicU64,
    pub(crate) visits: AtomicU64,
}

/// Increments a counter owned by the calling worker.
#[inline(always)]
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

impl WorkerCounters {
    pub(crate) fn snapshot(&self, index: usize, queue_depth: usize) -> WorkerMetrics {
        WorkerMetrics {
            index,
            polls: self.polls.load(Relaxed),
            spawns: self.spawns.load(Relaxed),
            local_schedules: self.local_schedules.load(Relaxed),
            steals: self.steals.load(Relaxed),
            steal_operations: self.steal_ops.load(Relaxed),
            parks: self.parks.load(Relaxed),
            lifo_hits: self.lifo_hits.load(Relaxed),
            overflows: self.overflows.load(Relaxed),
            injector_pops: self.injector_pops.load(Relaxed),
            queue_depth,
            slow_polls: self.slow_polls.load(Relaxed),
            forced_yields: self.forced_yields.load(Relaxed),
            hidden_steals: self.visits.load(Relaxed),
            worst_polls: Vec::new(),
        }
    }
}

/// One worker's counters, since the runtime started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerMetrics {
    /// Worker number (0-based).
    pub index: usize,
    /// Task polls run on this worker.
    pub polls: u64,
    /// Tasks spawned by code running on this worker. Spawns from a
    /// thread that lost the core in a hand-off, like those from outside the
    /// runtime, are not counted per worker.
    pub spawns: u64,
    /// Tasks this worker scheduled onto its own queue or LIFO slot.
    pub local_schedules: u64,
    /// Tasks this worker stole from others.
    pub steals: u64,
    /// Successful steal operations (each moves up to half a queue).
    pub steal_operations: u64,
    /// Times the worker went to sleep.
    pub parks: u64,
    /// Tasks run straight from the LIFO slot, or inline by an await that
    /// found them among the fresh tasks (`sched/inline.rs`).
    pub lifo_hits: u64,
    /// Times the local queue was full and half of it moved to the injector.
    pub overflows: u64,
    /// Tasks taken from the injector.
    pub injector_pops: u64,
    /// Tasks in the local queue when the snapshot was taken.
    pub queue_depth: usize,
    /// Polls that ran longer than the slow-poll threshold
    /// (`Builder::slow_poll_threshold`, 50 µs by default); one that lost
    /// its core to a hand-off meanwhile is counted in the runtime's
    /// hand-offs instead.
    pub slow_polls: u64,
    /// Polls that ended because the task's cooperative budget was spent
    /// (`spindle::task::coop`): the task yielded to let others run.
    pub forced_yields: u64,
    /// Times this worker took the fresh tasks (LIFO slot included) of
    /// another worker stuck in a long poll.
    pub hidden_steals: u64,
    /// The longest of those, longest first (a few).
    pub worst_polls: Vec<crate::SlowPoll>,
}

/// A snapshot of the whole runtime (`Runtime::metrics`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RuntimeMetrics {
    /// `"multi_thread"` or `"current_thread"`.
    pub flavor: &'static str,
    /// Per worker (one for current-thread).
    pub workers: Vec<WorkerMetrics>,
    /// Tasks scheduled from outside any worker (`Handle::spawn`, wakes from other threads).
    pub remote_schedules: u64,
    /// Tasks waiting in the global injector.
    pub injector_depth: usize,
    /// Tasks that have gone idle at least once and are not finished yet.
    pub registered_tasks: usize,
    /// Workers asleep now.
    pub sleeping_workers: usize,
    /// Timers armed and not yet fired.
    pub timers: usize,
    /// Cores handed to a fresh thread because their thread was stuck in a
    /// poll (the monitor) or called `block_in_place`.
    pub handoffs: u64,
    /// The blocking pool (`spawn_blocking`).
    pub blocking: BlockingMetrics,
    /// Times the stall detector reported a possible deadlock.
    pub stalls_detected: u64,
    /// The tasks of this runtime spawned with a name
    /// (`task::Builder::name`), polled at least once and not yet finished,
    /// by id.
    pub named_tasks: Vec<crate::task::NamedTask>,
}

/// The blocking pool's state (`spawn_blocking`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockingMetrics {
    /// Pool threads alive.
    pub threads: usize,
    /// Of those, waiting for a job.
    pub idle_threads: usize,
    /// Jobs waiting for a thread.
    pub queue_depth: usize,
    /// Jobs that had to wait because the pool was at its thread limit.
    pub queued_at_limit: u64,
    /// Threads started since the runtime began.
    pub spawned_threads: u64,
}

/// A dump of the runtime's state, one line per worker (`Runtime::dump`).
impl std::fmt::Display for RuntimeMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "spindle runtime ({}): {} workers, {} asleep; injector {}, parked tasks {}, \
             timers {}, hand-offs {}, stalls {}",
            self.flavor,
            self.workers.len(),
            self.sleeping_workers,
            self.injector_depth,
            self.registered_tasks,
            self.timers,
            self.handoffs,
            self.stalls_detected
        )?;
        let b = &self.blocking;
        writeln!(
            f,
            "  blocking pool: {} threads ({} idle), {} queued, {} queued at the limit",
            b.threads, b.idle_threads, b.queue_depth, b.queued_at_limit
        )?;
        for w in &self.workers {
            write!(
                f,
                "  worker {}: queue {}, polls {}, spawns {}, steals {}, parks {}, slow polls {}, \
                 forced yields {}",
                w.index,
                w.queue_depth,
                w.polls,
                w.spawns,
                w.steals,
                w.parks,
                w.slow_polls,
                w.forced_yields
            )?;
            for p in &w.worst_polls {
                let task = crate::task::names::describe(p.task);
                write!(f, "; task {task} {:?}", p.duration)?;
            }
            writeln!(f)?;
        }
        if !self.named_tasks.is_empty() {
            writeln!(f, "  named tasks: {}", self.named_tasks.len())?;
            for t in self.named_tasks.iter().take(DUMP_NAMED) {
                writeln!(f, "    {} {:?}", t.id, t.name)?;
            }
            if self.named_tasks.len() > DUMP_NAMED {
                writeln!(f, "    and {} more", self.named_tasks.len() - DUMP_NAMED)?;
            }
        }
        Ok(())
    }
}

/// The most named tasks a dump lists one by one.
const DUMP_NAMED: usize = 32;

impl RuntimeMetrics {
    /// Sum of one counter over all workers.
    pub fn total(&self, f: impl Fn(&WorkerMetrics) -> u64) -> u64 {
        self.workers.iter().map(f).sum()
    }
}
