//! How long a task woken or spawned by a long poll waits while another
//! worker idles: the time from the wake (or spawn) to the task's first
//! poll, on a 2-worker runtime with the default settings.
//!
//! `cargo run --release -p spindle --example hidden_wait [trials]`

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_millis(200);

/// One trial: task `a` wakes (or spawns) `b`, then computes until `b`
/// has run or `LIMIT` passed; the wait `b` saw.
fn trial(rt: &spindle::Runtime, spawned: bool) -> Duration {
    rt.block_on(async move {
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let a = if spawned {
            spindle::spawn(async move {
                let start = Instant::now();
                let b = spindle::spawn(async move { r.store(true, SeqCst) });
                spin_until(&ran, start);
                let waited = start.elapsed();
                b.await.unwrap();
                waited
            })
        } else {
            let (tx, rx) = spindle::chan::bounded::<()>(1);
            let b = spindle::spawn(async move {
                rx.recv().await.unwrap();
                r.store(true, SeqCst);
            });
            // Let `b` park on its receive first.
            spindle::time::sleep(Duration::from_millis(2)).await;
            spindle::spawn(async move {
                let start = Instant::now();
                tx.send(()).await.unwrap();
                spin_until(&ran, start);
                let waited = start.elapsed();
                b.await.unwrap();
                waited
            })
        };
        a.await.unwrap()
    })
}

fn spin_until(flag: &AtomicBool, start: Instant) {
    while !flag.load(SeqCst) && start.elapsed() < LIMIT {
        std::hint::spin_loop();
    }
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .map_or(40, |s| s.parse().expect("trials: a whole number"));
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    for (name, spawned) in [("woken", false), ("spawned", true)] {
        let mut waits: Vec<Duration> = (0..trials)
            .map(|_| {
                // Let the other worker fall asleep first.
                std::thread::sleep(Duration::from_millis(5));
                trial(&rt, spawned)
            })
            .collect();
        waits.sort();
        let q = |p: usize| waits[(trials - 1) * p / 100];
        println!(
            "{name:8} median {:?}  p90 {:?}  max {:?}",
            q(50),
            q(90),
            q(100)
        );
    }
}
