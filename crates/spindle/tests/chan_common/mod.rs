//! Test helpers for the channel tests: a minimal thread-parking executor
//! (independent of spindle's runtime, so the channels are also shown to work
//! under a foreign executor) and drop-counting messages.

#![allow(dead_code)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `f` to completion on this thread, parking between polls.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}

/// Runs a future on its own OS thread ("a task").
pub fn spawn<F>(f: F) -> thread::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    thread::spawn(move || block_on(f))
}

/// Polls `f` once with a no-op waker.
pub fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    std::pin::Pin::new(f).poll(&mut cx)
}

/// Counts live values and drops; each `Tracked` must be dropped exactly once.
#[derive(Clone, Default)]
pub struct Counter(Arc<(AtomicUsize, AtomicUsize)>);

impl Counter {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn make(&self, id: u64) -> Tracked {
        self.0 .0.fetch_add(1, Ordering::SeqCst);
        Tracked {
            id,
            c: self.clone(),
            dropped: false,
        }
    }
    pub fn created(&self) -> usize {
        self.0 .0.load(Ordering::SeqCst)
    }
    pub fn dropped(&self) -> usize {
        self.0 .1.load(Ordering::SeqCst)
    }
    pub fn live(&self) -> usize {
        self.created() - self.dropped()
    }
}

pub struct Tracked {
    pub id: u64,
    c: Counter,
    dropped: bool,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        assert!(!self.dropped, "message {} dropped twice", self.id);
        self.dropped = true;
        self.c.0 .1.fetch_add(1, Ordering::SeqCst);
    }
}

impl std::fmt::Debug for Tracked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tracked({})", self.id)
    }
}

/// Loop sizes shrink under miri.
pub fn scale(n: usize) -> usize {
    if cfg!(miri) {
        (n / 100).max(2)
    } else {
        n
    }
}
