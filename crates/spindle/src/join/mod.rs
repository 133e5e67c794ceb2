//! `join(a, b)`: rayon's fork–join for plain closures, on the runtime's
//! workers.
//!
//! On a multi-thread worker (inside a task, or inside another join's
//! job) `join` pushes `b` on the thread's job deque (`deques.rs`) as a
//! `StackJob` (`job.rs`): a pointer to the closure on this stack, no
//! allocation. It runs `a` here, then takes `b` back and runs it here too,
//! unless an idle worker stole it meanwhile. Then it waits for `b`'s
//! thief, running other jobs (its own older ones, or stolen ones) while
//! it waits. Elsewhere (the current-thread runtime, a plain thread) it
//! runs `a`, then `b`.
//!
//! Invariants:
//! - `join` returns, or unwinds, only once both closures have run: a
//!   thief may hold a pointer into this stack frame until then;
//! - a deque's newest job is the one its owner pushed last and has not
//!   taken back: jobs pushed by `a`'s own joins were all taken back, or
//!   stolen and finished, before `a` returned.

// Loom's models run no joins in parallel: `sched::join` runs them in turn
// there, and only the job's own protocol is modelled (`job.rs`).
#[cfg(not(loom))]
mod deques;
#[cfg(any(not(loom), test))]
mod job;

#[cfg(not(loom))]
pub(crate) use deques::{JobDeque, JobStealers};
#[cfg(not(loom))]
use job::{JobRef, Outcome, StackJob};
#[cfg(not(loom))]
use std::panic::{self, AssertUnwindSafe};

/// Runs `a` and `b`, in parallel when a worker is idle to take `b`, and
/// returns both results.
///
/// Called on a multi-thread runtime's worker (in a task, or in a closure
/// another `join` runs), `b` waits on this worker's job deque while `a`
/// runs here, with no allocation; an idle worker (one with no task to run)
/// may steal it. If none does, `b` runs here after `a`. Nested joins split
/// a problem in halves, and idle workers take the biggest halves first, as
/// with rayon's `join`. On the current-thread runtime, or outside a
/// runtime, `a` runs and then `b`.
///
/// The trade-off: `join` blocks the calling thread until both have run.
/// Called in a task, it is one long poll: the worker's other tasks wait
/// for it (idle workers take them from its queue, and the monitor hands
/// its core to a new thread if it lasts), and `timeout` or `select!`
/// around the task fire only after it returns. While `b` runs on a thief,
/// the caller runs other jobs, or spins. Use it for CPU-bound work split
/// into closures; use [`spawn`](crate::spawn) or [`fork`](crate::fork)
/// for work that awaits.
///
/// ```
/// fn sum(v: &[u64]) -> u64 {
///     if v.len() <= 1024 {
///         return v.iter().sum();
///     }
///     let (left, right) = v.split_at(v.len() / 2);
///     let (a, b) = spindle::join(|| sum(left), || sum(right));
///     a + b
/// }
///
/// let rt = spindle::Runtime::builder().workers(2).build().unwrap();
/// let v: Vec<u64> = (1..=100_000).collect();
/// let total = rt.block_on(async move { spindle::spawn(async move { sum(&v) }).await });
/// assert_eq!(total.unwrap(), 5_000_050_000);
/// ```
///
/// # Panics
/// If either closure panics, `join` panics with that payload (with `a`'s
/// if both did), once both have run.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    join_context(|_| a(), |_| b())
}

/// [`join`], telling each closure where it runs: `b`'s
/// [`JoinContext::migrated`] is `true` when a thief took it. A
/// divide-and-conquer that splits its work only while thieves take it
/// (rayon's adaptive splitting: split less where nobody steals) reads it.
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(JoinContext) -> RA,
    B: FnOnce(JoinContext) -> RB + Send,
    RB: Send,
{
    crate::sched::join(
        || a(JoinContext { migrated: false }),
        |migrated| b(JoinContext { migrated }),
    )
}

/// Where a [`join_context`] closure runs.
#[derive(Clone, Copy, Debug)]
pub struct JoinContext {
    migrated: bool,
}

impl JoinContext {
    /// Whether the closure runs on another thread than the one that
    /// called `join_context` (always `false` for the first closure).
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

#[cfg(not(loom))]
/// `join` on a worker thread: `deque` is its own, `stealers` the
/// runtime's, and `wake_thief` wakes an idle worker for the job pushed.
pub(crate) fn join_on<A, B, RA, RB>(
    deque: &JobDeque,
    stealers: &JobStealers,
    wake_thief: impl Fn(),
    a: A,
    b: B,
) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce(bool) -> RB + Send,
    RB: Send,
{
    let job_b = StackJob::new(b);
    let b_ref = job_b.as_job_ref();
    deque.push(b_ref);
    wake_thief();
    let ra = panic::catch_unwind(AssertUnwindSafe(a));
    let rb = finish(deque, stealers, &job_b, b_ref);
    match (ra, rb) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(payload), _) | (_, Err(payload)) => panic::resume_unwind(payload),
    }
}

#[cfg(not(loom))]
/// After `a`: runs `job_b` here if it is still on the deque, else waits
/// for its thief, running other jobs meanwhile. Never unwinds: a job's
/// panic is its outcome.
fn finish<B: FnOnce(bool) -> RB + Send, RB: Send>(
    deque: &JobDeque,
    stealers: &JobStealers,
    job_b: &StackJob<B, RB>,
    b_ref: JobRef,
) -> Outcome<RB> {
    let mut idle_rounds = 0u32;
    loop {
        if job_b.is_done() {
            return job_b.take_outcome();
        }
        let job = match deque.pop() {
            Some(job) if job == b_ref => {
                return panic::catch_unwind(AssertUnwindSafe(|| job_b.run_inline()));
            }
            Some(job) => Some(job),
            None => stealers.steal(deque.id(), idle_rounds as usize),
        };
        match job {
            // SAFETY: taken from a deque, so this thread alone runs it, and
            // its owner waits for it (the invariant above).
            Some(job) => unsafe { job.execute() },
            None => {
                idle_rounds = idle_rounds.wrapping_add(1);
                if idle_rounds.is_multiple_of(64) {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
    }
}
