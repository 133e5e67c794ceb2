//! A hierarchical timer wheel over a slab of entries: the data structure
//! alone, no locking (each shard of `time::timers` wraps one in a mutex).
//!
//! Time is counted in ticks of one millisecond since the runtime's epoch.
//! Six levels of 64 slots: level `L` slot `s` holds the entries whose
//! deadline shares every bit above `6·(L+1)` with `elapsed` and whose bits
//! `6L..6L+6` equal `s`; level 0 resolves single ticks, level 5 spans about
//! 2.2 years (later deadlines wait in level 5 and are re-filed as it turns).
//!
//! Invariants:
//! - every armed entry has `when > elapsed` and sits in exactly one slot
//!   list, the one `slot_for(when)` named when it was filed;
//! - for the filing level `L`, the entry's slot index is greater than
//!   `elapsed`'s slot index at `L` (their bits agree above `L` and
//!   `when > elapsed`), and `elapsed` only moves forward to the start of the
//!   slot being processed or to `now`, which never passes an unprocessed
//!   slot; so the earliest deadline is always in the lowest occupied level,
//!   in its first occupied slot from `elapsed`'s position on;
//! - an entry fires only once `now ≥ when`: a slot is processed when its
//!   start is due, and each entry in it is checked against its own `when`
//!   and re-filed lower if it is not yet due. Never early.
//!
//! Memory: one 32-byte `Entry` per live timer, aligned so that each sits in
//! one cache line, in a slab reused through a free list: a million timers
//! cost 32 MB and no allocation once the slab has grown (`Entries`: fixed
//! chunks, so no entry ever moves); plus a 4-byte key per armed timer in
//! its slot's vector.
//!
//! Slots are vectors of keys, not lists linked through the entries: firing
//! a slot reads its keys in order and touches each entry once, and those
//! reads do not depend on one another, so the processor overlaps their
//! cache misses (a list makes every miss wait for the one before it, and
//! with a million timers that walk becomes a sizeable share of sleep_1m's
//! CPU time: `docs/profiles.md`). Filing appends a key and touches no other
//! entry.
//! An armed entry records its slot and its index there, so that removing it
//! is a `swap_remove` (which moves one other key: its entry's index is
//! updated).
//!
//! An entry's state is in its `slot` word: `FREE` (on the free list, the
//! next free key in `index`), `FIRED` (deadline reached, or the wheel shut
//! down; waker taken; in no slot) or `level * SLOTS + slot` (armed, at
//! `index` in that slot's vector).

use std::task::Waker;

const LEVELS: usize = 6;
const SLOTS: usize = 64;
const SLOT_BITS: u32 = 6;
/// Deadlines further out than this are filed at the top level's far end.
const MAX_SPAN: u64 = 1 << (SLOT_BITS as usize * LEVELS);
/// No entry (end of the free list).
const NIL: u32 = u32::MAX;
/// `slot` of a fired entry.
const FIRED: u32 = u32::MAX;
/// `slot` of a free entry.
const FREE: u32 = u32::MAX - 1;
/// Keys stay below this (room for the markers above).
const MAX_KEYS: u32 = 1 << 31;
/// How many keys ahead firing prefetches entries.
const PREFETCH_AHEAD: usize = 8;

/// A timer's index in the slab.
pub(crate) type Key = u32;

#[repr(align(32))]
struct Entry {
    when: u64,
    waker: Option<Waker>,
    /// The entry's state (module docs): its slot (`level * SLOTS + slot`),
    /// `FIRED` or `FREE`.
    slot: u32,
    /// Where its key sits in its slot's vector (armed), or the next free
    /// key (free).
    index: u32,
}

impl Entry {
    fn is_armed(&self) -> bool {
        self.slot != FIRED && self.slot != FREE
    }
}

/// Entries per chunk of the slab (128 KiB).
const CHUNK: usize = 4096;

/// The entries, in fixed chunks: the slab grows a chunk at a time and never
/// moves an entry. (A `Vec` of 32-aligned entries grows by allocate-copy-free,
/// holding both buffers at the peak: +12 MiB on sleep_1m.)
#[derive(Default)]
struct Entries {
    chunks: Vec<Box<[Entry; CHUNK]>>,
    len: usize,
}

impl Entries {
    /// A new entry (fired, not linked) at the end; its key.
    fn add(&mut self) -> Key {
        let key = u32::try_from(self.len)
            .ok()
            .filter(|&k| k < MAX_KEYS)
            .expect("more than 2 billion timers on one shard");
        if self.len == self.chunks.len() * CHUNK {
            let fresh = || Entry {
                when: 0,
                waker: None,
                slot: FIRED,
                index: 0,
            };
            let chunk: Box<[Entry]> = (0..CHUNK).map(|_| fresh()).collect();
            self.chunks
                .push(chunk.try_into().ok().expect("a chunk of CHUNK entries"));
        }
        self.len += 1;
        key
    }

    /// Asks for `key`'s entry to be brought into the cache (a hint: no
    /// effect on what the program computes).
    #[inline(always)]
    fn prefetch(&self, key: Key) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            let k = key as usize;
            if let Some(chunk) = self.chunks.get(k / CHUNK) {
                let entry: *const Entry = &chunk[k % CHUNK];
                // SAFETY: a prefetch reads nothing the program sees and
                // cannot fault; `entry` points into a live chunk anyway.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        entry.cast(),
                    )
                };
            }
        }
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        let _ = key;
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut Entry> {
        let len = self.len;
        self.chunks.iter_mut().flat_map(|c| c.iter_mut()).take(len)
    }
}

impl std::ops::Index<Key> for Entries {
    type Output = Entry;
    fn index(&self, key: Key) -> &Entry {
        let k = key as usize;
        &self.chunks[k / CHUNK][k % CHUNK]
    }
}

impl std::ops::IndexMut<Key> for Entries {
    fn index_mut(&mut self, key: Key) -> &mut Entry {
        let k = key as usize;
        &mut self.chunks[k / CHUNK][k % CHUNK]
    }
}

pub(crate) struct Wheel {
    entries: Entries,
    free: u32,
    /// The keys filed in each slot, `level * SLOTS + slot`.
    slots: Box<[Vec<Key>]>,
    /// An empty vector that takes the place of a slot's being fired (so
    /// that the slot keeps an allocation for what is filed next).
    spare: Vec<Key>,
    occupied: [u64; LEVELS],
    elapsed: u64,
    armed: usize,
}

impl Wheel {
    pub(crate) fn new() -> Wheel {
        Wheel {
            entries: Entries::default(),
            free: NIL,
            slots: (0..LEVELS * SLOTS).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
            occupied: [0; LEVELS],
            elapsed: 0,
            armed: 0,
        }
    }

    /// Ticks processed so far: a deadline at or before this is already due.
    #[cfg(test)]
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Timers waiting to fire.
    pub(crate) fn armed(&self) -> usize {
        self.armed
    }

    /// Files a timer for tick `when`, or hands the waker back if that tick
    /// has already been processed (the timer is due now).
    pub(crate) fn insert(&mut self, when: u64, waker: Waker) -> Result<Key, Waker> {
        if when <= self.elapsed {
            return Err(waker);
        }
        let key = match self.free {
            NIL => {
                let key = self.entries.add();
                let e = &mut self.entries[key];
                e.when = when;
                e.waker = Some(waker);
                key
            }
            key => {
                let e = &mut self.entries[key];
                self.free = e.index;
                e.when = when;
                e.waker = Some(waker);
                key
            }
        };
        self.link(key);
        Ok(key)
    }

    /// Whether `key` has fired, freeing it if so (the key is then no
    /// longer the caller's); if not, makes `waker` the one to wake.
    pub(crate) fn poll(&mut self, key: Key, waker: &Waker) -> bool {
        let e = &mut self.entries[key];
        match e.slot {
            FIRED => {
                self.remove(key);
                true
            }
            FREE => unreachable!("polled a freed timer"),
            _ => {
                match &mut e.waker {
                    Some(w) => w.clone_from(waker),
                    slot => *slot = Some(waker.clone()),
                }
                false
            }
        }
    }

    /// Frees `key` (unlinking it if still armed).
    pub(crate) fn remove(&mut self, key: Key) {
        self.unlink_if_armed(key);
        let e = &mut self.entries[key];
        debug_assert_ne!(e.slot, FREE, "freed a timer twice");
        e.waker = None;
        e.slot = FREE;
        e.index = self.free;
        self.free = key;
    }

    /// The start of the earliest occupied slot: no timer is due before it.
    pub(crate) fn next_expiration(&self) -> Option<u64> {
        (0..LEVELS).find_map(|level| self.next_in_level(level))
    }

    /// Processes every slot due by `now`, firing the entries due by then and
    /// pushing their wakers to `fired`; stops between slots once `fired`
    /// holds `limit` or more, returning `true` if more slots are due.
    pub(crate) fn advance(&mut self, now: u64, fired: &mut Vec<Waker>, limit: usize) -> bool {
        while let Some(start) = self.next_expiration() {
            if start > now {
                break;
            }
            if fired.len() >= limit {
                return true;
            }
            let (level, slot) = self.locate(start);
            // Every entry filed here has `when >= start`; the slot is taken
            // whole, so re-filing (at a lower level) needs `when > start`,
            // which holds for every entry not yet due (`when > now >= start`).
            self.elapsed = start;
            let spare = std::mem::take(&mut self.spare);
            let keys = std::mem::replace(&mut self.slots[level * SLOTS + slot], spare);
            self.occupied[level] &= !(1 << slot);
            self.armed -= keys.len();
            for (i, &key) in keys.iter().enumerate() {
                if let Some(&ahead) = keys.get(i + PREFETCH_AHEAD) {
                    self.entries.prefetch(ahead);
                }
                let e = &mut self.entries[key];
                if e.when <= now {
                    e.slot = FIRED;
                    fired.extend(e.waker.take());
                } else {
                    self.link(key);
                }
            }
            self.spare = keys;
            self.spare.clear();
        }
        self.elapsed = self.elapsed.max(now);
        false
    }

    /// Takes every armed timer's waker (runtime shutdown: the tasks are
    /// being cancelled, and a timer must not keep one alive). The timers stay
    /// armed: they never fire, since nothing advances the wheel any more.
    pub(crate) fn take_wakers(&mut self) -> Vec<Waker> {
        self.entries
            .iter_mut()
            .filter(|e| e.is_armed())
            .filter_map(|e| e.waker.take())
            .collect()
    }

    fn slot_for(&self, when: u64) -> (usize, usize) {
        let when = when.min(self.elapsed + MAX_SPAN - 1);
        let masked = (self.elapsed ^ when) | (SLOTS as u64 - 1);
        // Past the top level's window: its slots act as a ring (see
        // `next_in_level`).
        let level = (((63 - masked.leading_zeros()) / SLOT_BITS) as usize).min(LEVELS - 1);
        let slot = (when >> (level as u32 * SLOT_BITS)) as usize % SLOTS;
        (level, slot)
    }

    /// Which slot's start is `start` (the level whose next slot begins there).
    fn locate(&self, start: u64) -> (usize, usize) {
        let level = (0..LEVELS)
            .find(|&l| self.next_in_level(l) == Some(start))
            .expect("an expiration names an occupied slot");
        (
            level,
            (start >> (level as u32 * SLOT_BITS)) as usize % SLOTS,
        )
    }

    fn next_in_level(&self, level: usize) -> Option<u64> {
        let occupied = self.occupied[level];
        if occupied == 0 {
            return None;
        }
        let shift = level as u32 * SLOT_BITS;
        let slot_span = 1u64 << shift;
        let level_span = slot_span << SLOT_BITS;
        let now_slot = (self.elapsed >> shift) % SLOTS as u64;
        let distance = occupied.rotate_right(now_slot as u32).trailing_zeros() as u64;
        let slot = (now_slot + distance) % SLOTS as u64;
        let level_start = self.elapsed & !(level_span - 1);
        let mut start = level_start + slot * slot_span;
        if start <= self.elapsed {
            // Only the top level's slots wrap: a slot at or before the
            // current one there belongs to the next turn of the wheel (lower
            // levels never hold an entry in or before their current slot).
            start += level_span;
        }
        Some(start)
    }

    fn link(&mut self, key: Key) {
        let (level, slot) = self.slot_for(self.entries[key].when);
        let keys = &mut self.slots[level * SLOTS + slot];
        let e = &mut self.entries[key];
        e.slot = (level * SLOTS + slot) as u32;
        e.index = keys.len() as u32;
        keys.push(key);
        self.occupied[level] |= 1 << slot;
        self.armed += 1;
    }

    fn unlink_if_armed(&mut self, key: Key) {
        let e = &mut self.entries[key];
        if !e.is_armed() {
            return;
        }
        let (slot, index) = (e.slot as usize, e.index as usize);
        e.slot = FIRED;
        let keys = &mut self.slots[slot];
        keys.swap_remove(index);
        match keys.get(index) {
            // The last key took the removed one's place.
            Some(&moved) => self.entries[moved].index = index as u32,
            None if keys.is_empty() => self.occupied[slot / SLOTS] &= !(1 << (slot % SLOTS)),
            None => {}
        }
        self.armed -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Flag(usize, Arc<std::sync::Mutex<Vec<usize>>>);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.1.lock().unwrap().push(self.0);
        }
    }

    fn waker(id: usize, log: &Arc<std::sync::Mutex<Vec<usize>>>) -> Waker {
        Waker::from(Arc::new(Flag(id, log.clone())))
    }

    /// Advances tick by tick, waking as it goes; returns (id, tick) fired.
    fn run(
        wheel: &mut Wheel,
        until: u64,
        log: &Arc<std::sync::Mutex<Vec<usize>>>,
    ) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for now in wheel.elapsed() + 1..=until {
            while wheel.advance(now, &mut buf, 3) {
                buf.drain(..).for_each(Waker::wake);
            }
            buf.drain(..).for_each(Waker::wake);
            out.extend(log.lock().unwrap().drain(..).map(|id| (id, now)));
        }
        out
    }

    #[test]
    fn fires_each_timer_at_its_tick_never_before() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = Wheel::new();
        // Miri steps every tick slowly: a shorter horizon there.
        let far = if cfg!(miri) { 5_000 } else { 300_000 };
        let deadlines = [1u64, 2, 63, 64, 65, 100, 4095, 4096, 4097, far, 5, 5, 5];
        for (i, &d) in deadlines.iter().enumerate() {
            w.insert(d, waker(i, &log)).ok().unwrap();
        }
        assert_eq!(w.armed(), deadlines.len());
        let fired = run(&mut w, far + 1, &log);
        assert_eq!(fired.len(), deadlines.len());
        for (id, tick) in fired {
            assert_eq!(tick, deadlines[id], "timer {id} fired at {tick}");
        }
        assert_eq!(w.armed(), 0);
    }

    #[test]
    fn jumps_fire_everything_due_and_nothing_later() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = Wheel::new();
        let mut rng = 12345u64;
        let mut deadlines = Vec::new();
        let (timers, horizon) = if cfg!(miri) {
            (200, 20_000)
        } else {
            (2000, 200_000)
        };
        for i in 0..timers {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let d = 1 + (rng >> 33) % horizon;
            deadlines.push(d);
            w.insert(d, waker(i, &log)).ok().unwrap();
        }
        let mut buf = Vec::new();
        let mut now = 0;
        while now < horizon {
            now += 1 + (now % 7919); // uneven jumps, some across levels
            while w.advance(now, &mut buf, 64) {
                buf.drain(..).for_each(Waker::wake);
            }
            buf.drain(..).for_each(Waker::wake);
            for id in log.lock().unwrap().drain(..) {
                assert!(
                    deadlines[id] <= now,
                    "timer {id} due {} fired at {now}",
                    deadlines[id]
                );
                deadlines[id] = u64::MAX; // fired once
            }
            assert!(
                deadlines.iter().all(|&d| d == u64::MAX || d > now),
                "a due timer was missed at {now}"
            );
        }
    }

    /// A wheel holding timers 0, 1, 2 (in that order) all due at tick 10.
    fn three_in_one_slot(log: &Arc<std::sync::Mutex<Vec<usize>>>) -> (Wheel, [Key; 3]) {
        let mut w = Wheel::new();
        let keys = [0, 1, 2].map(|id| w.insert(10, waker(id, log)).ok().unwrap());
        (w, keys)
    }

    #[test]
    fn remove_and_reset_unlink_from_the_middle_of_a_slot() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (mut w, [a, b, c]) = three_in_one_slot(&log);
        w.remove(b);
        let fired = run(&mut w, 3000, &log);
        assert_eq!(fired, vec![(0, 10), (2, 10)]);
        assert!(w.poll(a, &waker(0, &log))); // fired: also frees `a`
        w.remove(c);
        // Freed keys are reused.
        let d = w.insert(3001, waker(3, &log)).ok().unwrap();
        assert!(d == a || d == c);
    }

    #[test]
    fn removing_the_last_keys_leaves_the_first_armed() {
        // a, b, c in one slot (in that order). Removing c, then b, leaves a,
        // and the slot still fires a; then the slot is empty and none fires
        // later.
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (mut w, [_, b, c]) = three_in_one_slot(&log);
        w.remove(c);
        w.remove(b);
        assert_eq!(w.armed(), 1);
        let d = w.insert(10, waker(3, &log)).ok().unwrap(); // reuses b's or c's entry
        w.remove(d);
        assert_eq!(run(&mut w, 3000, &log), vec![(0, 10)]);
        assert_eq!((w.armed(), w.next_expiration()), (0, None));
    }

    #[test]
    fn removals_anywhere_in_a_slot_keep_every_index_right() {
        // Many timers in a few slots, removed in a scrambled order: each
        // `swap_remove` moves another key, whose entry must learn its new
        // index, or a later removal takes out the wrong key.
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = Wheel::new();
        let n = if cfg!(miri) { 60 } else { 600 };
        let keys: Vec<Key> = (0..n)
            .map(|i| w.insert(10 + (i % 3) as u64, waker(i, &log)).ok().unwrap())
            .collect();
        let mut removed = vec![false; n];
        for step in 0..n / 2 {
            let i = (step * 7919) % n;
            if !removed[i] {
                w.remove(keys[i]);
                removed[i] = true;
            }
        }
        let left = removed.iter().filter(|r| !**r).count();
        assert_eq!(w.armed(), left);
        let mut fired: Vec<usize> = run(&mut w, 20, &log)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        fired.sort_unstable();
        let want: Vec<usize> = (0..n).filter(|&i| !removed[i]).collect();
        assert_eq!(fired, want);
        assert_eq!((w.armed(), w.next_expiration()), (0, None));
    }

    #[test]
    fn an_entry_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
        assert_eq!(std::mem::align_of::<Entry>(), 32);
    }

    #[test]
    fn past_deadline_is_refused_and_far_deadline_waits() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = Wheel::new();
        let mut buf = Vec::new();
        w.advance(50, &mut buf, usize::MAX);
        assert!(w.insert(50, waker(0, &log)).is_err());
        assert!(w.insert(49, waker(0, &log)).is_err());
        let far = MAX_SPAN * 3 + 17;
        let k = w.insert(far, waker(1, &log)).ok().unwrap();
        let mut now = 50;
        let woke = AtomicUsize::new(0);
        while now < far {
            now = w.next_expiration().unwrap().max(now + 1).min(far);
            while w.advance(now, &mut buf, usize::MAX) {}
            if !buf.is_empty() {
                woke.fetch_add(1, Ordering::Relaxed);
                assert_eq!(now, far, "fired early at {now}");
                buf.clear();
            }
        }
        assert_eq!(woke.load(Ordering::Relaxed), 1);
        assert!(w.poll(k, &waker(1, &log)));
    }
}
