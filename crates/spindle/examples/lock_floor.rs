//! What an uncontended async lock costs at the least on this machine: one
//! task locks and unlocks `n` times with `spindle::sync::Mutex`, then with
//! a future that is nothing but the two compare-exchanges a lock needs,
//! beside `std::sync::Mutex` on a plain thread. Alternating, three rounds.
//!
//! ```text
//! cargo run --release -p spindle --example lock_floor [n]
//! ```
//!
//! The second figure is the floor of any awaited lock: the same atomics as
//! std's mutex, plus the task's state kept in memory across each `.await`.

use std::cell::UnsafeCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::task::{Context, Poll};
use std::time::Instant;

/// A lock with no queue: `Pending` (never woken) if it is held.
struct BareLock {
    locked: AtomicBool,
    value: UnsafeCell<u64>,
}

// SAFETY: `value` is touched only by the holder of `locked`.
unsafe impl Sync for BareLock {}

struct BareGuard<'a>(&'a BareLock);

impl Drop for BareGuard<'_> {
    fn drop(&mut self) {
        let _ = self
            .0
            .locked
            .compare_exchange(true, false, Release, Relaxed);
    }
}

struct BareLocking<'a>(&'a BareLock);

impl<'a> Future for BareLocking<'a> {
    type Output = BareGuard<'a>;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<BareGuard<'a>> {
        match self
            .0
            .locked
            .compare_exchange(false, true, Acquire, Relaxed)
        {
            Ok(_) => Poll::Ready(BareGuard(self.0)),
            Err(_) => Poll::Pending,
        }
    }
}

fn timed(name: &str, n: u64, f: impl FnOnce() -> u64) {
    let start = Instant::now();
    let sum = f();
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(sum, n * (n - 1) / 2, "{name}: wrong sum");
    println!("{name:32} {ns:6.2} ns a lock and unlock");
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(20_000_000, |s| s.parse().expect("n: a whole number"));
    let rt = spindle::Runtime::new().expect("a runtime");
    for _ in 0..3 {
        timed("spindle::sync::Mutex in a task", n, || {
            rt.block_on(async move {
                spindle::spawn(async move {
                    let m = spindle::sync::Mutex::new(0u64);
                    for i in 0..n {
                        *m.lock().await += i;
                    }
                    m.into_inner()
                })
                .await
                .unwrap()
            })
        });
        timed("two compare-exchanges in a task", n, || {
            rt.block_on(async move {
                spindle::spawn(async move {
                    let lock = BareLock {
                        locked: AtomicBool::new(false),
                        value: UnsafeCell::new(0),
                    };
                    for i in 0..n {
                        let guard = BareLocking(&lock).await;
                        // SAFETY: `guard` holds the lock.
                        unsafe { *guard.0.value.get() += i };
                    }
                    lock.value.into_inner()
                })
                .await
                .unwrap()
            })
        });
        timed("std::sync::Mutex on a thread", n, || {
            let m = std::sync::Mutex::new(0u64);
            for i in 0..n {
                *m.lock().unwrap() += i;
            }
            m.into_inner().unwrap()
        });
    }
}
