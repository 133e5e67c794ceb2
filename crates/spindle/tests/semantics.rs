//! Scheduling semantics a user relies on: a spawned task runs concurrently
//! with its parent (timeouts and `select!` around it fire), and the
//! explicit fork–join API keeps inline runs, by name. (A task that keeps
//! finding its operations ready yields to the others: `budget.rs`; a task
//! hidden behind a long poll: `hidden_tasks.rs`.)
//!
//! Timed, with generous bounds: each test proves a behaviour (the timeout
//! fires long before the child ends), not a speed.

mod common;

use common::{compute, counted, Join};
use spindle::time::{sleep, timeout};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs `body` as a task on a two-worker runtime: the parent of each
/// scenario below is itself a task, as a service's handler would be (the
/// thread in `block_on` is no worker: nothing runs inline there).
fn in_a_task<F>(body: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    in_a_task_on(2, body)
}

/// `in_a_task` on `workers` workers.
fn in_a_task_on<F>(workers: usize, body: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let rt = spindle::Builder::new_multi_thread()
        .workers(workers)
        .build()
        .unwrap();
    rt.block_on(async { spindle::spawn(body).await.unwrap() })
}

/// The multi-thread flavours a busy child's concurrency is checked on: one
/// worker (whose core the monitor hands to a new thread while the child
/// computes), two and four.
const WORKER_COUNTS: [usize; 3] = [1, 2, 4];

#[test]
fn a_timeout_around_a_spawned_busy_child_fires_on_time() {
    for workers in WORKER_COUNTS {
        in_a_task_on(workers, async move {
            let start = Instant::now();
            let child = spindle::spawn(async { compute(Duration::from_millis(1500)) });
            let got = timeout(Duration::from_millis(100), child).await;
            let took = start.elapsed();
            assert!(got.is_err(), "{workers} workers: fired? took {took:?}");
            assert!(
                took < Duration::from_millis(500),
                "{workers} workers: fired after {took:?}"
            );
        });
    }
}

#[test]
fn a_select_between_a_spawned_busy_child_and_a_sleep_takes_the_sleep() {
    for workers in WORKER_COUNTS {
        in_a_task_on(workers, async move {
            let start = Instant::now();
            let mut child = spindle::spawn(async { compute(Duration::from_millis(1500)) });
            let sleep_won = spindle::select! {
                _ = &mut child => false,
                _ = sleep(Duration::from_millis(100)) => true,
            };
            let took = start.elapsed();
            assert!(
                sleep_won,
                "{workers} workers: the child's arm won after {took:?}"
            );
            assert!(
                took < Duration::from_millis(500),
                "{workers} workers: took {took:?}"
            );
            child.await.unwrap();
        });
    }
}

#[test]
fn a_race_between_a_spawned_busy_child_and_a_timer_is_won_by_the_timer() {
    in_a_task(async {
        let start = Instant::now();
        let mut busy = spindle::spawn(async { compute(Duration::from_millis(1500)) });
        let timer = spindle::spawn(async { sleep(Duration::from_millis(100)).await });
        let timer_first = spindle::select! {
            _ = &mut busy => false,
            _ = timer => true,
        };
        let took = start.elapsed();
        assert!(timer_first, "the busy child won after {took:?}");
        assert!(
            took < Duration::from_millis(500),
            "the timer won after {took:?}"
        );
        busy.await.unwrap();
    });
}

// ------------------------------------------------------------ fork–join

#[test]
fn a_fork_tree_awaited_in_fork_order_runs_depth_first_inline() {
    // Every pending sibling stays among the worker's fresh tasks (or the
    // newest entries of the current-thread queue), so each await finds its
    // child not started and runs it inline: every task is polled once.
    // (With several workers, idle ones take subtrees and parents wait.)
    for (flavour, rt) in common::one_thread_flavours() {
        let polls = Arc::new(AtomicUsize::new(0));
        let p = polls.clone();
        let tasks = rt.block_on(async move {
            // The root forked on a worker too.
            spindle::spawn(async move { common::tree(p, 4, 3, Join::Fork).await })
                .await
                .unwrap()
        });
        assert_eq!(tasks, 1 + 4 + 16 + 64, "{flavour}");
        assert_eq!(polls.load(SeqCst), 85, "{flavour}: one poll per task");
    }
}

#[test]
fn a_fork_tree_gives_every_output_on_every_flavour() {
    for (flavour, rt) in common::flavours() {
        let polls = Arc::new(AtomicUsize::new(0));
        let p = polls.clone();
        let tasks = rt.block_on(async move { common::tree(p, 6, 4, Join::Fork).await });
        assert_eq!(
            tasks,
            (0..=4).map(|d| 6u64.pow(d)).sum::<u64>(),
            "{flavour}"
        );
    }
}

#[test]
fn awaiting_a_spawned_child_on_a_worker_suspends_the_parent() {
    // Not inline on a multi-thread worker: the parent's first poll ends
    // waiting, and the child runs as its own task.
    let polls = in_a_task(async {
        let (parent, polls) = counted(async { spindle::spawn(async { 5 }).await.unwrap() });
        assert_eq!(spindle::spawn(parent).await.unwrap(), 5);
        polls.load(SeqCst)
    });
    assert_eq!(polls, 2, "suspended once, then woken by the child");
}

#[test]
fn join_here_runs_a_spawned_child_inline_when_asked() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let polls = rt.block_on(async {
        let (parent, polls) =
            counted(async { spindle::spawn(async { 5 }).join_here().await.unwrap() });
        assert_eq!(spindle::spawn(parent).await.unwrap(), 5);
        polls.load(SeqCst)
    });
    assert_eq!(polls, 1, "the child ran inside the parent's only poll");
}

/// Task `n` forks task `n - 1` and awaits it: nested inline runs, `n` deep.
/// Every task's polls are counted in `polls`.
fn fork_chain(n: u32, polls: Arc<AtomicUsize>) -> spindle::Fork<u32> {
    let counter = polls.clone();
    spindle::fork(common::counted_into(
        async move {
            if n == 0 {
                0
            } else {
                fork_chain(n - 1, polls).await.unwrap() + 1
            }
        },
        &counter,
    ))
}

#[test]
fn forks_nested_beyond_the_stack_budget_fall_back_to_queued_tasks() {
    // 256 KiB stacks leave inline runs 32 KiB (an eighth, `sched/inline.rs`);
    // past that a fork's await suspends as a spawn's does, and the child
    // runs as a queued task, instead of overflowing the stack.
    const N: u32 = if cfg!(miri) { 50 } else { 20_000 };
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .thread_stack_size(256 * 1024)
        .build()
        .unwrap();
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let got =
        rt.block_on(async { spindle::spawn(async { fork_chain(N, p).await.unwrap() }).await });
    assert_eq!(got.unwrap(), N);
    assert_fell_back(polls.load(SeqCst), N);
}

/// Task `n` spawns task `n - 1` and awaits it: on the current-thread
/// runtime, nested inline runs, `n` deep. Polls counted as `fork_chain`'s.
fn spawn_chain(n: u32, polls: Arc<AtomicUsize>) -> spindle::JoinHandle<u32> {
    let counter = polls.clone();
    spindle::spawn(common::counted_into(
        async move {
            if n == 0 {
                0
            } else {
                spawn_chain(n - 1, polls).await.unwrap() + 1
            }
        },
        &counter,
    ))
}

#[test]
#[cfg(target_os = "linux")]
fn awaits_nested_beyond_a_small_threads_stack_fall_back_to_queued_tasks() {
    // `block_on` on a thread of 256 KiB: the current-thread runtime's
    // inline runs are bounded by what is left of that thread's stack, not
    // by a worker's default budget. (Linux only: elsewhere that thread's
    // stack is not known, and the default applies.)
    const N: u32 = if cfg!(miri) { 50 } else { 20_000 };
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let got = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let rt = spindle::Builder::new_current_thread().build().unwrap();
            rt.block_on(async { spawn_chain(N, p).await })
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(got.unwrap(), N);
    assert_fell_back(polls.load(SeqCst), N);
}

/// `polls` of a chain of `n + 1` tasks: all inline, one poll a task; each
/// await that fell back suspended its task once more. (Under miri the
/// chain is too short to reach the budget.)
fn assert_fell_back(polls: usize, n: u32) {
    let tasks = n as usize + 1;
    assert!(
        polls > tasks || cfg!(miri),
        "{polls} polls of {tasks} tasks: no await fell back"
    );
    assert!(polls <= 2 * tasks, "{polls} polls of {tasks} tasks");
}
