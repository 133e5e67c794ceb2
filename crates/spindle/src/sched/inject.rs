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
            let raw = t.into_raw();
            set_next(raw, None);
            match list.tail {
                Some(tail) => set_next(RawTask::from_header(tail), Some(raw.header_ptr())),
                None => list.head = Some(raw.header_ptr()),
            }
            list.tail = Some(raw.header_ptr());
        }
        // SeqCst: see the module docs (pairs with the sleeper's re-check).
        self.len.store(self.len.load(Relaxed) + n, SeqCst);
        Ok(())
    }

    pub(crate) fn push(&self, task: Notified) -> Result<(), Notified> {
        self.push_batch(vec![task])
            .map_err(|mut v| v.pop().expect("one task"))
    }

    /// Takes up to `max` tasks from the front.
    pub(crate) fn pop_n(&self, max: usize) -> Vec<Notified> {
        if self.is_empty() || max == 0 {
            return Vec::new();
        }
        let mut list = lock(&self.list);
        let mut out = Vec::with_capacity(max.min(self.len.load(Relaxed)));
        while out.len() < max {
            let Some(head) = list.head else { break };
            let raw = RawTask::from_header(head);
            list.head = next(raw);
            if list.head.is_none() {
                list.tail = None;
            }
            // SAFETY: the list held this task's Notified.
            out.push(unsafe { Notified::from_raw(raw) });
        }
        self.len.store(self.len.load(Relaxed) - out.len(), SeqCst);
        out
    }

    pub(crate) fn pop(&self) -> Option<Notified> {
        self.pop_n(1).pop()
    }

    /// Refuses further pushes and returns what was queued.
    pub(crate) fn close(&self) -> Vec<Notified> {
        lock(&self.list).closed = true;
        self.pop_n(usize::MAX)
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
        for t in self.close() {
            drop(t); // cancels it
        }
    }
}
