//! Diagnostics: slow polls, the stall detector (a deliberate deadlock), dumps;
//! a task spawned with a name is named in them.

mod common;

use spindle::time::{self, Duration};
use std::sync::mpsc;

/// One worker that counts polls over 1 ms as slow (not the usual 50 us:
/// on a loaded machine a preempted trivial poll can pass 50 us).
fn counting_slow_polls() -> spindle::Runtime {
    spindle::Builder::new_multi_thread()
        .workers(1)
        .handoff_after(None)
        .slow_poll_threshold(Some(Duration::from_millis(1)))
        .build()
        .unwrap()
}

#[test]
fn slow_polls_are_counted_with_the_worst_recorded() {
    let rt = counting_slow_polls();
    rt.block_on(async {
        // Let the monitor calibrate the poll clock (two rounds >= 1 ms apart).
        time::sleep(Duration::from_millis(50)).await;
        spindle::spawn(async { std::thread::sleep(Duration::from_millis(3)) })
            .await
            .unwrap();
        for _ in 0..100 {
            spindle::spawn(async {}).await.unwrap(); // fast polls: not counted
        }
    });
    let m = rt.metrics();
    let w = &m.workers[0];
    assert!(w.slow_polls >= 1, "{m}");
    assert!(w.worst_polls[0].duration >= Duration::from_millis(2), "{m}");
    assert!(rt.dump().contains("slow polls"), "{}", rt.dump());
}

#[test]
fn the_dump_names_a_slow_task_that_was_spawned_with_a_name() {
    let rt = counting_slow_polls();
    let (tx, rx) = spindle::chan::oneshot::<()>();
    let id = rt.block_on(async {
        time::sleep(Duration::from_millis(50)).await;
        let slow = spindle::task::Builder::new().name("slow-one").spawn(async {
            std::thread::sleep(Duration::from_millis(3));
            let _ = rx.await; // alive, and named, while the dump is taken
        });
        let id = slow.id();
        // Until its first poll has been recorded as slow.
        while spindle::Handle::current().metrics().workers[0].slow_polls == 0 {
            time::sleep(Duration::from_millis(1)).await;
        }
        id
    });
    let dump = rt.dump();
    assert!(dump.contains(&format!("task {id} \"slow-one\"")), "{dump}");
    drop(tx);
}

#[test]
fn a_runtimes_metrics_list_its_named_tasks_and_no_other_runtimes() {
    let rts = [
        spindle::Builder::new_multi_thread()
            .workers(2)
            .build()
            .unwrap(),
        spindle::Builder::new_current_thread().build().unwrap(),
    ];
    let other = spindle::Builder::new_current_thread().build().unwrap();
    for rt in rts {
        let (tx, rx) = spindle::chan::oneshot::<()>();
        let (named, unnamed) = rt.block_on(async {
            let named = spindle::task::Builder::new()
                .name("flusher")
                .spawn(async move {
                    let _ = rx.await;
                });
            let unnamed = spindle::spawn(std::future::pending::<()>());
            // Until its first poll has entered it.
            common::until(|| !spindle::Handle::current().metrics().named_tasks.is_empty()).await;
            (named, unnamed)
        });
        let listed = rt.metrics().named_tasks;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].id, named.id());
        assert_eq!(&*listed[0].name, "flusher");
        assert!(
            other.metrics().named_tasks.is_empty(),
            "another runtime's task"
        );
        let dump = rt.dump();
        assert!(
            dump.contains(&format!("named tasks: 1\n    {} \"flusher\"", named.id())),
            "{dump}"
        );
        drop(tx);
        rt.block_on(named).unwrap();
        assert!(rt.metrics().named_tasks.is_empty(), "gone once finished");
        unnamed.abort();
    }
}

/// A 2-worker runtime whose stall reports arrive on the returned channel.
fn reporting_stalls(
    after_ms: u64,
    track_spawns: bool,
) -> (spindle::Runtime, mpsc::Receiver<spindle::StallReport>) {
    let (tx, rx) = mpsc::channel();
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .track_spawns(track_spawns)
        .stall_detection(Some(Duration::from_millis(after_ms)))
        .on_stall(move |r| drop(tx.send(r.clone())))
        .build()
        .unwrap();
    (rt, rx)
}

#[test]
fn a_deliberate_deadlock_is_reported() {
    let (rt, rx) = reporting_stalls(100, false);
    // Two tasks, each waiting for a message only the other would send.
    let (a_tx, a_rx) = spindle::chan::oneshot::<()>();
    let (b_tx, b_rx) = spindle::chan::oneshot::<()>();
    drop(rt.spawn(async move {
        let _ = a_rx.await;
        drop(b_tx);
    }));
    let named = spindle::task::Builder::new().name("waits-for-a").spawn_on(
        async move {
            let _ = b_rx.await;
            drop(a_tx);
        },
        rt.handle(),
    );
    let named_id = named.id();
    drop(named);
    let report = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("no stall reported");
    assert_eq!(report.parked_tasks, 2, "{report}");
    assert!(report.to_string().contains("possible deadlock"));
    // The named one is named, beside its id.
    let line = format!("waiting: task {named_id} \"waits-for-a\"");
    assert_eq!(report.named, [format!("{named_id} \"waits-for-a\"")]);
    assert!(report.to_string().contains(&line), "{report}");
    // Tracking is off: the report says how to learn where they came from.
    assert!(report.spawned_at.is_empty());
    assert!(report.to_string().contains("track_spawns"), "{report}");
    assert_eq!(rt.metrics().stalls_detected, 1);
    // Reported once, not every round.
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
}

#[test]
fn with_spawn_tracking_the_deadlock_report_says_where_each_task_was_spawned() {
    let (rt, rx) = reporting_stalls(100, true);
    let (a_tx, a_rx) = spindle::chan::oneshot::<()>();
    let (b_tx, b_rx) = spindle::chan::oneshot::<()>();
    // Three tasks from one line (a helper spawning through `spindle::spawn`
    // inside the runtime), one from another (`Runtime::spawn` from outside).
    let line_a = line!() + 2;
    rt.block_on(async move {
        let hs: Vec<_> = (0..3).map(|_| spindle::spawn(never())).collect();
        hs.into_iter().for_each(drop);
        drop(spindle::spawn(async move {
            let _ = a_rx.await;
            drop(b_tx);
        }));
    });
    let line_b = line!() + 1;
    drop(rt.spawn(async move {
        let _ = b_rx.await;
        drop(a_tx);
    }));
    let report = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("no stall reported");
    assert_eq!(report.parked_tasks, 5, "{report}");
    let site = |line: u32| format!("{}:{line}:", file!());
    let count = |line: u32| {
        let s = site(line);
        report
            .spawned_at
            .iter()
            .find(|(at, _)| at.starts_with(&s))
            .map(|&(_, n)| n)
    };
    assert_eq!(count(line_a), Some(3), "{report}");
    assert_eq!(count(line_b), Some(1), "{report}");
    assert_eq!(report.spawned_at[0].1, 3, "most first: {report}");
    assert!(report.to_string().contains(&site(line_b)), "{report}");
    // The dump lists them too.
    assert!(rt.dump().contains(&site(line_a)), "{}", rt.dump());
}

/// Waits forever (no waker is ever kept).
async fn never() {
    std::future::pending::<()>().await
}

#[test]
fn tasks_waiting_on_a_timer_or_blocking_job_are_not_a_stall() {
    let (rt, rx) = reporting_stalls(50, false);
    drop(rt.spawn(time::sleep(Duration::from_secs(30))));
    drop(rt.spawn(async {
        spindle::spawn_blocking(|| std::thread::sleep(Duration::from_millis(400)))
            .await
            .unwrap();
    }));
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "a sleeping task was reported as a deadlock"
    );
}

#[test]
fn sigquit_prints_the_dump_and_the_process_lives_on() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .dump_on_sigquit(true)
        .build()
        .unwrap();
    // The dump goes to stderr (not captured here); what this checks is that
    // the handler is installed (SIGQUIT's default would kill the test
    // process) and the runtime keeps working after it.
    // SAFETY: raising a signal that has a handler installed.
    assert_eq!(unsafe { libc::raise(libc::SIGQUIT) }, 0);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        rt.block_on(async { spindle::spawn(async { 5 }).await.unwrap() }),
        5
    );
}
