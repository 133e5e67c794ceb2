//! `LocalSet` and `spawn_local`: `!Send` tasks on the thread that polls
//! their set, woken from any thread; panics, cancellation and misuse.

mod common;

use spindle::{spawn_local, LocalSet};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

fn multi() -> spindle::Runtime {
    spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap()
}

#[test]
fn spawn_local_works_in_a_current_thread_block_on() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let total = rt.block_on(async {
        let count = Rc::new(Cell::new(0u32)); // not Send
        let handles: Vec<_> = (0..100)
            .map(|i| {
                let c = count.clone();
                spawn_local(async move {
                    spindle::yield_now().await;
                    c.set(c.get() + 1);
                    i
                })
            })
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        assert_eq!(count.get(), 100);
        sum
    });
    assert_eq!(total, 4950);
}

#[test]
fn local_tasks_are_woken_from_other_workers() {
    let rt = multi();
    let local = LocalSet::new();
    let got = local.block_on(&rt, async {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut handles = Vec::new();
        for i in 0..50u64 {
            let (tx, rx) = spindle::chan::bounded::<u64>(1);
            // A Send task on any worker wakes the local task through the channel.
            drop(spindle::spawn(async move {
                spindle::yield_now().await;
                tx.send(i * 2).await.unwrap();
            }));
            let log = log.clone();
            handles.push(spawn_local(async move {
                let v = rx.recv().await.unwrap();
                log.borrow_mut().push(v);
                v
            }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        assert_eq!(log.borrow().len(), 50);
        sum
    });
    assert_eq!(got, 2 * 1225);
}

#[test]
fn spawn_local_outside_a_set_says_where_to_call_it() {
    let e = std::panic::catch_unwind(|| {
        drop(spawn_local(async {}));
    })
    .unwrap_err();
    let msg = e
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .unwrap_or_default();
    assert!(
        msg.contains("outside a LocalSet") && msg.contains("run_until"),
        "{msg}"
    );
    // A multi-thread runtime's own block_on has no set either.
    let e = std::panic::catch_unwind(|| multi().block_on(async { drop(spawn_local(async {})) }));
    assert!(e.is_err());
}

#[test]
fn a_panicking_local_task_is_a_join_error() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let h = spawn_local(async { panic!("local boom") });
        let e = h.await.unwrap_err();
        assert!(e.is_panic());
        assert_eq!(e.panic_message(), Some("local boom"));
        // The set goes on running other tasks.
        assert_eq!(spawn_local(async { 7 }).await.unwrap(), 7);
    });
}

/// Sets a flag when dropped.
struct Dropped(Rc<Cell<bool>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

#[test]
fn dropping_the_set_cancels_its_tasks() {
    let rt = multi();
    let dropped = Rc::new(Cell::new(false));
    let local = LocalSet::new();
    let d = Dropped(dropped.clone());
    let handle = local.spawn_local(async move {
        let _d = d;
        std::future::pending::<()>().await;
    });
    local.block_on(&rt, spindle::yield_now());
    assert_eq!(local.len(), 1);
    drop(local);
    assert!(
        dropped.get(),
        "the task's future was not dropped with its set"
    );
    let r = rt.block_on(handle);
    assert!(r.unwrap_err().is_cancelled());
}

#[test]
fn run_until_returns_with_tasks_left_and_they_go_on_later() {
    let rt = multi();
    let local = LocalSet::new();
    let step = Rc::new(Cell::new(0));
    let s = step.clone();
    let (tx, rx) = spindle::chan::bounded::<()>(1);
    let handle = local.spawn_local(async move {
        s.set(1);
        rx.recv().await.unwrap();
        s.set(2);
    });
    local.block_on(&rt, spindle::yield_now());
    assert_eq!(step.get(), 1);
    assert!(!local.is_empty());
    tx.send_blocking(()).unwrap();
    local.block_on(&rt, handle).unwrap();
    assert_eq!(step.get(), 2);
    assert!(local.is_empty());
}

#[test]
fn local_tasks_spawn_local_tasks() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let depth = rt.block_on(async {
        fn nest(n: u32) -> spindle::LocalJoinHandle<u32> {
            spawn_local(async move {
                if n == 0 {
                    0
                } else {
                    nest(n - 1).await.unwrap() + 1
                }
            })
        }
        nest(50).await.unwrap()
    });
    assert_eq!(depth, 50);
}

/// Local tasks are tasks: each poll has a budget of its own, so one that
/// loops over ready operations yields to the set's other tasks, on both
/// flavours (on the multi-thread one the set runs on `block_on`'s thread,
/// which no worker's budget covers).
#[test]
#[cfg_attr(miri, ignore = "a scheduling-policy check, not a memory one")]
fn a_busy_local_task_yields_to_the_other_local_tasks() {
    let current = spindle::Builder::new_current_thread().build().unwrap();
    for (flavour, rt) in [("multi_thread", multi()), ("current_thread", current)] {
        let local = LocalSet::new();
        let ran_at = local.block_on(&rt, async {
            let start = Instant::now();
            let busy = spawn_local(common::ready_channel_loop_until(
                start + Duration::from_millis(300),
            ));
            let other = spawn_local(async move { start.elapsed() });
            let ran_at = other.await.unwrap();
            assert!(busy.await.unwrap() > 0);
            ran_at
        });
        assert!(
            ran_at < Duration::from_millis(200),
            "{flavour}: the other local task ran at {ran_at:?}"
        );
    }
}

/// The future `block_on` polls is one too: a loop of ready operations
/// there yields to the set's tasks.
#[test]
#[cfg_attr(miri, ignore = "a scheduling-policy check, not a memory one")]
fn a_busy_block_on_future_yields_to_the_local_tasks() {
    let current = spindle::Builder::new_current_thread().build().unwrap();
    for (flavour, rt) in [("multi_thread", multi()), ("current_thread", current)] {
        let local = LocalSet::new();
        let ran_at = local.block_on(&rt, async {
            let start = Instant::now();
            let other = spawn_local(async move { start.elapsed() });
            assert!(common::ready_channel_loop_until(start + Duration::from_millis(300)).await > 0);
            other.await.unwrap()
        });
        assert!(
            ran_at < Duration::from_millis(200),
            "{flavour}: the local task ran at {ran_at:?}"
        );
    }
}
