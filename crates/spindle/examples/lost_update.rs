//! A lost update written on purpose, which plain runs never show and a
//! seeded schedule finds and replays.
//!
//! `deposit` reads a balance, awaits (an audit call, here a yield), and
//! writes back what it read plus its amount: a read-modify-write split by
//! an `.await`. `fee` takes its cut in one step. If `fee` runs between a
//! deposit's read and its write, the deposit overwrites the fee.
//!
//! On the FIFO current-thread scheduler the deposit's first await always
//! lets `fee` run before the deposit even reads, so the bug never shows.
//! `spindle::test::explore` runs the same body under seeded random
//! schedules, finds a seed where it shows, and the seed replays it.
//!
//! Run: `cargo run -p spindle --example lost_update`.

use spindle::chan;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

/// The account: 100, then a deposit of 50 and a fee of 1: 149 when right,
/// 150 when the deposit overwrote the fee. (`tests/deterministic.rs`
/// runs this same function.)
pub(crate) async fn day_of_business() -> u64 {
    let balance = Arc::new(AtomicU64::new(100));
    let (done, finished) = chan::unbounded::<()>();
    let (b, tx) = (balance.clone(), done.clone());
    drop(spindle::spawn(async move {
        spindle::yield_now().await; // open the audit record
        let seen = b.load(SeqCst);
        spindle::yield_now().await; // write the audit record
        b.store(seen + 50, SeqCst);
        tx.send(()).await.unwrap();
    }));
    let b = balance.clone();
    drop(spindle::spawn(async move {
        let seen = b.load(SeqCst);
        b.store(seen - 1, SeqCst);
        done.send(()).await.unwrap();
    }));
    for _ in 0..2 {
        finished.recv().await.unwrap();
    }
    balance.load(SeqCst)
}

fn main() {
    let plain = spindle::Builder::new_current_thread().build().unwrap();
    let runs = 1000;
    let wrong = (0..runs)
        .filter(|_| plain.block_on(day_of_business()) != 149)
        .count();
    println!("plain current-thread runtime: {wrong} wrong balances in {runs} runs");

    let found = std::panic::catch_unwind(|| {
        spindle::test::explore(100, || async {
            assert_eq!(day_of_business().await, 149, "lost update");
        })
    });
    let Err(panic) = found else {
        println!("explore: 100 schedules, no lost update");
        return;
    };
    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    println!("explore: {msg}");
    let seed: u64 = msg
        .strip_prefix("seed ")
        .and_then(|s| s.split(':').next())
        .and_then(|s| s.parse().ok())
        .expect("the message names the seed");
    for _ in 0..3 {
        let rt = spindle::Builder::new_deterministic(seed).build().unwrap();
        println!(
            "replay of seed {seed}: balance {}",
            rt.block_on(day_of_business())
        );
    }
}
