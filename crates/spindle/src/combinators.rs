//! `join_all`, `race`, `when_n`: wait for futures (or task handles) together.
//!
//! All three poll only the futures that were woken (a ready set: each future
//! gets its own waker, which queues its index), so waiting on a million
//! `JoinHandle`s costs O(1) per completion, not a scan of the million.
//!
//! `race` and `when_n` drop the futures that did not finish in time: for
//! plain futures that cancels them; a `JoinHandle` dropped only detaches its
//! task, so pass `handle.abort_on_drop()` to have losing tasks cancelled.

use crate::loom::{lock, Mutex};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// Which futures were woken since the last poll.
struct ReadySet {
    queue: Mutex<Vec<usize>>,
    queued: Box<[AtomicBool]>,
    parent: Mutex<Option<Waker>>,
}

struct Slot {
    set: Arc<ReadySet>,
    index: usize,
}

impl Wake for Slot {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if !self.set.queued[self.index].swap(true, AcqRel) {
            lock(&self.set.queue).push(self.index);
        }
        if let Some(w) = lock(&self.set.parent).as_ref() {
            w.wake_by_ref();
        }
    }
}

/// Futures polled through per-future wakers; yields completions in order.
struct Group<F: Future> {
    futures: Vec<Option<Pin<Box<F>>>>,
    wakers: Vec<Waker>,
    set: Arc<ReadySet>,
    remaining: usize,
}

impl<F: Future> Group<F> {
    fn new(futures: impl IntoIterator<Item = F>) -> Group<F> {
        let futures: Vec<_> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
        let n = futures.len();
        let set = Arc::new(ReadySet {
            queue: Mutex::new((0..n).rev().collect()),
            queued: (0..n).map(|_| AtomicBool::new(true)).collect(),
            parent: Mutex::new(None),
        });
        let wakers = (0..n)
            .map(|index| {
                Waker::from(Arc::new(Slot {
                    set: set.clone(),
                    index,
                }))
            })
            .collect();
        Group {
            futures,
            wakers,
            set,
            remaining: n,
        }
    }

    /// Polls woken futures until one completes (`Some`) or none is ready.
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<(usize, F::Output)>> {
        if self.remaining == 0 {
            return Poll::Ready(None);
        }
        *lock(&self.set.parent) = Some(cx.waker().clone());
        loop {
            let Some(index) = lock(&self.set.queue).pop() else {
                return Poll::Pending;
            };
            self.set.queued[index].store(false, Release);
            let Some(fut) = self.futures[index].as_mut() else {
                continue;
            };
            let mut sub = Context::from_waker(&self.wakers[index]);
            if let Poll::Ready(out) = fut.as_mut().poll(&mut sub) {
                self.futures[index] = None;
                self.remaining -= 1;
                return Poll::Ready(Some((index, out)));
            }
        }
    }
}

/// Waits for every future; outputs in input order.
pub fn join_all<I>(futures: I) -> JoinAll<I::Item>
where
    I: IntoIterator,
    I::Item: Future,
{
    let group = Group::new(futures);
    let outputs = (0..group.futures.len()).map(|_| None).collect();
    JoinAll { group, outputs }
}

/// The future of [`join_all`].
#[must_use = "futures do nothing unless awaited"]
pub struct JoinAll<F: Future> {
    group: Group<F>,
    outputs: Vec<Option<F::Output>>,
}

impl<F: Future> Unpin for JoinAll<F> {}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<F::Output>> {
        let this = &mut *self;
        loop {
            match this.group.poll_next(cx) {
                Poll::Ready(Some((i, out))) => this.outputs[i] = Some(out),
                Poll::Ready(None) => {
                    return Poll::Ready(
                        this.outputs
                            .iter_mut()
                            .map(|o| o.take().expect("every output"))
                            .collect(),
                    )
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// The first future to finish wins: its index and output. The others are
/// dropped (cancelled). `None` for an empty input.
pub fn race<I>(futures: I) -> Race<I::Item>
where
    I: IntoIterator,
    I::Item: Future,
{
    Race {
        group: Group::new(futures),
    }
}

/// The future of [`race`].
#[must_use = "futures do nothing unless awaited"]
pub struct Race<F: Future> {
    group: Group<F>,
}

impl<F: Future> Unpin for Race<F> {}

impl<F: Future> Future for Race<F> {
    type Output = Option<(usize, F::Output)>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let r = self.group.poll_next(cx);
        if r.is_ready() {
            // Losers are cancelled now, not whenever the Race is dropped.
            self.group.futures.clear();
        }
        r
    }
}

/// The first `n` futures to finish, in the order they finished, each with
/// its index; the rest are dropped (cancelled). Fewer than `n` if fewer
/// futures were given.
pub fn when_n<I>(n: usize, futures: I) -> WhenN<I::Item>
where
    I: IntoIterator,
    I::Item: Future,
{
    WhenN {
        group: Group::new(futures),
        n,
        done: Vec::new(),
    }
}

/// The future of [`when_n`].
#[must_use = "futures do nothing unless awaited"]
pub struct WhenN<F: Future> {
    group: Group<F>,
    n: usize,
    done: Vec<(usize, F::Output)>,
}

impl<F: Future> Unpin for WhenN<F> {}

impl<F: Future> Future for WhenN<F> {
    type Output = Vec<(usize, F::Output)>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        while this.done.len() < this.n {
            match this.group.poll_next(cx) {
                Poll::Ready(Some(item)) => this.done.push(item),
                Poll::Ready(None) => break,
                Poll::Pending => return Poll::Pending,
            }
        }
        this.group.futures.clear();
        Poll::Ready(std::mem::take(&mut this.done))
    }
}
