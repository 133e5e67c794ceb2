//! The cooperative budget (`spindle::task::coop`): a task that keeps
//! finding its operations ready yields to the others and to its timers,
//! on every flavour, whatever the operations. (Its settings and
//! accounting: `budget_settings.rs`.)
//!
//! Timed, with generous bounds: each test proves a behaviour (the sleeper
//! runs while the loop goes on), not a speed.

mod common;

use common::{compute, ready_channel_loop_until};
use spindle::chan;
use spindle::task::coop;
use spindle::time::{sleep, timeout};
use std::future::Future;
use std::time::{Duration, Instant};

/// Starts a task that sleeps 10 ms and records when it woke (from `start`).
fn sleeper(start: Instant) -> spindle::JoinHandle<Duration> {
    spindle::spawn(async move {
        sleep(Duration::from_millis(10)).await;
        start.elapsed()
    })
}

/// The flavours where only the budget can let a sleeper run beside a busy
/// task: the current-thread runtime, and one worker whose core is never
/// handed off (the monitor's hand-off would otherwise rescue the sleeper
/// after a few of its rounds). Four workers too, as a service runs: there
/// the sleeper may simply run on another worker.
fn budget_flavours() -> Vec<(&'static str, spindle::Runtime)> {
    let one_worker = spindle::Builder::new_multi_thread()
        .workers(1)
        .handoff_after(None)
        .build()
        .unwrap();
    let four = spindle::Builder::new_multi_thread()
        .workers(4)
        .build()
        .unwrap();
    vec![
        (
            "current_thread",
            spindle::Builder::new_current_thread().build().unwrap(),
        ),
        ("1 worker, no hand-off", one_worker),
        ("4 workers", four),
    ]
}

/// On each of `budget_flavours`: runs `busy` (given the start time; it
/// gives how many steps it made) as a task beside a sleeper, and checks
/// that the sleeper woke before `bound`.
fn a_sleeper_wakes_beside<F, Fut>(what: &str, bound: Duration, busy: F)
where
    F: Fn(Instant) -> Fut,
    Fut: Future<Output = u64> + Send + 'static,
{
    for (flavour, rt) in budget_flavours() {
        let woke = rt.block_on(async {
            let start = Instant::now();
            let woke = sleeper(start);
            let busy = spindle::spawn(busy(start));
            let woke = woke.await.unwrap();
            assert!(busy.await.unwrap() > 0, "{flavour}: {what} made no step");
            woke
        });
        assert!(
            woke < bound,
            "{flavour}: the sleeper ran at {woke:?}, beside {what}"
        );
    }
}

/// The control for the tests below: where only the budget can let the
/// sleeper run (not on four workers), an `unconstrained` loop keeps it
/// waiting until the loop ends.
#[test]
fn an_unconstrained_loop_keeps_a_sleeper_waiting_until_it_ends() {
    let single = budget_flavours()
        .into_iter()
        .filter(|(f, _)| *f != "4 workers");
    for (flavour, rt) in single {
        let woke = rt.block_on(async {
            let start = Instant::now();
            let woke = sleeper(start);
            let end = start + Duration::from_millis(300);
            let busy = spindle::spawn(coop::unconstrained(ready_channel_loop_until(end)));
            let woke = woke.await.unwrap();
            assert!(busy.await.unwrap() > 0);
            woke
        });
        assert!(
            woke >= Duration::from_millis(290),
            "{flavour}: the sleeper ran at {woke:?}, inside the unconstrained loop"
        );
    }
}

/// A loop of spawn-and-await, whose awaits are all ready soon (or at once,
/// where the child runs inline), lets a sleeper run long before it ends.
#[test]
fn a_spawn_await_loop_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 500 ms spawn-await loop",
        Duration::from_millis(250),
        |start| async move {
            let mut n = 0u64;
            while start.elapsed() < Duration::from_millis(500) {
                n += spindle::spawn(async { 1 }).await.unwrap();
            }
            n
        },
    );
}

/// A fork-and-await loop runs every child inline, inside the parent's
/// poll (on a worker too): the children's runs spend the parent's budget,
/// which makes it yield to a sleeper.
#[test]
fn a_fork_await_loop_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 500 ms fork-await loop",
        Duration::from_millis(250),
        |start| async move {
            let mut n = 0u64;
            while start.elapsed() < Duration::from_millis(500) {
                n += spindle::fork(async { 1 }).await.unwrap();
            }
            n
        },
    );
}

/// A `select!` arm may be a whole loop: its operations spend the budget
/// as anywhere else, and the select yields when one is refused.
#[test]
fn a_loop_inside_a_select_arm_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms loop in a select arm",
        Duration::from_millis(200),
        |start| async move {
            spindle::select! {
                got = ready_channel_loop_until(start + Duration::from_millis(300)) => got,
                _ = std::future::pending::<()>() => 0,
            }
        },
    );
}

/// A child run inline from a `select!` arm (a `Fork`) spends the parent's
/// budget too.
#[test]
fn a_forked_child_awaited_in_a_select_arm_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms forked loop awaited in a select arm",
        Duration::from_millis(200),
        |start| async move {
            let end = start + Duration::from_millis(300);
            spindle::select! {
                got = spindle::fork(ready_channel_loop_until(end)) => got.unwrap(),
                _ = std::future::pending::<()>() => 0,
            }
        },
    );
}

/// An `unconstrained` section opts its own steps out of the budget, not
/// those of a child it awaits: run inline (a `Fork`; on the current-thread
/// runtime a plain `spawn`'s await too), the child still yields as it
/// would as a task of its own.
#[test]
fn a_child_awaited_inside_an_unconstrained_section_still_yields() {
    a_sleeper_wakes_beside(
        "a 300 ms forked loop awaited in an unconstrained section",
        Duration::from_millis(200),
        |start| async move {
            let end = start + Duration::from_millis(300);
            coop::unconstrained(async move { spindle::fork(ready_channel_loop_until(end)).await })
                .await
                .unwrap()
        },
    );
    a_sleeper_wakes_beside(
        "a 300 ms spawned loop awaited in an unconstrained section",
        Duration::from_millis(200),
        |start| async move {
            let end = start + Duration::from_millis(300);
            coop::unconstrained(async move { spindle::spawn(ready_channel_loop_until(end)).await })
                .await
                .unwrap()
        },
    );
}

/// A `JoinSet` child that `join_next` runs inline (the current-thread
/// runtime) spends the parent's budget, as an await's inline run does.
#[test]
fn a_join_set_child_run_by_join_next_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms loop joined from a JoinSet",
        Duration::from_millis(200),
        |start| async move {
            let mut set = spindle::JoinSet::new();
            set.spawn(ready_channel_loop_until(start + Duration::from_millis(300)));
            set.join_next().await.unwrap().unwrap()
        },
    );
}

/// A busy task whose ready steps are slow yields only after a budget of
/// them (a poll of milliseconds), and a scheduler takes a driver turn only
/// every few dozen polls. A timer beside it still fires within a poll or
/// two: on the current-thread runtime a poll that ends in a forced yield
/// ends the batch, and the driver takes its turn; on one worker the
/// monitor serves the timer, and the worker runs what it woke at its next
/// poll.
#[test]
fn a_timer_fires_beside_a_busy_task_of_slow_steps_on_one_thread() {
    for (flavour, rt) in budget_flavours().into_iter().take(2) {
        let woke = a_sleeper_beside_slow_steps(&rt);
        assert!(
            woke < Duration::from_millis(60),
            "{flavour}: the sleeper ran at {woke:?}"
        );
    }
}

/// When a sleeper of 10 ms ran, beside a task of 20 µs ready steps.
fn a_sleeper_beside_slow_steps(rt: &spindle::Runtime) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        let woke = sleeper(start);
        let busy = spindle::spawn(async move {
            let mut steps = 0u64;
            while start.elapsed() < Duration::from_millis(400) {
                compute(Duration::from_micros(20));
                coop::consume_budget().await;
                steps += 1;
            }
            steps
        });
        let woke = woke.await.unwrap();
        assert!(busy.await.unwrap() > 0);
        woke
    })
}

/// A loop over an always-ready `select!` (a closed channel) yields to a
/// sleeper through the budget.
async fn select_on_a_closed_channel_until(end: Instant) -> u64 {
    let (tx, rx) = chan::bounded::<u32>(1);
    drop(tx);
    let mut closed = 0u64;
    while Instant::now() < end {
        spindle::select! {
            r = rx.recv() => closed += u64::from(r.is_err()),
        }
    }
    closed
}

#[test]
fn a_loop_over_an_always_ready_select_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms select loop",
        Duration::from_millis(200),
        |start| select_on_a_closed_channel_until(start + Duration::from_millis(300)),
    );
}

#[test]
fn a_block_on_future_looping_over_a_ready_select_lets_a_sleeper_run() {
    // The current-thread runtime's `block_on` future shares the thread
    // with the tasks: it has a budget too.
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let woke = rt.block_on(async {
        let start = Instant::now();
        let woke = sleeper(start);
        assert!(select_on_a_closed_channel_until(start + Duration::from_millis(300)).await > 0);
        woke.await.unwrap()
    });
    assert!(
        woke < Duration::from_millis(200),
        "the sleeper ran at {woke:?}"
    );
}

/// A plain send-and-receive loop over a channel that always has room and
/// a message: the budget makes it yield to a sleeper.
#[test]
fn a_receive_loop_over_a_full_channel_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms receive loop",
        Duration::from_millis(200),
        |start| ready_channel_loop_until(start + Duration::from_millis(300)),
    );
}

/// 300 ms from `start`: how long each busy loop below runs.
fn busy_until(start: Instant) -> Instant {
    start + Duration::from_millis(300)
}

/// Every other kind of operation that is ready at once spends the budget
/// too: a loop of any of them lets a sleeper run.
#[test]
fn loops_over_other_ready_operations_let_a_sleeper_run() {
    let bound = Duration::from_millis(200);
    a_sleeper_wakes_beside("a broadcast loop", bound, |start| async move {
        let (tx, mut rx) = chan::broadcast::<u64>(4);
        let mut got = 0;
        while Instant::now() < busy_until(start) {
            tx.send(1).unwrap();
            got += rx.recv().await.unwrap();
        }
        got
    });
    a_sleeper_wakes_beside("an spsc loop", bound, |start| async move {
        let (mut tx, mut rx) = chan::spsc::<u64>(4);
        let mut got = 0;
        while Instant::now() < busy_until(start) {
            tx.send(1).await.unwrap();
            got += rx.recv().await.unwrap();
        }
        got
    });
    a_sleeper_wakes_beside("a oneshot loop", bound, |start| async move {
        let mut got = 0;
        while Instant::now() < busy_until(start) {
            let (tx, rx) = chan::oneshot::<u64>();
            tx.send(1).unwrap();
            got += rx.await.unwrap();
        }
        got
    });
    a_sleeper_wakes_beside("a watch loop", bound, |start| async move {
        let (tx, mut rx) = spindle::sync::watch::channel(0u64);
        let mut got = 0;
        while Instant::now() < busy_until(start) {
            tx.send(1).unwrap();
            rx.changed().await.unwrap();
            got += 1;
        }
        got
    });
    a_sleeper_wakes_beside("a loop of Sink sends", bound, |start| async move {
        use futures_util::SinkExt;
        let (mut tx, rx) = chan::unbounded::<u64>();
        let mut got = 0;
        while Instant::now() < busy_until(start) {
            SinkExt::send(&mut tx, 1).await.unwrap();
            got += rx.try_recv().unwrap();
        }
        got
    });
    a_sleeper_wakes_beside("a loop of elapsed sleeps", bound, |start| async move {
        let mut got = 0;
        while Instant::now() < busy_until(start) {
            sleep(Duration::ZERO).await;
            got += 1;
        }
        got
    });
}

/// A loop of uncontended locks and acquires, each ready at its first poll:
/// the budget makes it yield to a sleeper, as a channel loop does.
#[test]
fn a_lock_loop_over_an_uncontended_mutex_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms lock and acquire loop",
        Duration::from_millis(200),
        |start| async move {
            let mutex = spindle::sync::Mutex::new(0u64);
            let semaphore = spindle::sync::Semaphore::new(1);
            while start.elapsed() < Duration::from_millis(300) {
                *mutex.lock().await += 1;
                drop(semaphore.acquire().await.unwrap());
            }
            mutex.into_inner()
        },
    );
}

/// A timeout around a loop that never ends but yields for the budget: the
/// loop's refused operation spends the poll's budget, and the deadline is
/// still seen (a deadline looked at under the spent budget would be
/// refused too, and the timeout would never fire).
#[test]
fn a_timeout_around_an_endless_loop_of_ready_operations_fires() {
    for (flavour, rt) in budget_flavours() {
        let took = rt.block_on(async {
            spindle::spawn(async {
                let start = Instant::now();
                // Endless as far as the timeout goes: it ends after 3 s.
                let endless = ready_channel_loop_until(start + Duration::from_secs(3));
                let out = timeout(Duration::from_millis(50), endless).await;
                assert!(out.is_err(), "the loop ran to its end: {out:?}");
                start.elapsed()
            })
            .await
            .unwrap()
        });
        assert!(
            took < Duration::from_millis(1000),
            "{flavour}: the timeout fired after {took:?}"
        );
    }
}

/// A loop of timeouts already over, around receives that are never ready
/// (`timeout` and `recv_timeout` with no time left): each ends at once,
/// `Elapsed`, as a ready timer, and spends a unit as one does.
#[test]
fn a_loop_of_timeouts_already_over_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms loop of elapsed timeouts",
        Duration::from_millis(200),
        |start| async move {
            let (_tx, rx) = chan::unbounded::<u64>();
            let mut elapsed = 0u64;
            while start.elapsed() < Duration::from_millis(300) {
                elapsed += u64::from(timeout(Duration::ZERO, rx.recv()).await.is_err());
                elapsed += u64::from(rx.recv_timeout(Duration::ZERO).await.is_err());
            }
            elapsed
        },
    );
}

/// A loop of waits that are always over at their first poll (a stored
/// notification, an empty wait group, a barrier of one): the budget makes
/// it yield to a sleeper, as a lock loop does.
#[test]
fn a_loop_of_waits_that_are_always_over_lets_a_sleeper_run() {
    a_sleeper_wakes_beside(
        "a 300 ms loop of notify, wait-group and barrier waits",
        Duration::from_millis(200),
        |start| async move {
            let notify = spindle::sync::Notify::new();
            let group = spindle::sync::WaitGroup::new();
            let barrier = spindle::sync::Barrier::new(1);
            let mut rounds = 0u64;
            while start.elapsed() < Duration::from_millis(300) {
                notify.notify_one();
                notify.notified().await;
                group.wait().await;
                assert!(barrier.wait().await.is_leader());
                rounds += 1;
            }
            rounds
        },
    );
}
