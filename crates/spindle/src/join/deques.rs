//! The job deques of `join`: one per worker thread, its owner pushing and
//! popping the newest job (a join takes back the job it just pushed),
//! thieves stealing the oldest (the biggest piece of a divide-and-conquer
//! tree). crossbeam-deque's Chase–Lev deque, as rayon's.
//!
//! miri runs the core under strict provenance, which crossbeam-epoch's
//! tagged pointers (under crossbeam-deque's buffers) do not meet; under
//! miri the deques are a locked `VecDeque` with the same interface
//! (`locked`), and miri checks the jobs' own protocol through it.
//!
//! Invariants:
//! - a thread's deque is registered (`JobStealers::register`) while its
//!   `WorkerCtx` lives, and empty when it is dropped: a join returns only
//!   once both of its jobs have run;
//! - the registry is read on the stealing path only, never by an owner's
//!   push or pop.

use super::job::JobRef;
use crate::loom::{lock, Mutex};
#[cfg(not(miri))]
use crossbeam_deque::{Steal, Stealer, Worker};
#[cfg(miri)]
use locked::{Steal, Stealer, Worker};

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

/// The deque under miri: both ends behind one lock, the owner's end LIFO,
/// the thieves' FIFO, as crossbeam-deque's `new_lifo`.
#[cfg(miri)]
mod locked {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    pub(super) enum Steal<T> {
        Empty,
        Success(T),
        /// crossbeam's lost race; a lock never loses one.
        #[allow(dead_code)]
        Retry,
    }

    pub(super) struct Worker<T>(Arc<Mutex<VecDeque<T>>>);

    pub(super) struct Stealer<T>(Arc<Mutex<VecDeque<T>>>);

    impl<T> Worker<T> {
        pub(super) fn new_lifo() -> Worker<T> {
            Worker(Arc::default())
        }

        pub(super) fn stealer(&self) -> Stealer<T> {
            Stealer(self.0.clone())
        }

        pub(super) fn push(&self, item: T) {
            self.0.lock().unwrap().push_back(item);
        }

        pub(super) fn pop(&self) -> Option<T> {
            self.0.lock().unwrap().pop_back()
        }
    }

    impl<T> Stealer<T> {
        pub(super) fn steal(&self) -> Steal<T> {
            match self.0.lock().unwrap().pop_front() {
                Some(item) => Steal::Success(item),
                None => Steal::Empty,
            }
        }

        pub(super) fn is_empty(&self) -> bool {
            self.0.lock().unwrap().is_empty()
        }
    }
}
