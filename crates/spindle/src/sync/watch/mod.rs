//! A channel that keeps only the latest value, as Tokio's `sync::watch`:
//! any number of [`Sender`]s write it, any number of [`Receiver`]s read it
//! and wait for it to change.
//!
//! The value lies in an `RwLock` of its own, so that readers share it,
//! beside an atomic version (how many changes there have been) and a "no
//! sender left" flag. One lock guards the sender and receiver counts and
//! the `closed()` futures waiting for the last receiver to go; the
//! `changed()` futures wait in shards of their own (each receiver in the
//! one its number picks), each shard a lock around a `LinkedSlab` of
//! wakers under keys the futures own. Each receiver keeps the version it
//! last saw.
//!
//! Invariants:
//! - The version moves only with the value's write lock held: so a reader
//!   holding the value's read lock and reading the version sees the
//!   version of the value it holds, and `borrow_and_update` never marks
//!   seen a value it did not read.
//! - A change moves the version and then locks each shard to take its
//!   waiters; a `changed()` that found the version unmoved compares again
//!   and queues itself in one hold of its shard's lock. Either that hold
//!   comes before the change's hold of the shard (the waiter is in the
//!   queue the change takes), or after it (the lock orders the version's
//!   move before the compare, which sees it): no wake-up is lost. The last
//!   sender's drop sets the flag and takes the shards the same way, and
//!   the last receiver's drop works so on the `closed()` queue under the
//!   state lock.
//! - A `changed()` records the version as seen only when it returns
//!   `Ready`: a future dropped before that leaves the receiver as it was
//!   (cancel-safe), and takes its key out of the queue.
//! - Once the sender count is zero it stays zero (only a sender makes
//!   another), so a receiver that has seen the latest value and finds no
//!   sender has nothing more to wait for. The receiver count can rise again
//!   from zero (`Sender::subscribe`).
//! - A closure of `send_modify` or `send_if_modified` runs with the value's
//!   write lock held and the state lock free; if it panics no version
//!   moves and no one is woken, and what it changed stays (the lock's
//!   poisoning is ignored), as Tokio's.
//! - Wakers are woken after both locks are released.

pub mod error;
#[cfg(all(test, loom))]
mod loom_model;
mod receiver;
mod sender;

pub use receiver::Receiver;
pub use sender::Sender;

use crate::linked_slab::{LinkedSlab, NIL};
use crate::loom::{
    lock, read_lock, AtomicBool, AtomicU64, AtomicUsize, CachePadded, Mutex, Ordering, RwLock,
    RwLockReadGuard,
};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;
use std::task::Waker;

/// A channel holding `init`: its one sender and one receiver, which
/// counts `init` as seen.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// use spindle::sync::watch;
/// let (tx, mut rx) = watch::channel("starting");
/// let watcher = spindle::spawn(async move {
///     while rx.changed().await.is_ok() {
///         if *rx.borrow_and_update() == "ready" {
///             return true;
///         }
///     }
///     false // every sender gone before "ready"
/// });
/// tx.send("loading").unwrap();
/// tx.send("ready").unwrap();
/// assert!(watcher.await.unwrap());
/// # });
/// ```
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared::new(init, 1));
    let rx = Receiver::new(shared.clone(), 0);
    (Sender::from_shared(shared), rx)
}

/// What the senders and receivers of one channel share.
struct Shared<T> {
    value: RwLock<T>,
    /// How many changes there have been: written with the value's write
    /// lock held, read anywhere (a `changed()` that finds it moved needs
    /// no lock).
    version: AtomicU64,
    /// Set when the last sender is gone; never cleared.
    no_senders: AtomicBool,
    state: Mutex<State>,
    /// The `changed()` futures waiting for a change, in shards, each
    /// receiver always in the one its number picks: a change wakes them
    /// all, and the watchers of a busy channel do not all queue on one
    /// lock.
    changed: Box<[CachePadded<Mutex<Waiters>>]>,
    /// The shard of the next receiver made.
    next_shard: AtomicUsize,
}

/// Shards of the `changed()` waiters (two under loom, to keep the models
/// small).
#[cfg(not(loom))]
const SHARDS: usize = 8;
#[cfg(loom)]
const SHARDS: usize = 2;

struct State {
    senders: usize,
    receivers: usize,
    /// `Sender::closed()` futures waiting for no receiver to be left.
    closed: Waiters,
}

impl<T> Shared<T> {
    /// One sender and `receivers` receivers, at version 0.
    fn new(init: T, receivers: usize) -> Shared<T> {
        Shared {
            value: RwLock::new(init),
            version: AtomicU64::new(0),
            no_senders: AtomicBool::new(false),
            state: Mutex::new(State {
                senders: 1,
                receivers,
                closed: Waiters::default(),
            }),
            changed: (0..SHARDS)
                .map(|_| CachePadded(Mutex::new(Waiters::default())))
                .collect(),
            next_shard: AtomicUsize::new(0),
        }
    }

    /// The value, read-locked, and its version.
    fn read(&self) -> (RwLockReadGuard<'_, T>, u64) {
        let value = read_lock(&self.value);
        let version = self.version();
        (value, version)
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn has_senders(&self) -> bool {
        !self.no_senders.load(Ordering::Acquire)
    }

    /// A shard for a new receiver, round robin.
    fn pick_shard(&self) -> usize {
        self.next_shard.fetch_add(1, Ordering::Relaxed) % SHARDS
    }

    /// Takes every waiting `changed()`, shard by shard, for the caller to
    /// wake. Called after the version moved or the last sender left: a
    /// waiter that checked before that is queued in its shard by the time
    /// this locks it, and one that checks after sees the change.
    fn take_changed(&self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for shard in self.changed.iter() {
            wakers.extend(lock(shard).take_all());
        }
        wakers
    }
}

/// Futures waiting on a channel, in a [`LinkedSlab`]: once it has grown
/// to the most futures waiting at once, waiting allocates nothing. A
/// future owns its key from its first wait until it leaves; `take_all`
/// unlinks the entries (the wake) but leaves them to their futures.
struct Waiters {
    list: LinkedSlab<Waiting>,
}

struct Waiting {
    waker: Option<Waker>,
    linked: bool,
}

impl Default for Waiters {
    fn default() -> Self {
        Waiters {
            list: LinkedSlab::new(),
        }
    }
}

impl Waiters {
    /// Queues a future under `key` (a fresh one when it has none), or
    /// refreshes its waker.
    fn park(&mut self, key: &mut Option<usize>, waker: &Waker) {
        let k = *key.get_or_insert_with(|| {
            self.list.alloc(Waiting {
                waker: None,
                linked: false,
            })
        });
        let w = &mut self.list[k];
        match &mut w.waker {
            Some(old) if old.will_wake(waker) => {}
            slot => *slot = Some(waker.clone()),
        }
        if !w.linked {
            w.linked = true;
            self.list.link_back(k);
        }
    }

    /// Takes a future out of the queue (if it is there) and frees its key.
    fn leave(&mut self, key: &mut Option<usize>) {
        if let Some(k) = key.take() {
            let w = &mut self.list[k];
            w.waker = None;
            if w.linked {
                self.list.unlink(k);
            }
            self.list.release(k);
        }
    }

    /// Empties the queue, for the caller to wake once the lock is free.
    fn take_all(&mut self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        let mut k = self.list.head();
        while k != NIL {
            let next = self.list.next(k);
            let w = &mut self.list[k];
            w.linked = false;
            wakers.extend(w.waker.take());
            self.list.unlink(k);
            k = next;
        }
        wakers
    }
}

/// A read-locked borrow of a channel's value: senders wait while it lives,
/// so keep it short, and never across an `.await`.
pub struct Ref<'a, T> {
    value: RwLockReadGuard<'a, T>,
    has_changed: bool,
}

impl<T> Ref<'_, T> {
    /// Whether the value was new to the receiver that borrowed it: not yet
    /// seen when it was borrowed. Always `false` for [`Sender::borrow`].
    pub fn has_changed(&self) -> bool {
        self.has_changed
    }
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ref")
            .field("value", &*self.value)
            .field("has_changed", &self.has_changed)
            .finish()
    }
}
