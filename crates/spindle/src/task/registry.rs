//! The task registry: every task that has gone idle at least once, so that
//! shutdown can find and cancel tasks that sit in no queue (parked on a
//! channel, a timer, another task).
//!
//! Invariants:
//! - A task is inserted by its poller, while RUNNING, before it first goes
//!   idle (`raw.rs`), and removed by its poller when it completes. Tasks that
//!   finish in their first poll never touch the registry: most tasks of a
//!   spawn-heavy program cost no lock here.
//! - Each shard is a slab under a mutex: a vector of one-word slots, each
//!   holding a task or, when vacant, the link to the next vacant slot (the
//!   free list lives in the slots: no second vector growing as tasks finish).
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

use super::raw::{Header, Notified, RawTask};
use crate::loom::{lock, Mutex};
use std::num::NonZeroU32;
use std::panic::Location;
use std::ptr::NonNull;

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

/// One slot: a held task's header pointer (aligned, so its low bit is 0),
/// or, vacant, `(index of the next vacant slot + 1) << 1 | 1` as an address
/// with no provenance (0 + 1 ends the list). Never dereferenced when vacant.
#[derive(Clone, Copy)]
struct Slot(*mut Header);

impl Slot {
    fn held(task: RawTask) -> Slot {
        Slot(task.header_ptr().as_ptr())
    }

    fn vacant(next: Option<usize>) -> Slot {
        let link = next.map_or(0, |i| i + 1);
        Slot(std::ptr::without_provenance_mut((link << 1) | 1))
    }

    fn task(self) -> Option<RawTask> {
        (self.0.addr() & 1 == 0).then(|| {
            // SAFETY: an even word is a header pointer `held` stored.
            RawTask::from_header(unsafe { NonNull::new_unchecked(self.0) })
        })
    }

    /// The next vacant slot, for a vacant slot.
    fn next_vacant(self) -> Option<usize> {
        debug_assert!(self.0.addr() & 1 == 1);
        (self.0.addr() >> 1).checked_sub(1)
    }
}

#[derive(Default)]
struct Slab {
    slots: Vec<Slot>,
    /// Beside `slots` once a task was inserted with its spawn site.
    sites: Vec<Option<SpawnSite>>,
    /// The first vacant slot.
    free: Option<usize>,
    len: usize,
    closed: bool,
}

// SAFETY: the slab holds task references (RawTask is Send) and plain
// integers; it is only reached under its mutex.
unsafe impl Send for Slab {}

pub(crate) struct Registry {
    shards: Box<[Mutex<Slab>]>,
}

impl Registry {
    /// Spawn tracking (`Builder::track_spawns`, and every deterministic
    /// runtime): registers a new task at once, with the caller's location
    /// (the user's spawn call: every function from there to here is
    /// `#[track_caller]`), holding a reference of its own.
    #[track_caller]
    pub(crate) fn track(&self, task: &Notified, hint: usize) {
        let site = Location::caller();
        task.raw().ref_inc(); // the registry's own: the task is not idle
        match self.insert(task.raw(), hint, Some(site)) {
            Some(key) => task.set_registered(key),
            None => task.raw().drop_ref(), // shutting down: not held
        }
    }

    pub(crate) fn new(shards: usize) -> Registry {
        Registry {
            shards: (0..shards.max(1))
                .map(|_| Mutex::new(Slab::default()))
                .collect(),
        }
    }

    /// Holds `task` by a reference the caller hands over (the poller's, as
    /// the task goes idle: `State::transition_to_idle`), with where it was
    /// spawned if known; `None` after `close`, the reference still the
    /// caller's.
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
        let slot = match slab.free {
            Some(i) => {
                slab.free = slab.slots[i].next_vacant();
                slab.slots[i] = Slot::held(task);
                i
            }
            None => {
                slab.slots.push(Slot::held(task));
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
            for site in held.filter_map(|(t, s)| t.task().and(*s)) {
                match counts.iter_mut().find(|(s, _)| *s == site) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((site, 1)),
                }
            }
        }
        counts.sort_by_key(|&(s, n)| (std::cmp::Reverse(n), s.file(), s.line(), s.column()));
        counts
    }

    /// The addresses of the tasks held now, sorted.
    pub(crate) fn held(&self) -> Vec<usize> {
        let mut addrs: Vec<usize> = Vec::new();
        for shard in self.shards.iter() {
            let slab = lock(shard);
            addrs.extend(
                slab.slots
                    .iter()
                    .filter_map(|s| s.task())
                    .map(RawTask::addr),
            );
        }
        addrs.sort_unstable();
        addrs
    }

    /// Lets go of `task`; `true` when the slot still held it (the caller now
    /// owns the slot's reference), `false` when shutdown took it first.
    pub(crate) fn remove(&self, task: RawTask, key: Key) -> bool {
        let mut slab = lock(&self.shards[key.shard as usize]);
        let i = key.slot();
        match slab.slots.get(i).and_then(|s| s.task()) {
            Some(held) => {
                debug_assert_eq!(held, task, "registry slot held another task");
                slab.slots[i] = Slot::vacant(slab.free);
                slab.free = Some(i);
                if let Some(site) = slab.sites.get_mut(i) {
                    *site = None;
                }
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
            out.extend(slab.slots.drain(..).filter_map(Slot::task));
            slab.sites.clear();
            slab.free = None;
            slab.len = 0;
        }
        out
    }

    /// Tasks registered now (idle, or running after having gone idle once).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len).sum()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::task::inert;

    #[test]
    fn vacant_slots_are_reused_and_close_hands_back_what_is_held() {
        let r = Registry::new(1);
        let tasks: Vec<_> = (0..4).map(|_| inert::task()).collect();
        let raw = |i: usize| tasks[i].1;
        // Each insert holds a reference of its own (handed over).
        let handed = |i: usize| {
            raw(i).ref_inc();
            raw(i)
        };
        let keys: Vec<Key> = (0..3)
            .map(|i| r.insert(handed(i), 0, None).unwrap())
            .collect();
        assert_eq!(r.len(), 3);
        // Vacate the middle then the first slot: the last vacated is reused first.
        assert!(r.remove(raw(1), keys[1]));
        raw(1).drop_ref(); // the slot's reference, now ours
        assert!(r.remove(raw(0), keys[0]));
        raw(0).drop_ref();
        assert_eq!(r.len(), 1);
        let k3 = r.insert(handed(3), 0, None).unwrap();
        assert_eq!(k3.slot(), keys[0].slot());
        let k1 = r.insert(handed(1), 0, None).unwrap();
        assert_eq!(k1.slot(), keys[1].slot());
        assert_eq!(r.len(), 3);
        // Close: every held task comes back with its reference; later
        // removes find their slot gone and inserts are refused.
        let mut held = r.close();
        held.sort_by_key(|t| t.header_ptr());
        let mut want = vec![raw(1), raw(2), raw(3)];
        want.sort_by_key(|t| t.header_ptr());
        assert_eq!(held, want);
        held.into_iter().for_each(RawTask::drop_ref);
        assert!(!r.remove(raw(2), keys[2]));
        assert!(r.insert(handed(0), 0, None).is_none());
        raw(0).drop_ref(); // refused: the reference stayed ours
        assert_eq!(r.len(), 0);
        for (notified, raw) in tasks {
            drop(notified); // cancels the task
            raw.drop_join_handle();
        }
    }

    #[test]
    fn spawn_sites_count_the_held_tasks_most_first() {
        let r = Registry::new(2);
        let (a, b) = (Location::caller(), Location::caller());
        let tasks: Vec<_> = (0..3).map(|_| inert::task()).collect();
        tasks.iter().for_each(|t| t.1.ref_inc()); // the registry's, handed over
        let k0 = r.insert(tasks[0].1, 0, Some(a)).unwrap();
        r.insert(tasks[1].1, 1, Some(b)).unwrap();
        r.insert(tasks[2].1, 0, Some(b)).unwrap();
        assert_eq!(r.spawn_sites(), vec![(b, 2), (a, 1)]);
        assert!(r.remove(tasks[0].1, k0));
        tasks[0].1.drop_ref();
        assert_eq!(r.spawn_sites(), vec![(b, 2)]);
        r.close().into_iter().for_each(RawTask::drop_ref);
        for (notified, raw) in tasks {
            drop(notified);
            raw.drop_join_handle();
        }
    }
}
