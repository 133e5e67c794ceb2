//! Rendezvous (zero-capacity) channel: direct hand-off, no buffer.
//!
//! Both sides can park, as in Go's `hchan` (`sendq`/`recvq`):
//! - a receiver that finds no sender parks a *taker* (an entry with an empty
//!   slot, the analogue of a receiving `sudog`); a sender that finds a parked
//!   taker puts its value straight into the taker's slot, wakes it, and its
//!   send is complete at once, without parking;
//! - a sender that finds no taker parks its value in an *offer* and sleeps;
//!   a receiver takes the oldest offer's value straight out of it and wakes
//!   that sender, whose `send` then completes.
//!
//! There is no ring buffer: each value is owned by its sender's offer or by
//! its taker's slot, never by the channel.
//!
//! # Invariants (all under `inner`'s lock, a spin lock: `chan/spin.rs`)
//! - `queue` lists, oldest first, the keys of `Offered` offers; an offer is
//!   `Offered` (value present, sender waiting), `Taken` (a receiver took the
//!   value; the sender has yet to see it) or `Free`.
//! - `takers_waiting` lists, oldest first, the keys of `Waiting` takers; a
//!   taker is `Waiting` (slot empty, receiver parked), `Filled` (a sender put
//!   its value in; the receiver has yet to see it) or `Free`.
//! - Never both a queued offer and a waiting taker: a sender gives to a
//!   waiting taker before it offers, a receiver takes an offer before it
//!   parks a taker, each under the lock.
//! - A value is moved exactly once out of an offer or a filled taker: taken
//!   by a receiver, or reclaimed by its sender (close, timeout,
//!   cancellation); a filled taker whose receive is cancelled passes the
//!   value to the next waiting taker, or else queues it first in line as an
//!   *orphan* offer (no sender), which the receiver that takes it frees.
//! - After close, no new offer or gift is made; queued offers can still be
//!   taken until their senders reclaim them (close wakes every sender and
//!   every taker; a waiting taker then sees `Closed`, a filled one its value).
//!
//! Every waker is woken after the lock is released.
//!
use std::collections::VecDeque;
use std::task::{Poll, Waker};

use crate::chan::error::{RecvError, TryRecvError};
use crate::chan::spin::ChanLock;

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

#[derive(PartialEq, Eq, Debug, Clone, Copy)]
enum TakerState {
    Free,
    Waiting,
    Filled,
}

struct Taker<T> {
    slot: Option<T>,
    waker: Option<Waker>,
    state: TakerState,
}

struct Inner<T> {
    offers: Vec<Offer<T>>,
    free: Vec<usize>,
    queue: VecDeque<usize>,
    takers: Vec<Taker<T>>,
    free_takers: Vec<usize>,
    takers_waiting: VecDeque<usize>,
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
        match self.free.pop() {
            Some(k) => {
                self.offers[k] = o;
                k
            }
            None => {
                self.offers.push(o);
                self.offers.len() - 1
            }
        }
    }

    fn release(&mut self, k: usize) {
        self.offers[k].state = State::Free;
        self.offers[k].waker = None;
        self.free.push(k);
    }

    fn unqueue(&mut self, k: usize) {
        remove_key(&mut self.queue, k);
    }

    /// Puts `value` into the oldest waiting taker; returns its waker, or the
    /// value back when no taker waits.
    fn give(&mut self, value: T) -> Result<Option<Waker>, T> {
        let Some(k) = self.takers_waiting.pop_front() else {
            return Err(value);
        };
        let t = &mut self.takers[k];
        t.slot = Some(value);
        t.state = TakerState::Filled;
        Ok(t.waker.take())
    }

    /// Takes the oldest offer's value; returns it with its sender's waker.
    fn take_offer(&mut self) -> Option<(T, Option<Waker>)> {
        let k = self.queue.pop_front()?;
        let v = self.offers[k]
            .value
            .take()
            .expect("queued offer holds its value");
        let w = self.offers[k].waker.take();
        if self.offers[k].orphan {
            self.release(k);
        } else {
            self.offers[k].state = State::Taken;
        }
        Some((v, w))
    }

    fn release_taker(&mut self, k: usize) {
        let t = &mut self.takers[k];
        t.state = TakerState::Free;
        t.waker = None;
        self.free_takers.push(k);
    }

    fn unqueue_taker(&mut self, k: usize) {
        remove_key(&mut self.takers_waiting, k);
    }
}

/// Removes key `k` from a FIFO of keys, if it is there.
fn remove_key(q: &mut VecDeque<usize>, k: usize) {
    if let Some(i) = q.iter().position(|&x| x == k) {
        q.remove(i);
    }
}

/// What a send learns from the channel.
pub(crate) enum SendState<T> {
    /// A parked receiver has the value: the send is complete.
    Given,
    /// The value waits in offer `key` for a receiver.
    Offered(usize),
    /// No receiver waits and the caller asked not to offer: the value back.
    NotNow(T),
    /// The channel is closed: the value back.
    Closed(T),
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
    inner: ChanLock<Inner<T>>,
}

impl<T> Channel<T> {
    pub(crate) fn new() -> Self {
        Channel {
            inner: ChanLock::new(Inner {
                offers: Vec::new(),
                free: Vec::new(),
                queue: VecDeque::new(),
                takers: Vec::new(),
                free_takers: Vec::new(),
                takers_waiting: VecDeque::new(),
                closed: false,
            }),
        }
    }

    /// Sends `value`: straight into a parked receiver when one waits; else,
    /// if `may_offer`, parks it in a new offer woken through `waker`.
    pub(crate) fn send(&self, value: T, waker: &Waker, may_offer: bool) -> SendState<T> {
        let woken = {
            let mut g = self.inner.lock();
            if g.closed {
                return SendState::Closed(value);
            }
            match g.give(value) {
                Ok(w) => w,
                Err(value) if !may_offer => return SendState::NotNow(value),
                Err(value) => {
                    let k = g.alloc(value, Some(waker.clone()), false);
                    g.queue.push_back(k);
                    return SendState::Offered(k);
                }
            }
        };
        if let Some(w) = woken {
            w.wake();
        }
        SendState::Given
    }

    /// Gives `value` to a parked receiver, if one waits (`try_send`).
    /// `Err((value, closed))` otherwise.
    pub(crate) fn try_give(&self, value: T) -> Result<(), (T, bool)> {
        let woken = {
            let mut g = self.inner.lock();
            if g.closed {
                return Err((value, true));
            }
            g.give(value).map_err(|v| (v, false))?
        };
        if let Some(w) = woken {
            w.wake();
        }
        Ok(())
    }

    /// Looks at offer `k` again on behalf of its sender.
    pub(crate) fn poll_offer(&self, k: usize, waker: &Waker) -> OfferState<T> {
        let mut g = self.inner.lock();
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
        let mut g = self.inner.lock();
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

    /// Takes the oldest offer without waiting.
    pub(crate) fn try_pop(&self) -> Result<T, TryRecvError> {
        let (v, waker) = {
            let mut g = self.inner.lock();
            match g.take_offer() {
                Some(got) => got,
                None if g.closed => return Err(TryRecvError::Closed),
                None => return Err(TryRecvError::Empty),
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(v)
    }

    /// One poll of a receive. `key` is its taker while parked. With
    /// `may_park` false (a probing `select!`), an empty channel gives
    /// `Pending` without parking a taker.
    pub(crate) fn poll_take(
        &self,
        key: &mut Option<usize>,
        waker: &Waker,
        may_park: bool,
    ) -> Poll<Result<T, RecvError>> {
        let (got, sender) = {
            let mut g = self.inner.lock();
            if let Some(k) = *key {
                if g.takers[k].state == TakerState::Filled {
                    let v = g.takers[k].slot.take().expect("filled taker holds a value");
                    g.release_taker(k);
                    *key = None;
                    return Poll::Ready(Ok(v));
                }
            }
            // Never both a waiting taker and an offer (module docs): a
            // parked taker finds none here unless it is this one's turn.
            match g.take_offer() {
                Some((v, w)) => {
                    if let Some(k) = key.take() {
                        g.unqueue_taker(k);
                        g.release_taker(k);
                    }
                    (Ok(v), w)
                }
                None if g.closed => {
                    if let Some(k) = key.take() {
                        g.unqueue_taker(k);
                        g.release_taker(k);
                    }
                    (Err(RecvError), None)
                }
                None => {
                    match *key {
                        Some(k) => {
                            let t = &mut g.takers[k];
                            if !t.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
                                t.waker = Some(waker.clone());
                            }
                        }
                        None if !may_park => {}
                        None => {
                            let t = Taker {
                                slot: None,
                                waker: Some(waker.clone()),
                                state: TakerState::Waiting,
                            };
                            let k = match g.free_takers.pop() {
                                Some(k) => {
                                    g.takers[k] = t;
                                    k
                                }
                                None => {
                                    g.takers.push(t);
                                    g.takers.len() - 1
                                }
                            };
                            g.takers_waiting.push_back(k);
                            *key = Some(k);
                        }
                    }
                    return Poll::Pending;
                }
            }
        };
        if let Some(w) = sender {
            w.wake();
        }
        Poll::Ready(got)
    }

    /// Gives up the receive parked as taker `k`. A value a sender already
    /// put there is not lost: it goes to the next waiting taker, or first in
    /// line as an orphan offer.
    pub(crate) fn cancel_take(&self, k: usize) {
        let woken = {
            let mut g = self.inner.lock();
            let v = match g.takers[k].state {
                TakerState::Filled => g.takers[k].slot.take(),
                _ => {
                    g.unqueue_taker(k);
                    None
                }
            };
            g.release_taker(k);
            match v.map(|v| g.give(v)) {
                Some(Ok(w)) => w,
                Some(Err(v)) => {
                    let o = g.alloc(v, None, true);
                    g.queue.push_front(o);
                    None
                }
                None => None,
            }
        };
        if let Some(w) = woken {
            w.wake();
        }
    }

    /// Closes; wakes every parked sender (to reclaim its value) and every
    /// parked receiver (to see the close).
    pub(crate) fn close(&self) -> bool {
        let wakers: Vec<Waker> = {
            let mut g = self.inner.lock();
            if g.closed {
                return false;
            }
            g.closed = true;
            let Inner {
                queue,
                offers,
                takers_waiting,
                takers,
                ..
            } = &mut *g;
            queue
                .iter()
                .filter_map(|&k| offers[k].waker.take())
                .chain(
                    takers_waiting
                        .iter()
                        .filter_map(|&k| takers[k].waker.take()),
                )
                .collect()
        };
        for w in wakers {
            w.wake();
        }
        true
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.inner.lock().closed
    }

    /// Offers waiting to be taken.
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().queue.len()
    }
}
