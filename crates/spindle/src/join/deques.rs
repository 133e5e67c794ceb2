//! The job deques of `join`: one per worker thread, its owner pushing and
//! popping the newest job (a join takes back the job it just pushed),
//! thieves stealing the oldest (the biggest piece of a divide-and-conquer
//! tree). crossbeam-deque's Chase–Lev deque, as rayon's.
//!
//! Invariants:
//! - a thread's deque is registered (`JobStealers::register`) while its
//!   `WorkerCtx` lives, and empty when it is dropped: a join returns only
//!   once both of its jobs have run;
//! - the registry is read on the stealing path only, never by an owner's
//!   push or pop.

use super::job::JobRef;
use crate::loom::{lock, Mutex};
use crossbeam_deque::{Steal, Stealer, Worker};

/// One worker thread's deque: the owner's end.
pub(crate) struct JobDeque {
    own: Worker<JobRef>,
    /// Its key in the registry.
    id: usize,
}

impl JobDeque {
    pub(super) fn push(&self, job: JobRef) {
        self.own.push(job);
    }

    pub(super) fn pop(&self) -> Option<JobRef> {
        self.own.pop()
    }

    pub(crate) fn id(&self) -> usize {
        self.id
    }
}

/// Every registered deque's thieves' end, for workers with nothing else
/// to run and joins waiting for a stolen job.
#[derive(Default)]
pub(crate) struct JobStealers {
    list: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    next_id: usize,
    stealers: Vec<(usize, Stealer<JobRef>)>,
}

impl JobStealers {
    /// A new deque for a worker thread, stealable from now on.
    pub(crate) fn register(&self) -> JobDeque {
        let own = Worker::new_lifo();
        let mut list = lock(&self.list);
        let id = list.next_id;
        list.next_id += 1;
        list.stealers.push((id, own.stealer()));
        JobDeque { own, id }
    }

    /// The deque `id` is gone (its thread is leaving the runtime).
    pub(crate) fn unregister(&self, id: usize) {
        lock(&self.list).stealers.retain(|(i, _)| *i != id);
    }

    /// Whether some deque holds a job (a worker about to sleep re-checks).
    pub(crate) fn any_waiting(&self) -> bool {
        lock(&self.list).stealers.iter().any(|(_, s)| !s.is_empty())
    }

    /// The oldest job of some deque but `except`, trying each from
    /// `start` on.
    pub(crate) fn steal(&self, except: usize, start: usize) -> Option<JobRef> {
        let list = lock(&self.list);
        let n = list.stealers.len();
        (0..n)
            .map(|k| &list.stealers[(start + k) % n])
            .filter(|(id, _)| *id != except)
            .find_map(|(_, stealer)| loop {
                match stealer.steal() {
                    Steal::Success(job) => break Some(job),
                    Steal::Empty => break None,
                    Steal::Retry => {}
                }
            })
    }
}
