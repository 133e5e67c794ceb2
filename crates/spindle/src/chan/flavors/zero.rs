//! Rendezvous (zero-capacity) channel: direct hand-off, no buffer.
//!
//! A sender parks its value in an *offer* (an entry of a reusable slab under
//! the channel's mutex, the analogue of the `elem` of Go's `sudog`) and
//! sleeps; a receiver takes the oldest offer's value straight out of it and
//! wakes that sender, whose `send` then completes. There is no ring buffer:
//! each value is owned by its sender's offer until a receiver takes it.
//!
//! # Invariants (all under `inner`'s mutex)
//! - `queue` lists, oldest first, the keys of `Offered` entries; an entry is
//!   `Offered` (value present, sender waiting), `Taken` (a receiver took the
//!   value; the sender has yet to see it) or `Free`.
//! - An `Offered` entry's value is dropped or moved exactly once: taken by a
//!   receiver, or reclaimed by its sender (close, timeout, cancellation).
//! - An *orphan* offer (from `try_send`, made only while more receivers are
//!   parked than offers are queued) has no sender; the receiver that takes it
//!   frees it. It is the only way a value sits in the channel without a
//!   sender, and it is never dropped unread except with the channel.
//! - After close, no new offer is made; queued offers can still be taken by
//!   receivers until their senders reclaim them (close wakes every sender).
//!
//! Waking receivers when an offer arrives is done by the caller through the
//! channel's receiver wait list (`chan/mod.rs`); senders are woken through
//! their own entry's waker, always after the mutex is released.

use std::collections::VecDeque;
use std::task::Waker;

use crate::chan::error::TryRecvError;
use crate::loom::{lock, Mutex};

#[derive(PartialEq, Eq, Debug, Clone, Copy)]
enum State {
    Free,
    Offered,
    Taken,
}

struct Offer<T> {
    value: Option<T>,
    waker: Option<Waker>,
    state: State,
    orphan: bool,
}

struct Inner<T> {
    offers: Vec<Offer<T>>,
    free: Vec<usize>,
    queue: VecDeque<usize>,
    closed: bool,
}

impl<T> Inner<T> {
    fn alloc(&mut self, value: T, waker: Option<Waker>, orphan: bool) -> usize {
        let o = Offer {
            value: Some(value),
            waker,
            state: State::Offered,
            orphan,
        };
        let k = match self.free.pop() {
            Some(k) => {
                self.offers[k] = o;
                k
            }
            None => {
                self.offers.push(o);
                self.offers.len() - 1
            }
        };
        self.queue.push_back(k);
        k
    }

    fn release(&mut self, k: usize) {
        self.offers[k].state = State::Free;
        self.offers[k].waker = None;
        self.free.push(k);
    }

    fn unqueue(&mut self, k: usize) {
        if let Some(i) = self.queue.iter().position(|&q| q == k) {
            self.queue.remove(i);
        }
    }
}

/// What a parked send learns when it looks at its offer again.
pub(crate) enum OfferState<T> {
    /// A receiver took the value: the send is complete.
    Taken,
    /// Still waiting.
    Pending,
    /// The channel closed first: here is the value back.
    Closed(T),
}

pub(crate) struct Channel<T> {
    inner: Mutex<Inner<T>>,
}

impl<T> Channel<T> {
    pub(crate) fn new() -> Self {
        Channel {
            inner: Mutex::new(Inner {
                offers: Vec::new(),
                free: Vec::new(),
                queue: VecDeque::new(),
                closed: false,
            }),
        }
    }

    /// Parks `value` in a new offer; `Err` gives it back if closed.
    pub(crate) fn offer(&self, value: T, waker: &Waker) -> Result<usize, T> {
        let mut g = lock(&self.inner);
        if g.closed {
            return Err(value);
        }
        Ok(g.alloc(value, Some(waker.clone()), false))
    }

    /// Offers `value` without a sender, only if more than `parked_receivers`
    /// exceed the queued offers (so someone is there to take it).
    pub(crate) fn try_offer(&self, value: T, parked_receivers: usize) -> Result<(), (T, bool)> {
        let mut g = lock(&self.inner);
        if g.closed {
            return Err((value, true));
        }
        if parked_receivers <= g.queue.len() {
            return Err((value, false));
        }
        g.alloc(value, None, true);
        Ok(())
    }

    /// Looks at offer `k` again on behalf of its sender.
    pub(crate) fn poll_offer(&self, k: usize, waker: &Waker) -> OfferState<T> {
        let mut g = lock(&self.inner);
        match g.offers[k].state {
            State::Taken => {
                g.release(k);
                OfferState::Taken
            }
            State::Offered if g.closed => {
                let v = g.offers[k].value.take();
                g.unqueue(k);
                g.release(k);
                OfferState::Closed(v.expect("offered entry holds its value"))
            }
            State::Offered => {
                let o = &mut g.offers[k];
                if !o.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                    o.waker = Some(waker.clone());
                }
                OfferState::Pending
            }
            State::Free => unreachable!("offer key used after release"),
        }
    }

    /// Withdraws offer `k` (its sender gave up). Returns the value if no
    /// receiver took it (`None`: it was delivered).
    pub(crate) fn withdraw(&self, k: usize) -> Option<T> {
        let mut g = lock(&self.inner);
        let v = match g.offers[k].state {
            State::Offered => {
                g.unqueue(k);
                g.offers[k].value.take()
            }
            _ => None,
        };
        g.release(k);
        v
    }

    pub(crate) fn try_pop(&self) -> Result<T, TryRecvError> {
        let (v, waker) = {
            let mut g = lock(&self.inner);
            let Some(k) = g.queue.pop_front() else {
                return Err(if g.closed {
                    TryRecvError::Closed
                } else {
                    TryRecvError::Empty
                });
            };
            let v = g.offers[k]
                .value
                .take()
                .expect("queued offer holds its value");
            let w = g.offers[k].waker.take();
            if g.offers[k].orphan {
                g.release(k);
            } else {
                g.offers[k].state = State::Taken;
            }
            (v, w)
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(v)
    }

    /// Closes; wakes every parked sender so that it reclaims its value.
    pub(crate) fn close(&self) -> bool {
        let wakers: Vec<Waker> = {
            let mut g = lock(&self.inner);
            if g.closed {
                return false;
            }
            g.closed = true;
            let Inner { queue, offers, .. } = &mut *g;
            queue
                .iter()
                .filter_map(|&k| offers[k].waker.take())
                .collect()
        };
        for w in wakers {
            w.wake();
        }
        true
    }

    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.inner).closed
    }

    /// Offers waiting to be taken.
    pub(crate) fn len(&self) -> usize {
        lock(&self.inner).queue.len()
    }
}
