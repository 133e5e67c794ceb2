//! The send futures: [`Send`] and [`SendBatch`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::error::SendError;
use super::sender::Sender;
use super::shared::{FastPath, Flavor};
use crate::loom::Ordering;

/// Future of [`Sender::send`].
#[must_use = "futures do nothing unless polled"]
pub struct Send<'a, T> {
    pub(super) sender: &'a Sender<T>,
    pub(super) value: Option<T>,
    pub(super) key: Option<usize>,
}

// The value is never pinned: it is moved out by value when placed.
impl<T> Unpin for Send<'_, T> {}

impl<T> Future for Send<'_, T> {
    type Output = Result<(), SendError<T>>;
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The closure is inlined: this poll is the send's fast path.
        crate::task::coop::spend(
            cx,
            #[inline(always)]
            |cx| {
                let this = self.get_mut();
                if this.sender.detached.load(Ordering::Relaxed) {
                    if let Some(v) = this.value.take() {
                        return Poll::Ready(Err(SendError(v)));
                    }
                }
                // First poll, room in a ring: done here, inlined into the caller;
                // otherwise the out-of-line poll starts where the fast path stopped.
                // One call per `FastPath` variant, each with a constant: one call taking
                // the variant as a value adds instructions to every message (the
                // callee branches on what the caller knew). The same on the
                // receive side.
                let chan = &this.sender.chan;
                if this.key.is_none() {
                    match chan.send_fast(&mut this.value) {
                        Ok(()) => return Poll::Ready(Ok(())),
                        Err(FastPath::Idle) => {
                            return chan.poll_send(
                                &mut this.value,
                                &mut this.key,
                                cx,
                                FastPath::Idle,
                            )
                        }
                        Err(FastPath::Busy) => {
                            return chan.poll_send(
                                &mut this.value,
                                &mut this.key,
                                cx,
                                FastPath::Busy,
                            )
                        }
                        Err(FastPath::NotTried) => {}
                    }
                }
                if let Flavor::Zero(z) = &chan.flavor {
                    return chan.poll_send_zero(z, &mut this.value, &mut this.key, cx);
                }
                chan.poll_send(&mut this.value, &mut this.key, cx, FastPath::NotTried)
            },
        )
    }
}

impl<T> Drop for Send<'_, T> {
    fn drop(&mut self) {
        if self.key.is_some() {
            drop(
                self.sender
                    .chan
                    .abandon_send(&mut self.value, &mut self.key),
            );
        }
    }
}

/// Future of [`Sender::send_batch`].
#[must_use = "futures do nothing unless polled"]
pub struct SendBatch<'a, T> {
    pub(super) sender: &'a Sender<T>,
    pub(super) items: std::collections::VecDeque<T>,
    pub(super) key: Option<usize>,
    pub(super) zero_value: Option<T>,
}

impl<T> Unpin for SendBatch<'_, T> {}

impl<T> Future for SendBatch<'_, T> {
    type Output = Result<(), SendError<Vec<T>>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        crate::task::coop::spend(cx, |cx| {
            let this = self.get_mut();
            // Released by `Sink::poll_close` (which needs `&mut Sender`, so not
            // while this batch borrows it): closed for this handle, as `send`.
            if this.sender.detached.load(Ordering::Relaxed) {
                return Poll::Ready(Err(SendError(std::mem::take(&mut this.items).into())));
            }
            this.sender.chan.poll_send_batch(
                &mut this.items,
                &mut this.key,
                &mut this.zero_value,
                cx,
            )
        })
    }
}

impl<T> Drop for SendBatch<'_, T> {
    fn drop(&mut self) {
        if self.key.is_some() {
            drop(
                self.sender
                    .chan
                    .abandon_send(&mut self.zero_value, &mut self.key),
            );
        }
    }
}
