//! Graceful shutdown: a stop requested mid-stream drains every channel
//! (totals match end to end), vetoes delay the stop, an actor that never
//! agrees is named in the report, deadlines and actor-requested stops.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{eventually, finish, runtimes, Seen};
use spindle_actor::{ActorContext, ActorState, ActorStatus, Graph, PortError, RxHandle, TxHandle};

/// Sends 1, 2, 3, … until the graph stops.
async fn endless(ctx: ActorContext, out: TxHandle<u64>) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let mut next = 1;
    let mut buf = Vec::new();
    while ctx.is_running(|| tx.mark_closed()) {
        let Some(room) = tx.wait_vacant(16).await else {
            break;
        };
        buf.clear();
        buf.extend(next..next + room.min(16) as u64);
        next += tx.try_send_slice(&buf) as u64;
    }
    Ok(())
}

/// Adds one, batch by batch; votes to stop only once its input is drained.
async fn stage(
    ctx: ActorContext,
    input: RxHandle<u64>,
    out: TxHandle<u64>,
) -> Result<(), PortError> {
    let (mut rx, mut tx) = (input.lock()?, out.lock()?);
    let mut buf = vec![0u64; 32];
    while ctx.is_running(|| rx.is_closed_and_empty() && tx.mark_closed()) {
        if rx.wait_avail(8).await.is_none() {
            continue;
        }
        let k = rx.take_slice(&mut buf);
        for v in &mut buf[..k] {
            *v += 1;
        }
        tx.send_slice(&buf[..k]).await;
    }
    Ok(())
}

fn three_stage(seen: &ActorState<Seen>) -> Graph {
    let mut g = Graph::new("three");
    let (a_tx, a_rx) = g.channel::<u64>("a").capacity(64).build();
    let (b_tx, b_rx) = g.channel::<u64>("b").capacity(8).build();
    g.actor("source")
        .writes(&a_tx)
        .run(move |ctx| endless(ctx, a_tx.clone()));
    g.actor("stage")
        .reads(&a_rx)
        .writes(&b_tx)
        .run(move |ctx| stage(ctx, a_rx.clone(), b_tx.clone()));
    let s = seen.clone();
    g.actor("sink")
        .reads(&b_rx)
        .run(move |ctx| common::sink(ctx, b_rx.clone(), s.clone()));
    g
}

#[test]
fn a_stop_mid_stream_drains_every_channel() {
    for (name, rt) in runtimes() {
        let seen = ActorState::new(Seen::default());
        let g = three_stage(&seen);
        let running = g.start(rt.handle()).unwrap();
        // Let messages flow, then ask for the stop from the outside (on a
        // current-thread runtime the graph only runs inside block_on, so
        // the request comes from an actor-free task there).
        let r = &running;
        rt.block_on(async {
            for _ in 0..200 {
                spindle::yield_now().await;
            }
            r.request_shutdown();
        });
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        assert_eq!(
            report.stop_reason.as_deref(),
            Some("requested by the graph's owner")
        );
        let a = report.channel("a").unwrap().sent;
        let b = report.channel("b").unwrap();
        assert_eq!((b.sent, b.taken), (a, a), "{name}: {report}");
        let values = seen.take().unwrap().values;
        assert_eq!(values, (2..=a + 1).collect::<Vec<_>>(), "{name}");
    }
}

#[test]
fn a_deadline_stops_the_graph_cleanly() {
    for (name, rt) in runtimes() {
        let seen = ActorState::new(Seen::default());
        let running = three_stage(&seen).start(rt.handle()).unwrap();
        running.shutdown_after(Duration::from_millis(50));
        let report = rt.block_on(running.wait_stopped(Duration::from_secs(10)));
        assert!(report.is_clean(), "{name}: {report}");
        assert_eq!(report.stop_reason.as_deref(), Some("deadline reached"));
        assert_eq!(
            seen.take().unwrap().values.len() as u64,
            report.channel("a").unwrap().sent
        );
    }
}

/// Holds `backlog` messages of its own; vetoes the stop until it has
/// flushed them, one per 1 ms.
async fn slow_flusher(
    ctx: ActorContext,
    out: TxHandle<u64>,
    backlog: u64,
) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let mut left = backlog;
    while ctx.is_running(|| left == 0 && tx.mark_closed()) {
        if left > 0 && ctx.is_stopping() {
            tx.send(left).await.unwrap();
            left -= 1;
            ctx.sleep(Duration::from_millis(1)).await;
        } else {
            ctx.sleep(Duration::from_millis(5)).await;
        }
    }
    Ok(())
}

#[test]
fn a_veto_delays_the_stop_until_the_work_is_done() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("veto");
        let (tx, rx) = g.channel::<u64>("flush").capacity(4).build();
        g.actor("flusher")
            .writes(&tx)
            .run(move |ctx| slow_flusher(ctx, tx.clone(), 20));
        let seen = ActorState::new(Seen::default());
        let s = seen.clone();
        g.actor("sink")
            .reads(&rx)
            .run(move |ctx| common::sink(ctx, rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        running.request_shutdown();
        let report = rt.block_on(running.wait_stopped(Duration::from_secs(20)));
        assert!(report.is_clean(), "{name}: {report}");
        assert_eq!(
            seen.take().unwrap().values,
            (1..=20).rev().collect::<Vec<_>>()
        );
    }
}

#[test]
fn an_actor_that_never_agrees_is_named_in_the_report() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("stubborn");
        let (tx, rx) = g.channel::<u64>("c").capacity(4).build();
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        g.actor("stubborn").writes(&tx).run(move |ctx| {
            let (tx, r) = (tx.clone(), r.clone());
            async move {
                let mut tx = tx.lock()?;
                // Vetoes until the test releases it.
                while ctx.is_running(|| r.load(Ordering::SeqCst) && tx.mark_closed()) {
                    ctx.sleep(Duration::from_millis(2)).await;
                }
                Ok::<(), PortError>(())
            }
        });
        let seen = ActorState::new(Seen::default());
        let s = seen.clone();
        g.actor("sink")
            .reads(&rx)
            .run(move |ctx| common::sink(ctx, rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        running.request_shutdown();
        let report = rt.block_on(running.wait_stopped(Duration::from_millis(100)));
        assert!(!report.is_clean(), "{name}: {report}");
        // The sink waits for the stubborn one's channel to close: both held
        // out, and the report says so.
        assert_eq!(report.held_out(), ["stubborn", "sink"], "{name}: {report}");
        assert!(
            report.to_string().contains("held out: stubborn, sink"),
            "{report}"
        );
        release.store(true, Ordering::SeqCst);
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
    }
}

#[test]
fn an_actor_can_stop_the_graph() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("self-stop");
        let (tx, rx) = g.channel::<u64>("c").capacity(4).build();
        g.actor("source")
            .writes(&tx)
            .run(move |ctx| endless(ctx, tx.clone()));
        let seen = ActorState::new(Seen::default());
        let s = seen.clone();
        g.actor("counter").reads(&rx).run(move |ctx| {
            let (rx, s) = (rx.clone(), s.clone());
            async move {
                let mut rx = rx.lock()?;
                let mut s = s.lock();
                while let Some(v) = rx.take().await {
                    s.values.push(v);
                    if v == 500 {
                        ctx.request_shutdown();
                    }
                }
                Ok::<(), PortError>(())
            }
        });
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        assert_eq!(report.stop_reason.as_deref(), Some("requested by actor"));
        let v = seen.take().unwrap().values;
        assert!(v.len() >= 500);
        assert_eq!(v, (1..=v.len() as u64).collect::<Vec<_>>());
        for a in &report.actors {
            assert_eq!(a.status, ActorStatus::Stopped);
        }
    }
}

#[test]
fn block_until_stopped_waits_for_a_request_then_the_timeout() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    let seen = ActorState::new(Seen::default());
    let running = three_stage(&seen).start(rt.handle()).unwrap();
    let r = &running;
    std::thread::scope(|s| {
        s.spawn(|| {
            eventually("messages to flow", || {
                r.report().channel("b").unwrap().taken > 100
            });
            r.request_shutdown();
        });
        let report = r.block_until_stopped(Duration::from_secs(20));
        assert!(report.is_clean(), "{report}");
        assert!(r.is_stopped());
    });
}

/// `Duration::MAX` means no limit in every wait an actor or its owner
/// makes: a sleep or a beat of it lasts until the stop notice, and a stop
/// waited for with it has no deadline (adding it to an `Instant` would
/// panic).
#[test]
fn duration_max_is_no_limit() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("forever");
        g.actor("sleeper").run(|ctx: ActorContext| async move {
            assert!(
                !ctx.sleep(Duration::MAX).await,
                "only the stop notice ends it"
            );
            Ok::<(), PortError>(())
        });
        g.actor("beater").run(|ctx: ActorContext| async move {
            let mut beat = ctx.every(Duration::MAX);
            assert!(!beat.tick().await, "only the stop notice ends it");
            Ok::<(), PortError>(())
        });
        let running = g.start(rt.handle()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        running.request_shutdown();
        let report = if name == "current_thread" {
            rt.block_on(running.wait_stopped(Duration::MAX))
        } else {
            running.block_until_stopped(Duration::MAX)
        };
        assert!(report.is_clean(), "{name}: {report}");
        for actor in ["sleeper", "beater"] {
            assert_eq!(report.actor(actor).unwrap().restarts, 0, "{name}: {report}");
        }
    }
}

/// A task actor whose runtime shuts down under it counts as failed and
/// retires its channel ends: the own-thread actor reading from it sees the
/// channel closed and stops, and the graph is not left waiting on either.
#[test]
fn an_actor_whose_runtime_shut_down_retires_its_ends() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap();
    let mut g = Graph::new("orphaned");
    let (tx, rx) = g.channel::<u64>("c").capacity(8).build();
    g.actor("writer").writes(&tx).run(move |_| {
        let tx = tx.clone();
        async move {
            let _t = tx.lock()?;
            std::future::pending::<()>().await;
            Ok::<(), PortError>(())
        }
    });
    g.actor("reader").reads(&rx).own_thread().run(move |_| {
        let rx = rx.clone();
        async move {
            let mut r = rx.lock()?;
            while r.take().await.is_some() {}
            Ok::<(), PortError>(())
        }
    });
    let running = g.start(rt.handle()).unwrap();
    drop(rt);
    running.request_shutdown();
    let report = running.block_until_stopped(Duration::from_secs(5));
    assert!(report.held_out().is_empty(), "{report}");
    let w = report.actor("writer").unwrap();
    assert_eq!(w.status, ActorStatus::Failed, "{report}");
    assert!(
        w.last_failure.as_deref().unwrap_or("").contains("runtime"),
        "{report}"
    );
    assert_eq!(report.actor("reader").unwrap().status, ActorStatus::Stopped);
}
