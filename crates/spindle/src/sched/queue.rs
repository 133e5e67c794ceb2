//! The per-worker local run queue: a fixed-size ring that its owner pushes
//! to without any read-modify-write, and that other workers steal half of.
//!
//! ```text
//!  head: AtomicU64 = (steal: u32) << 32 | (real: u32)
//!  tail: AtomicU32                 written only by the owner
//!  slots[CAP]                      tasks at indices real..tail (mod CAP)
//! ```
//!
//! Invariants:
//! - Only the owner writes `tail` and writes slots; it writes slot `tail`
//!   and then publishes it with a Release store of `tail + 1`.
//! - `steal == real` when no steal is in progress. A stealer claims the run
//!   `real..real+n` by moving `real` forward while leaving `steal` behind;
//!   `steal..real` are then slots being copied out, which the owner must not
//!   overwrite: the owner's free-space check counts from `steal`.
//! - At most one steal is in progress per queue (a stealer that sees
//!   `steal != real` backs off), so the copy of `steal..real` needs no other
//!   coordination. When it is done, the stealer sets `steal = real` with a CAS
//!   (AcqRel), which the owner's Acquire load of `head` pairs with before it
//!   reuses those slots.
//! - Pops (owner) and claims (stealers) both advance `real` with a CAS on
//!   `head`, so each task is taken exactly once.
//! - When the ring is full, the owner moves half of it to the injector in one
//!   batch (one lock), so pushes never block and never fail.
//!
//! The loom models (`loom_model` below) run push/pop/steal/overflow races
//! with a capacity of 4.

use crate::loom::{AtomicU32, AtomicU64, Ordering::*, UnsafeCell};
use crate::task::{Notified, RawTask};
use std::mem::MaybeUninit;

#[cfg(not(loom))]
pub(crate) const CAPACITY: usize = 256;
#[cfg(loom)]
pub(crate) const CAPACITY: usize = 4;
const MASK: usize = CAPACITY - 1;

fn pack(steal: u32, real: u32) -> u64 {
    ((steal as u64) << 32) | real as u64
}

fn unpack(head: u64) -> (u32, u32) {
    ((head >> 32) as u32, head as u32)
}

pub(crate) struct Inner {
    head: AtomicU64,
    tail: AtomicU32,
    slots: Box<[UnsafeCell<MaybeUninit<RawTask>>]>,
}

// SAFETY: slots are only accessed under the claim protocol of the module
// docs (each slot has one writer or readers that own it via `head`).
unsafe impl Send for Inner {}
// SAFETY: as above.
unsafe impl Sync for Inner {}

/// The owner's end (one per worker, never shared).
pub(crate) struct Local {
    inner: crate::loom::Arc<Inner>,
}

/// Other workers' end.
#[derive(Clone)]
pub(crate) struct Stealer {
    inner: crate::loom::Arc<Inner>,
}

/// Where overflow goes: the injector, in one batch.
pub(crate) trait Overflow {
    fn push_batch(&self, tasks: Vec<Notified>);
}

pub(crate) fn local() -> (Local, Stealer) {
    let slots = (0..CAPACITY)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let inner = crate::loom::Arc::new(Inner {
        head: AtomicU64::new(0),
        tail: AtomicU32::new(0),
        slots,
    });
    (
        Local {
            inner: inner.clone(),
        },
        Stealer { inner },
    )
}

impl Inner {
    /// Moves the task out of `slot`.
    ///
    /// # Safety
    /// The caller has claimed `idx` (through `head`) and the owner published it.
    unsafe fn take(&self, idx: u32) -> Notified {
        let raw = self.slots[idx as usize & MASK].with(|p| {
            // SAFETY: claimed and published, per the caller's contract.
            unsafe { (*p).assume_init_read() }
        });
        // SAFETY: slots hold `Notified`s turned into raw pointers by `push`.
        unsafe { Notified::from_raw(raw) }
    }

    fn len(&self) -> usize {
        let (_, real) = unpack(self.head.load(Acquire));
        let tail = self.tail.load(Acquire);
        tail.wrapping_sub(real) as usize
    }
}

impl Local {
    /// Tasks in the ring now (others may be stealing).
    pub(crate) fn len(&self) -> usize {
        self.inner.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Free slots, counted from the oldest slot still in use.
    pub(crate) fn remaining(&self) -> usize {
        let (steal, _) = unpack(self.inner.head.load(Acquire));
        let tail = self.inner.tail.load(Relaxed);
        CAPACITY - tail.wrapping_sub(steal) as usize
    }

    /// Pushes at the back; when full, moves half the ring and `task` to `overflow`.
    /// Returns `true` when it overflowed.
    pub(crate) fn push_back(&mut self, mut task: Notified, overflow: &dyn Overflow) -> bool {
        let tail = loop {
            // Acquire pairs with a stealer's release of `steal..real`.
            let head = self.inner.head.load(Acquire);
            let (steal, real) = unpack(head);
            // Relaxed: only this thread writes `tail`.
            let tail = self.inner.tail.load(Relaxed);
            if (tail.wrapping_sub(steal) as usize) < CAPACITY {
                break tail;
            }
            if steal != real {
                // A stealer is emptying part of the ring: it will have room
                // soon, but don't wait: the one task goes to the injector.
                overflow.push_batch(vec![task]);
                return true;
            }
            match self.push_overflow(task, real, tail, overflow) {
                Ok(()) => return true,
                Err(t) => task = t, // a stealer moved `head`: look again
            }
        };
        let raw = task.into_raw();
        self.inner.slots[tail as usize & MASK].with_mut(|p| {
            // SAFETY: slot `tail` is outside `steal..tail`, so no stealer
            // reads it, and only the owner writes slots.
            unsafe { (*p).write(raw) };
        });
        // Release publishes the slot to stealers' Acquire loads of `tail`.
        self.inner.tail.store(tail.wrapping_add(1), Release);
        false
    }

    /// Claims the older half of a full ring and sends it, with `task`, to the injector.
    fn push_overflow(
        &mut self,
        task: Notified,
        real: u32,
        tail: u32,
        overflow: &dyn Overflow,
    ) -> Result<(), Notified> {
        const HALF: u32 = (CAPACITY / 2) as u32;
        debug_assert_eq!(tail.wrapping_sub(real) as usize, CAPACITY);
        let next = real.wrapping_add(HALF);
        // Claim `real..real+HALF` like a pop would: exclusive once the CAS wins.
        if self
            .inner
            .head
            .compare_exchange(pack(real, real), pack(next, next), AcqRel, Relaxed)
            .is_err()
        {
            return Err(task);
        }
        let mut batch = Vec::with_capacity(HALF as usize + 1);
        for i in 0..HALF {
            // SAFETY: claimed by the CAS above; published by earlier pushes.
            batch.push(unsafe { self.inner.take(real.wrapping_add(i)) });
        }
        batch.push(task);
        overflow.push_batch(batch);
        Ok(())
    }

    /// Pops the oldest task.
    pub(crate) fn pop(&mut self) -> Option<Notified> {
        let mut head = self.inner.head.load(Acquire);
        let idx = loop {
            let (steal, real) = unpack(head);
            let tail = self.inner.tail.load(Relaxed);
            if real == tail {
                return None;
            }
            let next_real = real.wrapping_add(1);
            // While a steal is in progress, only `real` moves.
            let next = if steal == real {
                pack(next_real, next_real)
            } else {
                pack(steal, next_real)
            };
            match self
                .inner
                .head
                .compare_exchange_weak(head, next, AcqRel, Acquire)
            {
                Ok(_) => break real,
                Err(actual) => head = actual,
            }
        };
        // SAFETY: the CAS gave us `idx`; we wrote it ourselves.
        Some(unsafe { self.inner.take(idx) })
    }
}

/// What a steal attempt found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Steal {
    /// Nothing to take.
    Empty,
    /// Another stealer is busy with this queue; try again later.
    Retry,
}

impl Stealer {
    pub(crate) fn len(&self) -> usize {
        self.inner.len()
    }

    /// How many tasks have left the ring so far (popped or stolen; wraps):
    /// unchanged between two reads while tasks wait means nobody took any.
    pub(crate) fn taken(&self) -> u32 {
        unpack(self.inner.head.load(Acquire)).1
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves about half of this queue into `dst` (the thief's own ring,
    /// which must have room for it) and returns one task to run now.
    pub(crate) fn steal_into(&self, dst: &mut Local) -> Result<(Notified, usize), Steal> {
        // Room check: at most half of dst's capacity is taken.
        if dst.remaining() < CAPACITY / 2 {
            return Err(Steal::Empty);
        }
        let dst_tail = dst.inner.tail.load(Relaxed);
        let n = self.steal_into2(dst, dst_tail)?;
        // The last stolen task is returned rather than queued.
        let last = dst_tail.wrapping_add(n - 1);
        // SAFETY: `last` was just written by us into our own ring and is
        // not yet published, so no one else can claim it.
        let task = unsafe { dst.inner.take(last) };
        if n > 1 {
            // Release publishes the copied slots to our own stealers.
            dst.inner.tail.store(last, Release);
        }
        Ok((task, n as usize))
    }

    fn steal_into2(&self, dst: &mut Local, dst_tail: u32) -> Result<u32, Steal> {
        let mut prev = self.inner.head.load(Acquire);
        let (first, n) = loop {
            let (steal, real) = unpack(prev);
            if steal != real {
                return Err(Steal::Retry);
            }
            // Acquire pairs with the owner's Release store of `tail`: the
            // slots up to it are written.
            let tail = self.inner.tail.load(Acquire);
            let avail = tail.wrapping_sub(real);
            let n = avail - avail / 2;
            if n == 0 {
                return Err(Steal::Empty);
            }
            let next = pack(steal, real.wrapping_add(n));
            match self
                .inner
                .head
                .compare_exchange_weak(prev, next, AcqRel, Acquire)
            {
                Ok(_) => break (real, n),
                Err(actual) => prev = actual,
            }
        };
        for i in 0..n {
            let src = first.wrapping_add(i);
            let raw = self.inner.slots[src as usize & MASK].with(|p| {
                // SAFETY: `first..first+n` is claimed by our CAS and the
                // owner cannot overwrite it while `steal` lags behind.
                unsafe { (*p).assume_init_read() }
            });
            let d = dst_tail.wrapping_add(i);
            dst.inner.slots[d as usize & MASK].with_mut(|p| {
                // SAFETY: we own dst; these slots are free (room checked) and
                // not yet published.
                unsafe { (*p).write(raw) };
            });
        }
        // Done copying: let `steal` catch up with `real` (the owner may have
        // popped meanwhile, moving `real`).
        let mut prev = self.inner.head.load(Acquire);
        loop {
            let (_, real) = unpack(prev);
            // AcqRel: Release orders our reads of the slots before the
            // owner's reuse of them (it Acquire-loads `head`).
            match self
                .inner
                .head
                .compare_exchange_weak(prev, pack(real, real), AcqRel, Acquire)
            {
                Ok(_) => return Ok(n),
                Err(actual) => prev = actual,
            }
        }
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        // Tasks left behind are cancelled (dropping a Notified cancels it).
        while let Some(t) = self.pop() {
            drop(t);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::loom::{lock, Mutex};
    use crate::loom_models::TestSched;
    use loom::thread;
    use std::collections::HashSet;

    #[derive(Default)]
    struct Sink(Mutex<Vec<Notified>>);

    impl Overflow for Sink {
        fn push_batch(&self, tasks: Vec<Notified>) {
            lock(&self.0).extend(tasks);
        }
    }

    fn tasks(n: usize) -> Vec<Notified> {
        let s = TestSched::default();
        (0..n).map(|_| s.spawn(async {}).0).collect()
    }

    fn id(t: &Notified) -> usize {
        t.addr()
    }

    /// Steals once into a fresh ring and takes everything it got.
    fn steal_everything(stealer: &Stealer) -> Vec<usize> {
        let (mut mine, _s) = super::local();
        match stealer.steal_into(&mut mine) {
            Ok((t, _)) => {
                let mut got = vec![id(&t)];
                got.extend(drain(&mut mine));
                got
            }
            Err(_) => Vec::new(),
        }
    }

    /// Pops every task of `q` (dropping each, which cancels it).
    fn drain(q: &mut Local) -> Vec<usize> {
        std::iter::from_fn(|| q.pop()).map(|t| id(&t)).collect()
    }

    /// Every task comes out exactly once, whoever takes it.
    fn check(all: &[usize], seen: Vec<usize>) {
        let set: HashSet<usize> = seen.iter().copied().collect();
        assert_eq!(set.len(), seen.len(), "a task was taken twice");
        assert_eq!(
            set,
            all.iter().copied().collect::<HashSet<_>>(),
            "a task was lost"
        );
    }

    #[test]
    fn queue_pop_races_steal() {
        loom::model(|| {
            let (mut local, stealer) = local();
            let sink = Sink::default();
            let ts = tasks(3);
            let all: Vec<usize> = ts.iter().map(id).collect();
            for t in ts {
                local.push_back(t, &sink);
            }
            let thief = thread::spawn(move || steal_everything(&stealer));
            let mut seen = drain(&mut local);
            seen.extend(thief.join().unwrap());
            check(&all, seen);
        });
    }

    #[test]
    fn queue_push_and_overflow_race_steal() {
        loom::model(|| {
            let (mut local, stealer) = local();
            let sink = Sink::default();
            let ts = tasks(CAPACITY + 1);
            let all: Vec<usize> = ts.iter().map(id).collect();
            let mut ts = ts.into_iter();
            for t in ts.by_ref().take(2) {
                local.push_back(t, &sink);
            }
            let thief = thread::spawn(move || steal_everything(&stealer));
            for t in ts {
                local.push_back(t, &sink); // fills the ring, then overflows
            }
            let mut seen = drain(&mut local);
            seen.extend(thief.join().unwrap());
            for t in lock(&sink.0).drain(..) {
                seen.push(id(&t));
                drop(t);
            }
            check(&all, seen);
        });
    }
}
