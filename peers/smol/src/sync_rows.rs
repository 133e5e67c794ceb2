//! The synchronisation rows on the smol-rs crates: `async-lock`'s
//! `Mutex`, `RwLock` and `Semaphore` (smol re-exports `async-lock` as
//! `smol::lock`), `event-listener`'s `Event` for the notification (smol's
//! primitive under every one of those locks), and a `FuturesUnordered` of
//! `Task`s where the row asks for a JoinSet (smol has none: a set of
//! tasks is a collection of their handles).

use super::timed;
use super::EX;
use async_lock::{Mutex, RwLock, Semaphore};
use event_listener::Event;
use futures::stream::{FuturesUnordered, StreamExt as _};
use futures_lite::future::yield_now;
use spindle_peer_common::catalogue::{
    contenders, strided, RW_WRITE_EVERY, SEMAPHORE_PERMITS, SEMAPHORE_TASKS,
};
use spindle_peer_common::witness::Alive;
use spindle_peer_common::Measured;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
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
    F: Future<Output = u64> + Send + 'static,
{
    let handles: Vec<_> = (0..tasks).map(|t| EX.spawn(body(t))).collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await;
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
                yield_now().await;
            }
            0
        }
    })
    .await;
    let total = *m.lock().await;
    total
}

/// The value rwlock_read_heavy's writers keep in step.
#[derive(Default)]
struct Pair {
    a: u64,
    b: u64,
}

/// rwlock_read_heavy: as the spindle peer's, on `async_lock::RwLock`.
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
                yield_now().await;
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
                let _permit = sem.acquire().await;
                HOLDERS.enter();
                yield_now().await;
                HOLDERS.leave();
                sum += i;
            }
            sum
        }
    })
    .await
}

/// A notification that is kept until taken, as Tokio's `Notify` keeps
/// one permit: a flag beside an `Event`, with event-listener's
/// check–listen–check so that a notify between the check and the listen
/// is not missed.
#[derive(Default)]
struct Signal {
    set: AtomicBool,
    event: Event,
}

impl Signal {
    fn notify(&self) {
        self.set.store(true, Ordering::Release);
        self.event.notify(1);
    }

    async fn wait(&self) {
        loop {
            if self.set.swap(false, Ordering::Acquire) {
                return;
            }
            let listener = self.event.listen();
            if self.set.swap(false, Ordering::Acquire) {
                return;
            }
            listener.await;
        }
    }
}

/// notify_pingpong: the pinger signals the ponger and waits on the
/// other signal, `n` times.
pub async fn notify_pingpong(n: u64) -> u64 {
    let (ping, pong) = (Arc::new(Signal::default()), Arc::new(Signal::default()));
    let (ping2, pong2) = (ping.clone(), pong.clone());
    let ponger = EX.spawn(async move {
        for _ in 0..n {
            ping2.wait().await;
            pong2.notify();
        }
    });
    let mut sum = 0;
    for i in 0..n {
        ping.notify();
        pong.wait().await;
        sum += i;
    }
    ponger.await;
    sum
}

/// joinset_drain: `n` tasks returning their index, their `Task`s in one
/// `FuturesUnordered`, drained in finish order.
pub async fn joinset_drain(n: u64) -> u64 {
    let mut set: FuturesUnordered<_> = (0..n).map(|i| EX.spawn(async move { i })).collect();
    let mut sum = 0;
    while let Some(v) = set.next().await {
        sum += v;
    }
    sum
}
