//! Loom models of the task state word, run on the real code, and the
//! scheduler that they and the queue and scope models run tasks on
//! (`TestSched`).
//!
//! - `task_*`: wake while running, wake after complete, abort racing
//!   completion, join-waker registration racing completion, the handle
//!   dropped racing completion, and the joiner's exclusive run
//!   (`State::claim_alone`) racing a waker its poll handed to another
//!   thread.
//!
//! Every loom model of the workspace, each in a `loom_model` module beside
//! the code it checks (`#[cfg(all(test, loom))]`) unless named otherwise:
//!
//! - `sched/queue.rs`: the local ring's pop and push/overflow racing a
//!   steal (capacity 4 under loom), every task seen exactly once.
//! - `sched/multi_thread/loom_model.rs`: the sleep/wake protocol of
//!   `idle.rs` through the real worker loop (`park_*`: a task pushed while
//!   a worker goes to sleep is never stranded; a lost wake-up shows as a
//!   loom deadlock), a retake racing a local spawn, fresh tasks reaching
//!   another worker.
//! - `sched/monitor_sleep.rs`: a waking worker never leaves the monitor dozing.
//! - `driver/mod.rs`: a timer armed during, or behind, the driver's turn
//!   is not missed.
//! - `sched_ref.rs`: a runtime's `SchedRef`s racing back to zero free its
//!   state once.
//! - `sched/core_slot.rs`: borrows, visits and the owner's take-away never share
//!   the lent core.
//! - `scope/loom_model.rs`: a child listing itself racing a cancel, an escaped spawn
//!   racing the scope's return, units taken ahead and given back elsewhere.
//! - `chan/spin.rs`: two holds of the spin lock never overlap.
//! - `chan/waiters/loom_model.rs`: capped wake-ups are passed on.
//! - `sync/semaphore.rs`, `sync/notify.rs`: a release or `notify_one`
//!   racing a cancelled waiter is passed on; two acquirers and one
//!   releaser; `notify_waiters` racing a first poll.
//! - `sync/wait_group.rs`: the last `done` racing a waiter that reads the
//!   count is not missed.
//! - `join_set.rs`: an entry's wake racing `join_next`'s take of the
//!   notified queue is not missed; two wakes queue the index once.
//! - `sync/barrier.rs`: two arrivals in either order, one leader.
//! - `sync/once_cell.rs`: two racing initializers, one runs, both see it.
//! - `sync/watch/loom_model.rs`: a send, or the last sender's drop, racing
//!   a `changed()` between its version check and its queueing; the last
//!   receiver's drop racing `closed()`.
//! - `tests/loom_chan.rs`, `tests/loom_chan_zero.rs` (the rendezvous
//!   channel): the channels, through their public API.
//! - `spindle-actor/src/loom_models.rs`: the actor ring and its wake-up
//!   slots.
//!
//! All of them (as `scripts/test-all` runs them):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 \
//!     cargo test -p spindle --release --lib --test 'loom_*'
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 \
//!     cargo test -p spindle-actor --release --lib
//! ```

use crate::loom::{lock, Arc, AtomicUsize, Mutex, Ordering::SeqCst};
use crate::task::registry::Key;
use crate::task::{JoinHandle, Notified, RawTask, Schedule};
use loom::thread;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A scheduler that just queues what it is given.
#[derive(Clone, Default)]
pub(crate) struct TestSched(pub(crate) Arc<Mutex<Vec<Notified>>>);

impl Schedule for TestSched {
    fn schedule(&self, task: Notified) {
        lock(&self.0).push(task);
    }
    fn yield_now(&self, task: Notified) {
        lock(&self.0).push(task);
    }
    fn register(&self, _task: RawTask) -> Option<Key> {
        Some(Key::TEST) // holds the poller's reference once the task is idle
    }
    fn unregister(&self, _task: RawTask, _key: Key) -> bool {
        true
    }
}

impl TestSched {
    pub(crate) fn pop(&self) -> Option<Notified> {
        lock(&self.0).pop()
    }

    pub(crate) fn spawn<F>(&self, f: F) -> (Notified, JoinHandle<F::Output>)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (n, raw) = RawTask::allocate(f, self.clone());
        (n, JoinHandle::new(raw))
    }
}

/// Pending once, remembering its waker in a slot; ready after that.
pub(crate) struct PendingOnce {
    polled: bool,
    waker: Arc<Mutex<Option<std::task::Waker>>>,
}

impl PendingOnce {
    pub(crate) fn new() -> (PendingOnce, Arc<Mutex<Option<std::task::Waker>>>) {
        let slot = Arc::new(Mutex::new(None));
        (
            PendingOnce {
                polled: false,
                waker: slot.clone(),
            },
            slot,
        )
    }
}

impl Future for PendingOnce {
    type Output = usize;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        if self.polled {
            return Poll::Ready(1);
        }
        self.polled = true;
        *lock(&self.waker) = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Polls a JoinHandle from a loom thread until it is ready, parking on a
/// flag set by its waker (a lost join wake-up deadlocks the model).
pub(crate) fn join<T>(mut h: JoinHandle<T>) -> Result<T, crate::JoinError> {
    let woken = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    struct W(
        std::sync::Arc<std::sync::atomic::AtomicBool>,
        loom::thread::Thread,
    );
    impl std::task::Wake for W {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            self.1.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(W(woken.clone(), thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = Pin::new(&mut h).poll(&mut cx) {
            return v;
        }
        while !woken.swap(false, std::sync::atomic::Ordering::SeqCst) {
            thread::park();
        }
    }
}

/// A loom thread that waits for a waker to show up in `slot`, then hands
/// it to `f` (wake it, drop it), racing whatever the test does meanwhile.
fn on_waker(
    slot: Arc<Mutex<Option<std::task::Waker>>>,
    f: impl FnOnce(std::task::Waker) + Send + 'static,
) -> thread::JoinHandle<()> {
    thread::spawn(move || loop {
        if let Some(w) = lock(&slot).take() {
            return f(w);
        }
        thread::yield_now();
    })
}

/// Counts its drops into the shared counter.
struct D(Arc<AtomicUsize>);

impl Drop for D {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn task_wake_while_running_is_not_lost() {
    loom::model(|| {
        let sched = TestSched::default();
        let (fut, slot) = PendingOnce::new();
        let (n, h) = sched.spawn(fut);
        // Wake as soon as the waker exists (maybe while still running).
        let waker_thread = on_waker(slot, std::task::Waker::wake);
        n.run();
        waker_thread.join().unwrap();
        // Exactly one Notified must exist now: the wake was not lost.
        let again = sched.pop().expect("woken task was not rescheduled");
        assert!(sched.pop().is_none());
        again.run();
        assert_eq!(join(h).unwrap(), 1);
    });
}

/// Ready at once, leaving its waker in a slot for someone to wake later.
struct GrabWaker(Arc<Mutex<Option<std::task::Waker>>>);

impl Future for GrabWaker {
    type Output = u8;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u8> {
        *lock(&self.0) = Some(cx.waker().clone());
        Poll::Ready(5)
    }
}

#[test]
fn task_wake_racing_completion_is_a_no_op() {
    loom::model(|| {
        let sched = TestSched::default();
        let slot = Arc::new(Mutex::new(None));
        let (n, h) = sched.spawn(GrabWaker(slot.clone()));
        // Wakes racing the completion of the poll that made the waker.
        let t = on_waker(slot.clone(), std::task::Waker::wake);
        n.run();
        t.join().unwrap();
        assert!(sched.pop().is_none(), "a completed task was scheduled");
        assert_eq!(join(h).unwrap(), 5);
    });
}

#[test]
fn task_abort_racing_completion() {
    loom::model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let sched = TestSched::default();
        let d = D(drops.clone());
        let (fut, _slot) = PendingOnce::new();
        let (n, h) = sched.spawn(async move {
            let _d = d;
            fut.await
        });
        let abort = h.abort_handle();
        let t = thread::spawn(move || abort.abort());
        n.run(); // first poll: Pending (or cancelled if the abort came first)
        t.join().unwrap();
        // Whoever was second, the task must be cancelled or runnable, never lost.
        while let Some(n) = sched.pop() {
            n.run();
        }
        let r = join(h);
        assert!(r.unwrap_err().is_cancelled());
        assert_eq!(drops.load(SeqCst), 1, "future dropped exactly once");
    });
}

#[test]
fn task_join_waker_registration_racing_completion() {
    loom::model(|| {
        let sched = TestSched::default();
        let (n, h) = sched.spawn(async { 9 });
        let t = thread::spawn(move || join(h).unwrap());
        n.run();
        assert_eq!(t.join().unwrap(), 9);
    });
}

#[test]
fn task_handle_dropped_racing_completion_frees_the_output_once() {
    loom::model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let sched = TestSched::default();
        let d = D(drops.clone());
        let (n, h) = sched.spawn(async move { d });
        let t = thread::spawn(move || drop(h));
        n.run();
        t.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1);
    });
}

#[test]
fn task_handle_dropped_with_its_waker_racing_completion() {
    // The handle's drop empties the waker slot when the task is not
    // complete; completion reads it when the handle is still there: never
    // both (loom checks the slot's accesses), and the waker is dropped once.
    struct Noop;
    impl std::task::Wake for Noop {
        fn wake(self: std::sync::Arc<Self>) {}
    }
    loom::model(|| {
        let sched = TestSched::default();
        let (n, mut h) = sched.spawn(async { 9 });
        let noop = std::sync::Arc::new(Noop);
        let waker = std::task::Waker::from(noop.clone());
        assert!(Pin::new(&mut h)
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        drop(waker);
        let t = thread::spawn(move || drop(h));
        n.run();
        t.join().unwrap();
        assert_eq!(std::sync::Arc::strong_count(&noop), 1);
    });
}

/// Runs `n` for its handle `h` as an inline await does (`run_joined`) and
/// returns the output, whichever way it came: straight from the run (the
/// cell then freed, the handle's reference gone with it) or through `h`.
fn run_for_handle<T>(n: Notified, h: JoinHandle<T>) -> Result<T, crate::JoinError> {
    let mut out: Poll<Result<T, crate::task::error::Cause>> = Poll::Pending;
    // SAFETY: `h` is the task's handle, unused meanwhile; `out` has its type.
    if unsafe { n.run_joined(&mut out as *mut _ as *mut ()) } {
        let id = h.id();
        std::mem::forget(h); // its reference went with the freed cell
        match out {
            Poll::Ready(r) => r.map_err(|cause| cause.with_id(id)),
            Poll::Pending => panic!("run_joined said done but left no output"),
        }
    } else {
        join(h)
    }
}

#[test]
fn task_joiner_alone_racing_a_wake_from_its_waker() {
    // The poll leaves a waker clone in a slot and returns Ready; another
    // thread wakes through it. The joiner may free the cell only if that
    // clone is already gone; a wake after completion must schedule nothing.
    loom::model(|| {
        let sched = TestSched::default();
        let slot = Arc::new(Mutex::new(None));
        let (n, h) = sched.spawn(GrabWaker(slot.clone()));
        let t = on_waker(slot.clone(), std::task::Waker::wake);
        assert_eq!(run_for_handle(n, h).unwrap(), 5);
        t.join().unwrap();
        assert!(sched.pop().is_none(), "a completed task was scheduled");
    });
}

/// Ready at once with a drop-counted output, after handing a waker clone to
/// a slot that another thread drops.
struct GrabWakerThen(Arc<Mutex<Option<std::task::Waker>>>, Option<D>);

impl Future for GrabWakerThen {
    type Output = D;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<D> {
        *lock(&self.0) = Some(cx.waker().clone());
        Poll::Ready(self.1.take().expect("polled once"))
    }
}

#[test]
fn task_joiner_alone_racing_a_waker_drop_frees_once() {
    loom::model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let sched = TestSched::default();
        let slot = Arc::new(Mutex::new(None));
        let (n, h) = sched.spawn(GrabWakerThen(slot.clone(), Some(D(drops.clone()))));
        // Drops the last reference but the joiner's two, maybe.
        let t = on_waker(slot.clone(), drop);
        let d = run_for_handle(n, h).unwrap();
        assert_eq!(
            drops.load(SeqCst),
            0,
            "the output dropped before it was taken"
        );
        drop(d);
        t.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1, "output dropped exactly once");
    });
}
