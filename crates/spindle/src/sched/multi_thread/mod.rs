//! The multi-thread work-stealing scheduler.
//!
//! Each worker thread owns a `Core`: its fresh tasks (`lifo_stack.rs`: those it
//! spawned or woke during the poll now running, which a `Fork`'s await can
//! run inline; the top one is the LIFO slot, the task run next for cache
//! warmth and to keep message-passing pairs on one worker), a fixed-size
//! local ring (`queue.rs`) and counters. When a poll returns, every fresh
//! task but the top goes to the ring, where other workers can steal it
//! (earlier, as soon as some worker is idle); a poll that lasts across two
//! of the monitor's looks has all of them taken by an idle worker
//! (`steal_hidden`, `sched/hidden_watch.rs`). Every
//! poll runs with a cooperative budget (`task/coop/`). A worker looks
//! for work in this order:
//!
//! 1. every `GLOBAL_POLL_INTERVAL` ticks, the injector first (fairness: tasks
//!    scheduled from outside cannot starve behind a busy local queue);
//! 2. the LIFO slot, at most `MAX_LIFO_POLLS` times in a row (then the task
//!    goes to the back of the ring, so a ping-pong pair cannot starve the rest;
//!    an idle worker is woken for it only if the ring held other tasks);
//! 3. its ring; 4. a batch from the injector;
//! 5. stealing half of another worker's ring, as one of at most half the
//!    workers searching (`idle.rs`), spinning a few rounds, then the fresh
//!    tasks of a worker the monitor named (`steal_hidden`), then a `join`
//!    job from another thread's job deque (`jobs.rs`), before
//! 6. yielding its CPU once (not beside a poll that hides tasks:
//!    `Shared::hides_from`) and parking (`spin.rs` has the policy,
//!    `idle.rs` the protocol, `docs/sleep-wake.md` the proof).
//!
//! Tasks hold the shared state through a `SchedRef` (`sched_ref.rs`):
//! each worker keeps a stock of them taken ahead (`RefStock`), so spawning
//! and freeing tasks costs no atomic read-modify-write on a reference count.
//!
//! Files: `shared.rs` the shared state (`Shared`, `Remote`, `build`),
//! `worker.rs` a worker's context, core and run loop, `schedule.rs` where
//! spawned and woken tasks go, `steal.rs` stealing, `threads.rs` worker
//! threads and core hand-offs, `jobs.rs` the workers' side of `join`.

#[cfg(not(loom))]
mod jobs;
mod schedule;
mod shared;
mod steal;
mod threads;
mod worker;

#[cfg(all(test, loom))]
mod loom_model;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use schedule::spawn;
pub(super) use shared::Remote;
pub(crate) use shared::{build, external_spawner, Config, Shared, Spawner};
pub(crate) use worker::{Core, WorkerCtx};
