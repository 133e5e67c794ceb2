//! Supervision: restarts with state kept and peek-before-commit (no message
//! lost or duplicated), the poison-message policy, the restart budget, and
//! failures by `Err` or at start-up. Every test runs on every runtime
//! flavour.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{finish, runtimes, Seen};
use spindle_actor::{ActorState, ActorStatus, Graph, PortError, RestartPolicy, RxHandle, TxHandle};

fn quick() -> RestartPolicy {
    RestartPolicy::new().backoff(Duration::from_millis(1), Duration::from_millis(5))
}

/// Forwards each message after peeking it; `fail(v, run)` decides whether
/// to panic on it. Counts forwarded messages in `count` (kept across
/// restarts).
async fn fragile(
    input: RxHandle<u64>,
    out: TxHandle<u64>,
    count: ActorState<u64>,
    fail: impl Fn(u64) -> bool,
) -> Result<(), PortError> {
    let (mut rx, mut tx) = (input.lock()?, out.lock()?);
    let mut count = count.lock();
    while let Some(&v) = rx.peek().await {
        if fail(v) {
            panic!("cannot handle message {v}");
        }
        tx.send(v).await.unwrap();
        *count += 1;
        rx.advance(1);
    }
    Ok(())
}

/// source(1..=n) → fragile → sink, with a dead-letter sink on the input of
/// `fragile`.
fn graph(
    n: u64,
    policy: RestartPolicy,
    fail: impl Fn(u64) -> bool + Clone + Send + Sync + 'static,
) -> (
    Graph,
    ActorState<u64>,
    ActorState<Seen>,
    spindle::chan::Receiver<u64>,
) {
    let mut g = Graph::new("supervised");
    let (dead_tx, dead_rx) = spindle::chan::unbounded();
    let (a_tx, a_rx) = g
        .channel::<u64>("in")
        .capacity(16)
        .dead_letters(dead_tx)
        .build();
    let (b_tx, b_rx) = g.channel::<u64>("out").capacity(16).build();
    let count = ActorState::new(0u64);
    let seen = ActorState::new(Seen::default());
    g.actor("source")
        .writes(&a_tx)
        .run(move |ctx| common::source(ctx, a_tx.clone(), n, 7));
    let c = count.clone();
    g.actor("fragile")
        .reads(&a_rx)
        .writes(&b_tx)
        .restart(policy)
        .run(move |_| fragile(a_rx.clone(), b_tx.clone(), c.clone(), fail.clone()));
    let s = seen.clone();
    g.actor("sink")
        .reads(&b_rx)
        .run(move |ctx| common::sink(ctx, b_rx.clone(), s.clone()));
    (g, count, seen, dead_rx)
}

#[test]
fn panic_on_the_1000th_message_restarts_with_state_and_loses_nothing() {
    for (name, rt) in runtimes() {
        let tripped = Arc::new(AtomicBool::new(false));
        let t = tripped.clone();
        let fail = move |v: u64| v == 1000 && !t.swap(true, Ordering::SeqCst);
        let (g, count, seen, dead) = graph(5_000, quick(), fail);
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(
            tripped.load(Ordering::SeqCst),
            "{name}: the panic never happened"
        );
        assert!(report.is_clean(), "{name}: {report}");
        let f = report.actor("fragile").unwrap();
        assert_eq!(f.restarts, 1, "{name}: {report}");
        assert!(f
            .last_failure
            .as_deref()
            .unwrap()
            .contains("cannot handle message 1000"));
        // The message that caused the panic was neither lost nor duplicated,
        // and the count kept in ActorState survived the restart.
        assert_eq!(
            seen.take().unwrap().values,
            (1..=5_000).collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(count.take(), Some(5_000), "{name}");
        assert_eq!(report.channel("in").unwrap().dead_letters, 0);
        assert!(dead.try_recv().is_err());
    }
}

#[test]
fn a_poison_message_goes_to_dead_letters_after_n_failures() {
    for (name, rt) in runtimes() {
        let policy = quick()
            .poison_after(Some(3))
            .budget(10, Duration::from_secs(60));
        let (g, count, seen, dead) = graph(200, policy, |v| v == 77);
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        assert_eq!(
            report.actor("fragile").unwrap().restarts,
            3,
            "{name}: {report}"
        );
        assert_eq!(report.channel("in").unwrap().dead_letters, 1);
        assert_eq!(dead.try_recv(), Ok(77), "{name}");
        assert!(dead.try_recv().is_err());
        let want: Vec<u64> = (1..=200).filter(|&v| v != 77).collect();
        assert_eq!(seen.take().unwrap().values, want, "{name}");
        assert_eq!(count.take(), Some(199));
    }
}

#[test]
fn a_dead_letter_no_sink_takes_is_lost_and_the_report_says_so() {
    for (name, rt) in runtimes() {
        let policy = quick()
            .poison_after(Some(3))
            .budget(10, Duration::from_secs(60));
        let (g, _, _, dead) = graph(200, policy, |v| v == 77);
        drop(dead); // the dead-letter sink is closed: it takes nothing
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        let c = report.channel("in").unwrap();
        assert_eq!(
            (c.dead_letters, c.dead_letters_dropped),
            (1, 1),
            "{name}: {report}"
        );
        assert!(!report.is_clean(), "{name}: {report}");
        assert!(report.to_string().contains("1 dropped"), "{name}: {report}");
    }
}

#[test]
fn a_shutdown_request_cuts_a_restart_backoff_short() {
    for (name, rt) in runtimes() {
        let tripped = Arc::new(AtomicBool::new(false));
        let t = tripped.clone();
        let fail = move |v: u64| v == 5 && !t.swap(true, Ordering::SeqCst);
        let policy = RestartPolicy::new().backoff(Duration::from_secs(60), Duration::from_secs(60));
        let (g, _, _, _dead) = graph(100, policy, fail);
        let running = g.start(rt.handle()).unwrap();
        common::wait_for_status(
            &rt,
            &running,
            "fragile",
            ActorStatus::Restarting,
            "fragile failed and waits to restart",
        );
        running.request_shutdown();
        let report = rt.block_on(running.wait_stopped(Duration::from_secs(10)));
        assert!(report.held_out().is_empty(), "{name}: {report}");
        assert_eq!(
            report.actor("fragile").unwrap().restarts,
            1,
            "{name}: {report}"
        );
    }
}

#[test]
fn a_spent_restart_budget_stops_the_graph_with_a_report() {
    for (name, rt) in runtimes() {
        let policy = quick()
            .poison_after(None)
            .budget(2, Duration::from_secs(60));
        let (g, _, _, _) = graph(100, policy, |v| v == 5);
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(!report.is_clean(), "{name}: {report}");
        assert!(report.held_out().is_empty(), "{name}: {report}");
        let f = report.actor("fragile").unwrap();
        assert_eq!(f.status, ActorStatus::Failed);
        assert_eq!(f.restarts, 2);
        assert_eq!(report.failures.len(), 1, "{name}: {report}");
        let msg = &report.failures[0];
        assert!(
            msg.contains("`fragile`") && msg.contains("restart budget 2"),
            "{msg}"
        );
        assert!(msg.contains("cannot handle message 5"), "{msg}");
        assert_eq!(report.stop_reason.as_deref(), Some(msg.as_str()));
        let text = report.to_string();
        assert!(text.contains("stopped after a failure"), "{text}");
        // The others stopped: the source saw its reader go, the sink its
        // input close.
        for a in ["source", "sink"] {
            assert_eq!(
                report.actor(a).unwrap().status,
                ActorStatus::Stopped,
                "{name}: {report}"
            );
        }
    }
}

#[test]
fn an_error_return_and_a_panic_at_start_are_failures_too() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("errors");
        let (tx, rx) = g.channel::<u64>("c").capacity(4).build();
        let runs = Arc::new(AtomicU32::new(0));
        let r = runs.clone();
        g.actor("flaky").writes(&tx).restart(quick()).run(move |_| {
            let run = r.fetch_add(1, Ordering::SeqCst);
            // First run: panics before its future exists.
            assert!(run != 0, "panic while building the run");
            let tx = tx.clone();
            async move {
                let mut tx = tx.lock()?;
                if run == 1 {
                    return Err::<(), Box<dyn std::error::Error + Send + Sync>>("not yet".into());
                }
                tx.send(42).await.unwrap();
                Ok(())
            }
        });
        let seen = ActorState::new(Seen::default());
        let s = seen.clone();
        g.actor("sink")
            .reads(&rx)
            .run(move |ctx| common::sink(ctx, rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        let a = report.actor("flaky").unwrap();
        assert_eq!(a.restarts, 2, "{name}: {report}");
        assert_eq!(
            a.last_failure.as_deref(),
            Some("returned an error: not yet")
        );
        assert_eq!(seen.take().unwrap().values, [42]);
    }
}

#[test]
fn a_panic_at_start_shows_restarting_during_its_backoff() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("start");
        let (tx, rx) = g.channel::<u64>("c").capacity(4).build();
        let runs = Arc::new(AtomicU32::new(0));
        let r = runs.clone();
        let policy = RestartPolicy::new().backoff(Duration::from_secs(60), Duration::from_secs(60));
        g.actor("flaky").writes(&tx).restart(policy).run(move |_| {
            let run = r.fetch_add(1, Ordering::SeqCst);
            assert!(run != 0, "panic while building the run");
            let tx = tx.clone();
            async move {
                tx.lock()?.send(1).await.unwrap();
                Ok::<(), PortError>(())
            }
        });
        let seen = ActorState::new(Seen::default());
        let s = seen.clone();
        g.actor("sink")
            .reads(&rx)
            .run(move |ctx| common::sink(ctx, rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        common::wait_for_status(
            &rt,
            &running,
            "flaky",
            ActorStatus::Restarting,
            "a start that panicked shows `restarting` for its 60 s backoff",
        );
        assert_eq!(runs.load(Ordering::SeqCst), 1, "{name}");
        running.request_shutdown();
        let report = rt.block_on(running.wait_stopped(Duration::from_secs(10)));
        assert!(report.held_out().is_empty(), "{name}: {report}");
        assert_eq!(seen.take().unwrap().values, [1], "{name}: {report}");
    }
}

/// Peeks runs of up to 8 messages. Whole runs: checks the run with `fail`
/// before forwarding any, then commits it. Stepwise: commits each message
/// of the run as it forwards it, so a failure comes with the rest of the
/// run still peeked.
async fn fragile_runs(
    input: RxHandle<u64>,
    out: TxHandle<u64>,
    fail: impl Fn(u64) -> bool,
    stepwise: bool,
) -> Result<(), PortError> {
    let (mut rx, mut tx) = (input.lock()?, out.lock()?);
    while rx.wait_avail(8).await.is_some() {
        let run: Vec<u64> = rx.peek_slots(8).iter().copied().collect();
        if stepwise {
            for &v in &run {
                if fail(v) {
                    panic!("cannot handle message {v}");
                }
                tx.send(v).await.unwrap();
                rx.advance(1);
            }
            continue;
        }
        if let Some(v) = run.iter().find(|&&v| fail(v)) {
            panic!("cannot handle message {v}");
        }
        for &v in &run {
            tx.send(v).await.unwrap();
        }
        rx.advance(run.len());
    }
    Ok(())
}

/// A failure while a run of messages was peeked does not blame the run's
/// head: the reader then peeks one message at a time past that run, and
/// only the message that fails alone goes to dead letters. (Blaming the
/// head would dead-letter innocent messages three failures at a time.)
#[test]
fn a_poison_message_in_a_peeked_run_is_the_only_one_dead_lettered() {
    // Stepwise: the part of the run not yet committed when the reader
    // fails is still peeked (were it forgotten by a partial commit, the
    // failure would blame nothing, and the restart budget would run out).
    for ((name, rt), stepwise) in runtimes()
        .into_iter()
        .flat_map(|r| [(r, false)])
        .chain(runtimes().into_iter().map(|r| (r, true)))
    {
        let mut g = Graph::new("runs");
        let (dead_tx, dead_rx) = spindle::chan::unbounded();
        let (a_tx, a_rx) = g
            .channel::<u64>("in")
            .capacity(64)
            .dead_letters(dead_tx)
            .build();
        let (b_tx, b_rx) = g.channel::<u64>("out").capacity(64).build();
        let seen = ActorState::new(Seen::default());
        g.actor("source")
            .writes(&a_tx)
            .run(move |ctx| common::source(ctx, a_tx.clone(), 200, 7));
        let policy = quick()
            .poison_after(Some(3))
            .budget(10, Duration::from_secs(60));
        g.actor("fragile")
            .reads(&a_rx)
            .writes(&b_tx)
            .restart(policy)
            .run(move |_| fragile_runs(a_rx.clone(), b_tx.clone(), |v| v == 77, stepwise));
        let s = seen.clone();
        g.actor("sink")
            .reads(&b_rx)
            .run(move |ctx| common::sink(ctx, b_rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        assert_eq!(dead_rx.try_recv(), Ok(77), "{name}");
        assert!(
            dead_rx.try_recv().is_err(),
            "{name}: an innocent one dead-lettered"
        );
        let want: Vec<u64> = (1..=200).filter(|&v| v != 77).collect();
        assert_eq!(seen.take().unwrap().values, want, "{name}");
        let restarts = report.actor("fragile").unwrap().restarts;
        assert!(
            (3..=4).contains(&restarts),
            "{name}: {restarts} restarts: {report}"
        );
    }
}
