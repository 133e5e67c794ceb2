//! A channel that keeps only the latest value, as Tokio's `sync::watch`:
//! any number of [`Sender`]s write it, any number of [`Receiver`]s read it
//! and wait for it to change.
//!
//! The value lies in an `RwLock` of its own, so that readers share it,
//! beside an atomic version (how many changes there have been); one lock
//! guards the rest: the sender and receiver counts, the `changed()`
//! futures waiting for a change and the `closed()` futures waiting for the
//! last receiver to go, each in a `LinkedSlab` under a key it owns. Each
//! receiver keeps the version it last saw.
//!
//! Invariants:
//! - The version moves only with the value's write lock held, and under
//!   the state lock: so a reader holding the value's read lock and reading
//!   the version sees the version of the value it holds, and
//!   `borrow_and_update` never marks seen a value it did not read. Lock
//!   order is value, then state; `changed()` takes the state lock alone.
//! - A change bumps the version and takes every waiting `changed()` in
//!   one hold of the state lock, and a `changed()` compares versions and
//!   queues itself in one hold of it: so a waiter either sees the new
//!   version or is queued before the change takes the queue, and no
//!   wake-up is lost. The dropping of the last sender and of the last
//!   receiver work the same way on the sender and receiver counts.
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
use crate::loom::{read_lock, AtomicU64, Mutex, Ordering, RwLock, RwLockReadGuard};
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
    /// lock and the state lock both held, read anywhere (a `changed()`
    /// that finds it moved needs no lock).
    version: AtomicU64,
    state: Mutex<State>,
}

struct State {
    senders: usize,
    receivers: usize,
    /// `changed()` futures waiting for a version past the one they saw.
    changed: Waiters,
    /// `Sender::closed()` futures waiting for no receiver to be left.
    closed: Waiters,
}

impl<T> Shared<T> {
    /// One sender and `receivers` receivers, at version 0.
    fn new(init: T, receivers: usize) -> Shared<T> {
        Shared {
            value: RwLock::new(init),
            version: AtomicU64::new(0),
            state: Mutex::new(State {
                senders: 1,
                receivers,
                changed: Waiters::default(),
                closed: Waiters::default(),
            }),
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
