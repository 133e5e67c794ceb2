//! Timers, on every scheduler flavour: never early, in deadline order,
//! cancellation, timeout, interval policies, and timers alongside busy and
//! idle workers. No test asserts an upper bound on lateness beyond a
//! generous sanity limit (the machine is shared and noisy).

mod common;

use common::DropCounter;
use spindle::time::{self, Duration, Instant, MissedTicks};
use std::sync::Arc;

rt_test! {
    fn sleep_never_fires_early() {
        for ms in [1u64, 2, 3, 7, 15, 64, 65, 130] {
            let start = Instant::now();
            time::sleep(Duration::from_millis(ms)).await;
            let took = start.elapsed();
            assert!(took >= Duration::from_millis(ms), "sleep({ms} ms) returned after {took:?}");
        }
    }
}

rt_test! {
    fn sleeps_in_many_tasks_wake_in_deadline_order() {
        // Each task must wake in its own window, after its deadline and
        // before the next one: that is deadline order, with nothing early.
        // A trial that a slow or sanitized build made late (a task first
        // polled after its deadline, or run after the next) says nothing,
        // so it is repeated with the deadlines further off and further
        // apart; a runtime late in every trial fails. (Tasks of timers due
        // in one driver turn run in the order woken: a unit test in
        // `sched/multi_thread/tests.rs`.)
        let trials = [(5, 4), (20, 8), (80, 16), (320, 32), (640, 64)];
        for (lead_ms, gap_ms) in trials {
            let (lead, gap) = (Duration::from_millis(lead_ms), Duration::from_millis(gap_ms));
            if each_wakes_in_its_window(lead, gap).await {
                return;
            }
        }
        panic!("in no trial did all ten timers fire on time");
    }
}

/// Ten tasks, spawned out of order, sleep until deadlines `gap` apart from
/// `lead` from now: whether each filed its timer before its deadline and
/// woke before the next deadline (never before its own: asserted).
async fn each_wakes_in_its_window(lead: Duration, gap: Duration) -> bool {
    let start = Instant::now() + lead;
    let deadline = move |i: u64| start + gap * i as u32;
    let handles: Vec<_> = [9u64, 3, 7, 1, 5, 0, 8, 2, 6, 4]
        .into_iter()
        .map(|i| {
            spindle::spawn(async move {
                let mut sleep = std::pin::pin!(time::sleep_until(deadline(i)));
                let first = std::future::poll_fn(|cx| {
                    std::task::Poll::Ready(std::future::Future::poll(sleep.as_mut(), cx))
                })
                .await;
                let filed_in_time = first.is_pending() && Instant::now() < deadline(i);
                sleep.await;
                let woke = Instant::now();
                assert!(woke >= deadline(i), "timer {i} fired early");
                filed_in_time && woke < deadline(i + 1)
            })
        })
        .collect();
    let mut on_time = true;
    for h in handles {
        on_time &= h.await.unwrap();
    }
    on_time
}

rt_test! {
    fn zero_and_past_deadlines_are_ready_at_once() {
        time::sleep(Duration::ZERO).await;
        time::sleep_until(Instant::now() - Duration::from_secs(1)).await;
        let mut s = time::sleep(Duration::ZERO);
        assert!(futures_util_poll(&mut s).is_ready());
        assert!(s.is_elapsed());
    }
}

rt_test! {
    fn a_sleep_first_polled_after_its_deadline_still_completes() {
        // Its first poll files the passed deadline without reading the
        // clock (`time/sleep.rs`): the wheel finds it due, or the driver's
        // next turn fires it. It must complete, never early.
        let deadline = Instant::now() + Duration::from_millis(1);
        let s = time::sleep_until(deadline);
        let late = time::sleep(Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5)); // both deadlines pass
        s.await;
        late.await;
        assert!(Instant::now() >= deadline);
    }
}

rt_test! {
    fn a_dropped_sleep_frees_its_timer_and_never_wakes_anything() {
        let before = spindle::Handle::current().metrics().timers;
        let mut sleeps: Vec<_> = (0..1000).map(|_| time::sleep(Duration::from_secs(3600))).collect();
        for s in sleeps.iter_mut() {
            assert!(futures_util_poll(s).is_pending());
        }
        assert_eq!(spindle::Handle::current().metrics().timers, before + 1000);
        drop(sleeps);
        assert_eq!(spindle::Handle::current().metrics().timers, before);
    }
}

rt_test! {
    fn timeout_returns_the_output_when_in_time_and_cancels_when_late() {
        assert_eq!(time::timeout(Duration::from_secs(60), async { 5 }).await, Ok(5));
        // A ready future wins even against a zero timeout.
        assert_eq!(time::timeout(Duration::ZERO, async { 6 }).await, Ok(6));

        let drops = DropCounter::new();
        let t = drops.track();
        let start = Instant::now();
        let r = time::timeout(Duration::from_millis(20), async move {
            let _t = t;
            std::future::pending::<()>().await
        })
        .await;
        assert!(r.is_err());
        assert!(start.elapsed() >= Duration::from_millis(20));
        assert_eq!(drops.drops(), 1, "the inner future is dropped on expiry");
        assert_eq!(r.unwrap_err().to_string(), "deadline has elapsed");
    }
}

rt_test! {
    fn timeout_over_a_join_handle_and_a_channel() {
        let (tx, rx) = spindle::chan::bounded::<u32>(1);
        let r = time::timeout(Duration::from_millis(10), rx.recv()).await;
        assert!(r.is_err(), "nothing was sent");
        let h = spindle::spawn(async move {
            time::sleep(Duration::from_millis(5)).await;
            tx.send(9).await.unwrap();
        });
        assert_eq!(time::timeout(Duration::from_secs(60), rx.recv()).await, Ok(Ok(9)));
        h.await.unwrap();
    }
}

rt_test! {
    fn channel_send_and_recv_timeouts_are_async_and_lose_nothing() {
        use spindle::chan::{RecvTimeoutError, SendTimeoutError};
        let (tx, rx) = spindle::chan::bounded::<u32>(1);
        let start = Instant::now();
        assert_eq!(rx.recv_timeout(Duration::from_millis(10)).await, Err(RecvTimeoutError::Timeout));
        assert!(start.elapsed() >= Duration::from_millis(10));
        tx.send_timeout(1, Duration::from_millis(10)).await.unwrap();
        // Full: the value comes back on timeout.
        match tx.send_timeout(2, Duration::from_millis(10)).await {
            Err(SendTimeoutError::Timeout(2)) => {}
            other => panic!("expected Timeout(2), got {other:?}"),
        }
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)).await, Ok(1));
        assert!(rx.try_recv().is_err(), "the timed-out value never entered the channel");
        // A sender that makes room in time succeeds.
        tx.try_send(3).unwrap();
        let rx2 = rx.clone();
        let h = spindle::spawn(async move {
            time::sleep(Duration::from_millis(5)).await;
            rx2.recv().await.unwrap()
        });
        tx.send_timeout(4, Duration::from_secs(60)).await.unwrap();
        assert_eq!(h.await.unwrap(), 3);
        assert_eq!(rx.recv().await, Ok(4));
        drop(tx);
        assert_eq!(rx.recv_timeout(Duration::from_secs(60)).await, Err(RecvTimeoutError::Closed));
    }
}

rt_test! {
    fn select_with_a_sleep_arm_times_out() {
        let (tx, rx) = spindle::chan::bounded::<u32>(1);
        let start = Instant::now();
        let got = spindle::select! {
            v = rx.recv() => Some(v),
            _ = time::sleep(Duration::from_millis(15)) => None,
        };
        assert!(got.is_none());
        assert!(start.elapsed() >= Duration::from_millis(15));
        tx.try_send(1).unwrap();
        let got = spindle::select! {
            v = rx.recv() => Some(v.unwrap()),
            _ = time::sleep(Duration::from_secs(60)) => None,
        };
        assert_eq!(got, Some(1));
    }
}

rt_test! {
    fn interval_ticks_on_schedule_never_early() {
        let period = Duration::from_millis(3);
        let start = Instant::now();
        let mut iv = time::interval_at(start, period);
        let mut prev = None;
        for k in 0..10u32 {
            let due = iv.tick().await;
            // On the grid; with the default Skip policy a late tick (loaded
            // machine) may skip grid points, never add off-grid ones.
            let offset = (due - start).as_nanos();
            assert_eq!(offset % period.as_nanos(), 0, "tick {k} off the grid");
            assert!(offset >= (period * k).as_nanos(), "tick {k} ahead of schedule");
            assert!(Instant::now() >= due, "tick {k} early");
            if let Some(p) = prev {
                assert!(due > p);
            }
            prev = Some(due);
        }
    }
}

rt_test! {
    fn interval_missed_tick_policies() {
        let period = Duration::from_millis(5);
        for policy in [MissedTicks::Burst, MissedTicks::Delay, MissedTicks::Skip] {
            let start = Instant::now();
            let mut iv = time::interval_at(start, period);
            iv.set_missed_ticks(policy);
            iv.tick().await; // at start
            std::thread::sleep(Duration::from_millis(23)); // miss ~4 ticks
            let late = iv.tick().await; // the missed tick at start + period
            assert_eq!(late, start + period);
            let next = iv.tick().await;
            let now = Instant::now();
            match policy {
                MissedTicks::Burst => assert_eq!(next, start + period * 2, "catches up"),
                MissedTicks::Delay => assert!(next >= start + Duration::from_millis(23) + period),
                MissedTicks::Skip => {
                    assert!(next >= start + period * 5, "{policy:?} next {:?}", next - start);
                    assert_eq!((next - start).as_nanos() % period.as_nanos(), 0, "on the grid");
                }
            }
            assert!(now >= next);
        }
    }
}

rt_test! {
    fn timers_fire_while_every_worker_is_busy() {
        // Busy tasks that yield keep the workers from parking; timers must
        // still be served (by the workers' periodic driver turns).
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let busy: Vec<_> = (0..4)
            .map(|_| {
                let stop = stop.clone();
                spindle::spawn(async move {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        spindle::yield_now().await;
                    }
                })
            })
            .collect();
        let start = Instant::now();
        time::sleep(Duration::from_millis(10)).await;
        let took = start.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for b in busy {
            b.await.unwrap();
        }
        assert!(took >= Duration::from_millis(10));
        assert!(took < Duration::from_secs(5), "timer starved behind busy workers: {took:?}");
    }
}

rt_test! {
    fn thousands_of_timers_across_tasks_all_fire() {
        let n = common::scaled(5000) as u64;
        let start = Instant::now();
        let handles: Vec<_> = (0..n)
            .map(|i| {
                spindle::spawn(async move {
                    let d = start + Duration::from_millis(i % 50);
                    time::sleep_until(d).await;
                    assert!(Instant::now() >= d);
                    i
                })
            })
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        assert_eq!(sum, n * (n - 1) / 2);
    }
}

#[test]
fn a_far_deadline_waits_and_shutdown_frees_the_sleeping_task() {
    for (flavour, rt) in common::flavours() {
        eprintln!("-- on {flavour}");
        let drops = DropCounter::new();
        let t = drops.track();
        let h = rt.spawn(async move {
            let _t = t;
            time::sleep(Duration::MAX).await; // never
            time::sleep(Duration::from_secs(1 << 40)).await;
        });
        rt.block_on(time::sleep(Duration::from_millis(5)));
        assert!(!h.is_finished());
        drop(rt);
        assert_eq!(drops.drops(), 1, "{flavour}: the sleeping task was freed");
    }
}

#[test]
fn a_sleep_outliving_its_runtime_still_frees_its_timer() {
    // An armed sleep holds its runtime's driver (`sched/sched_ref.rs`):
    // moved out of the runtime and dropped on a plain thread after the runtime is
    // gone, it still reaches the timer it must free (AddressSanitizer and
    // miri would see a freed driver touched).
    for (flavour, rt) in common::flavours() {
        eprintln!("-- on {flavour}");
        let armed = rt.block_on(async {
            let mut s = Box::pin(time::sleep(Duration::from_secs(3600)));
            std::future::poll_fn(|cx| {
                assert!(std::future::Future::poll(s.as_mut(), cx).is_pending());
                std::task::Poll::Ready(())
            })
            .await;
            Some(s) // (not the future itself: it is dropped, not awaited)
        });
        drop(rt);
        std::thread::spawn(move || drop(armed)).join().unwrap();
    }
}

#[test]
#[should_panic(expected = "outside a spindle runtime")]
fn a_sleep_polled_outside_a_runtime_panics_with_advice() {
    let mut s = time::sleep(Duration::from_millis(1));
    let _ = futures_util_poll(&mut s);
}

/// Polls once with a no-op waker.
fn futures_util_poll<F: std::future::Future + Unpin>(f: &mut F) -> std::task::Poll<F::Output> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    std::pin::Pin::new(f).poll(&mut cx)
}

rt_test! {
    /// A period too long for `Instant` ticks once, then never (as a sleep of
    /// `Duration::MAX` never ends), instead of panicking on its next
    /// deadline.
    fn an_interval_too_long_for_instant_ticks_once_then_waits() {
        for policy in [MissedTicks::Burst, MissedTicks::Delay, MissedTicks::Skip] {
            let mut iv = time::interval(Duration::MAX);
            iv.set_missed_ticks(policy);
            iv.tick().await;
            let second = time::timeout(Duration::from_millis(20), iv.tick()).await;
            assert!(second.is_err(), "{policy:?}: a second tick");
            iv.reset();
            let after_reset = time::timeout(Duration::from_millis(5), iv.tick()).await;
            assert!(after_reset.is_err(), "{policy:?}: a tick after reset");
        }
    }
}
