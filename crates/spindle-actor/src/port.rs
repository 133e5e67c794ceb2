//! A graph channel: its ring, its two ends, its wiring and its counters
//! ([`ChannelShared`]), and the cloneable handles that actors lock
//! ([`TxHandle`], [`RxHandle`]).
//!
//! # Invariants
//! - Each end lives in a slot that is `Free` (nobody holds it), `Held` (a
//!   locked [`Tx`]/[`Rx`] owns it) or `Retired` (its actor stopped: the
//!   producer was dropped, which closed the ring, or the consumer was
//!   dropped, which tells the producer nobody reads). A held end returns to
//!   its slot when the lock is dropped, also when an actor's future is
//!   dropped after a panic; that is how ends survive restarts.
//! - Retiring a held end is deferred to its release (`retire_on_release`),
//!   so the ring is closed only after the holder's last publish.
//! - `writer` / `reader` are set once, when the actor declaring the end is
//!   added to the graph; a second actor declaring the same end is a graph
//!   error (the rings are single-producer single-consumer).
//! - Poison tracking (consumer side): when an `Rx` is released while a
//!   message is peeked but not advanced past, the position of that message
//!   is recorded; a failure of the reader with the same position recorded
//!   `poison_after` times in a row moves that message to the dead-letter
//!   sink (or drops it, counting it, when there is none).
//! - A failure while a run of several messages was peeked (`peek_slots`)
//!   names no culprit: the reader's next peeks expose one message at a
//!   time until it is past that run (`one_by_one_until`), so the poison
//!   count falls on the message that fails alone. (Were it to fall on the
//!   run's head, innocent messages would be dead-lettered a few failures at
//!   a time until the bad one reached the head.)

use crate::loom::lock_std;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::actor::{self, ActorCell};
use crate::error::PortError;
use crate::ring::{self, Consumer, Producer, Ring};
use crate::rx::Rx;
use crate::tx::Tx;

pub(crate) enum EndSlot<E> {
    Free(E),
    Held { retire_on_release: bool },
    Retired,
}

/// The consumer end plus what the supervisor needs to survive a panic.
pub(crate) struct ConsumerState<T> {
    pub(crate) cons: Consumer<T>,
    /// How many messages, from the head, the last peek exposed and were
    /// not advanced past (0: none).
    pub(crate) peeked: usize,
    /// Set on release: the head position and `peeked`, if that was not 0.
    pub(crate) peeked_at_release: Option<(u64, usize)>,
    poison_pos: u64,
    poison_count: u32,
    /// Peeks expose one message at a time while the head is below this
    /// position (module docs).
    pub(crate) one_by_one_until: Option<u64>,
}

pub(crate) struct ChannelShared<T> {
    pub(crate) name: String,
    pub(crate) batch: usize,
    /// The ring's own `Arc` (loom's under `--cfg loom`).
    pub(crate) ring: crate::loom::Arc<Ring<T>>,
    producer: Mutex<EndSlot<Producer<T>>>,
    consumer: Mutex<EndSlot<ConsumerState<T>>>,
    pub(crate) writer: OnceLock<Arc<ActorCell>>,
    pub(crate) reader: OnceLock<Arc<ActorCell>>,
    dead_letter: Mutex<Option<spindle::chan::Sender<T>>>,
    dead_letters: AtomicU64,
    /// Dead letters no sink took (none set, or it was full or closed).
    dead_letters_dropped: AtomicU64,
}

impl<T: Send + 'static> ChannelShared<T> {
    pub(crate) fn new(
        name: String,
        capacity: usize,
        batch: usize,
        dead_letter: Option<spindle::chan::Sender<T>>,
    ) -> Arc<ChannelShared<T>> {
        let (p, c) = ring::ring(capacity);
        Arc::new(ChannelShared {
            name,
            batch,
            ring: p.ring().clone(),
            producer: Mutex::new(EndSlot::Free(p)),
            consumer: Mutex::new(EndSlot::Free(ConsumerState {
                cons: c,
                peeked: 0,
                peeked_at_release: None,
                poison_pos: 0,
                poison_count: 0,
                one_by_one_until: None,
            })),
            writer: OnceLock::new(),
            reader: OnceLock::new(),
            dead_letter: Mutex::new(dead_letter),
            dead_letters: AtomicU64::new(0),
            dead_letters_dropped: AtomicU64::new(0),
        })
    }
}

impl<T> ChannelShared<T> {
    fn check_owner(
        &self,
        owner: &OnceLock<Arc<ActorCell>>,
        end: &'static str,
    ) -> Result<(), PortError> {
        if let Some(cur) = actor::current() {
            match owner.get() {
                Some(o) if Arc::ptr_eq(o, &cur) => {}
                _ => {
                    return Err(PortError::NotWired {
                        channel: self.name.clone(),
                        end,
                        actor: cur.name.clone(),
                    })
                }
            }
        }
        Ok(())
    }

    pub(crate) fn release_producer(&self, p: Producer<T>) {
        let mut g = lock_std(&self.producer);
        match *g {
            EndSlot::Held {
                retire_on_release: true,
            } => {
                *g = EndSlot::Retired;
                drop(g);
                drop(p); // closes the ring, after the holder's last publish
            }
            _ => *g = EndSlot::Free(p),
        }
    }

    pub(crate) fn release_consumer(&self, mut st: ConsumerState<T>) {
        st.peeked_at_release = (st.peeked > 0).then(|| (st.cons.head(), st.peeked));
        st.peeked = 0;
        let mut g = lock_std(&self.consumer);
        match *g {
            EndSlot::Held {
                retire_on_release: true,
            } => {
                *g = EndSlot::Retired;
                drop(g);
                drop(st);
            }
            _ => *g = EndSlot::Free(st),
        }
    }
}

/// Type-erased view of a channel for the graph, the supervisor and
/// telemetry.
pub(crate) trait ChannelInfo: Send + Sync {
    fn name(&self) -> &str;
    fn capacity(&self) -> usize;
    fn batch(&self) -> usize;
    fn sent(&self) -> u64;
    fn taken(&self) -> u64;
    fn is_closed(&self) -> bool;
    fn dead_letters(&self) -> u64;
    fn dead_letters_dropped(&self) -> u64;
    fn writer(&self) -> Option<&Arc<ActorCell>>;
    fn reader(&self) -> Option<&Arc<ActorCell>>;
    /// Wires the writing actor; `Err(first)` when another one has it.
    fn set_writer(&self, cell: &Arc<ActorCell>) -> Result<(), String>;
    /// Wires the reading actor; `Err(first)` when another one has it.
    fn set_reader(&self, cell: &Arc<ActorCell>) -> Result<(), String>;
    /// The writer stopped: close the ring (now, or when its lock is released).
    fn retire_writer(&self);
    /// The reader stopped: drop the consumer (the writer's waits end).
    fn retire_reader(&self);
    /// The reader failed: count the failure against the peeked message and
    /// dead-letter it after `limit` failures on it. Returns the position
    /// dead-lettered, if one was.
    fn after_reader_failure(&self, limit: u32) -> Option<u64>;
}

fn set_once(slot: &OnceLock<Arc<ActorCell>>, cell: &Arc<ActorCell>) -> Result<(), String> {
    match slot.set(cell.clone()) {
        Ok(()) => Ok(()),
        Err(_) => {
            let first = slot.get().expect("set");
            if Arc::ptr_eq(first, cell) {
                Ok(()) // declared twice by the same actor
            } else {
                Err(first.name.clone())
            }
        }
    }
}

impl<T: Send + 'static> ChannelInfo for ChannelShared<T> {
    fn name(&self) -> &str {
        &self.name
    }
    fn capacity(&self) -> usize {
        self.ring.capacity()
    }
    fn batch(&self) -> usize {
        self.batch
    }
    fn sent(&self) -> u64 {
        self.ring.sent()
    }
    fn taken(&self) -> u64 {
        self.ring.taken()
    }
    fn is_closed(&self) -> bool {
        self.ring.is_closed()
    }
    fn dead_letters(&self) -> u64 {
        self.dead_letters.load(Ordering::Relaxed)
    }
    fn dead_letters_dropped(&self) -> u64 {
        self.dead_letters_dropped.load(Ordering::Relaxed)
    }
    fn writer(&self) -> Option<&Arc<ActorCell>> {
        self.writer.get()
    }
    fn reader(&self) -> Option<&Arc<ActorCell>> {
        self.reader.get()
    }
    fn set_writer(&self, cell: &Arc<ActorCell>) -> Result<(), String> {
        set_once(&self.writer, cell)
    }
    fn set_reader(&self, cell: &Arc<ActorCell>) -> Result<(), String> {
        set_once(&self.reader, cell)
    }

    fn retire_writer(&self) {
        let mut g = lock_std(&self.producer);
        match std::mem::replace(&mut *g, EndSlot::Retired) {
            EndSlot::Free(p) => {
                drop(g);
                drop(p);
            }
            EndSlot::Held { .. } => {
                *g = EndSlot::Held {
                    retire_on_release: true,
                }
            }
            EndSlot::Retired => {}
        }
    }

    fn retire_reader(&self) {
        let mut g = lock_std(&self.consumer);
        match std::mem::replace(&mut *g, EndSlot::Retired) {
            EndSlot::Free(c) => {
                drop(g);
                drop(c);
            }
            EndSlot::Held { .. } => {
                *g = EndSlot::Held {
                    retire_on_release: true,
                }
            }
            EndSlot::Retired => {}
        }
    }

    fn after_reader_failure(&self, limit: u32) -> Option<u64> {
        let mut g = lock_std(&self.consumer);
        let EndSlot::Free(st) = &mut *g else {
            return None;
        };
        let (pos, run) = st.peeked_at_release.take()?;
        if run > 1 {
            // Which of the run failed is unknown: the next runs peek one at
            // a time past it, and the count starts on the one that fails.
            st.one_by_one_until = Some(pos + run as u64);
            st.poison_count = 0;
            return None;
        }
        if st.poison_count > 0 && st.poison_pos == pos {
            st.poison_count += 1;
        } else {
            st.poison_pos = pos;
            st.poison_count = 1;
        }
        if st.poison_count < limit.max(1) {
            return None;
        }
        st.poison_count = 0;
        let msg = st.cons.try_pop()?;
        drop(g);
        self.dead_letters.fetch_add(1, Ordering::Relaxed);
        let sink = lock_std(&self.dead_letter).clone();
        // No sink, or a full or closed one, drops the message: counted as
        // lost (a report with any is not clean).
        if sink.is_none_or(|tx| tx.try_send(msg).is_err()) {
            self.dead_letters_dropped.fetch_add(1, Ordering::Relaxed);
        }
        Some(pos)
    }
}

/// The writing end of a graph channel, as wired: clone it into the actor's
/// closure and [`lock`](TxHandle::lock) it at the start of each run.
pub struct TxHandle<T> {
    pub(crate) shared: Arc<ChannelShared<T>>,
}

/// The reading end of a graph channel, as wired: clone it into the actor's
/// closure and [`lock`](RxHandle::lock) it at the start of each run.
pub struct RxHandle<T> {
    pub(crate) shared: Arc<ChannelShared<T>>,
}

impl<T> Clone for TxHandle<T> {
    fn clone(&self) -> Self {
        TxHandle {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Clone for RxHandle<T> {
    fn clone(&self) -> Self {
        RxHandle {
            shared: self.shared.clone(),
        }
    }
}

impl<T> TxHandle<T> {
    /// Takes the end for this actor run. It returns to the handle when the
    /// [`Tx`] is dropped (also when the run panics), so the next run of the
    /// actor locks it again.
    ///
    /// Errors: [`PortError::NotWired`] when called from an actor that did
    /// not declare it with `ActorBuilder::writes`; [`PortError::InUse`]
    /// when locked already; [`PortError::Retired`] once its actor stopped.
    pub fn lock(&self) -> Result<Tx<T>, PortError> {
        let s = &self.shared;
        s.check_owner(&s.writer, "write")?;
        let mut g = lock_std(&s.producer);
        match std::mem::replace(
            &mut *g,
            EndSlot::Held {
                retire_on_release: false,
            },
        ) {
            EndSlot::Free(p) => Ok(Tx::new(s.clone(), p)),
            other => {
                let held = matches!(other, EndSlot::Held { .. });
                *g = other;
                Err(if held {
                    PortError::InUse {
                        channel: s.name.clone(),
                        end: "write",
                    }
                } else {
                    PortError::Retired {
                        channel: s.name.clone(),
                        end: "write",
                    }
                })
            }
        }
    }

    /// The channel's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Messages ever sent on the channel.
    pub fn sent(&self) -> u64 {
        self.shared.ring.sent()
    }
}

impl<T> RxHandle<T> {
    /// Takes the end for this actor run; see [`TxHandle::lock`]. A message
    /// peeked and not advanced past stays at the head when the [`Rx`] is
    /// dropped, so the next run sees it again.
    pub fn lock(&self) -> Result<Rx<T>, PortError> {
        let s = &self.shared;
        s.check_owner(&s.reader, "read")?;
        let mut g = lock_std(&s.consumer);
        match std::mem::replace(
            &mut *g,
            EndSlot::Held {
                retire_on_release: false,
            },
        ) {
            EndSlot::Free(c) => Ok(Rx::new(s.clone(), c)),
            other => {
                let held = matches!(other, EndSlot::Held { .. });
                *g = other;
                Err(if held {
                    PortError::InUse {
                        channel: s.name.clone(),
                        end: "read",
                    }
                } else {
                    PortError::Retired {
                        channel: s.name.clone(),
                        end: "read",
                    }
                })
            }
        }
    }

    /// The channel's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Messages ever taken from the channel.
    pub fn taken(&self) -> u64 {
        self.shared.ring.taken()
    }

    /// Messages dead-lettered from this channel by the poison policy.
    pub fn dead_letters(&self) -> u64 {
        self.shared.dead_letters.load(Ordering::Relaxed)
    }
}

impl<T> fmt::Debug for TxHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxHandle")
            .field("channel", &self.shared.name)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for RxHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RxHandle")
            .field("channel", &self.shared.name)
            .finish_non_exhaustive()
    }
}
