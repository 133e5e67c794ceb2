//! Spawns a million tasks, joins them, and prints what happened.
//!
//! `cargo run --release -p spindle --example million [TASKS] [WORKERS]`
//! (WORKERS 0: the current-thread scheduler).

use std::time::Instant;

fn main() {
    let rt = spindle::Runtime::new().expect("runtime");
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let start = Instant::now();
    let sum = rt.block_on(async move {
        spindle::spawn(async move {
            let handles: Vec<_> = (0..n).map(|i| spindle::spawn(async move { i })).collect();
            let mut sum = 0u64;
            for h in handles {
                sum += h.await.expect("task");
            }
            sum
        })
        .await
        .expect("driver")
    });
    let elapsed = start.elapsed();
    assert_eq!(sum, n * (n - 1) / 2, "wrong sum");
    let m = rt.metrics();
    println!(
        "spawned and joined {n} tasks on {} workers in {:.1} ms ({:.0} ns/task); sum {sum} checked",
        rt.workers(),
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_nanos() as f64 / n as f64
    );
    println!(
        "polls {} steals {} parks {} lifo hits {} overflows {}",
        m.total(|w| w.polls),
        m.total(|w| w.steals),
        m.total(|w| w.parks),
        m.total(|w| w.lifo_hits),
        m.total(|w| w.overflows)
    );
}
