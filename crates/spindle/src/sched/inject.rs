//! The injector: the global run queue for tasks scheduled from outside a
//! worker, overflow from full local rings, and `Handle::spawn`.
//!
//! An intrusive FIFO through `Header::queue_next` under one mutex, plus an
//! atomic length so that workers can see "empty" without the lock.
//!
//! Invariants:
//! - `queue_next` of a queued task belongs to this queue (the queue holds the
//!   task's `Notified`).
//! - `len` is written only under the lock; reading it unlocked is a hint,
//!   except that `push` stores it (SeqCst) before a worker is notified, and a
//!   worker about to sleep re-reads it (SeqCst) after announcing itself: one
//!   of them sees the other (`docs/sleep-wake.md`).
//! - After `close`, `push` hands tasks back so the caller can cancel them.

use crate::loom::{lock, AtomicUsize, Mutex, Ordering::*};
use crate::task::{Notified, RawTask};
use std::ptr::NonNull;

use crate::task::raw::Header;

struct List {
    head: Option<NonNull<Header>>,
    tail: Option<NonNull<Header>>,
    closed: bool,
}

// SAFETY: the list owns the Notified references of the tasks it links and is
// only touched under the mutex.
unsafe impl Send for List {}

// SAFETY: a batch owns the Notified references of the tasks it links, cut
// off the list; nobody else reaches their `queue_next`.
unsafe impl Send for Batch {}

pub(crate) struct Inject {
    list: Mutex<List>,
    len: AtomicUsize,
}

fn set_next(task: RawTask, next: Option<NonNull<Header>>) {
    task.header().queue_next.with_mut(|p| {
        // SAFETY: the holder of the Notified (we, under the lock) owns queue_next.
        unsafe { *p = next }
    })
}

fn next(task: RawTask) -> Option<NonNull<Header>> {
    // SAFETY: as in `set_next`.
    task.header().queue_next.with(|p| unsafe { *p })
}

impl Inject {
    pub(crate) fn new() -> Inject {
        Inject {
            list: Mutex::new(List {
                head: None,
                tail: None,
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
        let mut list = lock(&self.list);
        if list.closed {
            return Err(tasks);
        }
        let n = tasks.len();
        for t in tasks {
            list.link(t);
        }
        // SeqCst: see the module docs (pairs with the sleeper's re-check).
        self.len.store(self.len.load(Relaxed) + n, SeqCst);
        Ok(())
    }

    /// Appends one task (no allocation); gives it back if the queue is closed.
    pub(crate) fn push(&self, task: Notified) -> Result<(), Notified> {
        let mut list = lock(&self.list);
        if list.closed {
            return Err(task);
        }
        list.link(task);
        // SeqCst: as in `push_batch`.
        self.len.store(self.len.load(Relaxed) + 1, SeqCst);
        Ok(())
    }

    /// Takes up to `max` tasks from the front in one lock: the chain is cut
    /// off the list and walked after the lock is released.
    pub(crate) fn pop_n(&self, max: usize) -> Batch {
        let mut batch = Batch { head: None, len: 0 };
        if self.is_empty() || max == 0 {
            return batch;
        }
        let mut list = lock(&self.list);
        batch.head = list.head;
        let mut last = None;
        while batch.len < max {
            let Some(h) = list.head else { break };
            last = Some(h);
            list.head = next(RawTask::from_header(h));
            batch.len += 1;
        }
        if let Some(last) = last {
            set_next(RawTask::from_header(last), None); // end the batch's chain
        }
        if list.head.is_none() {
            list.tail = None;
        }
        self.len.store(self.len.load(Relaxed) - batch.len, SeqCst);
        batch
    }

    pub(crate) fn pop(&self) -> Option<Notified> {
        self.pop_n(1).next()
    }

    /// Refuses further pushes and returns what was queued.
    pub(crate) fn close(&self) -> Batch {
        lock(&self.list).closed = true;
        self.pop_n(usize::MAX)
    }
}

impl List {
    /// Appends a task, taking over its `Notified`.
    fn link(&mut self, task: Notified) {
        let raw = task.into_raw();
        set_next(raw, None);
        match self.tail {
            Some(tail) => set_next(RawTask::from_header(tail), Some(raw.header_ptr())),
            None => self.head = Some(raw.header_ptr()),
        }
        self.tail = Some(raw.header_ptr());
    }
}

/// Tasks taken off the injector, still linked through `queue_next`, whose
/// `Notified`s the batch owns: it yields them in order, and dropping it
/// drops (cancels) the ones not taken.
pub(crate) struct Batch {
    head: Option<NonNull<Header>>,
    len: usize,
}

impl Batch {
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Iterator for Batch {
    type Item = Notified;

    fn next(&mut self) -> Option<Notified> {
        let raw = RawTask::from_header(self.head?);
        self.head = next(raw);
        self.len -= 1;
        // SAFETY: the batch held this task's Notified (taken off the list).
        Some(unsafe { Notified::from_raw(raw) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl ExactSizeIterator for Batch {}

impl Drop for Batch {
    fn drop(&mut self) {
        self.for_each(drop);
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
