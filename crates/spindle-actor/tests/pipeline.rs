//! Channels and graphs end to end, on every runtime flavour: batches,
//! zero-copy slots, single messages with peek/advance, bundles (fan-out and
//! fan-in with wait-any), teams and own-thread actors.

mod common;

use common::{finish, pipe, runtimes};
use spindle_actor::{
    ActorContext, ActorState, Graph, PortError, RxBundle, RxHandle, TxBundle, TxHandle,
};

#[test]
fn batches_arrive_in_order_and_totals_match() {
    for (name, rt) in runtimes() {
        // Capacity 7 and batches of 5: every batch wraps the ring sometimes.
        let (g, seen) = pipe(10_000, 7, 5);
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        let c = report.channel("numbers").unwrap();
        assert_eq!(
            (c.sent, c.taken, c.from.as_str(), c.to.as_str()),
            (10_000, 10_000, "source", "sink")
        );
        assert_eq!(
            seen.take().unwrap().values,
            (1..=10_000).collect::<Vec<_>>(),
            "{name}"
        );
    }
}

async fn zc_source(ctx: ActorContext, out: TxHandle<u64>, n: u64) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let mut next = 1;
    while next <= n && ctx.is_running(|| tx.mark_closed()) {
        let want = (n - next + 1).min(tx.batch_hint() as u64) as usize;
        if tx.wait_vacant(want).await.is_none() {
            break;
        }
        let mut slots = tx.poke_slots(want);
        let (a, b) = slots.slices();
        let mut k = 0;
        for s in a.iter_mut().chain(b.iter_mut()) {
            *s = next + k;
            k += 1;
        }
        slots.commit(k as usize);
        next += k;
    }
    Ok(())
}

async fn zc_doubler(input: RxHandle<u64>, out: TxHandle<u64>) -> Result<(), PortError> {
    let (mut rx, mut tx) = (input.lock()?, out.lock()?);
    while let Some(avail) = rx.wait_avail(3).await {
        let room = tx.wait_vacant(avail).await.unwrap_or(0);
        let s = rx.peek_slots(room);
        let mut o = tx.poke_slots(s.len());
        let n = o.len();
        let (oa, ob) = o.slices();
        for (d, v) in oa.iter_mut().chain(ob.iter_mut()).zip(s.iter()) {
            *d = v * 2;
        }
        o.commit(n);
        rx.advance(n);
    }
    Ok(())
}

async fn zc_sink(input: RxHandle<u64>, seen: ActorState<Vec<u64>>) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut s = seen.lock();
    while rx.wait_avail(1).await.is_some() {
        let slots = rx.peek_slots(usize::MAX);
        s.extend(slots.iter().copied());
        let n = slots.len();
        rx.advance(n);
    }
    Ok(())
}

#[test]
fn zero_copy_slots_across_wraps() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("zc");
        // Different capacities, so the two rings wrap at different points.
        let (a_tx, a_rx) = g.channel::<u64>("a").capacity(11).batch(4).build();
        let (b_tx, b_rx) = g.channel::<u64>("b").capacity(5).build();
        let seen = ActorState::new(Vec::new());
        let s = seen.clone();
        g.actor("gen")
            .writes(&a_tx)
            .run(move |ctx| zc_source(ctx, a_tx.clone(), 5_000));
        g.actor("double")
            .reads(&a_rx)
            .writes(&b_tx)
            .run(move |_| zc_doubler(a_rx.clone(), b_tx.clone()));
        g.actor("sink")
            .reads(&b_rx)
            .run(move |_| zc_sink(b_rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        let want: Vec<u64> = (1..=5_000).map(|v| v * 2).collect();
        assert_eq!(seen.take().unwrap(), want, "{name}");
    }
}

#[derive(Debug, PartialEq, Eq, Clone)]
struct Msg(String);

async fn string_source(out: TxHandle<Msg>, n: usize) -> Result<(), PortError> {
    let mut tx = out.lock()?;
    let mut batch = Vec::new();
    for i in 0..n {
        batch.push(Msg(format!("m{i}")));
        if batch.len() == 3 {
            assert_eq!(tx.send_batch(&mut batch).await, 3);
        }
    }
    tx.send_batch(&mut batch).await;
    for i in n..n + 2 {
        tx.send(Msg(format!("m{i}"))).await.unwrap();
    }
    Ok(())
}

async fn string_sink(input: RxHandle<Msg>, seen: ActorState<Vec<String>>) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut s = seen.lock();
    let mut out = Vec::new();
    loop {
        // Alternate peek/advance, take and take_batch.
        match rx.peek().await {
            None => break,
            Some(m) => s.push(m.0.clone()),
        }
        rx.advance(1);
        if let Some(m) = rx.try_take() {
            s.push(m.0);
        }
        out.clear();
        rx.take_batch(&mut out, 2);
        s.extend(out.drain(..).map(|m| m.0));
    }
    Ok(())
}

#[test]
fn owned_messages_move_once() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("strings");
        let (tx, rx) = g.channel::<Msg>("strings").capacity(4).build();
        let seen = ActorState::new(Vec::new());
        let s = seen.clone();
        g.actor("src")
            .writes(&tx)
            .run(move |_| string_source(tx.clone(), 100));
        g.actor("dst")
            .reads(&rx)
            .run(move |_| string_sink(rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        let want: Vec<String> = (0..102).map(|i| format!("m{i}")).collect();
        assert_eq!(seen.take().unwrap(), want, "{name}");
    }
}

/// Fan-out: a splitter deals values round-robin over a bundle of lanes,
/// waiting for whichever lane has room; one worker per lane. Fan-in: a
/// merger waits for any lane of a second bundle.
async fn splitter(input: RxHandle<u64>, lanes: TxBundle<u64>) -> Result<(), PortError> {
    let mut rx = input.lock()?;
    let mut out = lanes.lock()?;
    while let Some(v) = rx.take().await {
        let lane = out.wait_any_vacant(1).await.expect("workers alive");
        out[lane].try_send(v).expect("room was reported");
    }
    Ok(())
}

async fn lane_worker(input: RxHandle<u64>, out: TxHandle<u64>) -> Result<(), PortError> {
    let (mut rx, mut tx) = (input.lock()?, out.lock()?);
    while let Some(v) = rx.take().await {
        tx.send(v + 1_000_000).await.unwrap();
    }
    Ok(())
}

async fn merger(lanes: RxBundle<u64>, seen: ActorState<Vec<u64>>) -> Result<(), PortError> {
    let mut rx = lanes.lock()?;
    let mut s = seen.lock();
    while let Some(i) = rx.wait_any(1).await {
        while let Some(v) = rx[i].try_take() {
            s.push(v);
        }
    }
    Ok(())
}

#[test]
fn bundles_fan_out_and_in() {
    for (name, rt) in runtimes() {
        let mut g = Graph::new("fan");
        let (src_tx, src_rx) = g.channel::<u64>("input").capacity(16).build();
        let (out_tx, out_rx) = g.bundle::<u64>("work", 3).capacity(2).build();
        let (back_tx, back_rx) = g.bundle::<u64>("done", 3).capacity(2).build();
        let seen = ActorState::new(Vec::new());
        g.actor("source")
            .writes(&src_tx)
            .run(move |ctx| common::source(ctx, src_tx.clone(), 3_000, 10));
        g.actor("splitter")
            .reads(&src_rx)
            .writes_all(&out_tx)
            .run(move |_| splitter(src_rx.clone(), out_tx.clone()));
        for i in 0..3 {
            let (r, t) = (out_rx[i].clone(), back_tx[i].clone());
            g.actor(format!("worker{i}"))
                .reads(&r)
                .writes(&t)
                .run(move |_| lane_worker(r.clone(), t.clone()));
        }
        let s = seen.clone();
        g.actor("merger")
            .reads_all(&back_rx)
            .run(move |_| merger(back_rx.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{name}: {report}");
        let mut got = seen.take().unwrap();
        got.sort_unstable();
        assert_eq!(
            got,
            (1..=3_000).map(|v| v + 1_000_000).collect::<Vec<_>>(),
            "{name}"
        );
        // Every lane carried something: the splitter really fans out.
        for i in 0..3 {
            assert!(
                report.channel(&format!("work[{i}]")).unwrap().sent > 0,
                "{name}: {report}"
            );
        }
    }
}

fn place<'g>(
    b: spindle_actor::ActorBuilder<'g>,
    placement: &str,
) -> spindle_actor::ActorBuilder<'g> {
    if placement == "team" {
        b.team("t")
    } else {
        b.own_thread()
    }
}

#[test]
fn teams_and_own_threads_run_the_same_graph() {
    for placement in ["team", "thread"] {
        let rt = spindle::Builder::new_multi_thread()
            .workers(2)
            .build()
            .unwrap();
        let mut g = Graph::new("placed");
        let (tx, rx) = g.channel::<u64>("numbers").capacity(8).build();
        let (tx2, rx2) = g.channel::<u64>("doubled").capacity(8).build();
        let seen = ActorState::new(Vec::new());
        let s = seen.clone();
        place(g.actor("source").writes(&tx), placement)
            .run(move |ctx| common::source(ctx, tx.clone(), 2_000, 3));
        place(g.actor("double").reads(&rx).writes(&tx2), placement)
            .run(move |_| zc_doubler(rx.clone(), tx2.clone()));
        place(g.actor("sink").reads(&rx2), placement).run(move |_| zc_sink(rx2.clone(), s.clone()));
        let running = g.start(rt.handle()).unwrap();
        let report = finish(&rt, &running);
        assert!(report.is_clean(), "{placement}: {report}");
        assert_eq!(
            seen.take().unwrap(),
            (1..=2_000).map(|v| v * 2).collect::<Vec<_>>()
        );
        let json = format!("{report:?}");
        assert!(json.contains("numbers"));
    }
}

/// Once the writer closed its channel, nothing more is sent: every send
/// gives its values back, so a reader that saw "closed and empty" and
/// stopped cannot have missed a message.
#[test]
fn nothing_is_sent_after_the_writer_closed() {
    let mut g = Graph::new("closing");
    let (tx, rx) = g.channel::<u64>("c").capacity(8).build();
    let (mut t, mut r) = (tx.lock().unwrap(), rx.lock().unwrap());
    assert_eq!(t.try_send(1), Ok(()));
    t.mark_closed();
    assert_eq!(t.try_send(2), Err(2));
    assert_eq!(t.try_send_slice(&[3, 4]), 0);
    let mut batch = vec![5, 6];
    assert_eq!(t.try_send_batch(&mut batch), 0);
    assert_eq!(batch, [5, 6], "the batch is handed back whole");
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(t.send(7).await, Err(7), "send ends at once, value back");
        assert_eq!(t.send_slice(&[8]).await, 0);
        assert!(t.wait_vacant(1).await.is_none());
    });
    assert_eq!(t.sent(), 1);
    assert_eq!(r.try_take(), Some(1));
    assert!(r.is_closed_and_empty());
}

/// A report read while messages move can see one taken that was sent
/// after `sent` was read; printing it must not underflow.
#[test]
fn a_report_with_more_taken_than_sent_prints() {
    let report = spindle_actor::StopReport {
        graph: "g".into(),
        stop_reason: None,
        actors: Vec::new(),
        channels: vec![spindle_actor::ChannelReport {
            name: "c".into(),
            from: "a".into(),
            to: "b".into(),
            sent: 1,
            taken: 2,
            dead_letters: 0,
            dead_letters_dropped: 0,
        }],
        failures: Vec::new(),
    };
    let text = report.to_string();
    assert!(
        text.contains("sent 1 taken 2") && !text.contains(" left)"),
        "{text}"
    );
}
