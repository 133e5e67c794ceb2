//! `join_all`, `race`, `when_n`: wait for futures (or task handles) together.
//!
//! The futures live in one heap block (`Group::slots`), each slot holding
//! the future while it runs and then its output: no allocation per future.
//! How a group learns which futures to poll again depends on its size:
//!
//! - **Small groups** (at most [`SMALL`] futures) hand every future the
//!   parent's waker and poll each unfinished one once per parent poll, in
//!   index order, as `futures::join_all` does for its small case. A waiting
//!   `JoinHandle` costs a state load to poll again; a ready set costs an
//!   allocation per future to build and two locks per wake, which for a
//!   few futures costs more than the scan (`docs/profiles.md`, block_all).
//! - **Large groups** poll only the futures that were woken: each future
//!   gets its own waker, which queues its index in a ready set, so waiting
//!   on a million `JoinHandle`s costs O(1) per completion, not a scan of
//!   the million. `task/join_set.rs` has its own version of this ready
//!   set: a `JoinSet`'s entries come and go, where a group's are fixed and
//!   their flags one array allocated up front.
//!
//! Within one parent poll each future is polled at most once. Completions
//! are reported in the order they are seen: index order within a pass of a
//! small group, wake order in a large one. So `race` is not fair between
//! futures that finish during the same pass: the lower index wins.
//!
//! `race` and `when_n` drop the futures that did not finish in time as soon
//! as they have their result: for plain futures that cancels them; a
//! `JoinHandle` dropped only detaches its task, so pass
//! `handle.abort_on_drop()` to have losing tasks cancelled.
//!
//! Invariants:
//! - `slots` is allocated once and never moved or resized, and a slot's
//!   future leaves it only by being dropped in place (the slot overwritten
//!   by its output, or by `Slot::Gone`): the futures stay pinned.
//! - `remaining` counts the `Slot::Running` slots.
//! - Small groups: `cursor` is where the current pass goes on; every
//!   combinator's `poll` starts a new pass (`Group::begin`), so a wake
//!   that came for a future before the cursor is never missed.
//! - Large groups: a running future's index is in the ready queue or in
//!   `due` (taken from the queue when a parent poll begins), or its `queued`
//!   flag is clear and its waker has not fired since it was last polled (it
//!   queues the index when it does). Only `due` is polled, so a future that
//!   wakes itself while polled (`yield_now`) is polled again in the next
//!   parent poll, not in this one (polled again at once, a large group of
//!   yielding futures would never return to the scheduler).

use crate::loom::{lock, Mutex};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// The largest group that polls all its unfinished futures at each wake.
const SMALL: usize = 32;

enum Slot<F: Future> {
    Running(F),
    Done(F::Output),
    Gone,
}

/// Which futures of a large group were woken since they were last polled.
struct ReadySet {
    queue: Mutex<Vec<usize>>,
    queued: Box<[AtomicBool]>,
    parent: Mutex<Option<Waker>>,
}

/// The waker of one future of a large group.
struct Woken {
    set: Arc<ReadySet>,
    index: usize,
}

impl Wake for Woken {
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

struct Large {
    set: Arc<ReadySet>,
    wakers: Box<[Waker]>,
    /// The indices due a poll in the current parent poll: what the ready
    /// queue held when it began. A future woken while it is polled (one
    /// that yields) goes to the queue and waits for the next parent poll.
    due: Vec<usize>,
}

/// Futures polled together; yields the indices of those that finish.
struct Group<F: Future> {
    slots: Pin<Box<[Slot<F>]>>,
    remaining: usize,
    /// Small groups: the next index the current pass polls.
    cursor: usize,
    /// Large groups: the ready set and the futures' wakers.
    large: Option<Large>,
    /// The combinator returned `Ready`.
    finished: bool,
}

impl<F: Future> Group<F> {
    fn new(futures: impl IntoIterator<Item = F>) -> Group<F> {
        let slots: Box<[Slot<F>]> = futures.into_iter().map(Slot::Running).collect();
        let n = slots.len();
        let large = (n > SMALL).then(|| {
            let set = Arc::new(ReadySet {
                queue: Mutex::new((0..n).rev().collect()),
                queued: (0..n).map(|_| AtomicBool::new(true)).collect(),
                parent: Mutex::new(None),
            });
            let wakers = (0..n)
                .map(|index| {
                    Waker::from(Arc::new(Woken {
                        set: set.clone(),
                        index,
                    }))
                })
                .collect();
            Large {
                set,
                wakers,
                due: Vec::new(),
            }
        });
        Group {
            slots: Box::into_pin(slots),
            remaining: n,
            cursor: 0,
            large,
            finished: false,
        }
    }

    /// Starts a parent poll of the combinator `what`: a new pass over a
    /// small group; a large group's ready set learns the parent's waker, and
    /// the futures woken so far become due.
    fn begin(&mut self, cx: &Context<'_>, what: &str) {
        assert!(!self.finished, "`{what}` polled after it completed");
        self.cursor = 0;
        if let Some(large) = &mut self.large {
            {
                let mut parent = lock(&large.set.parent);
                if !parent.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *parent = Some(cx.waker().clone());
                }
            }
            // After the parent's waker is stored: a wake from here on finds
            // it, and its index waits in the queue for the next poll.
            large.due.append(&mut lock(&large.set.queue));
        }
    }

    /// Polls the futures due a poll in this parent poll until one finishes
    /// (`Some(index)`, its output left in its slot) or none is left to poll
    /// (`None` when every future has finished, else `Pending`).
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let Group {
            slots,
            remaining,
            cursor,
            large,
            ..
        } = self;
        if *remaining == 0 {
            return Poll::Ready(None);
        }
        let Some(large) = large else {
            while *cursor < slots.len() {
                let i = *cursor;
                *cursor += 1;
                if poll_slot(slots, remaining, i, cx) {
                    return Poll::Ready(Some(i));
                }
            }
            return Poll::Pending;
        };
        loop {
            let Some(i) = large.due.pop() else {
                return Poll::Pending;
            };
            large.set.queued[i].store(false, Release);
            let mut sub = Context::from_waker(&large.wakers[i]);
            if poll_slot(slots, remaining, i, &mut sub) {
                return Poll::Ready(Some(i));
            }
        }
    }

    /// Moves the output of finished slot `i` out.
    fn take(&mut self, i: usize) -> F::Output {
        // SAFETY: only a finished slot's output moves out; no future is
        // moved (module invariants).
        let slot = &mut unsafe { self.slots.as_mut().get_unchecked_mut() }[i];
        assert!(matches!(slot, Slot::Done(_)), "slot {i} has no output");
        let Slot::Done(out) = std::mem::replace(slot, Slot::Gone) else {
            unreachable!("checked above")
        };
        out
    }

    /// Drops every future still running, in place.
    fn cancel_rest(&mut self) {
        // SAFETY: dropping a pinned future in place is allowed; nothing moves.
        let slots = unsafe { self.slots.as_mut().get_unchecked_mut() };
        for slot in slots.iter_mut().filter(|s| matches!(s, Slot::Running(_))) {
            *slot = Slot::Gone;
        }
        self.remaining = 0;
    }
}

/// Polls slot `i` if its future still runs; `true` if it just finished
/// (its output is then in the slot, and `remaining` one less).
fn poll_slot<F: Future>(
    slots: &mut Pin<Box<[Slot<F>]>>,
    remaining: &mut usize,
    i: usize,
    cx: &mut Context<'_>,
) -> bool {
    // SAFETY: the slots are pinned in place (module invariants): a future
    // is polled where it lies and dropped there (the assignment below).
    let slots = unsafe { slots.as_mut().get_unchecked_mut() };
    let Slot::Running(f) = &mut slots[i] else {
        return false;
    };
    // SAFETY: as above.
    match unsafe { Pin::new_unchecked(f) }.poll(cx) {
        Poll::Ready(out) => {
            slots[i] = Slot::Done(out);
            *remaining -= 1;
            true
        }
        Poll::Pending => false,
    }
}

/// Waits for every future; outputs in input order.
pub fn join_all<I>(futures: I) -> JoinAll<I::Item>
where
    I: IntoIterator,
    I::Item: Future,
{
    JoinAll {
        group: Group::new(futures),
    }
}

/// The future of [`join_all`].
#[must_use = "futures do nothing unless awaited"]
pub struct JoinAll<F: Future> {
    group: Group<F>,
}

impl<F: Future> Unpin for JoinAll<F> {}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<F::Output>> {
        let group = &mut self.group;
        group.begin(cx, "join_all");
        loop {
            match group.poll_next(cx) {
                Poll::Ready(Some(_)) => {}
                Poll::Ready(None) => {
                    group.finished = true;
                    return Poll::Ready((0..group.slots.len()).map(|i| group.take(i)).collect());
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
        let group = &mut self.group;
        group.begin(cx, "race");
        let won = std::task::ready!(group.poll_next(cx));
        // Losers are cancelled now, not whenever the Race is dropped.
        group.cancel_rest();
        group.finished = true;
        Poll::Ready(won.map(|i| (i, group.take(i))))
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
        this.group.begin(cx, "when_n");
        while this.done.len() < this.n {
            match this.group.poll_next(cx) {
                Poll::Ready(Some(i)) => {
                    let out = this.group.take(i);
                    this.done.push((i, out));
                }
                Poll::Ready(None) => break,
                Poll::Pending => return Poll::Pending,
            }
        }
        this.group.cancel_rest();
        this.group.finished = true;
        Poll::Ready(std::mem::take(&mut this.done))
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
