//! The cooperative budget's settings and accounting: a budget of 0 is
//! refused, of one unit or of the whole work still behaves; a busy task
//! yields at most once a slice and its forced yields are counted;
//! `unconstrained` opts a section out; `select!` and `JoinSet` spend
//! around their arms; a channel outside any runtime has no budget. (The
//! loops that yield to a sleeper beside them: `budget.rs`.)

mod common;

use common::counted;
use spindle::chan;
use spindle::task::coop;
use std::future::Future;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

#[test]
fn a_budget_of_zero_is_refused_at_build_naming_the_setting() {
    for builder in [
        spindle::Builder::new_multi_thread(),
        spindle::Builder::new_current_thread(),
    ] {
        let err = builder.coop_budget(0).build().unwrap_err();
        assert!(matches!(err, spindle::BuildError::InvalidBudget(_)));
        assert!(err.to_string().contains("coop_budget(0)"), "{err}");
    }
}

/// Spends budget on always-ready steps for `busy` in one task; gives its
/// poll count.
async fn polls_while_busy(busy: Duration, unconstrained: bool) -> usize {
    let (task, polls) = counted(async move {
        let steps = async {
            let start = Instant::now();
            while start.elapsed() < busy {
                coop::consume_budget().await;
            }
        };
        if unconstrained {
            spindle::task::unconstrained(steps).await
        } else {
            steps.await
        }
    });
    spindle::spawn(task).await.unwrap();
    polls.load(SeqCst)
}

const BUSY: Duration = Duration::from_millis(20);

#[test]
fn a_busy_task_yields_once_a_slice_and_the_yields_are_counted() {
    // At most one poll a slice (a poll yields only once a slice has passed
    // since it first spent its budget), and many of them in 20 ms.
    let most = (BUSY.as_micros() / coop::SLICE.as_micros()) as usize + 1;
    for (flavour, rt) in common::flavours() {
        let polls = rt.block_on(polls_while_busy(BUSY, false));
        assert!((20..=most).contains(&polls), "{flavour}: {polls} polls");
        // A poll whose core was handed off meanwhile (its thread held up
        // past the monitor's patience, as on a loaded machine) shows as a
        // hand-off, not a forced yield (`WorkerCtx::run_timed`). A poll is
        // counted after it returns, and its task may meanwhile have been
        // stolen and finished elsewhere: the counts are waited for.
        let counted = || {
            let metrics = rt.metrics();
            let forced: u64 = metrics.workers.iter().map(|w| w.forced_yields).sum();
            (forced, metrics.handoffs)
        };
        let enough = |(forced, handoffs): (u64, u64)| (forced + handoffs) as usize >= polls - 1;
        common::until_blocking(|| enough(counted()));
        let (forced, handoffs) = counted();
        assert!(
            enough((forced, handoffs)),
            "{flavour}: {forced} forced yields, {handoffs} hand-offs, {polls} polls"
        );
    }
}

#[test]
fn a_budget_of_one_unit_looks_at_the_clock_every_operation_and_still_yields() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .coop_budget(1)
        .build()
        .unwrap();
    let polls = rt.block_on(polls_while_busy(BUSY, false));
    assert!(polls >= 20, "{polls} polls");
}

#[test]
fn an_unconstrained_section_never_yields_for_the_budget() {
    for (flavour, rt) in common::flavours() {
        assert_eq!(rt.block_on(polls_while_busy(BUSY, true)), 1, "{flavour}");
    }
}

#[test]
fn a_budget_as_large_as_the_work_never_yields() {
    // `coop_budget` takes effect: a budget the busy loop never spends is
    // never looked at, so the task runs in one poll (and 128 units would
    // have made it yield many times: the test above).
    for builder in [
        spindle::Builder::new_current_thread(),
        spindle::Builder::new_multi_thread().workers(1),
    ] {
        let rt = builder.coop_budget(u32::MAX).build().unwrap();
        assert_eq!(rt.block_on(polls_while_busy(BUSY, false)), 1);
    }
}

/// The total of `rt`'s forced yields.
fn forced_yields(rt: &spindle::Runtime) -> u64 {
    rt.metrics().workers.iter().map(|w| w.forced_yields).sum()
}

#[test]
fn a_select_drain_loop_with_else_never_stops_early_for_the_budget() {
    // A seeded runtime's budget counts units, so with one unit each arm's
    // receive is refused for certain: its first step takes the unit. The
    // select then yields, and never runs its `else`; and as it holds no
    // unit of its own while its arms run, the next poll's receive gets the
    // unit and the drain goes on (a select holding one would leave its arm
    // none, refused at every poll).
    const N: u32 = 200;
    let rt = spindle::Builder::new_deterministic(3)
        .coop_budget(1)
        .build()
        .unwrap();
    let got = rt.block_on(async move {
        let (tx, rx) = chan::bounded::<u32>(N as usize);
        for i in 0..N {
            tx.try_send(i).unwrap();
        }
        let mut drain = std::pin::pin!(async move {
            let mut got = 0;
            loop {
                spindle::select! {
                    r = async {
                        coop::consume_budget().await;
                        rx.recv().await
                    } => { r.unwrap(); got += 1; },
                    else => break,
                }
            }
            got
        });
        let mut polls = 0;
        std::future::poll_fn(|cx| {
            polls += 1;
            assert!(polls < 10 * N, "the drain stopped moving");
            drain.as_mut().poll(cx)
        })
        .await
    });
    assert_eq!(got, N, "the drain stopped early");
    assert!(
        forced_yields(&rt) >= u64::from(N),
        "refused at every message"
    );
}

#[test]
fn join_next_under_a_budget_of_one_unit_still_moves() {
    // `join_next` holds no unit while its handle's poll spends one (with a
    // unit of its own held, a budget of one would refuse the handle at
    // every poll, and the set would never give the output).
    let rt = spindle::Builder::new_deterministic(3)
        .coop_budget(1)
        .build()
        .unwrap();
    let got = rt.block_on(async {
        let mut set = spindle::JoinSet::new();
        for i in 0..10u64 {
            set.spawn(async move { i });
        }
        let mut join_all = std::pin::pin!(async move {
            let mut sum = 0;
            while let Some(r) = set.join_next().await {
                sum += r.unwrap();
            }
            sum
        });
        let mut polls = 0;
        std::future::poll_fn(|cx| {
            polls += 1;
            assert!(polls < 1000, "join_next stopped moving");
            join_all.as_mut().poll(cx)
        })
        .await
    });
    assert_eq!(got, 45);
}

#[test]
fn a_channel_outside_any_runtime_has_no_budget() {
    // Driven by a plain executor on a thread that ran a runtime before
    // (whose budget must be gone with it): no yields, however many
    // operations, however long they take.
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        for _ in 0..1000 {
            coop::consume_budget().await;
        }
    });
    drop(rt);
    let (tx, rx) = chan::bounded::<u32>(1000);
    let fut = std::pin::pin!(async move {
        for i in 0..1000 {
            tx.send(i).await.unwrap();
            if i % 100 == 0 {
                std::thread::sleep(2 * coop::SLICE);
            }
        }
        let mut sum = 0u64;
        for _ in 0..1000 {
            sum += u64::from(rx.recv().await.unwrap());
        }
        sum
    });
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert_eq!(
        fut.poll(&mut cx),
        std::task::Poll::Ready(999 * 1000 / 2),
        "done in one poll"
    );
}
