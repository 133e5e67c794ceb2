//! The children's units a poll of a scope's body takes ahead of its
//! spawns (`PollStock`, module docs of `scope`): one thread-local stock per
//! thread, for the body being polled there, refilled from `live` in
//! doubling steps and given back when the poll returns or unwinds.

use super::{Guard, Inner, CHILD};
use crate::loom::{Arc, Ordering::*};
use std::cell::Cell;
use std::ptr::NonNull;

/// Units of `live` taken ahead for the spawns of a body's poll (module
/// docs), on the thread that polls it.
#[derive(Clone, Copy)]
struct ChildStock {
    /// The state of the scope whose body is being polled; null for none.
    scope: *const (),
    /// Children's units left.
    left: usize,
    /// How many children's units to take at the next refill.
    refill: usize,
}

impl ChildStock {
    /// No body polled on this thread.
    const NONE: ChildStock = ChildStock::empty(std::ptr::null());

    /// An empty stock for the body of the scope at `scope`.
    const fn empty(scope: *const ()) -> ChildStock {
        ChildStock {
            scope,
            left: 0,
            refill: 1,
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    static CHILD_STOCK: Cell<ChildStock> = const { Cell::new(ChildStock::NONE) };
}

// Loom runs its threads on one OS thread: the stock must be per loom thread.
#[cfg(loom)]
loom::thread_local! {
    static CHILD_STOCK: Cell<ChildStock> = Cell::new(ChildStock::NONE);
}

/// The most children's units one refill takes.
const MAX_REFILL: usize = 64;

/// The stock of one body poll, this thread's `CHILD_STOCK` while it
/// lasts; given back (and the enclosing body's restored: bodies nest) when
/// dropped, also on unwind.
pub(super) struct PollStock<E> {
    scope: NonNull<Inner<E>>,
    outer: ChildStock,
}

impl<E> PollStock<E> {
    /// Opens the stock of a poll of the body of `inner`'s scope.
    pub(super) fn open(inner: &Arc<Inner<E>>) -> PollStock<E> {
        let scope = NonNull::new(Arc::as_ptr(inner).cast_mut()).expect("an Arc is never at null");
        let mine = ChildStock::empty(scope.as_ptr().cast_const().cast());
        PollStock {
            scope,
            outer: CHILD_STOCK.with(|c| c.replace(mine)),
        }
    }

    /// Children's units this thread holds ahead for `inner`'s body.
    pub(super) fn held(inner: &Arc<Inner<E>>) -> usize {
        let stock = CHILD_STOCK.with(|c| c.get());
        if stock.scope == Arc::as_ptr(inner).cast() {
            stock.left
        } else {
            0
        }
    }

    /// A child's guard from the stock, when this thread is polling the
    /// body of `inner`'s scope; refills it as needed, taking twice as
    /// many units each time (up to `MAX_REFILL` children's), so a poll
    /// that spawns once takes exactly one child's units.
    pub(super) fn take_child(inner: &Arc<Inner<E>>) -> Option<Guard<E>> {
        let mut stock = CHILD_STOCK.with(|c| c.get());
        if stock.scope != Arc::as_ptr(inner).cast() {
            return None;
        }
        if stock.left == 0 {
            // The body's unit is held: `live` is not at 0, and no
            // strong count moves.
            inner.live.fetch_add(stock.refill * CHILD, AcqRel);
            stock.left = stock.refill;
            stock.refill = (stock.refill * 2).min(MAX_REFILL);
        }
        stock.left -= 1;
        CHILD_STOCK.with(|c| c.set(stock));
        Some(Guard {
            scope: NonNull::new(Arc::as_ptr(inner).cast_mut()).expect("an Arc is never at null"),
            units: CHILD,
        })
    }
}

impl<E> Drop for PollStock<E> {
    fn drop(&mut self) {
        let left = CHILD_STOCK.with(|c| c.replace(self.outer)).left;
        if left > 0 {
            // SAFETY: the scope's future, which owns an `Arc` of this state,
            // is being polled while this stock exists.
            let inner = unsafe { self.scope.as_ref() };
            // Never the last units: the body's are still held.
            inner.live.fetch_sub(left * CHILD, AcqRel);
        }
    }
}
