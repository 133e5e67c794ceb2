//! The out-of-line polls of a bounded, unbounded or rendezvous channel:
//! try, spin briefly, register on a wait list, re-check. The futures in
//! `send.rs` and `recv.rs` inline only their fast paths and call these.

use std::task::{Context, Poll};

use super::backoff::Backoff;
use super::error::{RecvError, SendError, TryRecvError, TrySendError};
use super::flavors::{array, zero};
use super::select;
use super::shared::{Chan, FastPath, Flavor};
use super::Policy;

impl<T> Chan<T> {
    /// One poll of a receive: try, spin briefly, park, re-check. Out of
    /// line: the futures inline only their fast paths, and pass on what
    /// theirs saw: after [`FastPath::Idle`] the first try is skipped (the
    /// re-check after registering still comes), after [`FastPath::Busy`] it
    /// starts at the ring's slow path.
    #[inline(never)]
    pub(super) fn poll_recv(
        &self,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
        mut fast: FastPath,
    ) -> Poll<Result<T, RecvError>> {
        if let Flavor::Zero(z) = &self.flavor {
            return z.poll_take(key, cx.waker(), !select::probing(cx));
        }
        let mut backoff: Option<Backoff> = None;
        let mut registered = false;
        loop {
            let fast = std::mem::replace(&mut fast, FastPath::NotTried);
            if fast != FastPath::Idle {
                let done = match self.try_recv_after(fast) {
                    Ok(v) => Some(Ok(v)),
                    Err(TryRecvError::Closed) => Some(Err(RecvError)),
                    Err(TryRecvError::Empty) => None,
                };
                if let Some(got) = done {
                    self.recv_done(key);
                    return Poll::Ready(got);
                }
            }
            if registered || select::probing(cx) {
                return Poll::Pending;
            }
            registered = wait_step(&mut backoff, || self.park_recv(key, cx.waker()));
        }
    }

    pub(super) fn poll_recv_batch(
        &self,
        key: &mut Option<usize>,
        out: &mut Vec<T>,
        max: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<usize, RecvError>> {
        if max == 0 {
            return Poll::Ready(Ok(0));
        }
        if let Flavor::Zero(z) = &self.flavor {
            // The first value as a single receive (it may park), then
            // whatever other offers are already queued.
            return z.poll_take(key, cx.waker(), true).map(|r| {
                out.push(r?);
                let mut n = 1;
                while n < max {
                    match z.try_pop() {
                        Ok(v) => out.push(v),
                        Err(_) => break,
                    }
                    n += 1;
                }
                Ok(n)
            });
        }
        for round in 0..2 {
            match self.try_recv_batch(out, max) {
                Ok(n) => {
                    self.recv_done(key);
                    return Poll::Ready(Ok(n));
                }
                Err(TryRecvError::Closed) => {
                    self.recv_done(key);
                    return Poll::Ready(Err(RecvError));
                }
                Err(TryRecvError::Empty) if round == 0 => self.park_recv(key, cx.waker()),
                Err(TryRecvError::Empty) => {}
            }
        }
        Poll::Pending
    }

    /// One poll of a send. `value` is `Some` until the value is placed or
    /// handed back; `key` is the wait key (array), or the offer key (zero).
    /// Out of line, and `fast` as in [`Chan::poll_recv`].
    #[inline(never)]
    pub(super) fn poll_send(
        &self,
        value: &mut Option<T>,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
        mut fast: FastPath,
    ) -> Poll<Result<(), SendError<T>>> {
        if let Flavor::Zero(z) = &self.flavor {
            return self.poll_send_zero(z, value, key, cx);
        }
        let mut backoff: Option<Backoff> = None;
        let mut registered = false;
        loop {
            let fast = std::mem::replace(&mut fast, FastPath::NotTried);
            if fast != FastPath::Idle {
                let v = value.take().expect("send polled after completion");
                match self.try_send_after(v, fast) {
                    Ok(()) => {
                        self.send_done(key);
                        return Poll::Ready(Ok(()));
                    }
                    Err(TrySendError::Closed(v)) => {
                        self.send_done(key);
                        return Poll::Ready(Err(SendError(v)));
                    }
                    Err(TrySendError::Full(v)) => *value = Some(v),
                }
            }
            if registered || select::probing(cx) {
                return Poll::Pending;
            }
            registered = wait_step(&mut backoff, || self.park_send(key, cx.waker()));
        }
    }

    /// A rendezvous send's poll. Inlined into the futures: a parked send
    /// whose offer was taken learns it from one load (`zero/mod.rs`, "Taken
    /// without the lock") without the call; the rest is out of line.
    #[inline(always)]
    pub(super) fn poll_send_zero(
        &self,
        z: &zero::Channel<T>,
        value: &mut Option<T>,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<T>>> {
        if let Some(t) = *key {
            if z.taken(t) {
                *key = None;
                return Poll::Ready(Ok(()));
            }
        }
        self.poll_send_zero_slow(z, value, key, cx)
    }

    #[inline(never)]
    pub(super) fn poll_send_zero_slow(
        &self,
        z: &zero::Channel<T>,
        value: &mut Option<T>,
        key: &mut Option<usize>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<T>>> {
        match *key {
            None => {
                let v = value.take().expect("send polled after completion");
                // A probing select does not offer: an offer may be taken
                // at once, which would commit this arm before the others
                // ran. Handing to a parked receiver completes it, fine.
                match z.send(v, cx.waker(), !select::probing(cx)) {
                    zero::SendState::Given => Poll::Ready(Ok(())),
                    zero::SendState::Offered(k) => {
                        *key = Some(k);
                        Poll::Pending
                    }
                    zero::SendState::NotNow(v) => {
                        *value = Some(v);
                        Poll::Pending
                    }
                    zero::SendState::Closed(v) => Poll::Ready(Err(SendError(v))),
                }
            }
            Some(k) => match z.poll_offer(k, cx.waker()) {
                zero::OfferState::Taken => {
                    *key = None;
                    Poll::Ready(Ok(()))
                }
                zero::OfferState::Closed(v) => {
                    *key = None;
                    Poll::Ready(Err(SendError(v)))
                }
                zero::OfferState::Pending => Poll::Pending,
            },
        }
    }

    /// Gives up a send: returns the value if it was not delivered.
    pub(super) fn abandon_send(&self, value: &mut Option<T>, key: &mut Option<usize>) -> Option<T> {
        match &self.flavor {
            Flavor::Zero(z) => match key.take() {
                Some(k) => z.withdraw(k),
                None => value.take(),
            },
            _ => {
                self.send_waiters.cancel(key, self.send_signal());
                value.take()
            }
        }
    }

    /// One poll of a batch send: places as many items as there is room for,
    /// wakes the receivers that need it, and registers (then re-checks once)
    /// when the ring is full. Placed items leave `items` from the front.
    pub(super) fn poll_send_batch(
        &self,
        items: &mut std::collections::VecDeque<T>,
        key: &mut Option<usize>,
        zero_value: &mut Option<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<Vec<T>>>> {
        if let Flavor::Zero(_) = &self.flavor {
            return self.poll_send_batch_zero(items, key, zero_value, cx);
        }
        let mut registered = false;
        loop {
            if items.is_empty() {
                self.send_done(key);
                return Poll::Ready(Ok(()));
            }
            let Ok(placed) = self.place_batch(items) else {
                self.send_done(key);
                return Poll::Ready(Err(SendError(std::mem::take(items).into())));
            };
            if placed.receivers_parked {
                self.recv_waiters
                    .notify_many(placed.count, self.recv_signal());
            }
            if items.is_empty() {
                self.send_done(key);
                return Poll::Ready(Ok(()));
            }
            if placed.count == 0 {
                if registered {
                    return Poll::Pending;
                }
                // Register, then re-check on the next round.
                self.park_send(key, cx.waker());
                registered = true;
            }
        }
    }

    /// A rendezvous batch: a run of single offers, `zero_value` the one in
    /// flight.
    fn poll_send_batch_zero(
        &self,
        items: &mut std::collections::VecDeque<T>,
        key: &mut Option<usize>,
        zero_value: &mut Option<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<Vec<T>>>> {
        loop {
            if zero_value.is_none() && key.is_none() {
                match items.pop_front() {
                    Some(v) => *zero_value = Some(v),
                    None => return Poll::Ready(Ok(())),
                }
            }
            match self.poll_send(zero_value, key, cx, FastPath::NotTried) {
                Poll::Ready(Ok(())) => continue,
                Poll::Ready(Err(SendError(v))) => {
                    items.push_front(v);
                    return Poll::Ready(Err(SendError(std::mem::take(items).into())));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Places items from the front of `items` into a list or ring without
    /// waiting. `Err(Closed)` when the channel is closed (the close woke
    /// every parked receiver).
    fn place_batch(&self, items: &mut std::collections::VecDeque<T>) -> Result<Placed, Closed> {
        match &self.flavor {
            Flavor::List(l) => l.push_all(items).map_err(|()| Closed).map(|count| Placed {
                count,
                receivers_parked: count > 0,
            }),
            Flavor::Array(_) if self.policy != Policy::Block => {
                // Drop policies never leave an item waiting; `try_send`
                // notifies per item.
                while let Some(v) = items.pop_front() {
                    if let Err(e) = self.try_send(v) {
                        items.push_front(e.into_inner());
                        return Err(Closed);
                    }
                }
                Ok(Placed::default())
            }
            Flavor::Array(a) => place_in_ring(a, items),
            Flavor::Zero(_) => unreachable!("a rendezvous batch is sent one offer at a time"),
        }
    }
}

/// What [`Chan::place_batch`] placed.
#[derive(Default)]
struct Placed {
    count: usize,
    /// Whether a claim saw parked receivers, which then need waking.
    receivers_parked: bool,
}

/// The channel was closed while placing a batch.
struct Closed;

/// Places runs of items into the ring `a` until it is full or `items` is
/// empty.
fn place_in_ring<T>(
    a: &array::Channel<T>,
    items: &mut std::collections::VecDeque<T>,
) -> Result<Placed, Closed> {
    let mut placed = Placed::default();
    loop {
        match a.push_run(items) {
            Err(()) => return Err(Closed),
            Ok((0, _)) => {
                // Full, or a slot mid-read: one precise try.
                let Some(v) = items.pop_front() else {
                    return Ok(placed);
                };
                match a.try_push(v) {
                    Ok(parked) => {
                        placed.count += 1;
                        placed.receivers_parked |= parked;
                    }
                    Err(TrySendError::Full(v)) => {
                        items.push_front(v);
                        return Ok(placed);
                    }
                    Err(TrySendError::Closed(v)) => {
                        items.push_front(v);
                        return Err(Closed);
                    }
                }
            }
            Ok((k, parked)) => {
                placed.count += k;
                placed.receivers_parked |= parked;
            }
        }
        if items.is_empty() {
            return Ok(placed);
        }
    }
}

/// One step of waiting after a try that failed: spin a little (never on a
/// scheduler thread, see `Backoff::for_poll`), and once that is done,
/// `register` and return `true`. The caller then re-checks once more: from
/// registration on, a change either shows in that re-check or wakes the
/// waiter (`waiters/`).
pub(super) fn wait_step(backoff: &mut Option<Backoff>, register: impl FnOnce()) -> bool {
    let b = backoff.get_or_insert_with(Backoff::for_poll);
    if b.is_done() {
        register();
        true
    } else {
        b.snooze();
        false
    }
}
