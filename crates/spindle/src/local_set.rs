//! [`LocalSet`] and [`spawn_local`]: tasks that need not be `Send`, run
//! on the one thread that polls their set, as Tokio's.
//!
//! A set keeps its tasks (boxed futures, `!Send`) in a slab on its own
//! thread, and a ready queue that any thread may push to: a local task's
//! waker is `Send` because waking only pushes the task's index and wakes
//! whoever polls the set. [`LocalSet::run_until`] polls the future given
//! to it and, between its polls, the ready local tasks; inside it,
//! [`spawn_local`] spawns onto the set. A current-thread runtime's
//! `block_on` runs its future inside a set of its own, so `spawn_local`
//! works there without one.
//!
//! Each local task's poll has a budget of its own (`task::coop`), as a
//! spawned task's, and is bounded as one is. The set's thread runs up to
//! `RUN_BATCH` of them per poll of `run_until`, so on the current-thread
//! runtime that poll (and the spawned tasks and timers behind it) can last
//! as long as that many busy tasks' polls.
//!
//! Invariants:
//! - A task is polled only by the thread that owns the set, inside
//!   `run_until` (the set is `!Send`; the ready queue is the only shared
//!   part, and holds indices, never tasks).
//! - A wake of a finished task whose slot was reused polls the new task
//!   once for nothing, which a future must tolerate; it never polls a
//!   freed slot (a `None` is skipped).
//! - Dropping the set drops its tasks (each local join handle then
//!   reports a cancelled task).

use crate::loom::lock_std;
use crate::task::error::Cause;
use crate::task::JoinError;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// Local tasks run per poll of `run_until` before it yields to its
/// runtime (and wakes itself), so that a busy set does not starve the
/// runtime's other work.
const RUN_BATCH: usize = 61;

thread_local! {
    /// The set whose `run_until` is polling on this thread now.
    static CURRENT: RefCell<Option<Rc<Inner>>> = const { RefCell::new(None) };
}

/// A set of `!Send` tasks, run on the thread that polls
/// [`run_until`](LocalSet::run_until).
///
/// ```
/// use std::rc::Rc;
/// let rt = spindle::Builder::new_multi_thread().workers(2).build().unwrap();
/// let local = spindle::LocalSet::new();
/// let n = local.block_on(&rt, async {
///     let shared = Rc::new(5); // not Send
///     let s = shared.clone();
///     spindle::spawn_local(async move { *s + 1 }).await.unwrap()
/// });
/// assert_eq!(n, 6);
/// ```
pub struct LocalSet {
    inner: Rc<Inner>,
    _not_send: PhantomData<*const ()>,
}

struct Inner {
    tasks: RefCell<Vec<Option<LocalTask>>>,
    free: RefCell<Vec<usize>>,
    /// Tasks spawned and not finished: while none is, `run_until` costs
    /// its future's poll and nothing more (no waker to register).
    live: std::cell::Cell<usize>,
    ready: Arc<Ready>,
}

type LocalTask = Pin<Box<dyn Future<Output = ()>>>;

/// What a local task's waker reaches, from any thread.
struct Ready {
    queue: Mutex<VecDeque<usize>>,
    /// Who polls the set's `run_until`, to wake when a task is ready.
    poller: Mutex<Option<Waker>>,
}

impl Ready {
    fn push(&self, index: usize) {
        lock_std(&self.queue).push_back(index);
        if let Some(w) = lock_std(&self.poller).take() {
            w.wake();
        }
    }
}

/// A local task's waker: its index in its set.
struct TaskWaker {
    ready: Arc<Ready>,
    index: usize,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.ready.push(self.index);
    }
}

impl Default for LocalSet {
    fn default() -> Self {
        LocalSet::new()
    }
}

impl LocalSet {
    pub fn new() -> LocalSet {
        LocalSet {
            inner: Rc::new(Inner {
                tasks: RefCell::new(Vec::new()),
                free: RefCell::new(Vec::new()),
                live: std::cell::Cell::new(0),
                ready: Arc::new(Ready {
                    queue: Mutex::new(VecDeque::new()),
                    poller: Mutex::new(None),
                }),
            }),
            _not_send: PhantomData,
        }
    }

    /// Spawns `future` onto this set; it runs while the set's
    /// [`run_until`](LocalSet::run_until) is polled.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> LocalJoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.inner.spawn(future)
    }

    /// Runs `future` to completion, running this set's tasks meanwhile
    /// (and [`spawn_local`] spawns onto this set inside it).
    pub fn run_until<F: Future>(&self, future: F) -> RunUntil<'_, F> {
        RunUntil { set: self, future }
    }

    /// `rt.block_on(self.run_until(future))`.
    pub fn block_on<F: Future>(&self, rt: &crate::Runtime, future: F) -> F::Output {
        rt.block_on(self.run_until(future))
    }

    /// Local tasks not finished yet.
    pub fn len(&self) -> usize {
        self.inner.live.get()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Inner {
    #[track_caller]
    fn spawn<F>(&self, future: F) -> LocalJoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let join = Rc::new(RefCell::new(JoinState::Running(None)));
        let slot = join.clone();
        let future = crate::task::span::instrument(future);
        let id = local_id(&join);
        let task: LocalTask = Box::pin(async move {
            let out = PollAsTask { id, future }.await;
            slot.borrow_mut().finish(out.map_err(Cause::panic));
        });
        let index = match self.free.borrow_mut().pop() {
            Some(i) => {
                self.tasks.borrow_mut()[i] = Some(task);
                i
            }
            None => {
                let mut tasks = self.tasks.borrow_mut();
                tasks.push(Some(task));
                tasks.len() - 1
            }
        };
        self.live.set(self.live.get() + 1);
        self.ready.push(index);
        LocalJoinHandle { join }
    }

    /// Polls one ready task; returns whether there was one.
    fn run_one(&self) -> bool {
        let Some(index) = lock_std(&self.ready.queue).pop_front() else {
            return false;
        };
        // Taken out while it runs, so that it may spawn (which borrows
        // the slab) and so that a panic cannot leave it half-polled.
        let Some(mut task) = self
            .tasks
            .borrow_mut()
            .get_mut(index)
            .and_then(Option::take)
        else {
            return true; // finished already: a stale wake
        };
        let waker = Waker::from(Arc::new(TaskWaker {
            ready: self.ready.clone(),
            index,
        }));
        // A task: a budget of its own for each poll, as a spawned task's
        // (none on a thread no spindle scheduler runs).
        let polled = crate::task::coop::with_own_budget(crate::task::coop::task_units(), || {
            task.as_mut().poll(&mut Context::from_waker(&waker))
        });
        if polled.is_ready() {
            self.free.borrow_mut().push(index);
            self.live.set(self.live.get() - 1);
        } else {
            self.tasks.borrow_mut()[index] = Some(task);
        }
        true
    }
}

/// The future of [`LocalSet::run_until`].
#[must_use = "futures do nothing unless polled"]
pub struct RunUntil<'a, F> {
    set: &'a LocalSet,
    future: F,
}

impl<F: Future> Future for RunUntil<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: only `future` is pinned and it is never moved out of
        // `this`; `set` is a shared reference.
        let this = unsafe { self.get_unchecked_mut() };
        let inner = &this.set.inner;
        let _current = Enter::set(inner.clone());
        // SAFETY: `future` lives in the pinned `self` and is never moved.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        if let Poll::Ready(out) = future.poll(cx) {
            return Poll::Ready(out);
        }
        if inner.live.get() == 0 {
            return Poll::Pending; // no task, so no task's waker to hear
        }
        // Registered before the queue is read: a wake after the last read
        // finds the waker and wakes us.
        match &mut *lock_std(&inner.ready.poller) {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        for _ in 0..RUN_BATCH {
            if !inner.run_one() {
                return Poll::Pending;
            }
        }
        // More may be ready: come back after the runtime's other work.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Makes a set the current one on this thread until dropped (nesting
/// restores the outer one).
struct Enter(Option<Rc<Inner>>);

impl Enter {
    fn set(inner: Rc<Inner>) -> Enter {
        Enter(CURRENT.with(|c| c.replace(Some(inner))))
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = self.0.take());
    }
}

/// Spawns a `!Send` future onto the current [`LocalSet`].
///
/// # Panics
/// Outside a `LocalSet`'s `run_until` and outside a current-thread
/// runtime's `block_on`; the message says where to call it.
#[track_caller]
pub fn spawn_local<F>(future: F) -> LocalJoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let set = CURRENT.with(|c| c.borrow().clone());
    match set {
        Some(set) => set.spawn(future),
        None => panic!(
            "spindle::spawn_local called outside a LocalSet: call it inside \
             LocalSet::run_until (or LocalSet::block_on), or inside a current-thread \
             runtime's block_on"
        ),
    }
}

enum JoinState<T> {
    /// The waker of the handle's last pending poll.
    Running(Option<Waker>),
    Done(Result<T, Cause>),
    Taken,
}

impl<T> JoinState<T> {
    fn finish(&mut self, out: Result<T, Cause>) {
        if let JoinState::Running(Some(w)) = std::mem::replace(self, JoinState::Done(out)) {
            w.wake();
        }
    }
}

/// Awaits a local task's output, as a [`JoinHandle`](crate::JoinHandle)
/// does a task's: `Err` if it panicked or its set was dropped first.
/// Dropping the handle detaches the task.
pub struct LocalJoinHandle<T> {
    join: Rc<RefCell<JoinState<T>>>,
}

impl<T> LocalJoinHandle<T> {
    /// The local task's id (what [`task::id`](crate::task::id) returns
    /// inside it).
    pub fn id(&self) -> crate::task::Id {
        crate::task::Id::from_addr(local_id(&self.join))
    }

    fn poll_join(&self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>> {
        let mut st = self.join.borrow_mut();
        match std::mem::replace(&mut *st, JoinState::Taken) {
            JoinState::Done(out) => Poll::Ready(out.map_err(|cause| cause.with_id(self.id()))),
            JoinState::Running(_) if Rc::strong_count(&self.join) == 1 => {
                // The task (and the clone it held) is gone unfinished: its
                // set was dropped.
                Poll::Ready(Err(JoinError::cancelled(self.id())))
            }
            JoinState::Running(_) => {
                *st = JoinState::Running(Some(cx.waker().clone()));
                Poll::Pending
            }
            JoinState::Taken => panic!("LocalJoinHandle polled after it returned"),
        }
    }
}

impl<T> Future for LocalJoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // A join spends a unit of the budget when it completes, as a
        // `JoinHandle`'s does.
        crate::task::coop::spend(cx, |cx| self.poll_join(cx))
    }
}

impl<T> std::fmt::Debug for LocalJoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let done = matches!(*self.join.borrow(), JoinState::Done(_));
        f.debug_struct("LocalJoinHandle")
            .field("finished", &done)
            .finish()
    }
}

impl std::fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSet")
            .field("tasks", &self.len())
            .finish()
    }
}

/// A local task's id: the address of its join state, which lives as long
/// as the task or its handle (so no task alive at the same time has it).
fn local_id<T>(join: &Rc<RefCell<JoinState<T>>>) -> usize {
    Rc::as_ptr(join) as usize
}

/// Polls a local task's future as a task: with its id current
/// (`task::id`), and a panic of its poll caught as `Err`.
struct PollAsTask<F> {
    id: usize,
    future: F,
}

impl<F: Future> Future for PollAsTask<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let _polling = crate::task::id::Polling::enter(self.id);
        // SAFETY: `future` is structurally pinned: never moved out of the
        // pinned `PollAsTask`.
        let future = unsafe { self.map_unchecked_mut(|c| &mut c.future) };
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}
