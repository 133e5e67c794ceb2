//! The scheduler's run and park policies, seen from tasks: `yield_now` and
//! the cap on consecutive LIFO-slot polls let queued tasks run, a lone
//! message-passing pair stays on one worker, and workers told not to yield
//! before parking still sleep and wake. (The timed guarantees are
//! elsewhere: a child running beside its parent in `semantics.rs`, the
//! cooperative budget in `budget.rs`, a task hidden behind a long poll in
//! `hidden_tasks.rs`.)

mod common;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

rt_test! {
    fn yield_now_lets_others_run() {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let h = spindle::spawn(async move {
            f.store(true, SeqCst);
        });
        let mut spins = 0;
        while !flag.load(SeqCst) {
            spindle::yield_now().await;
            spins += 1;
            assert!(spins < 1_000_000, "yield_now never let the other task run");
        }
        h.await.unwrap();
    }
}

#[test]
fn a_ping_pong_pair_does_not_starve_a_task_queued_behind_it() {
    // One worker: the pair wakes each other through the LIFO slot forever;
    // only the cap on consecutive LIFO polls lets the third task run and
    // stop them. Without it this never finishes (the thread below reports).
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = spindle::Builder::new_multi_thread()
            .workers(1)
            .handoff_after(None)
            .build()
            .unwrap();
        let rounds = rt.block_on(async {
            let stop = Arc::new(AtomicBool::new(false));
            let (to_b, from_a) = spindle::chan::rendezvous::<u64>();
            let (to_a, from_b) = spindle::chan::rendezvous::<u64>();
            let s = stop.clone();
            let a = spindle::spawn(async move {
                let mut rounds = 0u64;
                while !s.load(SeqCst) {
                    to_b.send(rounds).await.unwrap();
                    rounds = from_b.recv().await.unwrap() + 1;
                }
                rounds
            });
            let b = spindle::spawn(async move {
                while let Ok(v) = from_a.recv().await {
                    if to_a.send(v).await.is_err() {
                        break;
                    }
                }
            });
            drop(spindle::spawn(async move { stop.store(true, SeqCst) }));
            let rounds = a.await.unwrap();
            b.await.unwrap();
            rounds
        });
        let _ = done_tx.send(rounds);
    });
    let rounds = done_rx
        .recv_timeout(4 * common::patience())
        .expect("the task behind the ping-pong pair never ran");
    assert!(rounds >= 1);
}

#[test]
#[cfg_attr(miri, ignore = "a scheduling-policy check, not a memory one")]
fn a_lone_ping_pong_pair_stays_on_one_worker() {
    // Each time the pair hits the cap on LIFO polls, the capped task goes to
    // the back of an otherwise empty ring: it is the worker's next task, and
    // waking the idle worker would only get it stolen, splitting the pair
    // across cores (Tokio wakes one there).
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .handoff_after(None)
        .build()
        .unwrap();
    let rounds = 20_000u64;
    let start = std::time::Instant::now();
    let sum = rt.block_on(async move {
        let (to_b, from_a) = spindle::chan::rendezvous::<u64>();
        let (to_a, from_b) = spindle::chan::rendezvous::<u64>();
        let b = spindle::spawn(async move {
            while let Ok(v) = from_a.recv().await {
                to_a.send(v).await.unwrap();
            }
        });
        let a = spindle::spawn(async move {
            let mut sum = 0;
            for i in 0..rounds {
                to_b.send(i).await.unwrap();
                sum += from_b.recv().await.unwrap();
            }
            sum
        });
        let sum = a.await.unwrap();
        b.await.unwrap();
        sum
    });
    let took = start.elapsed();
    assert_eq!(sum, rounds * (rounds - 1) / 2);
    // ~2,500 cap events (two polls per round trip, cap 16); a cap event that
    // woke the other worker would let it steal the capped task, so the pair
    // would move tens of times. Expected: 2 moves (the spawns, taken from
    // the injector). Counted are the moves, not where the polls ran: a
    // worker still searching when the pair starts may steal it once (a few
    // more moves under CPU load), and then the pair lives there.
    //
    // Visits (`hidden_steals`) are counted apart: the monitor's watch takes
    // a task hidden behind a poll it sees running at two looks 50 µs apart,
    // which a pair's polls of a few microseconds show only when the OS
    // preempts their thread (a handful of times a run under
    // AddressSanitizer beside the binary's other tests), so the bound
    // grows with the run's length: one a millisecond. A watch that took the
    // pair at every look would take it 20 times a millisecond.
    let workers = rt.metrics().workers;
    let moves: u64 = workers
        .iter()
        .map(|w| w.steal_operations + w.injector_pops)
        .sum();
    let visits: u64 = workers.iter().map(|w| w.hidden_steals).sum();
    let polls: Vec<u64> = workers.iter().map(|w| w.polls).collect();
    assert!(
        moves <= 6,
        "the pair moved between workers {moves} times (2 are its spawns); polls per worker {polls:?}"
    );
    assert!(
        visits <= took.as_millis() as u64 + 1,
        "visits took the pair {visits} times in {took:?}; polls per worker {polls:?}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "a scheduling-policy check, not a memory one")]
fn workers_told_not_to_yield_before_parking_still_sleep_and_wake_for_a_thread() {
    // `yield_before_park(false)`: the park path without its yield. A plain
    // thread feeds a task with pauses long enough for the workers to park
    // between messages; every message must still be received.
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .yield_before_park(false)
        .build()
        .unwrap();
    let (tx, rx) = spindle::chan::bounded::<u64>(4);
    let feeder = std::thread::spawn(move || {
        for i in 0..50 {
            std::thread::sleep(Duration::from_micros(200));
            tx.send_blocking(i).unwrap();
        }
    });
    let receiver = rt.spawn(async move {
        let mut sum = 0;
        while let Ok(v) = rx.recv().await {
            sum += v;
        }
        sum
    });
    let sum = rt.block_on(receiver).unwrap();
    feeder.join().unwrap();
    assert_eq!(sum, 50 * 49 / 2);
    let parks: u64 = rt.metrics().workers.iter().map(|w| w.parks).sum();
    assert!(
        parks >= 25,
        "{parks} parks: the workers did not sleep between messages"
    );
}
