//! The reading end of a channel, locked for one actor run ([`Rx`]).
//!
//! # Invariants
//! - An `Rx` owns the channel's consumer until it is dropped, when it goes
//!   back to its [`RxHandle`](crate::RxHandle) (with the peek state that the
//!   poison policy reads).
//! - Peek-before-commit: [`Rx::peek`], [`Rx::try_peek`] and
//!   [`Rx::peek_slots`] leave messages in the ring; only [`Rx::advance`]
//!   (and the taking operations) release them. A run that panics between a
//!   peek and its advance leaves the message at the head for the next run.
//! - Waits ([`Rx::wait_avail`]) also return, once, when a shutdown request
//!   reaches the reading actor, so that it can decide whether to stop;
//!   [`Rx::take`] and [`Rx::peek`] do not (they end only with a message or
//!   a drained channel).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::port::{ChannelShared, ConsumerState};

/// The reading end of a graph channel, locked by
/// [`RxHandle::lock`](crate::RxHandle::lock).
pub struct Rx<T> {
    shared: Arc<ChannelShared<T>>,
    st: Option<ConsumerState<T>>,
}

impl<T> Rx<T> {
    pub(crate) fn new(shared: Arc<ChannelShared<T>>, st: ConsumerState<T>) -> Rx<T> {
        Rx {
            shared,
            st: Some(st),
        }
    }

    #[inline]
    fn st(&mut self) -> &mut ConsumerState<T> {
        self.st
            .as_mut()
            .expect("an Rx holds its consumer until dropped")
    }

    /// The channel's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The channel's capacity.
    pub fn capacity(&self) -> usize {
        self.shared.ring.capacity()
    }

    /// The batch size the graph declared for this channel (its capacity / 2
    /// unless set).
    pub fn batch_hint(&self) -> usize {
        self.shared.batch
    }

    /// Messages ready now.
    pub fn avail(&mut self) -> usize {
        self.st().cons.avail()
    }

    /// Whether the writer closed the channel and every message was taken:
    /// the usual "may I stop?" answer of a reader.
    pub fn is_closed_and_empty(&mut self) -> bool {
        self.st().cons.is_drained()
    }

    /// Whether the writer closed the channel (messages may remain).
    pub fn is_closed(&self) -> bool {
        self.shared.ring.is_closed()
    }

    /// Messages taken from this channel so far, by every run.
    pub fn taken(&self) -> u64 {
        self.shared.ring.taken()
    }

    /// Waits until at least `n` messages are ready (`n` is capped at the
    /// capacity), the channel is closed, or a shutdown request reaches this
    /// actor. `Some(ready)` (possibly fewer than `n` in the last two cases),
    /// or `None` once the channel is closed and drained.
    pub fn wait_avail(&mut self, n: usize) -> WaitAvail<'_, T> {
        WaitAvail { rx: self, want: n }
    }

    /// Takes one message if one is ready.
    pub fn try_take(&mut self) -> Option<T> {
        let st = self.st();
        let v = st.cons.try_pop();
        // What was peeked beyond the message taken is still peeked.
        st.peeked = st.peeked.saturating_sub(usize::from(v.is_some()));
        v
    }

    /// Takes one message, waiting for it; `None` once the channel is closed
    /// and drained. Not interrupted by a shutdown request.
    pub async fn take(&mut self) -> Option<T> {
        loop {
            if let Some(v) = self.try_take() {
                return Some(v);
            }
            std::future::poll_fn(|cx| self.st().cons.poll_avail(1, cx)).await;
            if self.is_closed_and_empty() {
                return None;
            }
        }
    }

    /// Moves up to `max` ready messages to the end of `out` (one release for
    /// the run). Returns how many; never waits.
    pub fn take_batch(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        let st = self.st();
        let n = st.cons.pop_into(out, max);
        st.peeked = st.peeked.saturating_sub(n);
        n
    }

    /// The oldest ready message, left in the channel until
    /// [`Rx::advance`]; `None` if none is ready.
    pub fn try_peek(&mut self) -> Option<&T> {
        let st = self.st.as_mut().expect("held");
        let v = st.cons.peek();
        st.peeked = usize::from(v.is_some());
        v
    }

    /// Waits for the oldest message and returns it in place, left in the
    /// channel until [`Rx::advance`]: if this run panics first, the next
    /// run sees the same message (and the poison policy counts it).
    /// `None` once the channel is closed and drained.
    pub async fn peek(&mut self) -> Option<&T> {
        loop {
            if self.st().cons.avail() > 0 {
                return self.try_peek();
            }
            std::future::poll_fn(|cx| self.st().cons.poll_avail(1, cx)).await;
            if self.is_closed_and_empty() {
                return None;
            }
        }
    }

    /// Releases the `n` oldest messages (dropping them in place): the commit
    /// of peek-before-commit. `n` is capped at what is ready.
    pub fn advance(&mut self, n: usize) {
        let st = self.st();
        let n = n.min(st.cons.avail());
        st.cons.release(n);
        // The rest of a peeked run is still peeked: a failure now is one
        // while it was looked at (the poison policy's run).
        st.peeked = st.peeked.saturating_sub(n);
    }
}

impl<T> Rx<T> {
    /// One poll of "at least `want` ready": `Some(ready)`, `None` when
    /// drained; no shutdown notice (for `RxLanes::wait_any`).
    pub(crate) fn poll_avail_raw(
        &mut self,
        want: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Option<usize>> {
        match self.st().cons.poll_avail(want, cx) {
            Poll::Ready(0) => Poll::Ready(None),
            Poll::Ready(a) => Poll::Ready(Some(a)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Consumes a shutdown notice of the reading actor.
    pub(crate) fn take_reader_notice(&self) -> bool {
        self.shared.reader.get().is_some_and(|c| c.take_notice())
    }
}

impl<T: Copy> Rx<T> {
    /// Copies up to `dst.len()` ready messages into `dst` and releases them
    /// (one release for the run, two copies at most when the ring wraps).
    /// Returns how many; never waits.
    pub fn take_slice(&mut self, dst: &mut [T]) -> usize {
        let st = self.st();
        let n = st.cons.pop_slice(dst);
        st.peeked = st.peeked.saturating_sub(n);
        n
    }
}

#[cfg(not(loom))]
impl<T> Rx<T> {
    /// Up to `max` ready messages, read in place on the channel's memory
    /// (zero-copy): two runs, the second non-empty only when the ring
    /// wraps. They stay in the channel until [`Rx::advance`].
    ///
    /// After a failure of the reader while such a run was peeked, the runs
    /// hold one message each until the reader is past that run, so the
    /// poison policy finds the message that fails (`RestartPolicy::poison_after`).
    pub fn peek_slots(&mut self, max: usize) -> Slots<'_, T> {
        let st = self.st.as_mut().expect("held");
        let max = match st.one_by_one_until {
            Some(end) if st.cons.head() < end => max.min(1),
            Some(_) => {
                st.one_by_one_until = None;
                max
            }
            None => max,
        };
        let (a, b) = st.cons.peek_runs(max);
        st.peeked = a.len() + b.len();
        Slots { a, b }
    }
}

impl<T> Drop for Rx<T> {
    fn drop(&mut self) {
        if let Some(st) = self.st.take() {
            self.shared.release_consumer(st);
        }
    }
}

impl<T> fmt::Debug for Rx<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rx")
            .field("channel", &self.shared.name)
            .finish_non_exhaustive()
    }
}

/// Ready messages in place: two runs of the ring (see [`Rx::peek_slots`]).
#[derive(Debug, Clone, Copy)]
pub struct Slots<'a, T> {
    /// The first run (oldest messages).
    pub a: &'a [T],
    /// The second run, after the wrap (empty unless the ring wrapped).
    pub b: &'a [T],
}

impl<'a, T> Slots<'a, T> {
    /// Messages in both runs.
    pub fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }

    /// Whether no message is ready.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Both runs in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a T> + 'a {
        self.a.iter().chain(self.b.iter())
    }
}

/// Future of [`Rx::wait_avail`].
#[must_use = "futures do nothing unless polled"]
pub struct WaitAvail<'a, T> {
    rx: &'a mut Rx<T>,
    want: usize,
}

impl<T> Future for WaitAvail<'_, T> {
    type Output = Option<usize>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let this = self.get_mut();
        let want = this.want;
        let rx = &mut *this.rx;
        let st = rx.st.as_mut().expect("held");
        if let Poll::Ready(a) = st.cons.poll_avail(want, cx) {
            return Poll::Ready(if a == 0 { None } else { Some(a) });
        }
        if rx.shared.reader.get().is_some_and(|c| c.take_notice()) {
            return Poll::Ready(Some(st.cons.avail()));
        }
        Poll::Pending
    }
}
