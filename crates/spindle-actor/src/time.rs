//! Timers for heartbeats, restart backoff and deadlines.
//!
//! TEMPORARY SHIM — replace with `spindle::time::{sleep, sleep_until}` once
//! `crates/spindle/src/time/` lands (check with
//! `grep -rn "pub fn sleep" crates/spindle/src/`). Only [`sleep_until`] and
//! [`sleep`] are used by the rest of the crate, so the swap is this file.
//!
//! # Invariants
//! - One timer thread per process (`spindle-actor-timer`), started on first
//!   use. It owns a min-heap of pending entries under one mutex and sleeps
//!   on a condvar until the earliest deadline or a new earlier entry.
//! - An entry fires once: `fired` is set (Release) before its waker is taken
//!   and woken, outside the lock. A [`Sleep`] is ready when the clock has
//!   passed its deadline, whatever the entry says, so a late or early wake
//!   is harmless.
//! - A dropped `Sleep` leaves its entry in the heap until it fires (no
//!   cancellation): a cost bounded by the number of live timers.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

struct Entry {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

struct Pending {
    at: Instant,
    seq: u64,
    entry: Arc<Entry>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    /// Reversed: `BinaryHeap` is a max-heap, the earliest deadline must top it.
    fn cmp(&self, o: &Self) -> CmpOrdering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Default)]
struct Heap {
    heap: BinaryHeap<Pending>,
    seq: u64,
}

struct Timer {
    heap: Mutex<Heap>,
    cv: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let t: &'static Timer = Box::leak(Box::new(Timer {
            heap: Mutex::new(Heap::default()),
            cv: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("spindle-actor-timer".into())
            .spawn(move || t.run())
            .expect("cannot start the timer thread");
        t
    })
}

impl Timer {
    fn run(&self) {
        let mut g = self.heap.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while g.heap.peek().is_some_and(|p| p.at <= now) {
                due.push(g.heap.pop().expect("peeked").entry);
            }
            if !due.is_empty() {
                drop(g);
                for e in due {
                    e.fired.store(true, Ordering::Release);
                    let w = e.waker.lock().unwrap_or_else(|p| p.into_inner()).take();
                    if let Some(w) = w {
                        w.wake();
                    }
                }
                g = self.heap.lock().unwrap_or_else(|p| p.into_inner());
                continue;
            }
            g = match g.heap.peek().map(|p| p.at) {
                Some(at) => {
                    self.cv
                        .wait_timeout(g, at.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.cv.wait(g).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    fn add(&self, at: Instant, entry: Arc<Entry>) {
        let mut g = self.heap.lock().unwrap_or_else(|p| p.into_inner());
        g.seq += 1;
        let seq = g.seq;
        let earliest = g.heap.peek().is_none_or(|p| at < p.at);
        g.heap.push(Pending { at, seq, entry });
        drop(g);
        if earliest {
            self.cv.notify_one();
        }
    }
}

/// Completes at `deadline`.
pub(crate) fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        entry: None,
    }
}

/// Completes after `d`.
pub(crate) fn sleep(d: Duration) -> Sleep {
    sleep_until(Instant::now() + d)
}

/// Future of [`sleep_until`] / [`sleep`].
#[must_use = "futures do nothing unless polled"]
pub(crate) struct Sleep {
    deadline: Instant,
    entry: Option<Arc<Entry>>,
}

impl Sleep {
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if Instant::now() >= this.deadline {
            return Poll::Ready(());
        }
        match &this.entry {
            None => {
                let e = Arc::new(Entry {
                    fired: AtomicBool::new(false),
                    waker: Mutex::new(Some(cx.waker().clone())),
                });
                this.entry = Some(e.clone());
                timer().add(this.deadline, e);
            }
            Some(e) => {
                // Acquire: pairs with the timer thread's Release store.
                if e.fired.load(Ordering::Acquire) {
                    // Fired but the clock says early (coarse clocks): sleep again.
                    this.entry = None;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                let mut g = e.waker.lock().unwrap_or_else(|p| p.into_inner());
                match &*g {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => *g = Some(cx.waker().clone()),
                }
                drop(g);
                // Fired while we swapped the waker: its wake may have gone
                // to the old one; do not miss it.
                if e.fired.load(Ordering::Acquire) {
                    cx.waker().wake_by_ref();
                }
            }
        }
        Poll::Pending
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn sleeps_in_order() {
        let rt = spindle::Builder::new_current_thread().build().unwrap();
        let t0 = Instant::now();
        rt.block_on(async {
            sleep(Duration::from_millis(20)).await;
            sleep(Duration::from_millis(1)).await;
        });
        assert!(t0.elapsed() >= Duration::from_millis(21));
    }
}
