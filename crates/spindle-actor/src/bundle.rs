//! Bundles: several channels of one type declared together, for fan-out
//! (one writer, a lane per reader) and fan-in (a lane per writer, one
//! reader), with "wait for any lane" helpers.
//!
//! # Invariants
//! - A bundle is only a list of ordinary channels (`name[i]`): each lane is
//!   an SPSC ring with its own writer and reader, wired like any channel.
//! - [`RxLanes::wait_any`] registers the actor's waker on every lane before
//!   re-checking each one (the rings' fence protocol), so a message on any
//!   lane wakes it; likewise [`TxLanes::wait_any_vacant`] for room.

use std::future::Future;
use std::ops::{Index, IndexMut};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::error::PortError;
use crate::port::{RxHandle, TxHandle};
use crate::rx::Rx;
use crate::tx::Tx;

/// The writing ends of a bundle.
pub struct TxBundle<T> {
    lanes: Vec<TxHandle<T>>,
}

/// The reading ends of a bundle.
pub struct RxBundle<T> {
    lanes: Vec<RxHandle<T>>,
}

impl<T> Clone for TxBundle<T> {
    fn clone(&self) -> Self {
        TxBundle {
            lanes: self.lanes.clone(),
        }
    }
}

impl<T> Clone for RxBundle<T> {
    fn clone(&self) -> Self {
        RxBundle {
            lanes: self.lanes.clone(),
        }
    }
}

impl<T> TxBundle<T> {
    pub(crate) fn new(lanes: Vec<TxHandle<T>>) -> Self {
        TxBundle { lanes }
    }

    /// Every lane's handle.
    pub fn handles(&self) -> &[TxHandle<T>] {
        &self.lanes
    }

    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Whether the bundle has no lanes.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Locks every lane (see [`TxHandle::lock`]).
    pub fn lock(&self) -> Result<TxLanes<T>, PortError> {
        Ok(TxLanes {
            lanes: self
                .lanes
                .iter()
                .map(TxHandle::lock)
                .collect::<Result<_, _>>()?,
        })
    }
}

impl<T> Index<usize> for TxBundle<T> {
    type Output = TxHandle<T>;
    fn index(&self, i: usize) -> &TxHandle<T> {
        &self.lanes[i]
    }
}

impl<T> RxBundle<T> {
    pub(crate) fn new(lanes: Vec<RxHandle<T>>) -> Self {
        RxBundle { lanes }
    }

    /// Every lane's handle.
    pub fn handles(&self) -> &[RxHandle<T>] {
        &self.lanes
    }

    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Whether the bundle has no lanes.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Locks every lane (see [`RxHandle::lock`]).
    pub fn lock(&self) -> Result<RxLanes<T>, PortError> {
        Ok(RxLanes {
            lanes: self
                .lanes
                .iter()
                .map(RxHandle::lock)
                .collect::<Result<_, _>>()?,
        })
    }
}

impl<T> Index<usize> for RxBundle<T> {
    type Output = RxHandle<T>;
    fn index(&self, i: usize) -> &RxHandle<T> {
        &self.lanes[i]
    }
}

/// Locked reading ends of a bundle.
pub struct RxLanes<T> {
    lanes: Vec<Rx<T>>,
}

impl<T> RxLanes<T> {
    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Whether there are no lanes.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Every lane, mutably.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Rx<T>> {
        self.lanes.iter_mut()
    }

    /// Whether every lane is closed and drained.
    pub fn is_closed_and_empty(&mut self) -> bool {
        self.lanes.iter_mut().all(Rx::is_closed_and_empty)
    }

    /// Waits until some lane has at least `n` messages ready, or some lane
    /// is closed with messages left, or a shutdown request reaches this
    /// actor (then the lane with the most messages is returned, maybe with
    /// none). `Some(lane)`, or `None` once every lane is closed and
    /// drained.
    pub fn wait_any(&mut self, n: usize) -> WaitAny<'_, T> {
        WaitAny {
            lanes: self,
            want: n,
        }
    }
}

impl<T> Index<usize> for RxLanes<T> {
    type Output = Rx<T>;
    fn index(&self, i: usize) -> &Rx<T> {
        &self.lanes[i]
    }
}

impl<T> IndexMut<usize> for RxLanes<T> {
    fn index_mut(&mut self, i: usize) -> &mut Rx<T> {
        &mut self.lanes[i]
    }
}

/// Future of [`RxLanes::wait_any`].
#[must_use = "futures do nothing unless polled"]
pub struct WaitAny<'a, T> {
    lanes: &'a mut RxLanes<T>,
    want: usize,
}

impl<T> Future for WaitAny<'_, T> {
    type Output = Option<usize>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let this = self.get_mut();
        let want = this.want;
        let mut open = 0;
        for (i, rx) in this.lanes.lanes.iter_mut().enumerate() {
            match rx.poll_avail_raw(want, cx) {
                Poll::Ready(Some(_)) => return Poll::Ready(Some(i)),
                Poll::Ready(None) => {}
                Poll::Pending => open += 1,
            }
        }
        if open == 0 {
            return Poll::Ready(None);
        }
        let notice = this
            .lanes
            .lanes
            .first()
            .is_some_and(|rx| rx.take_reader_notice());
        if notice {
            let best = (0..this.lanes.len()).max_by_key(|&i| this.lanes.lanes[i].avail());
            return Poll::Ready(best);
        }
        Poll::Pending
    }
}

/// Locked writing ends of a bundle.
pub struct TxLanes<T> {
    lanes: Vec<Tx<T>>,
}

impl<T> TxLanes<T> {
    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    /// Whether there are no lanes.
    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Every lane, mutably.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Tx<T>> {
        self.lanes.iter_mut()
    }

    /// Closes every lane; returns `true` (for shutdown votes).
    pub fn mark_closed(&mut self) -> bool {
        for t in &mut self.lanes {
            t.mark_closed();
        }
        true
    }

    /// Waits until some lane has at least `n` free slots, or a shutdown
    /// request reaches this actor (then the lane with the most room).
    /// `Some(lane)`, or `None` once every lane's reader is gone.
    pub fn wait_any_vacant(&mut self, n: usize) -> WaitAnyVacant<'_, T> {
        WaitAnyVacant {
            lanes: self,
            want: n,
        }
    }
}

impl<T> Index<usize> for TxLanes<T> {
    type Output = Tx<T>;
    fn index(&self, i: usize) -> &Tx<T> {
        &self.lanes[i]
    }
}

impl<T> IndexMut<usize> for TxLanes<T> {
    fn index_mut(&mut self, i: usize) -> &mut Tx<T> {
        &mut self.lanes[i]
    }
}

/// Future of [`TxLanes::wait_any_vacant`].
#[must_use = "futures do nothing unless polled"]
pub struct WaitAnyVacant<'a, T> {
    lanes: &'a mut TxLanes<T>,
    want: usize,
}

impl<T> Future for WaitAnyVacant<'_, T> {
    type Output = Option<usize>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let this = self.get_mut();
        let want = this.want;
        let mut open = 0;
        for (i, tx) in this.lanes.lanes.iter_mut().enumerate() {
            match tx.poll_vacant_raw(want, cx) {
                Poll::Ready(Some(_)) => return Poll::Ready(Some(i)),
                Poll::Ready(None) => {}
                Poll::Pending => open += 1,
            }
        }
        if open == 0 {
            return Poll::Ready(None);
        }
        let notice = this
            .lanes
            .lanes
            .first()
            .is_some_and(|tx| tx.take_writer_notice());
        if notice {
            let best = (0..this.lanes.len()).max_by_key(|&i| this.lanes.lanes[i].vacant());
            return Poll::Ready(best);
        }
        Poll::Pending
    }
}
