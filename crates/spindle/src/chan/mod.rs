//! Channels: bounded, unbounded, rendezvous, oneshot, broadcast and SPSC
//! rings, plus [`select!`](crate::select).
//!
//! # Flavors
//! - [`bounded`]`(n)`: a ring of `n` slots with per-slot stamps (Vyukov).
//! - [`unbounded`]`()`: linked blocks of 32 slots.
//! - [`rendezvous`]`()` (also `bounded(0)`): zero capacity; a send completes
//!   when it hands the value straight to a parked receiver, or when a
//!   receiver takes it out of the sender's parked offer.
//! - [`oneshot()`](fn@oneshot): one value, once.
//! - [`broadcast(n)`](fn@broadcast): every receiver sees every message; a receiver more
//!   than `n` messages behind gets [`broadcast::RecvError::Lagged`] and skips
//!   ahead to the oldest message still held.
//! - [`spsc(n)`](fn@spsc): a single-producer single-consumer ring with zero-copy
//!   slot access (reserve/commit, peek/release).
//!
//! The first three share the handle types [`Sender`] and [`Receiver`]; both
//! are `Clone` (MPMC) and each message is delivered to exactly one receiver.
//!
//! # Close semantics (Go's)
//! - [`Sender::close`] or [`Receiver::close`], or dropping the last `Sender`,
//!   closes the channel: receivers drain what is buffered and then get
//!   [`RecvError`] / [`TryRecvError::Closed`]; sends fail, handing the value
//!   back in the error.
//! - Dropping the last `Receiver` closes the channel and drops the buffered
//!   messages; every later send fails with its value inside the error.
//! - Every task or thread blocked in a send or receive wakes on close.
//! - No message is lost or dropped twice: each is received, handed back in a
//!   send error, or dropped exactly once with the channel.
//!
//! # Cancel safety
//! A [`Recv`] future takes a message from the channel only in the poll that
//! returns `Ready`; dropping it earlier loses nothing (and a wake-up it had
//! received is passed on to another waiter). A [`Send`] future keeps its value
//! until it is placed; dropping it drops the value, never a channel message.
//! (Rendezvous: a parked offer can be taken by a receiver while the send
//! future waits; it then counts as sent even if the future is dropped before
//! it is polled again — see `docs/chan.md`.)
//!
//! # Executors
//! The channels only use [`std::task::Waker`]: they work under any executor,
//! and the `*_blocking` / `*_timeout` methods let plain threads take part.
//!
//! The wake-up protocol and its proof sketch are in `docs/chan.md`; the
//! per-flavor invariants at the top of each file in `flavors/`.

mod backoff;
pub(crate) mod blocking;
mod error;
pub(crate) mod flavors;
mod poll;
mod receiver;
mod recv;
pub(crate) mod select;
mod send;
mod sender;
mod shared;
mod spin;
mod waiters;

use crate::loom::{Arc, AtomicBool, AtomicUsize};
use flavors::{array, list, zero};
use shared::{Chan, Flavor};
use waiters::WaitList;

pub use error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
pub use receiver::Receiver;
pub use recv::{Recv, RecvBatch};
pub use send::{Send, SendBatch};
pub use sender::Sender;

/// Oneshot channel types; see [`oneshot()`](fn@oneshot).
pub mod oneshot {
    pub use super::flavors::oneshot::{Receiver, Sender};
}

/// Broadcast channel types; see [`broadcast()`](fn@broadcast).
pub mod broadcast {
    pub use super::flavors::broadcast::{Receiver, Recv, RecvError, Sender, TryRecvError};
}

/// SPSC ring types; see [`spsc()`](fn@spsc).
pub mod spsc {
    pub use super::flavors::spsc::{Consumer, Producer, Recv, Send};
    #[cfg(not(loom))]
    pub use super::flavors::spsc::{ReadSlice, WriteSlice};
}

pub use flavors::broadcast::channel as broadcast;
pub use flavors::oneshot::channel as oneshot;
pub use flavors::spsc::channel as spsc;

/// What a bounded channel does with a send when it is full.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Policy {
    /// Wait for room (`send`), or fail with `Full` (`try_send`). The default.
    #[default]
    Block,
    /// Drop the value being sent; the send reports success.
    DropNewest,
    /// Drop the oldest buffered message to make room.
    DropOldest,
}

/// A bounded channel of capacity `cap` (`0` gives a [`rendezvous`] channel).
pub fn bounded<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    bounded_with_policy(cap, Policy::Block)
}

/// A bounded channel with a full-queue [`Policy`]. A policy other than
/// `Block` needs `cap > 0`.
pub fn bounded_with_policy<T>(cap: usize, policy: Policy) -> (Sender<T>, Receiver<T>) {
    if cap == 0 {
        assert_eq!(
            policy,
            Policy::Block,
            "a rendezvous channel has no room to drop from"
        );
        return new(Flavor::Zero(zero::Channel::new()), policy);
    }
    new(Flavor::Array(array::Channel::new(cap)), policy)
}

/// An unbounded channel.
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    new(Flavor::List(list::Channel::new()), Policy::Block)
}

/// A zero-capacity channel: each send waits for a receiver to take its value.
pub fn rendezvous<T>() -> (Sender<T>, Receiver<T>) {
    new(Flavor::Zero(zero::Channel::new()), Policy::Block)
}

fn new<T>(flavor: Flavor<T>, policy: Policy) -> (Sender<T>, Receiver<T>) {
    // The ring's wait lists are signalled through flags, which lets them
    // cap the wake-ups in flight (`waiters/`).
    let waiters = || match flavor {
        Flavor::Array(_) => WaitList::limited(),
        Flavor::List(_) | Flavor::Zero(_) => WaitList::new(),
    };
    let (send_waiters, recv_waiters) = (waiters(), waiters());
    let chan = Arc::new(Chan {
        flavor,
        policy,
        senders: AtomicUsize::new(1),
        receivers: AtomicUsize::new(1),
        send_waiters,
        recv_waiters,
    });
    (
        Sender {
            chan: chan.clone(),
            sink_pending: None,
            sink_key: None,
            detached: AtomicBool::new(false),
        },
        Receiver {
            chan,
            stream_key: None,
        },
    )
}

impl<T> Unpin for Receiver<T> {}
impl<T> Unpin for Sender<T> {}

#[cfg(all(test, not(loom)))]
mod tests;
