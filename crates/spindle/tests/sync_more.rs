//! `spindle::sync`'s `RwLock` (shared reads, writer preference: a reader
//! behind a queued writer waits for it, cancel safety, downgrade, the
//! blocking calls), `Barrier` (a leader per round, reuse, `new(0)`),
//! `OnceCell` (one initializer at a time, a cancelled one handing over,
//! `set`'s errors) and `WaitGroup` (every waiter woken at zero, the
//! negative-counter panic), each with a multi-thread stress of exact
//! results.
//!
//! Most cases poll the futures by hand with a waker that counts its wakes,
//! so that each step (who was woken, who holds what) is checked exactly.

mod common;

use common::{counting, poll_with, wakes};

use spindle::sync::{Barrier, OnceCell, RwLock, SetError, WaitGroup};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Poll;

#[test]
fn rwlock_readers_share_and_a_writer_excludes() {
    let mut lock = RwLock::new(5);
    *lock.get_mut() += 1;
    {
        let a = lock.try_read().unwrap();
        let b = lock.try_read().unwrap();
        assert_eq!(*a + *b, 12);
        assert!(lock.try_write().is_err());
        assert_eq!(format!("{lock:?}"), "RwLock { data: 6 }");
    }
    {
        let mut w = lock.try_write().unwrap();
        *w += 1;
        assert!(lock.try_read().is_err());
        assert_eq!(format!("{lock:?}"), "RwLock { data: <locked> }");
    }
    let lock = Arc::new(lock);
    let mut w = lock.clone().try_write_owned().unwrap();
    *w += 1;
    assert!(Arc::ptr_eq(w.rwlock(), &lock));
    let r = w.downgrade(); // shared now: other readers may enter
    assert_eq!(*lock.try_read().unwrap(), 8);
    assert!(lock.try_write().is_err());
    drop(r);
    let r = lock.clone().try_read_owned().unwrap();
    drop(r);
    let lock = Arc::try_unwrap(lock).unwrap();
    assert_eq!(lock.into_inner(), 8);
}

#[test]
fn a_reader_behind_a_queued_writer_waits_for_it() {
    let lock = RwLock::new(0);
    let reading = lock.try_read().unwrap();
    let (ww, cw) = counting();
    let (wr, cr) = counting();
    let mut write = pin!(lock.write());
    assert!(poll_with(write.as_mut(), &ww).is_pending());
    // A later reader neither barges in by `try_read` nor by `read`.
    assert!(lock.try_read().is_err());
    let mut late_read = pin!(lock.read());
    assert!(poll_with(late_read.as_mut(), &wr).is_pending());
    drop(reading);
    assert_eq!((wakes(&cw), wakes(&cr)), (1, 0));
    let Poll::Ready(mut w) = poll_with(write.as_mut(), &ww) else {
        panic!("the queued writer was not served");
    };
    *w = 1;
    assert!(poll_with(late_read.as_mut(), &wr).is_pending());
    // Downgrading lets the reader queued behind the writer in.
    let r = w.downgrade();
    assert_eq!(wakes(&cr), 1);
    let Poll::Ready(late) = poll_with(late_read.as_mut(), &wr) else {
        panic!("the reader behind the writer was not served");
    };
    assert_eq!((*r, *late), (1, 1));
}

#[test]
fn a_cancelled_write_lets_the_readers_behind_it_in() {
    let lock = RwLock::new(0);
    let reading = lock.try_read().unwrap();
    let (ww, _cw) = counting();
    let (wr, cr) = counting();
    let mut write = Box::pin(lock.write());
    assert!(poll_with(write.as_mut(), &ww).is_pending());
    let mut late_read = pin!(lock.read());
    assert!(poll_with(late_read.as_mut(), &wr).is_pending());
    drop(write); // holds all permits but one: they go on to the reader
    assert_eq!(wakes(&cr), 1);
    let Poll::Ready(late) = poll_with(late_read.as_mut(), &wr) else {
        panic!("the reader behind a cancelled writer was not served");
    };
    drop(reading);
    // A write that was handed the lock and dropped unpolled passes it on.
    let mut write = Box::pin(lock.write());
    assert!(poll_with(write.as_mut(), &ww).is_pending());
    let mut read = pin!(lock.read());
    assert!(poll_with(read.as_mut(), &wr).is_pending());
    drop(late);
    drop(write);
    assert!(poll_with(read.as_mut(), &wr).is_ready());
}

#[test]
fn rwlock_with_max_readers_caps_the_readers() {
    let lock = RwLock::with_max_readers((), 2);
    let a = lock.try_read().unwrap();
    let _b = lock.try_read().unwrap();
    assert!(lock.try_read().is_err());
    drop(a);
    assert!(lock.try_read().is_ok());
}

#[test]
fn rwlock_blocking_from_plain_threads() {
    let lock = Arc::new(RwLock::new(0u64));
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for _ in 0..common::scaled(1000) {
                    if i % 2 == 0 {
                        *lock.blocking_write() += 1;
                    } else {
                        assert!(*lock.blocking_read() <= 2 * common::scaled(1000) as u64);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*lock.blocking_read(), 2 * common::scaled(1000) as u64);
}

#[test]
#[should_panic(expected = "RwLock::blocking_write called on a spindle runtime thread")]
fn rwlock_blocking_write_on_a_runtime_thread_panics() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let lock = RwLock::new(0);
    rt.block_on(async {
        drop(lock.blocking_write());
    });
}

rt_test! {
    fn rwlock_counter_under_contention() {
        let tasks = 16;
        let rounds = common::scaled(1000);
        let lock = Arc::new(RwLock::new((0usize, 0usize)));
        let handles: Vec<_> = (0..tasks)
            .map(|i| {
                let lock = lock.clone();
                spindle::spawn(async move {
                    for r in 0..rounds {
                        if (i + r) % 4 == 0 {
                            let mut g = lock.write().await;
                            let v = g.0;
                            spindle::yield_now().await; // held across a yield
                            *g = (v + 1, v + 1);
                        } else if r % 2 == 0 {
                            let g = lock.read().await;
                            spindle::yield_now().await;
                            assert_eq!(g.0, g.1, "a reader saw a half-done write");
                        } else {
                            let g = lock.clone().read_owned().await;
                            assert_eq!(g.0, g.1);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
        let writes = (0..tasks)
            .map(|i| (0..rounds).filter(|r| (i + r) % 4 == 0).count())
            .sum::<usize>();
        assert_eq!(*lock.read().await, (writes, writes));
    }
}

#[test]
fn barrier_has_one_leader_per_round_and_is_reused() {
    let barrier = Barrier::new(2);
    let (w, c) = counting();
    for _ in 0..3 {
        let mut first = pin!(barrier.wait());
        assert!(poll_with(first.as_mut(), &w).is_pending());
        let Poll::Ready(second) = poll_with(pin!(barrier.wait()), &w) else {
            panic!("the last arrival waited");
        };
        assert!(second.is_leader());
        let Poll::Ready(first) = poll_with(first.as_mut(), &w) else {
            panic!("the round ended without its first arrival");
        };
        assert!(!first.is_leader());
    }
    assert_eq!(wakes(&c), 3);
}

#[test]
fn barrier_of_zero_acts_as_one() {
    let barrier = Barrier::new(0);
    let (w, _c) = counting();
    for _ in 0..2 {
        let Poll::Ready(r) = poll_with(pin!(barrier.wait()), &w) else {
            panic!("Barrier::new(0).wait() waited");
        };
        assert!(r.is_leader());
    }
}

rt_test! {
    fn barrier_rounds_across_tasks() {
        let tasks = 8;
        let rounds = common::scaled(200);
        let barrier = Arc::new(Barrier::new(tasks));
        let arrived = Arc::new(AtomicUsize::new(0));
        let leaders = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let (barrier, arrived, leaders) =
                    (barrier.clone(), arrived.clone(), leaders.clone());
                spindle::spawn(async move {
                    for r in 0..rounds {
                        arrived.fetch_add(1, SeqCst);
                        let res = barrier.wait().await;
                        // Everyone of this round has arrived, and no one
                        // can pass the next round's barrier before us.
                        let seen = arrived.load(SeqCst);
                        assert!(seen >= (r + 1) * tasks && seen < (r + 2) * tasks);
                        if res.is_leader() {
                            leaders.fetch_add(1, SeqCst);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
        assert_eq!(leaders.load(SeqCst), rounds);
    }
}

#[test]
fn once_cell_set_get_take() {
    let mut cell = OnceCell::new();
    assert!(!cell.initialized());
    assert_eq!(cell.get(), None);
    assert_eq!(cell.set(1), Ok(()));
    assert!(cell.initialized());
    assert_eq!(cell.get(), Some(&1));
    let err = cell.set(2).unwrap_err();
    assert!(err.is_already_init_err());
    assert_eq!(err, SetError::AlreadyInitializedError(2));
    *cell.get_mut().unwrap() += 1;
    assert_eq!(cell.take(), Some(2));
    assert_eq!(cell.get(), None);
    assert_eq!(cell.set(3), Ok(()), "a taken cell can be set again");
    assert_eq!(cell.clone().into_inner(), Some(3));
    assert_eq!(OnceCell::<u8>::new().into_inner(), None);
    assert_eq!(
        format!("{:?}", OnceCell::from(4)),
        "OnceCell { value: Some(4) }"
    );
}

#[test]
fn once_cell_drops_its_value_once() {
    let drops = common::DropCounter::new();
    let cell = OnceCell::new();
    assert!(cell.set(drops.track()).is_ok());
    drop(cell);
    assert_eq!(drops.drops(), 1);
    let cell = OnceCell::new_with(Some(drops.track()));
    let value = cell.into_inner();
    assert_eq!(drops.drops(), 1);
    drop(value);
    assert_eq!(drops.drops(), 2);
}

#[test]
fn one_initializer_at_a_time_and_a_cancelled_one_hands_over() {
    let cell = OnceCell::new();
    let runs = AtomicUsize::new(0);
    let (w1, _c1) = counting();
    let (w2, c2) = counting();
    let (w3, c3) = counting();
    let init = |v: u32| {
        let runs = &runs;
        move || async move {
            runs.fetch_add(1, SeqCst);
            std::future::pending::<()>().await;
            v
        }
    };
    let mut first = Box::pin(cell.get_or_init(init(1)));
    assert!(poll_with(first.as_mut(), &w1).is_pending());
    let mut second = pin!(cell.get_or_init(|| async { 2 }));
    assert!(poll_with(second.as_mut(), &w2).is_pending());
    let mut third = pin!(cell.get_or_init(|| async { 3 }));
    assert!(poll_with(third.as_mut(), &w3).is_pending());
    assert_eq!(runs.load(SeqCst), 1, "two initializers ran at once");
    assert!(cell.set(9).unwrap_err().is_initializing_err());
    drop(first); // cancelled mid-initializer: the next waiter takes over
    assert_eq!((wakes(&c2), wakes(&c3)), (1, 0));
    assert_eq!(poll_with(second.as_mut(), &w2), Poll::Ready(&2));
    assert_eq!(wakes(&c3), 1);
    assert_eq!(poll_with(third.as_mut(), &w3), Poll::Ready(&2));
}

#[test]
fn a_failed_try_init_leaves_the_cell_empty() {
    let cell = OnceCell::<u32>::new();
    let (w, _c) = counting();
    let failed = poll_with(pin!(cell.get_or_try_init(|| async { Err("no") })), &w);
    assert_eq!(failed, Poll::Ready(Err("no")));
    assert!(!cell.initialized());
    let ok = poll_with(
        pin!(cell.get_or_try_init(|| async { Ok::<_, &str>(5) })),
        &w,
    );
    assert_eq!(ok, Poll::Ready(Ok(&5)));
}

rt_test! {
    fn once_cell_initialised_once_across_tasks() {
        let cell = Arc::new(OnceCell::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..16)
            .map(|i| {
                let (cell, runs) = (cell.clone(), runs.clone());
                spindle::spawn(async move {
                    let v = cell
                        .get_or_init(|| async move {
                            runs.fetch_add(1, SeqCst);
                            spindle::yield_now().await;
                            i
                        })
                        .await;
                    *v
                })
            })
            .collect();
        let mut seen = Vec::new();
        for h in handles {
            seen.push(h.await.unwrap());
        }
        assert_eq!(runs.load(SeqCst), 1);
        assert!(seen.iter().all(|v| Some(v) == cell.get()));
    }
}

#[test]
fn wait_group_wakes_every_waiter_at_zero() {
    let wg = WaitGroup::new();
    let (w, c) = counting();
    assert!(poll_with(pin!(wg.wait()), &w).is_ready(), "zero: at once");
    wg.add(2);
    assert_eq!(wg.count(), 2);
    let mut a = pin!(wg.wait());
    let mut b = pin!(wg.wait());
    assert!(poll_with(a.as_mut(), &w).is_pending());
    assert!(poll_with(b.as_mut(), &w).is_pending());
    wg.done();
    assert_eq!(wakes(&c), 0);
    wg.done();
    assert_eq!(wakes(&c), 2);
    wg.add(1); // raised again before they look: they still return (as Go's)
    assert!(poll_with(a.as_mut(), &w).is_ready());
    assert!(poll_with(b.as_mut(), &w).is_ready());
    assert!(poll_with(pin!(wg.wait()), &w).is_pending());
    wg.done();
    assert_eq!(format!("{wg:?}"), "WaitGroup { count: 0 }");
}

#[test]
#[should_panic(expected = "negative WaitGroup counter")]
fn wait_group_done_below_zero_panics() {
    let wg = WaitGroup::new();
    wg.add(1);
    wg.done();
    wg.done();
}

rt_test! {
    fn wait_group_across_tasks() {
        let tasks = 64;
        let wg = Arc::new(WaitGroup::new());
        let finished = Arc::new(AtomicUsize::new(0));
        wg.add(tasks);
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let (wg, finished) = (wg.clone(), finished.clone());
                spindle::spawn(async move {
                    wg.wait().await;
                    assert_eq!(finished.load(SeqCst), tasks);
                })
            })
            .collect();
        let workers: Vec<_> = (0..tasks)
            .map(|_| {
                let (wg, finished) = (wg.clone(), finished.clone());
                spindle::spawn(async move {
                    spindle::yield_now().await;
                    finished.fetch_add(1, SeqCst);
                    wg.done();
                })
            })
            .collect();
        wg.wait().await;
        assert_eq!(finished.load(SeqCst), tasks);
        for h in waiters.into_iter().chain(workers) {
            h.await.unwrap();
        }
    }
}
