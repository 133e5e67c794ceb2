//! `JoinSet<T>`: a set of tasks that gives their outputs back in the order
//! they finish (Tokio's `task::JoinSet`, with its names and signatures).
//!
//! The tasks' `JoinHandle`s live in a slab (`entries` plus a free list), so
//! an entry's index stays the same for as long as it is in the set. Each
//! entry's handle is polled with its own waker ([`EntryWaker`]): woken, it
//! queues its index in the shared notified queue ([`Notified`]) and wakes
//! the task that waits in [`JoinSet::join_next`]. `join_next` polls only the
//! entries that were woken, so draining a set of n tasks costs O(n) polls,
//! not a scan of the set per result. `combinators/mod.rs` has the same
//! pattern for a group of fixed size, whose flags are one array allocated
//! up front; a set's entries come and go, so it has its own version.
//!
//! Dropping the set aborts every task still in it; [`JoinSet::detach_all`]
//! lets them run on instead.
//!
//! Invariants:
//! - An entry's `queued` flag is set while its index is in the notified
//!   queue or in `due` (the indices taken from the queue and not yet
//!   polled), and the index is there at most once. A fresh entry starts in
//!   `due`, flag set, so that its first poll registers its waker.
//! - An entry leaving the set sets its flag for good, so that a late wake
//!   from its task queues nothing. If the flag was set already, its index
//!   is still queued: the slot stays out of the free list until that index
//!   is taken and found empty, so an index is never queued for two entries.
//! - `len` counts the occupied slots.
//! - A poll of `join_next` registers its waker before it takes the queue:
//!   a wake that comes after the take finds that waker.

use crate::loom::{lock, AtomicBool, Mutex, Ordering::*};
use crate::sched::Handle;
use crate::task::coop;
use crate::task::{AbortHandle, Id, JoinError, JoinHandle};
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A set of tasks, each giving a `T`; see the module docs.
pub struct JoinSet<T> {
    entries: Vec<Option<Entry<T>>>,
    /// Empty slots whose index is in no queue.
    free: Vec<usize>,
    /// Indices taken from the notified queue, to be polled.
    due: VecDeque<usize>,
    len: usize,
    notified: Arc<Notified>,
}

/// One task of the set.
struct Entry<T> {
    handle: JoinHandle<T>,
    flag: Arc<EntryWaker>,
    /// `flag` as a `Waker`, made once.
    waker: Waker,
}

/// How `poll_due` polls an entry's handle.
#[derive(Clone, Copy)]
enum Look {
    /// As an await does: a task not started may run inline there (the
    /// current-thread runtime).
    MayRun,
    /// Only for an output already there (`try_join_next`).
    Finished,
}

/// What the entries' wakers share with the set.
struct Notified {
    queue: Mutex<VecDeque<usize>>,
    /// The waker of the last poll of `join_next`.
    waiter: Mutex<Option<Waker>>,
}

/// The waker of one entry.
struct EntryWaker {
    notified: Arc<Notified>,
    index: usize,
    queued: AtomicBool,
}

impl Wake for EntryWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, AcqRel) {
            // Queued already (that wake woke the waiter) or out of the set.
            return;
        }
        lock(&self.notified.queue).push_back(self.index);
        if let Some(w) = lock(&self.notified.waiter).as_ref() {
            w.wake_by_ref();
        }
    }
}

impl Notified {
    fn new() -> Notified {
        Notified {
            queue: Mutex::new(VecDeque::new()),
            waiter: Mutex::new(None),
        }
    }

    /// Stores the waker that the next wake of an entry wakes.
    fn register(&self, waker: &Waker) {
        let mut waiter = lock(&self.waiter);
        if !waiter.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *waiter = Some(waker.clone());
        }
    }

    /// Moves the queued indices to the end of `due`.
    fn take_into(&self, due: &mut VecDeque<usize>) {
        due.append(&mut lock(&self.queue));
    }
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> JoinSet<T> {
        JoinSet {
            entries: Vec::new(),
            free: Vec::new(),
            due: VecDeque::new(),
            len: 0,
            notified: Arc::new(Notified::new()),
        }
    }

    /// How many tasks are in the set (finished ones included, until
    /// `join_next` gives their output).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set has no task.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Asks every task of the set to stop; they stay in the set, and
    /// `join_next` gives those that did stop as cancelled.
    pub fn abort_all(&mut self) {
        for entry in self.entries.iter().flatten() {
            entry.handle.abort();
        }
    }

    /// Empties the set without stopping its tasks: they run on, and their
    /// outputs are dropped.
    pub fn detach_all(&mut self) {
        // One by one, as `join_next` takes them: the slots whose index is
        // still queued are freed when it is taken (module invariants).
        for index in 0..self.entries.len() {
            if self.entries[index].is_some() {
                self.remove(index);
            }
        }
    }

    /// Waits for the next task to finish and gives its output: `None` when
    /// the set is empty. Cancel-safe: an output is taken only in the poll
    /// that returns it. Spends a unit of the cooperative budget per output,
    /// as awaiting a `JoinHandle` does.
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        std::future::poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// As [`JoinSet::join_next`], with the finished task's id (its
    /// `AbortHandle::id`); a failed task's id is [`JoinError::id`].
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        std::future::poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// One poll of [`JoinSet::join_next`].
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|out| out.map(without_id))
    }

    /// One poll of [`JoinSet::join_next_with_id`].
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        // The entries' polls spend units of their own: a task run inline
        // there (the current-thread runtime) spends this task's budget.
        coop::spend_around(cx, |cx| {
            let out = self.poll_entries(Some(cx.waker()), Look::MayRun);
            if out.is_pending() && coop::refused_in_poll() {
                // The refused entry's wake went to the set's queue.
                cx.waker().wake_by_ref();
            }
            out.map(Some)
        })
    }

    /// The output of a task that has finished, if one is known to have:
    /// never waits.
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id().map(without_id)
    }

    /// As [`JoinSet::try_join_next`], with the finished task's id.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        if self.len == 0 {
            return None;
        }
        // Without a budget, as a try cannot yield; and without inline
        // runs, as a try never waits for a task.
        match coop::unlimited(|| self.poll_entries(None, Look::Finished)) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        }
    }

    /// Aborts every task and waits for them all to stop.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task and gives their outputs in the order they
    /// finished. A task's panic is resumed here, and a cancelled task
    /// panics here, as Tokio's `join_all` does.
    pub async fn join_all(mut self) -> Vec<T> {
        let mut outputs = Vec::with_capacity(self.len);
        while let Some(out) = self.join_next().await {
            match out {
                Ok(value) => outputs.push(value),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => panic!("{e}"),
            }
        }
        outputs
    }

    /// Polls the entries due a poll until one finishes. With `waiter`, the
    /// queue is taken after registering it, once `due` is empty; that
    /// second pass is the last, so an entry that its own poll wakes (a
    /// handle refused by the budget wakes its entry) cannot keep this
    /// looping. A refusal ends the first pass and skips the second.
    fn poll_entries(
        &mut self,
        waiter: Option<&Waker>,
        look: Look,
    ) -> Poll<Result<(Id, T), JoinError>> {
        if let Poll::Ready(out) = self.poll_due(look) {
            return Poll::Ready(out);
        }
        if coop::refused_in_poll() {
            return Poll::Pending;
        }
        if let Some(w) = waiter {
            self.notified.register(w);
        }
        self.notified.take_into(&mut self.due);
        self.poll_due(look)
    }

    /// Polls the entries in `due`, in order, until one finishes, or the
    /// budget refuses one (the rest stay due).
    fn poll_due(&mut self, look: Look) -> Poll<Result<(Id, T), JoinError>> {
        while let Some(index) = self.due.pop_front() {
            let Some(entry) = &mut self.entries[index] else {
                // Left the set while queued: the slot is free now.
                self.free.push(index);
                continue;
            };
            entry.flag.queued.store(false, Release);
            let mut cx = Context::from_waker(&entry.waker);
            let polled = match look {
                Look::MayRun => Pin::new(&mut entry.handle).poll(&mut cx),
                Look::Finished => entry.handle.poll_finished(&mut cx),
            };
            if let Poll::Ready(out) = polled {
                let id = entry.handle.id();
                self.remove(index);
                return Poll::Ready(out.map(|value| (id, value)));
            }
            if coop::refused_in_poll() {
                break;
            }
        }
        Poll::Pending
    }

    /// Takes entry `index` out of the set (module invariants on its slot).
    fn remove(&mut self, index: usize) {
        let entry = self.entries[index].take().expect("an occupied slot");
        if !entry.flag.queued.swap(true, AcqRel) {
            self.free.push(index);
        }
        self.len -= 1;
    }

    /// Puts a spawned task's handle in the set.
    fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let index = self.free.pop().unwrap_or_else(|| {
            self.entries.push(None);
            self.entries.len() - 1
        });
        let flag = Arc::new(EntryWaker {
            notified: self.notified.clone(),
            index,
            queued: AtomicBool::new(true),
        });
        let waker = Waker::from(flag.clone());
        self.entries[index] = Some(Entry {
            handle,
            flag,
            waker,
        });
        self.due.push_back(index);
        self.len += 1;
        abort
    }
}

impl<T: Send + 'static> JoinSet<T> {
    /// Spawns `future` on the current runtime (as [`crate::spawn`]) into
    /// the set.
    ///
    /// # Panics
    /// Outside any runtime.
    #[track_caller]
    pub fn spawn<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(crate::spawn(future))
    }

    /// Spawns `future` on the runtime of `handle` into the set.
    #[track_caller]
    pub fn spawn_on<F>(&mut self, future: F, handle: &Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(handle.spawn(future))
    }
}

fn without_id<T>(out: Result<(Id, T), JoinError>) -> Result<T, JoinError> {
    out.map(|(_, value)| value)
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet::new()
    }
}

impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        self.abort_all();
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len).finish()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::chan::blocking::block_on;
    use loom::thread;

    /// An entry with its flag clear, as after its last poll.
    fn entry(notified: &Arc<Notified>) -> Arc<EntryWaker> {
        Arc::new(EntryWaker {
            notified: notified.clone(),
            index: 0,
            queued: AtomicBool::new(false),
        })
    }

    /// An entry's wake races `join_next` registering its waker and taking
    /// the queue: the index is taken in that poll, or the wake finds the
    /// waker and the next poll takes it (a lost wake-up is a loom
    /// deadlock).
    #[test]
    fn a_wake_racing_the_take_is_not_missed() {
        loom::model(|| {
            let notified = Arc::new(Notified::new());
            let waker = Waker::from(entry(&notified));
            let t = thread::spawn(move || waker.wake());
            let mut due = VecDeque::new();
            block_on(std::pin::pin!(std::future::poll_fn(|cx| {
                notified.register(cx.waker());
                notified.take_into(&mut due);
                if due.is_empty() {
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            })));
            assert_eq!(due, [0]);
            t.join().unwrap();
        });
    }

    /// Two wakes of one entry, from two threads, queue its index once.
    #[test]
    fn two_wakes_queue_the_index_once() {
        loom::model(|| {
            let notified = Arc::new(Notified::new());
            let flag = entry(&notified);
            let wakers: Vec<_> = (0..2)
                .map(|_| {
                    let waker = Waker::from(flag.clone());
                    thread::spawn(move || waker.wake())
                })
                .collect();
            for t in wakers {
                t.join().unwrap();
            }
            let mut due = VecDeque::new();
            notified.take_into(&mut due);
            assert_eq!(due, [0]);
        });
    }
}
