//! The task registry: every task that has gone idle at least once, so that
//! shutdown can find and cancel tasks that sit in no queue (parked on a
//! channel, a timer, another task).
//!
//! Invariants:
//! - A task is inserted by its poller, while RUNNING, before it first goes
//!   idle (`raw.rs`), and removed by its poller when it completes. Tasks that
//!   finish in their first poll never touch the registry: most tasks of a
//!   spawn-heavy program cost no lock here.
//! - Each shard is a slab (a vector of slots and a free list) under a mutex.
//!   A task's slot is named by its `Key` (shard, index), which the poller
//!   keeps in the task header (`Header::registered`); the header carries no
//!   links, which keeps every task smaller.
//! - An occupied slot holds one reference to its task.
//! - Once `close` has run, `insert` refuses: nothing can hide from shutdown.
//!   `close` empties every slot (taking their references), so a later
//!   `remove` finds its slot empty and reports that shutdown owns the task.
//! - Shards are chosen by the inserting worker, so a task usually completes
//!   on the worker that registered it and the shard lock stays uncontended.
//! - With spawn tracking on (`Builder::track_spawns`), tasks are inserted at
//!   spawn with where they were spawned, kept beside their slot (`sites`,
//!   allocated only then), for the stall report and the dump.

use super::raw::RawTask;
use crate::loom::{lock, Mutex};
use std::num::NonZeroU32;
use std::panic::Location;

/// Where a task was spawned (`#[track_caller]` through the spawn functions).
pub(crate) type SpawnSite = &'static Location<'static>;

/// Where a registered task sits: `(shard, slot + 1)` (non-zero, so that an
/// `Option<Key>` in the task header stays one word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    shard: u32,
    slot_plus_one: NonZeroU32,
}

impl Key {
    fn new(shard: usize, slot: usize) -> Key {
        let slot_plus_one = NonZeroU32::new(slot as u32 + 1).expect("registry slot index overflow");
        Key {
            shard: shard as u32,
            slot_plus_one,
        }
    }

    fn slot(self) -> usize {
        self.slot_plus_one.get() as usize - 1
    }
}

#[cfg(all(test, loom))]
impl Key {
    /// A key for models whose scheduler has no registry.
    pub(crate) const TEST: Key = Key {
        shard: 0,
        slot_plus_one: NonZeroU32::MIN,
    };
}

#[derive(Default)]
struct Slab {
    slots: Vec<Option<RawTask>>,
    /// Beside `slots` once a task was inserted with its spawn site.
    sites: Vec<Option<SpawnSite>>,
    free: Vec<usize>,
    len: usize,
    closed: bool,
}

pub(crate) struct Registry {
    shards: Box<[Mutex<Slab>]>,
}

impl Registry {
    pub(crate) fn new(shards: usize) -> Registry {
        Registry {
            shards: (0..shards.max(1))
                .map(|_| Mutex::new(Slab::default()))
                .collect(),
        }
    }

    /// Holds `task` (taking a reference), with where it was spawned if
    /// known; `None` after `close`.
    pub(crate) fn insert(
        &self,
        task: RawTask,
        hint: usize,
        site: Option<SpawnSite>,
    ) -> Option<Key> {
        let shard = hint % self.shards.len();
        let mut slab = lock(&self.shards[shard]);
        if slab.closed {
            return None;
        }
        task.ref_inc();
        let slot = match slab.free.pop() {
            Some(i) => {
                slab.slots[i] = Some(task);
                i
            }
            None => {
                slab.slots.push(Some(task));
                slab.slots.len() - 1
            }
        };
        slab.len += 1;
        if site.is_some() || !slab.sites.is_empty() {
            let n = slab.slots.len();
            slab.sites.resize(n, None);
            slab.sites[slot] = site;
        }
        Some(Key::new(shard, slot))
    }

    /// The spawn sites of the tasks held now (those registered with one),
    /// with how many tasks each, most first.
    pub(crate) fn spawn_sites(&self) -> Vec<(SpawnSite, usize)> {
        let mut counts: Vec<(SpawnSite, usize)> = Vec::new();
        for shard in self.shards.iter() {
            let slab = lock(shard);
            let held = slab.slots.iter().zip(&slab.sites);
            for site in held.filter_map(|(t, s)| t.and(*s)) {
                match counts.iter_mut().find(|(s, _)| *s == site) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((site, 1)),
                }
            }
        }
        counts.sort_by_key(|&(s, n)| (std::cmp::Reverse(n), s.file(), s.line(), s.column()));
        counts
    }

    /// Lets go of `task`; `true` when the slot still held it (the caller now
    /// owns the slot's reference), `false` when shutdown took it first.
    pub(crate) fn remove(&self, task: RawTask, key: Key) -> bool {
        let mut slab = lock(&self.shards[key.shard as usize]);
        match slab.slots.get_mut(key.slot()).and_then(Option::take) {
            Some(held) => {
                debug_assert_eq!(held, task, "registry slot held another task");
                if let Some(site) = slab.sites.get_mut(key.slot()) {
                    *site = None;
                }
                slab.free.push(key.slot());
                slab.len -= 1;
                true
            }
            None => false,
        }
    }

    /// Refuses further inserts and returns every held task with the
    /// reference its slot held.
    pub(crate) fn close(&self) -> Vec<RawTask> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            let mut slab = lock(shard);
            slab.closed = true;
            out.extend(slab.slots.iter_mut().filter_map(Option::take));
            slab.sites.clear();
            slab.free.clear();
            slab.len = 0;
        }
        out
    }

    /// Tasks registered now (idle, or running after having gone idle once).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len).sum()
    }
}
