//! The blocking pool behind [`spawn_blocking`]: threads for code that
//! blocks (file I/O, CPU-heavy work, C calls), so the workers stay free.
//!
//! A blocking job is an ordinary task whose future runs the closure on its
//! one poll, scheduled onto this pool instead of a worker: its
//! `JoinHandle`, abort (before it starts), and panic capture are the
//! task's own.
//!
//! The pool grows on demand up to `max_threads`: a job finds an idle thread
//! (woken), or starts a new one, or — at the limit — waits in the queue
//! (counted in `RuntimeMetrics::blocking_queued_at_limit`). A thread idle
//! for `keep_alive` exits. All pool state is under one mutex: jobs are
//! expected to take far longer than the lock.

use crate::loom::{lock, Arc, Condvar, Mutex};
use crate::sched::metrics::BlockingMetrics;
use crate::sched::Handle;
use crate::task::registry::Key;
use crate::task::{JoinHandle, Notified, RawTask, Schedule};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub(crate) struct Pool {
    state: Mutex<State>,
    work: Condvar,
    max_threads: usize,
    keep_alive: Duration,
    thread_name: String,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Notified>,
    /// Threads alive, and how many of them wait for a job.
    threads: usize,
    idle: usize,
    /// Wake-ups owed to idle threads (one per job pushed while they waited).
    wakeups: usize,
    shutdown: bool,
    /// What pool threads `enter` (so `spindle::spawn` works in a job); set
    /// by the runtime once built, taken at shutdown (it points back at the
    /// runtime, which owns this pool).
    handle: Option<Handle>,
    /// Threads started, to join at shutdown (an exiting thread removes itself).
    handles: Vec<(std::thread::ThreadId, std::thread::JoinHandle<()>)>,
    queued_at_limit: u64,
    spawned_threads: u64,
}

impl Pool {
    pub(crate) fn new(max_threads: usize, keep_alive: Duration, thread_name: String) -> Arc<Pool> {
        Arc::new(Pool {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            max_threads: max_threads.max(1),
            keep_alive,
            thread_name,
        })
    }

    pub(crate) fn set_handle(&self, handle: Handle) {
        lock(&self.state).handle = Some(handle);
    }

    pub(crate) fn spawn<F, R>(pool: &Arc<Pool>, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (notified, raw) = RawTask::allocate(BlockingTask(Some(f)), PoolRef(pool.clone()));
        Pool::push(pool, notified);
        JoinHandle::new(raw)
    }

    fn push(pool: &Arc<Pool>, task: Notified) {
        let this = &**pool;
        let mut state = lock(&this.state);
        let handle = match &state.handle {
            Some(h) if !state.shutdown => h.clone(),
            _ => {
                drop(state);
                task.cancel_now(); // shut down: its handle sees Cancelled
                return;
            }
        };
        state.queue.push_back(task);
        if state.idle > state.wakeups {
            state.wakeups += 1;
            this.work.notify_one();
        } else if state.threads < this.max_threads {
            state.threads += 1;
            state.spawned_threads += 1;
            let pool = pool.clone();
            let started = std::thread::Builder::new()
                .name(this.thread_name.clone())
                .spawn(move || pool.run(handle));
            match started {
                Ok(t) => state.handles.push((t.thread().id(), t)),
                Err(_) => {
                    // The OS refused a thread: the job waits for a running
                    // one, or is cancelled if there is none.
                    state.threads -= 1;
                    state.queued_at_limit += 1;
                    if state.threads == 0 {
                        let task = state.queue.pop_back();
                        drop(state);
                        drop(task); // cancels it: JoinError::Cancelled
                    }
                }
            }
        } else {
            state.queued_at_limit += 1;
        }
    }

    /// A pool thread's body.
    fn run(&self, handle: Handle) {
        let _enter = handle.enter();
        let mut state = lock(&self.state);
        loop {
            if let Some(task) = state.queue.pop_front() {
                drop(state);
                task.run();
                state = lock(&self.state);
                continue;
            }
            if state.shutdown {
                break;
            }
            state.idle += 1;
            let (s, timeout) = self
                .work
                .wait_timeout(state, self.keep_alive)
                .unwrap_or_else(|e| e.into_inner());
            state = s;
            state.idle -= 1;
            if state.wakeups > 0 {
                state.wakeups -= 1;
            } else if timeout.timed_out() && state.queue.is_empty() {
                break; // idle for `keep_alive`: retire
            }
        }
        state.threads -= 1;
        let me = std::thread::current().id();
        if let Some(i) = state.handles.iter().position(|(id, _)| *id == me) {
            drop(state.handles.swap_remove(i)); // detach ourselves
        }
    }

    /// Jobs running or waiting for a thread: while any is, a paused clock
    /// does not auto-advance (`current_thread::auto_advance`).
    pub(crate) fn busy(&self) -> usize {
        let state = lock(&self.state);
        state.threads.saturating_sub(state.idle) + state.queue.len()
    }

    pub(crate) fn metrics(&self) -> BlockingMetrics {
        let state = lock(&self.state);
        BlockingMetrics {
            threads: state.threads,
            idle_threads: state.idle,
            queue_depth: state.queue.len(),
            queued_at_limit: state.queued_at_limit,
            spawned_threads: state.spawned_threads,
        }
    }

    /// Cancels queued jobs and waits for running ones (up to `deadline`);
    /// returns whether every pool thread finished.
    pub(crate) fn shut_down(&self, deadline: Option<std::time::Instant>) -> bool {
        let (queued, handles, _handle) = {
            let mut state = lock(&self.state);
            state.shutdown = true;
            self.work.notify_all();
            (
                std::mem::take(&mut state.queue),
                std::mem::take(&mut state.handles),
                state.handle.take(),
            )
        };
        drop(queued); // cancels each: their handles see JoinError::Cancelled
        handles
            .into_iter()
            .fold(true, |all, (_, t)| join_until(t, deadline).is_none() & all)
    }
}

/// The scheduler reference of blocking tasks: scheduling one queues it here.
#[derive(Clone)]
struct PoolRef(Arc<Pool>);

impl Schedule for PoolRef {
    fn schedule(&self, task: Notified) {
        // Scheduled once, at spawn; it completes on its first poll.
        Pool::push(&self.0, task);
    }

    fn yield_now(&self, task: Notified) {
        self.schedule(task);
    }

    fn register(&self, _task: RawTask) -> Option<Key> {
        None // never idle: it completes on its first poll
    }

    fn unregister(&self, _task: RawTask, _key: Key) -> bool {
        false
    }
}

/// Runs the closure on its first poll.
struct BlockingTask<F>(Option<F>);

impl<F> Unpin for BlockingTask<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingTask<F> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<R> {
        let f = self
            .0
            .take()
            .expect("blocking task polled after completion");
        Poll::Ready(f())
    }
}

/// Runs `f` on the runtime's blocking pool and returns a handle to its
/// result. A panic in `f` is caught and returned as `JoinError`; aborting
/// the handle before `f` starts cancels it (a started closure runs to the end).
///
/// # Panics
/// Outside a spindle runtime (use [`Handle::spawn_blocking`]).
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    Handle::current().spawn_blocking(f)
}

/// Joins `t` by `deadline` (`None`: however long it takes); gives it back
/// if it is still running then, or if it is the calling thread.
pub(crate) fn join_until(
    t: std::thread::JoinHandle<()>,
    deadline: Option<Instant>,
) -> Option<std::thread::JoinHandle<()>> {
    if t.thread().id() == std::thread::current().id() {
        return Some(t); // a runtime dropped from one of its own threads
    }
    if let Some(d) = deadline {
        while !t.is_finished() && Instant::now() < d {
            std::thread::sleep(Duration::from_millis(1));
        }
        if !t.is_finished() {
            return Some(t); // it exits after the poll it is stuck in
        }
    }
    let _ = t.join();
    None
}
