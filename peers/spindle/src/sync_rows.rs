//! The synchronisation rows on `spindle::sync` and `spindle::JoinSet`:
//! the async `Mutex`, `RwLock`, `Semaphore` and `Notify` a spindle user
//! reaches for, each task yielding with `spindle::yield_now` where the row
//! says so.

use super::timed;
use spindle::sync::{Mutex, Notify, RwLock, Semaphore};
use spindle::JoinSet;
use spindle_peer_common::catalogue::{
    contenders, strided, RW_WRITE_EVERY, SEMAPHORE_PERMITS, SEMAPHORE_TASKS, WATCHERS,
};
use spindle_peer_common::witness::Alive;
use spindle_peer_common::Measured;
use std::sync::Arc;

/// semaphore_limit's witness: the permits held now and at most.
pub static HOLDERS: Alive = Alive::new();

/// Runs the sync row `name`, timed (the rows of `SYNC_ROWS` this peer
/// supports).
pub async fn run(name: &str, n: u64, workers: usize) -> Measured {
    match name {
        "mutex_uncontended" => timed(mutex_uncontended(n)).await,
        "mutex_contended" => timed(mutex_contended(n, workers)).await,
        "rwlock_read_heavy" => timed(rwlock_read_heavy(n, workers)).await,
        "semaphore_limit" => timed(semaphore_limit(n))
            .await
            .with("peak_holders", HOLDERS.peak()),
        "notify_pingpong" => timed(notify_pingpong(n)).await,
        "watch_fanout" => timed(watch_fanout(n)).await,
        "joinset_drain" => timed(joinset_drain(n)).await,
        other => unreachable!("`{other}` is not a sync row this peer runs"),
    }
}

/// mutex_uncontended: one task, `n` lock–add–unlock rounds.
pub async fn mutex_uncontended(n: u64) -> u64 {
    let m = Mutex::new(0u64);
    for i in 0..n {
        *m.lock().await += i;
    }
    m.into_inner()
}

/// Spawns `tasks` tasks running `body(t)` and sums what they return.
async fn sum_tasks<F>(tasks: u64, body: impl Fn(u64) -> F) -> u64
where
    F: std::future::Future<Output = u64> + Send + 'static,
{
    let handles: Vec<_> = (0..tasks).map(|t| spindle::spawn(body(t))).collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await.unwrap();
    }
    sum
}

/// mutex_contended: `4·W` tasks add their indices under one mutex,
/// yielding after each unlock.
pub async fn mutex_contended(n: u64, workers: usize) -> u64 {
    let tasks = contenders(workers);
    let m = Arc::new(Mutex::new(0u64));
    sum_tasks(tasks, |t| {
        let m = m.clone();
        async move {
            for i in strided(t, tasks, n) {
                *m.lock().await += i;
                spindle::yield_now().await;
            }
            0
        }
    })
    .await;
    let total = *m.lock().await;
    total
}

/// The value rwlock_read_heavy's writers keep in step: a reader that sees
/// `a != b` saw half a write.
#[derive(Default)]
struct Pair {
    a: u64,
    b: u64,
}

/// rwlock_read_heavy: `4·W` tasks; index `i` writes (adds `i` to both
/// halves) when `i % 20 == 0` and otherwise reads, checks the halves agree
/// and adds `i` to its own sum.
pub async fn rwlock_read_heavy(n: u64, workers: usize) -> u64 {
    let tasks = contenders(workers);
    let lock = Arc::new(RwLock::new(Pair::default()));
    let read_sum = sum_tasks(tasks, |t| {
        let lock = lock.clone();
        async move {
            let mut seen = 0;
            for i in strided(t, tasks, n) {
                if i % RW_WRITE_EVERY == 0 {
                    let mut g = lock.write().await;
                    g.a += i;
                    g.b += i;
                } else {
                    let g = lock.read().await;
                    assert_eq!(g.a, g.b, "a reader saw half a write");
                    seen += i;
                }
                spindle::yield_now().await;
            }
            seen
        }
    })
    .await;
    let written = lock.read().await.a;
    read_sum + written
}

/// semaphore_limit: 1000 tasks share 8 permits; each holds its permit
/// across one yield, counted in [`HOLDERS`].
pub async fn semaphore_limit(n: u64) -> u64 {
    let sem = Arc::new(Semaphore::new(SEMAPHORE_PERMITS));
    sum_tasks(SEMAPHORE_TASKS, |t| {
        let sem = sem.clone();
        async move {
            let mut sum = 0;
            for i in strided(t, SEMAPHORE_TASKS, n) {
                let _permit = sem.acquire().await.unwrap();
                HOLDERS.enter();
                spindle::yield_now().await;
                HOLDERS.leave();
                sum += i;
            }
            sum
        }
    })
    .await
}

/// notify_pingpong: the pinger wakes the ponger through one `Notify` and
/// waits on the other, `n` times; a `notify_one` with nobody waiting is
/// stored, so neither side can miss the other's.
pub async fn notify_pingpong(n: u64) -> u64 {
    let (ping, pong) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (ping2, pong2) = (ping.clone(), pong.clone());
    let ponger = spindle::spawn(async move {
        for _ in 0..n {
            ping2.notified().await;
            pong2.notify_one();
        }
    });
    let mut sum = 0;
    for i in 0..n {
        ping.notify_one();
        pong.notified().await;
        sum += i;
    }
    ponger.await.unwrap();
    sum
}

/// watch_fanout: one sender publishes `1..=n` on a `watch` channel,
/// yielding after each; each of the 100 watchers follows the latest value
/// (`changed` + `borrow_and_update`) until it sees `n`, and returns it.
pub async fn watch_fanout(n: u64) -> u64 {
    let (tx, rx) = spindle::sync::watch::channel(0u64);
    let watchers: Vec<_> = (0..WATCHERS)
        .map(|_| {
            let mut rx = rx.clone();
            spindle::spawn(async move {
                loop {
                    let seen = *rx.borrow_and_update();
                    if seen == n || rx.changed().await.is_err() {
                        return seen.max(*rx.borrow());
                    }
                }
            })
        })
        .collect();
    drop(rx);
    for v in 1..=n {
        tx.send(v).expect("the watchers outlive the sends");
        spindle::yield_now().await;
    }
    let mut sum = 0;
    for w in watchers {
        sum += w.await.unwrap();
    }
    sum
}

/// joinset_drain: `n` tasks returning their index into one `JoinSet`,
/// drained in finish order.
pub async fn joinset_drain(n: u64) -> u64 {
    let mut set = JoinSet::new();
    for i in 0..n {
        set.spawn(async move { i });
    }
    let mut sum = 0;
    while let Some(r) = set.join_next().await {
        sum += r.unwrap();
    }
    sum
}
