//! `CancellationToken`: a flag that tasks can await, with child tokens.
//!
//! Invariants: `cancelled` goes false → true once and never back. Waiters
//! register under the node's lock after re-checking the flag, and `cancel`
//! sets the flag before taking the waiters under the same lock, so a waiter
//! either sees the flag or is woken. A child registered after its parent was
//! cancelled is born cancelled (checked under the parent's lock).

//!
//! Built on `std::sync` directly (not `crate::loom`): it is a plain
//! lock-protected protocol, and it needs `Weak`, which loom lacks.

use crate::loom::lock_std;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};

/// Cancels a tree of work: `cancel()` wakes every `cancelled().await` on this
/// token and on every child token (children don't cancel their parent).
#[derive(Clone)]
pub struct CancellationToken {
    node: Arc<Node>,
}

struct Node {
    cancelled: AtomicBool,
    inner: Mutex<Waiters>,
}

#[derive(Default)]
struct Waiters {
    wakers: Vec<Option<Waker>>,
    free: Vec<usize>,
    children: Vec<Weak<Node>>,
}

impl Default for CancellationToken {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancellationToken {
    pub fn new() -> CancellationToken {
        CancellationToken {
            node: Arc::new(Node {
                cancelled: AtomicBool::new(false),
                inner: Mutex::new(Waiters::default()),
            }),
        }
    }

    /// A token cancelled with this one (and by itself alone).
    pub fn child_token(&self) -> CancellationToken {
        let child = CancellationToken::new();
        let mut w = lock_std(&self.node.inner);
        if self.node.cancelled.load(Acquire) {
            child.node.cancelled.store(true, Release);
        } else {
            if w.children.len() >= 16 && w.children.len().is_power_of_two() {
                w.children.retain(|c| c.strong_count() > 0);
            }
            w.children.push(Arc::downgrade(&child.node));
        }
        child
    }

    /// Cancels this token and its children; wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        cancel_node(&self.node);
    }

    pub fn is_cancelled(&self) -> bool {
        self.node.cancelled.load(Acquire)
    }

    /// Completes once the token is cancelled.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            token: self,
            slot: None,
        }
    }

    /// Runs `fut` unless the token is cancelled first (then `fut` is dropped
    /// and the result is `None`).
    pub async fn run_until_cancelled<F: Future>(&self, fut: F) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        let mut cancelled = std::pin::pin!(self.cancelled());
        std::future::poll_fn(|cx| {
            if cancelled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            fut.as_mut().poll(cx).map(Some)
        })
        .await
    }
}

/// Cancels `root` and every token below it, depth first through a list of
/// its own, not the call stack: a chain of child tokens may be any depth.
fn cancel_node(root: &Node) {
    let mut todo = cancel_one(root);
    while let Some(child) = todo.pop() {
        if let Some(c) = child.upgrade() {
            todo.extend(cancel_one(&c));
        }
    }
}

/// Cancels one node (unless it already was) and wakes its waiters; returns
/// its children, to cancel next.
fn cancel_one(node: &Node) -> Vec<Weak<Node>> {
    let (wakers, children) = {
        let mut w = lock_std(&node.inner);
        if node.cancelled.swap(true, AcqRel) {
            return Vec::new();
        }
        w.free.clear();
        (
            std::mem::take(&mut w.wakers),
            std::mem::take(&mut w.children),
        )
    };
    for waker in wakers.into_iter().flatten() {
        waker.wake();
    }
    children
}

/// The future of [`CancellationToken::cancelled`].
#[must_use = "futures do nothing unless awaited"]
pub struct Cancelled<'a> {
    token: &'a CancellationToken,
    slot: Option<usize>,
}

impl Future for Cancelled<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let node = &self.token.node;
        if node.cancelled.load(Acquire) {
            return Poll::Ready(());
        }
        let mut w = lock_std(&node.inner);
        if node.cancelled.load(Acquire) {
            return Poll::Ready(());
        }
        let waker = Some(cx.waker().clone());
        match self.slot {
            Some(i) if i < w.wakers.len() => w.wakers[i] = waker,
            _ => {
                let i = match w.free.pop() {
                    Some(i) => {
                        w.wakers[i] = waker;
                        i
                    }
                    None => {
                        w.wakers.push(waker);
                        w.wakers.len() - 1
                    }
                };
                drop(w);
                self.slot = Some(i);
            }
        }
        Poll::Pending
    }
}

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let mut w = lock_std(&self.token.node.inner);
            if !self.token.node.cancelled.load(Acquire) && i < w.wakers.len() {
                w.wakers[i] = None;
                w.free.push(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of child tokens far deeper than a small stack could recurse
    /// through is cancelled from its root, on a thread with a 64 KiB stack.
    #[test]
    fn deep_chain_cancels_without_recursion() {
        let depth = if cfg!(miri) { 1_000 } else { 200_000 };
        let root = CancellationToken::new();
        let mut chain = vec![root.clone()];
        for _ in 0..depth {
            let child = chain.last().unwrap().child_token();
            chain.push(child);
        }
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || root.cancel())
            .unwrap()
            .join()
            .unwrap();
        assert!(chain.iter().all(CancellationToken::is_cancelled));
    }
}
