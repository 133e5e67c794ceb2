//! `spindle::join`: both results on every flavour and outside a runtime,
//! idle workers steal the second closure, panics come out once both ran,
//! and deep nesting (a divide-and-conquer tree) gives the right sum.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sum of `lo..hi` by halving, with a `join` at every split.
fn tree_sum(lo: u64, hi: u64) -> u64 {
    if hi - lo <= 1 {
        return lo;
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = spindle::join(|| tree_sum(lo, mid), || tree_sum(mid, hi));
    a + b
}

#[test]
fn join_gives_both_results_on_every_flavour_and_outside_a_runtime() {
    assert_eq!(spindle::join(|| 1, || "two"), (1, "two"));
    for (name, rt) in common::flavours() {
        let sum = rt.block_on(async { spindle::spawn(async { tree_sum(0, 100_000) }).await });
        assert_eq!(sum.unwrap(), 99_999 * 100_000 / 2, "{name}");
    }
}

#[test]
fn an_idle_worker_steals_the_second_closure() {
    // `a` waits (up to patience) for `b` to have run on another thread:
    // only a thief can make that happen, since `b` would otherwise run
    // here after `a`.
    let rt = two_workers();
    let (ran_beside, b_thread, migrated) = rt.block_on(async {
        spindle::spawn(async {
            let b_ran = AtomicUsize::new(0);
            let here = std::thread::current().id();
            let (beside, (b_thread, migrated)) = spindle::join_context(
                |_| {
                    let start = Instant::now();
                    while b_ran.load(SeqCst) == 0 && start.elapsed() < common::patience() {
                        std::hint::spin_loop();
                    }
                    b_ran.load(SeqCst) == 1
                },
                |ctx| {
                    b_ran.store(1, SeqCst);
                    (std::thread::current().id(), ctx.migrated())
                },
            );
            (beside, b_thread != here, migrated)
        })
        .await
        .unwrap()
    });
    assert!(ran_beside, "the second closure waited for the first");
    assert!(b_thread, "the second closure ran on the caller's thread");
    assert!(migrated, "a stolen closure was told it was not");
}

#[test]
fn a_closure_run_by_its_caller_is_not_migrated() {
    let run = || spindle::join_context(|a| a.migrated(), |b| b.migrated());
    assert_eq!(run(), (false, false), "outside a runtime");
    // With more than one worker a thief may take the second closure.
    for (name, rt) in common::one_thread_flavours() {
        let got = rt.block_on(async move { spindle::spawn(async move { run() }).await });
        assert_eq!(got.unwrap(), (false, false), "{name}");
    }
}

#[test]
fn a_tree_of_joins_spreads_over_the_workers() {
    type Threads = Mutex<HashSet<std::thread::ThreadId>>;
    fn leaves(depth: u32, threads: &Threads) -> u64 {
        if depth == 0 {
            threads.lock().unwrap().insert(std::thread::current().id());
            std::thread::sleep(Duration::from_micros(200));
            return 1;
        }
        let (a, b) = spindle::join(|| leaves(depth - 1, threads), || leaves(depth - 1, threads));
        a + b
    }
    let rt = two_workers();
    let threads = Arc::new(Threads::default());
    let t = threads.clone();
    let n = rt.block_on(async move { spindle::spawn(async move { leaves(8, &t) }).await });
    assert_eq!(n.unwrap(), 256);
    let used = threads.lock().unwrap().len();
    assert!(used >= 2, "the leaves ran on {used} thread(s)");
}

#[test]
fn a_panic_in_either_closure_comes_out_of_join_after_both_ran() {
    let rt = two_workers();
    let out = rt.block_on(async {
        spindle::spawn(async {
            let b_ran = AtomicUsize::new(0);
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                spindle::join(|| panic!("a failed"), || b_ran.fetch_add(1, SeqCst))
            }));
            let a_msg = *caught.unwrap_err().downcast::<&str>().unwrap();
            let caught = std::panic::catch_unwind(|| spindle::join(|| 1, || panic!("b failed")));
            let b_msg = *caught.unwrap_err().downcast::<&str>().unwrap();
            (a_msg, b_ran.load(SeqCst), b_msg)
        })
        .await
        .unwrap()
    });
    assert_eq!(out, ("a failed", 1, "b failed"));
}

/// A runtime with a worker to spare for a thief.
fn two_workers() -> spindle::Runtime {
    spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap()
}
