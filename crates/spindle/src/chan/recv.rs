//! The receive futures: [`Recv`] and [`RecvBatch`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::error::RecvError;
use super::flavors::array;
use super::select;
use super::shared::{Chan, FastPath, Flavor};

/// A ring slot whose message a receive future is returning: dropped after
/// the return value is built (`array::Claim`), it frees the slot, then
/// wakes a parked sender if the claim saw one.
struct TakenSlot<'a, T> {
    pub(super) claim: array::Claim<'a, T>,
    pub(super) chan: &'a Chan<T>,
}

impl<T> Drop for TakenSlot<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        self.claim.release();
        self.chan
            .wake_sender_if(self.claim.channel(), self.claim.senders_parked());
    }
}

/// Future of [`Receiver::recv`](super::Receiver::recv). Cancel-safe: see the module docs.
#[must_use = "futures do nothing unless polled"]
pub struct Recv<'a, T> {
    pub(super) chan: &'a Chan<T>,
    pub(super) key: Option<usize>,
}

impl<T> Future for Recv<'_, T> {
    type Output = Result<T, RecvError>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The closure is inlined: this poll is the receive's fast path.
        crate::task::coop::spend(
            cx,
            #[inline(always)]
            |cx| {
                let this = self.get_mut();
                // First poll, a message in a ring: done here, inlined into the caller.
                // A `select!` probe of an empty ring stops here too (`poll_recv`
                // would return the same `Pending`, registering nothing); otherwise an
                // empty ring goes straight to registering.
                if this.key.is_none() {
                    match this.chan.recv_fast() {
                        Ok(claim) => {
                            let taken = TakenSlot {
                                claim,
                                chan: this.chan,
                            };
                            // SAFETY: the one read of this claim; `taken` frees the
                            // slot when dropped, after this return value is built.
                            return Poll::Ready(Ok(unsafe { taken.claim.read() }));
                        }
                        Err(FastPath::Idle) if select::probing(cx) => return Poll::Pending,
                        Err(FastPath::Idle) => {
                            return this.chan.poll_recv(&mut this.key, cx, FastPath::Idle)
                        }
                        Err(FastPath::Busy) => {
                            return this.chan.poll_recv(&mut this.key, cx, FastPath::Busy)
                        }
                        Err(FastPath::NotTried) => {}
                    }
                }
                match &this.chan.flavor {
                    Flavor::Zero(z) => z.poll_take(&mut this.key, cx.waker(), !select::probing(cx)),
                    _ => this.chan.poll_recv(&mut this.key, cx, FastPath::NotTried),
                }
            },
        )
    }
}

impl<T> Drop for Recv<'_, T> {
    fn drop(&mut self) {
        // Nothing to give up unless a waiter or taker slot is held.
        if self.key.is_some() {
            self.chan.abandon_recv(&mut self.key);
        }
    }
}

/// Future of [`Receiver::recv_batch`](super::Receiver::recv_batch).
#[must_use = "futures do nothing unless polled"]
pub struct RecvBatch<'a, T> {
    pub(super) chan: &'a Chan<T>,
    pub(super) out: &'a mut Vec<T>,
    pub(super) max: usize,
    pub(super) key: Option<usize>,
}

impl<T> Future for RecvBatch<'_, T> {
    type Output = Result<usize, RecvError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            this.chan
                .poll_recv_batch(&mut this.key, this.out, this.max, cx)
        })
    }
}

impl<T> Drop for RecvBatch<'_, T> {
    fn drop(&mut self) {
        self.chan.abandon_recv(&mut self.key);
    }
}
