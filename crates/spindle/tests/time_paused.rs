//! Paused time: `pause`, `advance`, `resume`, auto-advance on a
//! current-thread runtime, `start_paused`, and the misuse messages.

use spindle::time::{self, Duration, Instant};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const HOUR: Duration = Duration::from_secs(3600);
const MS: Duration = Duration::from_millis(1);

fn paused() -> spindle::Runtime {
    spindle::Builder::new_current_thread()
        .start_paused(true)
        .build()
        .unwrap()
}

fn panic_text(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(f).expect_err("expected a panic");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn an_hour_of_sleep_takes_no_real_time() {
    let real = Instant::now();
    paused().block_on(async {
        let start = time::now();
        time::sleep(HOUR).await;
        let slept = time::now() - start;
        assert!(slept >= HOUR && slept < HOUR + 2 * MS, "{slept:?}");
    });
    assert!(
        real.elapsed() < Duration::from_secs(30),
        "{:?}",
        real.elapsed()
    );
}

#[test]
fn timers_fire_in_deadline_order_at_their_virtual_times() {
    paused().block_on(async {
        let start = time::now();
        let (tx, rx) = spindle::chan::unbounded();
        for ms in [30u64, 10, 20] {
            let tx = tx.clone();
            drop(spindle::spawn(async move {
                time::sleep(Duration::from_millis(ms)).await;
                tx.send((ms, time::now())).await.unwrap();
            }));
        }
        drop(tx);
        let mut order = Vec::new();
        while let Ok((ms, at)) = rx.recv().await {
            let late = at - start - Duration::from_millis(ms);
            assert!(late < 2 * MS, "{ms} ms fired {late:?} late");
            order.push(ms);
        }
        assert_eq!(order, [10, 20, 30]);
    });
}

#[test]
fn advance_fires_only_what_came_due() {
    paused().block_on(async {
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        let sleeper = spindle::spawn(async move {
            time::sleep(Duration::from_millis(10)).await;
            f.store(true, Ordering::SeqCst);
        });
        spindle::yield_now().await; // the sleeper arms its timer
        time::advance(Duration::from_millis(5)).await;
        spindle::yield_now().await;
        assert!(!fired.load(Ordering::SeqCst), "fired 5 ms early");
        time::advance(Duration::from_millis(5)).await;
        sleeper.await.unwrap();
        assert!(fired.load(Ordering::SeqCst));
    });
}

#[test]
fn a_timeout_around_a_spawned_task_fires() {
    paused().block_on(async {
        let work = spindle::spawn(std::future::pending::<()>());
        let r = time::timeout(Duration::from_millis(100), work).await;
        assert!(r.is_err(), "the timeout never fired");
    });
}

#[test]
fn a_channel_timeout_follows_the_paused_clock() {
    paused().block_on(async {
        let (_tx, rx) = spindle::chan::bounded::<u8>(1);
        let start = time::now();
        assert!(rx.recv_timeout(HOUR).await.is_err());
        assert!(time::now() - start >= HOUR);
    });
}

#[test]
fn an_interval_ticks_on_its_virtual_schedule() {
    paused().block_on(async {
        let mut every = time::interval(Duration::from_millis(10));
        let first = every.tick().await;
        for k in 1..=5u32 {
            let at = every.tick().await;
            assert_eq!(at - first, Duration::from_millis(10) * k);
        }
    });
}

#[test]
fn no_auto_advance_while_a_blocking_call_runs() {
    paused().block_on(async {
        let blocking = spindle::spawn_blocking(|| std::thread::sleep(Duration::from_millis(50)));
        let won = spindle::select! {
            biased;
            _ = blocking => "blocking",
            _ = time::sleep(HOUR) => "timer",
        };
        assert_eq!(
            won, "blocking",
            "the clock jumped past a blocking call in flight"
        );
    });
}

#[test]
fn resume_runs_on_from_the_advanced_time() {
    paused().block_on(async {
        let before = time::now();
        time::advance(HOUR).await;
        time::resume();
        let after = time::now();
        assert!(after - before >= HOUR);
        time::sleep(MS).await; // real time again
        assert!(time::now() > after);
        time::pause();
        let frozen = time::now();
        assert_eq!(time::now(), frozen);
    });
}

#[test]
fn misuse_panics_say_what_to_do() {
    let t = panic_text(time::pause);
    assert!(t.contains("outside a spindle runtime"), "{t}");
    let t = panic_text(|| {
        spindle::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(time::advance(MS))
    });
    assert!(t.contains("not paused") && t.contains("pause()"), "{t}");
    let t = panic_text(|| paused().block_on(async { time::pause() }));
    assert!(t.contains("already paused"), "{t}");
    let t = panic_text(|| {
        spindle::Builder::new_multi_thread()
            .workers(1)
            .build()
            .unwrap()
            .block_on(async { time::pause() })
    });
    assert!(
        t.contains("multi-thread") && t.contains("current-thread"),
        "{t}"
    );
    let t = panic_text(|| {
        spindle::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(async { time::resume() })
    });
    assert!(t.contains("not paused"), "{t}");
}

#[test]
fn start_paused_on_a_multi_thread_runtime_is_refused() {
    let built = spindle::Builder::new_multi_thread()
        .start_paused(true)
        .build();
    let Err(e) = built else {
        panic!("built a paused multi-thread runtime")
    };
    assert!(matches!(e, spindle::BuildError::PausedMultiThread));
    assert!(e.to_string().contains("current-thread"), "{e}");
}

#[spindle::test(start_paused = true)]
async fn the_test_attribute_starts_paused() {
    let start = time::now();
    time::sleep(HOUR).await;
    assert!(time::now() - start >= HOUR);
}

#[test]
fn real_time_is_untouched_outside_a_paused_runtime() {
    let a = time::now();
    std::thread::sleep(MS);
    assert!(time::now() >= a + MS);
}

/// `spindle::time::Instant` reads the runtime's clock, as Tokio's does: a
/// test written with `Instant::now()` and `elapsed()` sees virtual time,
/// while `std::time::Instant` keeps reading the real clock.
#[test]
fn the_runtimes_instant_follows_paused_time_and_std_does_not() {
    paused().block_on(async {
        let start = Instant::now();
        let real = std::time::Instant::now();
        time::sleep(HOUR).await;
        assert!(start.elapsed() >= HOUR, "{:?}", start.elapsed());
        assert!(real.elapsed() < HOUR);
        assert_eq!(Instant::now(), time::now());
        time::advance(HOUR).await;
        assert!(Instant::now() - start >= 2 * HOUR);
        // The same moment either way round.
        assert_eq!(Instant::from_std(start.into_std()), start);
        let std: std::time::Instant = start.into();
        assert_eq!(Instant::from(std), start);
        let mut later = start;
        later += MS;
        assert_eq!(later - start, MS);
        assert_eq!(start - later, Duration::ZERO, "saturates, as std's");
        assert_eq!(start.checked_duration_since(later), None);
        later -= MS;
        assert_eq!(later, start);
    });
}
