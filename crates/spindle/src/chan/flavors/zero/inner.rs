//! The rendezvous channel's state under its lock: offer slots with their
//! generations and tickets, takers, the queues of both, and the wake-ups
//! they hand out. The invariants, and the lock-free reads of the
//! generations and taker cells, are in `mod.rs` ("Invariants", "Taken
//! without the lock", "Drained without the lock", "Kept wakers").

use std::collections::VecDeque;
use std::task::Waker;

use crate::loom::{AtomicPtr, AtomicUsize, Ordering, ReleaseStore};
use crate::task::{is_task_waker, notify_in_place, InPlace, Submit};

use super::taker::{Taker, TakerCell, DRAINED, FILLED, FREE, WAITING};

/// A ticket's low half is the slot's key, its high half the generation.
const KEY_BITS: u32 = usize::BITS / 2;
const KEY_MASK: usize = (1 << KEY_BITS) - 1;
const GEN_MASK: usize = usize::MAX >> KEY_BITS;

pub(super) fn ticket(k: usize, gen: usize) -> usize {
    k | (gen << KEY_BITS)
}

/// A ticket's slot key and generation.
pub(super) fn untick(t: usize) -> (usize, usize) {
    (t & KEY_MASK, t >> KEY_BITS)
}

/// A taken offer's sender, to wake once the lock is released: a task
/// already notified in place (its waker kept in the slot), or a foreign
/// waker taken out of it.
pub(super) enum Wakeup {
    Task(Submit),
    Waker(Waker),
}

impl Wakeup {
    pub(super) fn wake(self) {
        match self {
            Wakeup::Task(task) => task.submit(),
            Wakeup::Waker(w) => w.wake(),
        }
    }
}

#[derive(PartialEq, Eq, Debug, Clone, Copy)]
pub(super) enum State {
    Free,
    Offered,
}

pub(super) struct Offer<T> {
    pub(super) value: Option<T>,
    pub(super) waker: Option<Waker>,
    pub(super) state: State,
    /// Changed exactly when the slot is freed (`mod.rs`, "Taken without
    /// the lock").
    pub(super) gen: usize,
}

pub(super) struct Inner<T> {
    pub(super) offers: Vec<Offer<T>>,
    pub(super) free: Vec<usize>,
    pub(super) queue: VecDeque<usize>,
    pub(super) takers: Vec<Taker<T>>,
    pub(super) free_takers: Vec<usize>,
    pub(super) takers_waiting: VecDeque<usize>,
    /// Takers `FILLED` or `DRAINED`, oldest first ([`TakerCell`]).
    pub(super) handed: Vec<usize>,
    /// `handed`'s length at which `reuse_taker` next sweeps it.
    pub(super) sweep_at: usize,
    pub(super) closed: bool,
}

impl<T> Inner<T> {
    pub(super) fn new() -> Self {
        Inner {
            offers: Vec::new(),
            free: Vec::new(),
            queue: VecDeque::new(),
            takers: Vec::new(),
            free_takers: Vec::new(),
            takers_waiting: VecDeque::new(),
            handed: Vec::new(),
            sweep_at: 0,
            closed: false,
        }
    }

    /// Parks `value` in a free slot, to be woken through `waker` (`None`:
    /// an orphan, no sender); returns the ticket (`mod.rs`, "Taken without
    /// the lock"). A task's waker the slot kept from its last offer is
    /// reused when it wakes the same task (`mod.rs`, "Kept wakers").
    #[inline]
    pub(super) fn alloc(&mut self, value: T, waker: Option<&Waker>) -> usize {
        let k = match self.free.pop() {
            Some(k) => k,
            None => {
                assert!(
                    self.offers.len() <= KEY_MASK,
                    "more than {KEY_MASK} sends parked on one rendezvous channel"
                );
                self.offers.push(Offer {
                    value: None,
                    waker: None,
                    state: State::Free,
                    gen: 0,
                });
                self.offers.len() - 1
            }
        };
        let o = &mut self.offers[k];
        debug_assert_eq!(o.state, State::Free);
        o.value = Some(value);
        match waker {
            Some(w) => keep_or_clone(&mut o.waker, w),
            None => o.waker = None,
        }
        o.state = State::Offered;
        ticket(k, o.gen)
    }

    /// Frees slot `k`, whose value has left it: a new generation, mirrored
    /// for lock-free readers (`mod.rs`, "Taken without the lock").
    #[inline]
    pub(super) fn release(&mut self, k: usize, gens: &[AtomicUsize]) {
        let o = &mut self.offers[k];
        debug_assert!(o.value.is_none(), "a slot is freed once its value left");
        o.state = State::Free;
        if !o.waker.as_ref().is_some_and(is_task_waker) {
            o.waker = None; // only a task's waker is kept ("Kept wakers")
        }
        o.gen = (o.gen + 1) & GEN_MASK;
        if let Some(mirror) = gens.get(k) {
            // Release: the value's move out of the slot happens before a
            // sender's Acquire load that sees the new generation.
            mirror.store(o.gen, Ordering::Release);
        }
        self.free.push(k);
    }

    pub(super) fn unqueue(&mut self, k: usize) {
        remove_key(&mut self.queue, k);
    }

    /// Puts `value` into the oldest waiting taker; returns the receiver's
    /// wake-up, to finish once the lock is released, or the value back when
    /// no taker waits.
    pub(super) fn give(&mut self, value: T) -> Result<Option<Wakeup>, T> {
        let Some(k) = self.takers_waiting.pop_front() else {
            return Err(value);
        };
        let t = &mut self.takers[k];
        debug_assert_eq!(t.cell().state(), WAITING);
        // SAFETY: a `WAITING` taker's value is touched only under the lock,
        // held here; its owner reads it only after `FILLED` (below).
        t.cell().value.with_mut(|p| unsafe { *p = Some(value) });
        // Release: the value is written before the owner sees `FILLED`.
        t.cell().state.store(FILLED, Ordering::Release);
        self.handed.push(k);
        Ok(notify(&mut t.waker))
    }

    /// Takes the oldest offer's value and frees its slot (which tells its
    /// sender: `mod.rs`, "Taken without the lock"); returns the value and the sender's wake-up, to
    /// finish once the lock is released.
    #[inline(always)]
    pub(super) fn take_offer(&mut self, gens: &[AtomicUsize]) -> Option<(T, Option<Wakeup>)> {
        let k = self.queue.pop_front()?;
        let o = &mut self.offers[k];
        let v = o.value.take().expect("queued offer holds its value");
        let wakeup = notify(&mut o.waker);
        self.release(k, gens);
        Some((v, wakeup))
    }

    /// Frees taker `k`, its receive's own (`WAITING`, unqueued from
    /// `takers_waiting`). A task's waker stays for the next receive parked
    /// there ("Kept wakers").
    pub(super) fn release_taker(&mut self, k: usize) {
        let t = &mut self.takers[k];
        t.cell().state.store(FREE, Ordering::Relaxed);
        if !t.waker.as_ref().is_some_and(is_task_waker) {
            t.waker = None;
        }
        self.free_takers.push(k);
    }

    /// A taker for a new parked receive: the last one handed if its owner
    /// drained it (in a receive loop, the same task's previous taker, its
    /// waker kept); else a free one, after sweeping the drained takers out
    /// of `handed` when none is free and `handed` has doubled since the
    /// last sweep (so sweeps cost O(1) a give, amortized, however many
    /// filled takers wait to be drained); else none (make a new one).
    pub(super) fn reuse_taker(&mut self) -> Option<usize> {
        if let Some(&k) = self.handed.last() {
            if self.takers[k].cell().state() == DRAINED {
                self.handed.pop();
                return Some(k);
            }
        }
        if self.free_takers.is_empty() && self.handed.len() >= self.sweep_at {
            let Inner {
                handed,
                takers,
                free_takers,
                ..
            } = self;
            handed.retain(|&k| {
                let cell = takers[k].cell();
                let drained = cell.state() == DRAINED;
                if drained {
                    cell.state.store(FREE, Ordering::Relaxed);
                    free_takers.push(k);
                }
                !drained
            });
            self.sweep_at = 2 * self.handed.len() + 8;
        }
        self.free_takers.pop()
    }

    /// Parks a receive woken through `waker` in a taker; returns its key. A
    /// task's waker the taker kept is reused when it wakes the same task
    /// ("Kept wakers").
    pub(super) fn park_taker(&mut self, waker: &Waker, cells: &[AtomicPtr<TakerCell<T>>]) -> usize {
        let k = match self.reuse_taker() {
            Some(k) => k,
            None => {
                let t = Taker::new();
                let k = self.takers.len();
                if let Some(mirror) = cells.get(k) {
                    // Release: the cell's initialisation happens before a
                    // lock-free reader's Acquire load of its address.
                    mirror.release_store(t.cell.as_ptr());
                }
                self.takers.push(t);
                k
            }
        };
        let t = &mut self.takers[k];
        keep_or_clone(&mut t.waker, waker);
        t.cell().state.store(WAITING, Ordering::Relaxed);
        self.takers_waiting.push_back(k);
        k
    }

    pub(super) fn unqueue_taker(&mut self, k: usize) {
        remove_key(&mut self.takers_waiting, k);
    }
}

/// Stores `waker` in `slot` for a parked side, keeping what is there when
/// it wakes the same task ("Kept wakers": no clone, no reference count).
pub(super) fn keep_or_clone(slot: &mut Option<Waker>, waker: &Waker) {
    if !slot.as_ref().is_some_and(|kept| kept.will_wake(waker)) {
        *slot = Some(waker.clone());
    }
}

/// Notifies the task behind a parked side's waker: a spindle task in place,
/// its waker staying where it is ("Kept wakers"); a foreign waker is taken
/// out, to be woken by value once the lock is released.
fn notify(waker: &mut Option<Waker>) -> Option<Wakeup> {
    match waker.as_ref().map(notify_in_place) {
        None | Some(InPlace::Done) => None,
        Some(InPlace::Submit(task)) => Some(Wakeup::Task(task)),
        Some(InPlace::Foreign) => waker.take().map(Wakeup::Waker),
    }
}

/// Removes key `k` from a FIFO of keys, if it is there.
fn remove_key(q: &mut VecDeque<usize>, k: usize) {
    if let Some(i) = q.iter().position(|&x| x == k) {
        q.remove(i);
    }
}
