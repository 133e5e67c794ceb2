//! The lock rows on May's coroutine primitives: `may::sync::Mutex`,
//! `RwLock` and `Semphore` (May's spelling), which park the coroutine, not
//! its thread, while they wait; a coroutine yields with
//! `coroutine::yield_now`.

use super::join;
use may::coroutine;
use may::go;
use may::sync::{Mutex, RwLock, Semphore};
use spindle_peer_common::catalogue::{
    contenders, strided, RW_WRITE_EVERY, SEMAPHORE_PERMITS, SEMAPHORE_TASKS,
};
use spindle_peer_common::witness::Alive;
use std::sync::Arc;

/// semaphore_limit's witness: the permits held now and at most.
pub static HOLDERS: Alive = Alive::new();

/// mutex_uncontended: one coroutine, `n` lock–add–unlock rounds.
pub fn mutex_uncontended(n: u64) -> u64 {
    let m = Mutex::new(0u64);
    for i in 0..n {
        *m.lock().unwrap() += i;
    }
    m.into_inner().unwrap()
}

/// Runs `body(t)` on `tasks` coroutines and sums what they return.
fn sum_coroutines(tasks: u64, body: impl Fn(u64) -> u64 + Send + Sync + 'static) -> u64 {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let body = body.clone();
            go!(move || body(t))
        })
        .collect();
    handles.into_iter().map(join).sum()
}

/// mutex_contended: `4·W` coroutines add their indices under one mutex,
/// yielding after each unlock.
pub fn mutex_contended(n: u64, workers: usize) -> u64 {
    let tasks = contenders(workers);
    let m = Arc::new(Mutex::new(0u64));
    let shared = m.clone();
    sum_coroutines(tasks, move |t| {
        for i in strided(t, tasks, n) {
            *shared.lock().unwrap() += i;
            coroutine::yield_now();
        }
        0
    });
    let total = *m.lock().unwrap();
    total
}

/// rwlock_read_heavy: index `i` writes both halves when `i % 20 == 0`,
/// else reads, checks them and adds `i` to its coroutine's sum.
pub fn rwlock_read_heavy(n: u64, workers: usize) -> u64 {
    let tasks = contenders(workers);
    let lock = Arc::new(RwLock::new((0u64, 0u64)));
    let shared = lock.clone();
    let reads = sum_coroutines(tasks, move |t| {
        let mut seen = 0;
        for i in strided(t, tasks, n) {
            if i % RW_WRITE_EVERY == 0 {
                let mut g = shared.write().unwrap();
                g.0 += i;
                g.1 += i;
            } else {
                let g = shared.read().unwrap();
                assert_eq!(g.0, g.1, "a reader saw half a write");
                seen += i;
            }
            coroutine::yield_now();
        }
        seen
    });
    let written = lock.read().unwrap().0;
    reads + written
}

/// semaphore_limit: 1000 coroutines share 8 permits; each holds its
/// permit across one yield, counted in [`HOLDERS`].
pub fn semaphore_limit(n: u64) -> u64 {
    let sem = Arc::new(Semphore::new(SEMAPHORE_PERMITS));
    sum_coroutines(SEMAPHORE_TASKS, move |t| {
        let mut sum = 0;
        for i in strided(t, SEMAPHORE_TASKS, n) {
            sem.wait();
            HOLDERS.enter();
            coroutine::yield_now();
            HOLDERS.leave();
            sem.post();
            sum += i;
        }
        sum
    })
}
