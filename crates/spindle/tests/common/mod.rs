//! Shared test helpers: run one test body on every scheduler flavour,
//! futures that count their polls and drops, and wakers that count their
//! wakes.
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// The flavours every behaviour test runs on: current-thread, 1 worker and
/// 4 workers. Under miri, which interprets every thread in turn, only
/// current-thread and 2 workers (which already steal from each other): the
/// single worker runs the same unsafe code as two.
pub fn flavours() -> Vec<(&'static str, spindle::Runtime)> {
    flavours_with(true)
}

/// The flavours that run every task on one thread (current-thread and 1
/// worker): where no thief can take a task or a closure.
pub fn one_thread_flavours() -> Vec<(&'static str, spindle::Runtime)> {
    flavours_with(false)
}

/// `flavours()`, with the many-worker runtime only if `many` (never built
/// to be dropped).
fn flavours_with(many: bool) -> Vec<(&'static str, spindle::Runtime)> {
    let multi = |workers| {
        spindle::Builder::new_multi_thread()
            .workers(workers)
            .build()
            .unwrap()
    };
    let mut list = vec![(
        "current_thread",
        spindle::Builder::new_current_thread().build().unwrap(),
    )];
    if !cfg!(miri) {
        list.push(("1 worker", multi(1)));
    }
    if many {
        list.push(if cfg!(miri) {
            ("2 workers", multi(2))
        } else {
            ("4 workers", multi(4))
        });
    }
    list
}

/// Defines `#[test] fn name()` running `body` (an async block using the
/// runtime through `spindle::spawn`) on every flavour.
#[macro_export]
macro_rules! rt_test {
    ($(#[$m:meta])* fn $name:ident() $body:block) => {
        $(#[$m])*
        #[test]
        fn $name() {
            for (flavour, rt) in common::flavours() {
                eprintln!("-- {} on {flavour}", stringify!($name));
                rt.block_on(async $body);
                drop(rt);
            }
        }
    };
}

/// Counts drops of the values it hands out.
#[derive(Clone, Default)]
pub struct DropCounter(pub Arc<AtomicUsize>);

pub struct Tracked(Arc<AtomicUsize>);

impl DropCounter {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn track(&self) -> Tracked {
        Tracked(self.0.clone())
    }
    pub fn drops(&self) -> usize {
        self.0.load(SeqCst)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A future pending until its gate is opened (from any thread).
#[derive(Clone, Default)]
pub struct Gate(Arc<Mutex<(bool, Vec<Waker>)>>);

impl Gate {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn open(&self) {
        self.open_with(Waker::wake)
    }
    /// `open`, waking through `spindle::task::wake_queued`.
    pub fn open_queued(&self) {
        self.open_with(spindle::task::wake_queued)
    }
    fn open_with(&self, wake: impl Fn(Waker)) {
        let wakers = {
            let mut g = self.0.lock().unwrap();
            g.0 = true;
            std::mem::take(&mut g.1)
        };
        wakers.into_iter().for_each(wake);
    }
    /// Whether a task waits at the gate (it polled `wait` once).
    pub fn has_waiters(&self) -> bool {
        !self.0.lock().unwrap().1.is_empty()
    }
    pub fn wait(&self) -> GateWait {
        GateWait(self.clone())
    }
}

pub struct GateWait(Gate);

impl Future for GateWait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut g = (self.0).0.lock().unwrap();
        if g.0 {
            Poll::Ready(())
        } else {
            g.1.push(cx.waker().clone());
            Poll::Pending
        }
    }
}

/// Wraps a future, counting its polls into `polls`.
pub struct Counted<F> {
    pub inner: Pin<Box<F>>,
    pub polls: Arc<AtomicUsize>,
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.polls.fetch_add(1, SeqCst);
        self.inner.as_mut().poll(cx)
    }
}

pub fn counted<F: Future>(f: F) -> (Counted<F>, Arc<AtomicUsize>) {
    let polls = Arc::new(AtomicUsize::new(0));
    (counted_into(f, &polls), polls)
}

/// As `counted`, adding to a counter shared with other futures.
pub fn counted_into<F: Future>(f: F, polls: &Arc<AtomicUsize>) -> Counted<F> {
    Counted {
        inner: Box::pin(f),
        polls: polls.clone(),
    }
}

/// Keeps a CPU busy for `d` without awaiting.
pub fn compute(d: std::time::Duration) -> u64 {
    let start = std::time::Instant::now();
    let mut n = 0u64;
    while start.elapsed() < d {
        n = std::hint::black_box(n + 1);
    }
    n
}

/// A send-and-receive loop over a channel that always has room and a
/// message, until `end`: each operation is ready at once. Gives the sum
/// received.
pub async fn ready_channel_loop_until(end: std::time::Instant) -> u64 {
    let (tx, rx) = spindle::chan::unbounded::<u64>();
    let mut got = 0u64;
    while std::time::Instant::now() < end {
        tx.send(1).await.unwrap();
        got += rx.recv().await.unwrap();
    }
    got
}

/// Scales a loop size down under miri and in debug builds.
pub fn scaled(n: usize) -> usize {
    if cfg!(miri) {
        (n / 1000).max(2)
    } else if cfg!(debug_assertions) {
        (n / 10).max(2)
    } else {
        n
    }
}

/// How long `until` and `until_blocking` wait for a condition: 5 s, or a
/// minute under miri, which runs the same steps a thousand times slower on
/// the real clock it is given.
pub fn patience() -> std::time::Duration {
    std::time::Duration::from_secs(if cfg!(miri) { 60 } else { 5 })
}

/// Yields (and naps briefly) until `cond` holds or [`patience`] passes; the
/// caller then asserts `cond`, so a condition never met still fails
/// (slowly), while a loaded machine gets time.
pub async fn until(cond: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + patience();
    while !cond() && std::time::Instant::now() < deadline {
        spindle::yield_now().await;
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

/// `until` for plain threads: waits until `cond` holds or [`patience`]
/// passes, and returns whether it holds.
pub fn until_blocking(cond: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + patience();
    while !cond() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    cond()
}

/// A future that must not move once polled (it is `!Unpin`): it notes its
/// address at every poll, stays pending, and on drop reports in `moved`
/// whether it is being dropped somewhere else (a pinned value must be
/// dropped where it lies: self-referential and intrusive futures rely on it).
pub struct PinProbe {
    at: usize,
    moved: Arc<AtomicUsize>,
    _pinned: std::marker::PhantomPinned,
}

impl PinProbe {
    pub fn new(moved: &Arc<AtomicUsize>) -> PinProbe {
        PinProbe {
            at: 0,
            moved: moved.clone(),
            _pinned: std::marker::PhantomPinned,
        }
    }
}

impl Future for PinProbe {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: only a plain field is written; the probe is not moved.
        let me = unsafe { self.get_unchecked_mut() };
        me.at = me as *mut PinProbe as usize;
        Poll::Pending
    }
}

impl Drop for PinProbe {
    fn drop(&mut self) {
        if self.at != 0 && self.at != self as *mut PinProbe as usize {
            self.moved.fetch_add(1, SeqCst);
        }
    }
}

/// How a [`tree`] creates its children.
#[derive(Clone, Copy, Debug)]
pub enum Join {
    /// `spindle::spawn`: concurrent children (inline only on the
    /// current-thread runtime).
    Spawn,
    /// `spindle::fork`: children run inline by the parent's await where no
    /// worker started them.
    Fork,
}

/// A fork-join tree whose parents await their children in creation order:
/// `fanout`-ary, `depth` levels below the root, each node a task created
/// the `join` way; counts every poll of every task in `polls`; gives the
/// number of tasks.
pub fn tree(
    polls: Arc<AtomicUsize>,
    fanout: u64,
    depth: u32,
    join: Join,
) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    let counter = polls.clone();
    let task = counted_into(
        async move {
            if depth == 0 {
                return 1;
            }
            let kids: Vec<_> = (0..fanout)
                .map(|_| tree(polls.clone(), fanout, depth - 1, join))
                .collect();
            let mut n = 1;
            for k in kids {
                n += k.await;
            }
            n
        },
        &counter,
    );
    // Created now, at the call (the parent's loop above), awaited later.
    match join {
        Join::Spawn => {
            let h = spindle::spawn(task);
            Box::pin(async move { h.await.unwrap() })
        }
        Join::Fork => {
            let h = spindle::fork(task);
            Box::pin(async move { h.await.unwrap() })
        }
    }
}

/// A waker that counts its wakes.
#[derive(Default)]
pub struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A counting waker and the handle to read its count.
pub fn counting() -> (Waker, Arc<Count>) {
    let c = Arc::new(Count::default());
    (Waker::from(c.clone()), c)
}

/// How many times its waker was woken.
pub fn wakes(c: &Count) -> usize {
    c.0.load(SeqCst)
}

/// Polls once with `waker`.
pub fn poll_with<F: Future>(f: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(waker))
}
