//! The task registry: every task that has gone idle at least once, so that
//! shutdown can find and cancel tasks that sit in no queue (parked on a
//! channel, a timer, another task).
//!
//! Invariants:
//! - A task is inserted by its poller, while RUNNING, before it first goes
//!   idle (`raw.rs`), and removed by its poller when it completes. Tasks that
//!   finish in their first poll never touch the registry: most tasks of a
//!   spawn-heavy program cost no lock here.
//! - A linked task holds one reference, owned by the list.
//! - `Links` of a task are read and written only under the lock of the shard
//!   it was inserted in; the poller keeps that shard number (`raw.rs`,
//!   `Header::registered`) and passes it back to `remove`.
//! - Once `close` has run, `insert` refuses: nothing can hide from shutdown.
//! - Shards are chosen by the inserting worker, so a task usually completes
//!   on the worker that registered it and the shard lock stays uncontended.

use super::raw::RawTask;
use crate::loom::{lock, Mutex};
use std::ptr::NonNull;

use super::raw::Header;

#[derive(Default)]
pub(crate) struct Links {
    prev: Option<NonNull<Header>>,
    next: Option<NonNull<Header>>,
    linked: bool,
}

struct List {
    head: Option<NonNull<Header>>,
    len: usize,
    closed: bool,
}

// SAFETY: the list is only touched under its mutex; the tasks it points to
// are kept alive by the references it owns.
unsafe impl Send for List {}

pub(crate) struct Registry {
    shards: Box<[Mutex<List>]>,
}

fn links<R>(task: RawTask, f: impl FnOnce(&mut Links) -> R) -> R {
    task.header().registry.with_mut(|p| {
        // SAFETY: the caller holds the shard lock named in the links (module
        // invariant), so no one else reads or writes them.
        f(unsafe { &mut *p })
    })
}

impl Registry {
    pub(crate) fn new(shards: usize) -> Registry {
        let shards = (0..shards.max(1))
            .map(|_| {
                Mutex::new(List {
                    head: None,
                    len: 0,
                    closed: false,
                })
            })
            .collect();
        Registry { shards }
    }

    /// Links `task` (taking a reference) and returns the shard it went to;
    /// `None` after `close`.
    pub(crate) fn insert(&self, task: RawTask, hint: usize) -> Option<u32> {
        let shard = hint % self.shards.len();
        let mut list = lock(&self.shards[shard]);
        if list.closed {
            return None;
        }
        task.ref_inc();
        let old_head = list.head;
        links(task, |l| {
            debug_assert!(!l.linked);
            *l = Links {
                prev: None,
                next: old_head,
                linked: true,
            };
        });
        if let Some(h) = old_head {
            links(RawTask::from_header(h), |l| {
                l.prev = Some(task.header_ptr())
            });
        }
        list.head = Some(task.header_ptr());
        list.len += 1;
        Some(shard as u32)
    }

    /// Unlinks `task`; `true` when it was linked (the caller now owns the
    /// list's reference), `false` when shutdown took it first.
    pub(crate) fn remove(&self, task: RawTask, shard: u32) -> bool {
        let mut list = lock(&self.shards[shard as usize]);
        let (prev, next, linked) = links(task, |l| {
            let r = (l.prev, l.next, l.linked);
            l.linked = false;
            l.prev = None;
            l.next = None;
            r
        });
        if !linked {
            return false;
        }
        match prev {
            Some(p) => links(RawTask::from_header(p), |l| l.next = next),
            None => list.head = next,
        }
        if let Some(n) = next {
            links(RawTask::from_header(n), |l| l.prev = prev);
        }
        list.len -= 1;
        true
    }

    /// Refuses further inserts and returns every linked task with the
    /// reference the list held.
    pub(crate) fn close(&self) -> Vec<RawTask> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            let mut list = lock(shard);
            list.closed = true;
            while let Some(h) = list.head {
                let task = RawTask::from_header(h);
                list.head = links(task, |l| {
                    l.linked = false;
                    l.prev = None;
                    l.next.take()
                });
                if let Some(n) = list.head {
                    links(RawTask::from_header(n), |l| l.prev = None);
                }
                list.len -= 1;
                out.push(task);
            }
        }
        out
    }

    /// Tasks registered now (idle or running after having gone idle once).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len).sum()
    }
}
