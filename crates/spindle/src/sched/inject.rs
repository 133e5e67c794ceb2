//! The injector: the global run queue for tasks scheduled from outside a
//! worker, overflow from full local rings, and `Handle::spawn`.
//!
//! A FIFO of task pointers under one mutex, plus an atomic length so that
//! workers can see "empty" without the lock. Pointers rather than a list
//! linked through the tasks: moving a batch in or out copies words and
//! reads no task, where a linked list made every pop read each task's
//! header under the lock, one dependent cache miss per task (a remote one
//! when another core queued it; sleep_1m passes nearly every task through
//! here twice).
//!
//! Invariants:
//! - The queue holds the `Notified` of every task in it.
//! - `len` is written only under the lock; reading it unlocked is a hint,
//!   except that `push` stores it (SeqCst) before a worker is notified, and a
//!   worker about to sleep re-reads it (SeqCst) after announcing itself: one
//!   of them sees the other (`docs/sleep-wake.md`).
//! - After `close`, `push` hands tasks back so the caller can cancel them.
//! - A buffer grown past `KEEP_CAPACITY` is freed when a pop empties it: a
//!   burst of a million queued tasks does not pin 8 MB for good.

use crate::loom::{lock, AtomicUsize, Mutex, Ordering::*};
use crate::task::Notified;
use std::collections::VecDeque;

/// Slots the queue's buffer may keep once empty (fewer under miri, so that
/// its test of the release stays quick there).
const KEEP_CAPACITY: usize = if cfg!(miri) { 64 } else { 4096 };

struct Queue {
    tasks: VecDeque<Notified>,
    closed: bool,
}

pub(crate) struct Inject {
    queue: Mutex<Queue>,
    len: AtomicUsize,
}

impl Inject {
    pub(crate) fn new() -> Inject {
        Inject {
            queue: Mutex::new(Queue {
                tasks: VecDeque::new(),
                closed: false,
            }),
            len: AtomicUsize::new(0),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len.load(SeqCst)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `tasks` in order; gives them back if the queue is closed.
    pub(crate) fn push_batch(&self, tasks: Vec<Notified>) -> Result<(), Vec<Notified>> {
        if tasks.is_empty() {
            return Ok(());
        }
        let mut q = lock(&self.queue);
        if q.closed {
            return Err(tasks);
        }
        q.tasks.extend(tasks);
        // SeqCst: see the module docs (pairs with the sleeper's re-check).
        self.len.store(q.tasks.len(), SeqCst);
        Ok(())
    }

    /// Appends one task; gives it back if the queue is closed.
    pub(crate) fn push(&self, task: Notified) -> Result<(), Notified> {
        let mut q = lock(&self.queue);
        if q.closed {
            return Err(task);
        }
        q.tasks.push_back(task);
        // SeqCst: as in `push_batch`.
        self.len.store(q.tasks.len(), SeqCst);
        Ok(())
    }

    /// Takes up to `max` tasks from the front in one lock, oldest first.
    pub(crate) fn pop_n(&self, max: usize) -> Vec<Notified> {
        if self.is_empty() || max == 0 {
            return Vec::new();
        }
        let mut q = lock(&self.queue);
        let n = max.min(q.tasks.len());
        let batch = q.tasks.drain(..n).collect();
        q.popped(&self.len);
        batch
    }

    pub(crate) fn pop(&self) -> Option<Notified> {
        if self.is_empty() {
            return None;
        }
        let mut q = lock(&self.queue);
        let task = q.tasks.pop_front();
        q.popped(&self.len);
        task
    }

    /// Refuses further pushes and returns what was queued.
    pub(crate) fn close(&self) -> Vec<Notified> {
        let mut q = lock(&self.queue);
        q.closed = true;
        let all = q.tasks.drain(..).collect();
        q.popped(&self.len);
        all
    }
}

impl Queue {
    /// After a pop, under the lock: publishes the length and frees a large
    /// buffer that just emptied.
    fn popped(&mut self, len: &AtomicUsize) {
        len.store(self.tasks.len(), SeqCst);
        if self.tasks.is_empty() && self.tasks.capacity() > KEEP_CAPACITY {
            self.tasks = VecDeque::new();
        }
    }
}

impl crate::sched::queue::Overflow for Inject {
    fn push_batch(&self, tasks: Vec<Notified>) {
        // Closed: the runtime is shutting down; dropping cancels them.
        let _ = Inject::push_batch(self, tasks);
    }
}

impl Drop for Inject {
    fn drop(&mut self) {
        drop(self.close()); // cancels what was queued
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::task::inert;
    use crate::task::RawTask;

    /// `n` queued-ready tasks and their raw pointers, in order.
    fn tasks(n: usize) -> (Vec<Notified>, Vec<RawTask>) {
        (0..n)
            .map(|_| {
                let (notified, handle) = inert::task();
                let raw = notified.raw();
                handle.drop_join_handle();
                (notified, raw)
            })
            .unzip()
    }

    #[test]
    fn pops_come_out_in_push_order_and_the_length_follows() {
        let inject = Inject::new();
        let (mut batch, order) = tasks(10);
        let last = batch.pop().unwrap();
        assert!(inject.push_batch(batch).is_ok());
        assert!(inject.push(last).is_ok());
        assert_eq!(inject.len(), 10);
        let first = inject.pop().unwrap();
        let three = inject.pop_n(3);
        assert_eq!(inject.len(), 6);
        let rest = inject.pop_n(100);
        assert!(inject.is_empty() && inject.pop().is_none() && inject.pop_n(4).is_empty());
        let got: Vec<RawTask> = std::iter::once(first)
            .chain(three)
            .chain(rest)
            .map(|t| t.raw())
            .collect();
        assert_eq!(got, order);
    }

    #[test]
    fn a_closed_injector_hands_tasks_back_and_gives_up_what_it_held() {
        let inject = Inject::new();
        let (batch, _) = tasks(3);
        assert!(inject.push_batch(batch).is_ok());
        assert_eq!(inject.close().len(), 3);
        assert!(inject.is_empty());
        let (mut more, _) = tasks(2);
        assert!(inject.push(more.pop().unwrap()).is_err());
        assert!(matches!(inject.push_batch(more), Err(back) if back.len() == 1));
    }

    #[test]
    fn a_large_buffer_is_freed_once_drained() {
        let inject = Inject::new();
        let (batch, _) = tasks(KEEP_CAPACITY * 2);
        assert!(inject.push_batch(batch).is_ok());
        while !inject.pop_n(1000).is_empty() {}
        assert_eq!(lock(&inject.queue).tasks.capacity(), 0);
        // A small one is kept.
        let (batch, _) = tasks(10);
        assert!(inject.push_batch(batch).is_ok());
        drop(inject.pop_n(10));
        assert!(lock(&inject.queue).tasks.capacity() >= 10);
    }
}
