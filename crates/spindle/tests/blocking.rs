//! Blocking offload: `spawn_blocking` on every flavour, `block_in_place`,
//! and the monitor's hand-off of a stuck worker's tasks to a new thread.
//!
//! The hand-off tests check that a heartbeat keeps ticking while a task
//! blocks its worker; they ask for a generous fraction of the beats due
//! (a loaded machine delays threads), never a tight time bound.

mod chan_common;
mod common;

use spindle::time::{self, Duration, Instant};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

rt_test! {
    fn spawn_blocking_returns_the_closures_value() {
        let h = spindle::spawn_blocking(|| {
            std::thread::sleep(Duration::from_millis(2));
            6 * 7
        });
        assert_eq!(h.await.unwrap(), 42);
        let hs: Vec<_> = (0..20u64).map(|i| spindle::spawn_blocking(move || i * 2)).collect();
        let mut sum = 0;
        for h in hs {
            sum += h.await.unwrap();
        }
        assert_eq!(sum, 380);
    }
}

rt_test! {
    fn a_panicking_blocking_closure_surfaces_in_its_join_handle() {
        let err = spindle::spawn_blocking(|| -> u32 { panic!("disk on fire") })
            .await
            .unwrap_err();
        assert!(err.is_panic());
        assert!(err.to_string().contains("disk on fire"), "{err}");
        // The pool survives it.
        assert_eq!(spindle::spawn_blocking(|| 1).await.unwrap(), 1);
    }
}

rt_test! {
    fn spawn_blocking_may_spawn_tasks_onto_the_runtime() {
        let h = spindle::spawn_blocking(|| spindle::spawn(async { 5 }));
        assert_eq!(h.await.unwrap().await.unwrap(), 5);
    }
}

#[test]
fn a_pool_at_its_limit_queues_jobs_and_says_so() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .max_blocking_threads(2)
        .build()
        .unwrap();
    rt.block_on(async {
        let running = Arc::new(AtomicU64::new(0));
        let peak = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..10)
            .map(|_| {
                let (running, peak) = (running.clone(), peak.clone());
                spindle::spawn_blocking(move || {
                    let now = running.fetch_add(1, SeqCst) + 1;
                    peak.fetch_max(now, SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    running.fetch_sub(1, SeqCst);
                })
            })
            .collect();
        for h in hs {
            h.await.unwrap();
        }
        assert!(peak.load(SeqCst) <= 2, "ran {} at once", peak.load(SeqCst));
    });
    let m = rt.metrics().blocking;
    assert!(m.queued_at_limit >= 8, "{m:?}");
    assert!(m.spawned_threads <= 2, "{m:?}");
}

#[test]
fn idle_pool_threads_are_reused_then_retire() {
    let rt = spindle::Builder::new_current_thread()
        .blocking_keep_alive(Duration::from_millis(30))
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    rt.block_on(async {
        for i in 0..20 {
            assert_eq!(spindle::spawn_blocking(move || i).await.unwrap(), i);
            // The handle wakes before the thread is back waiting; once it
            // waits, the next job must go to it rather than a new thread.
            assert!(common::until_blocking(|| handle
                .metrics()
                .blocking
                .idle_threads
                == 1));
        }
    });
    let m = rt.metrics().blocking;
    assert_eq!(m.spawned_threads, 1, "one thread, reused: {m:?}");
    assert!(
        common::until_blocking(|| rt.metrics().blocking.threads == 0),
        "the idle thread retired"
    );
}

#[test]
fn shutdown_cancels_queued_jobs_and_waits_for_running_ones() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .max_blocking_threads(1)
        .build()
        .unwrap();
    let finished = Arc::new(AtomicBool::new(false));
    let f = finished.clone();
    let running = rt.spawn_blocking_for_test(move || {
        std::thread::sleep(Duration::from_millis(50));
        f.store(true, SeqCst);
    });
    let queued = rt.spawn_blocking_for_test(|| unreachable!("a queued job ran after shutdown"));
    assert!(common::until_blocking(
        || rt.metrics().blocking.queue_depth == 1
    ));
    drop(rt);
    assert!(finished.load(SeqCst), "drop waited for the running job");
    futures_block(running).unwrap();
    let err = futures_block(queued).unwrap_err();
    assert!(err.is_cancelled(), "{err}");
}

/// A blocking job draining a channel whose sender an idle task holds: the
/// drop of a multi-thread runtime cancels the task (closing the channel)
/// before it waits for the job, so the drop returns.
#[test]
fn drop_cancels_the_tasks_a_blocking_job_waits_on() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let (tx, rx) = spindle::chan::bounded::<u32>(4);
    drop(rt.spawn(async move {
        tx.send(1).await.unwrap();
        std::future::pending::<()>().await; // holds `tx` until cancelled
    }));
    let (first_tx, first_rx) = std::sync::mpsc::channel();
    let drained = rt.spawn_blocking_for_test(move || {
        let mut got = Vec::new();
        while let Ok(v) = rx.recv_blocking() {
            got.push(v);
            let _ = first_tx.send(());
        }
        got
    });
    // The task has sent (and now idles holding `tx`) before the drop: on a
    // loaded machine it might otherwise be cancelled before its first poll.
    first_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(rt);
        done_tx.send(()).unwrap();
    });
    done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("dropping the runtime returned (it waited on a job that waited on a task)");
    assert_eq!(futures_block(drained).unwrap(), [1]);
}

trait SpawnBlockingForTest {
    fn spawn_blocking_for_test<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> spindle::JoinHandle<R>;
}

impl SpawnBlockingForTest for spindle::Runtime {
    fn spawn_blocking_for_test<R: Send + 'static>(
        &self,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> spindle::JoinHandle<R> {
        self.handle().spawn_blocking(f)
    }
}

/// Counts 1 ms heartbeats until `stop`; returns the beats.
fn heartbeat(stop: Arc<AtomicBool>) -> spindle::JoinHandle<u64> {
    spindle::spawn(async move {
        let mut beats = 0;
        let mut iv = time::interval(Duration::from_millis(1));
        while !stop.load(SeqCst) {
            iv.tick().await;
            beats += 1;
        }
        beats
    })
}

/// One worker; a task blocks it for 200 ms via `block`; a heartbeat must
/// keep ticking meanwhile. Returns (beats, ms elapsed, runtime metrics).
fn heartbeat_while_blocked(
    builder: spindle::Builder,
    block: fn(),
) -> (u64, u128, spindle::RuntimeMetrics) {
    let rt = builder.workers(1).build().unwrap();
    let (beats, ms) = rt.block_on(async {
        let stop = Arc::new(AtomicBool::new(false));
        let hb = heartbeat(stop.clone());
        time::sleep(Duration::from_millis(5)).await; // heartbeat running
        let start = Instant::now();
        spindle::spawn(async move { block() }).await.unwrap();
        let ms = start.elapsed().as_millis();
        stop.store(true, SeqCst);
        (hb.await.unwrap(), ms)
    });
    let m = rt.metrics();
    (beats, ms, m)
}

#[test]
fn a_task_blocking_its_worker_is_handed_off_and_the_heartbeat_keeps_ticking() {
    let (beats, ms, m) = heartbeat_while_blocked(spindle::Builder::new_multi_thread(), || {
        std::thread::sleep(Duration::from_millis(200))
    });
    eprintln!(
        "auto hand-off: {beats} beats in {ms} ms, {} hand-offs",
        m.handoffs
    );
    assert!(m.handoffs >= 1, "the monitor never retook the stuck worker");
    assert!(beats >= 50, "heartbeat starved: {beats} beats in {ms} ms");
}

#[test]
fn a_single_worker_busy_in_one_poll_is_handed_off_too() {
    // Not blocked but busy on a CPU: the monitor waits longer (HOG_FACTOR
    // thresholds), then hands the worker's queue off, since nobody else
    // can run what waits behind it.
    let (beats, ms, m) = heartbeat_while_blocked(spindle::Builder::new_multi_thread(), || {
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(200) {
            std::hint::spin_loop();
        }
    });
    eprintln!(
        "busy hand-off: {beats} beats in {ms} ms, {} hand-offs",
        m.handoffs
    );
    assert!(m.handoffs >= 1, "the monitor never retook the busy worker");
    assert!(beats >= 50, "heartbeat starved: {beats} beats in {ms} ms");
}

#[test]
fn block_in_place_hands_the_worker_off_at_once() {
    let (beats, ms, m) = heartbeat_while_blocked(
        spindle::Builder::new_multi_thread().handoff_after(None),
        || spindle::block_in_place(|| std::thread::sleep(Duration::from_millis(200))),
    );
    eprintln!("block_in_place: {beats} beats in {ms} ms");
    assert_eq!(m.handoffs, 1);
    assert!(beats >= 50, "heartbeat starved: {beats} beats in {ms} ms");
}

#[test]
fn without_hand_off_a_blocked_single_worker_starves_the_heartbeat() {
    // The control for the two tests above: the heartbeat is really
    // stuck behind the blocking task when nothing hands the worker off.
    let (beats, ms, m) = heartbeat_while_blocked(
        spindle::Builder::new_multi_thread().handoff_after(None),
        || std::thread::sleep(Duration::from_millis(200)),
    );
    eprintln!("no hand-off: {beats} beats in {ms} ms");
    assert_eq!(m.handoffs, 0);
    assert!(
        beats < 50,
        "{beats} beats: the control did not block anything"
    );
}

#[test]
fn block_in_place_outside_a_worker_runs_in_place() {
    assert_eq!(spindle::block_in_place(|| 3), 3);
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    assert_eq!(rt.block_on(async { spindle::block_in_place(|| 4) }), 4);
}

/// Runs `scenario` on a plain thread and waits for it at most
/// `patience`: a livelock fails the test instead of hanging it (the stuck
/// thread is left behind).
fn within<R: Send + 'static>(what: &str, scenario: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(scenario()).unwrap());
    result
        .recv_timeout(common::patience() * 4)
        .unwrap_or_else(|_| panic!("{what}: still spinning after {:?}", common::patience() * 4))
}

/// Far more ready operations than a task's budget and slice allow in one
/// poll, each made by a blocking wait where a budget could refuse it: a
/// refused wait would wake itself and poll again, refused again, for ever.
/// `recv_blocking` waits without a budget, in the future a multi-thread
/// `block_on` polls (which has one) and inside `block_in_place`; another
/// executor's poll loop (`chan_common::block_on`) inside `block_in_place`,
/// whose closure runs without one. (That loop in a budgeted poll itself
/// sees the poll's budget, as under Tokio's: `block_in_place` or
/// `unconstrained` is the way to run one there.)
#[test]
fn blocking_waits_are_not_refused_by_a_budget() {
    const N: u64 = 100_000;
    type Wait = fn(&spindle::chan::Receiver<u64>) -> u64;
    let recv_blocking: Wait = |rx| rx.recv_blocking().unwrap();
    let poll_loop: Wait = |rx| chan_common::block_on(rx.recv()).unwrap();
    let cases = [
        ("recv_blocking in block_on", recv_blocking, false),
        ("recv_blocking in block_in_place", recv_blocking, true),
        ("a poll loop in block_in_place", poll_loop, true),
    ];
    for (what, wait, in_place) in cases {
        let sum = within(what, move || {
            let rt = spindle::Builder::new_multi_thread()
                .workers(2)
                .build()
                .unwrap();
            let (tx, rx) = spindle::chan::unbounded::<u64>();
            for i in 0..N {
                tx.try_send(i).unwrap();
            }
            let drain = move || (0..N).map(|_| wait(&rx)).sum::<u64>();
            rt.block_on(async move {
                if in_place {
                    spindle::spawn(async move { spindle::block_in_place(drain) })
                        .await
                        .unwrap()
                } else {
                    drain()
                }
            })
        });
        assert_eq!(sum, N * (N - 1) / 2, "{what}");
    }
}

fn futures_block<F: std::future::Future>(f: F) -> F::Output {
    spindle::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}
