//! `spindle::sync`: the semaphore's order (FIFO, no barging), its cancel
//! safety (a dropped acquire gives back and passes on what it held),
//! closing, owned permits; the mutex's guards, `blocking_lock` from plain
//! threads and its panic on a runtime thread, a counter under contention
//! on every flavour; `Notify`'s stored permit, `notify_waiters`, and a
//! dropped `Notified` passing its notification on.
//!
//! Most cases poll the futures by hand with a waker that counts its wakes,
//! so that each step (who was woken, who holds what) is checked exactly.

mod common;

use common::{counting, poll_with, wakes};

use spindle::sync::{AcquireError, Mutex, Notify, Semaphore, TryAcquireError};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Poll;

#[test]
fn semaphore_counts_and_try_acquire() {
    let sem = Semaphore::new(3);
    let a = sem.try_acquire().unwrap();
    let b = sem.try_acquire_many(2).unwrap();
    assert_eq!(b.num_permits(), 2);
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
    drop(a);
    assert_eq!(sem.available_permits(), 1);
    b.forget();
    assert_eq!(sem.available_permits(), 1);
    sem.add_permits(4);
    assert_eq!(sem.available_permits(), 5);
    assert!(sem.try_acquire_many(0).is_ok());
}

#[test]
fn waiters_are_served_in_order() {
    let sem = Semaphore::new(0);
    let (w1, c1) = counting();
    let (w2, c2) = counting();
    let (w3, c3) = counting();
    let mut a1 = pin!(sem.acquire_many(2));
    let mut a2 = pin!(sem.acquire());
    let mut a3 = pin!(sem.acquire());
    assert!(poll_with(a1.as_mut(), &w1).is_pending());
    assert!(poll_with(a2.as_mut(), &w2).is_pending());
    assert!(poll_with(a3.as_mut(), &w3).is_pending());
    // One permit: the first waiter wants two, so it holds that one and
    // the smaller requests behind it wait.
    sem.add_permits(1);
    assert_eq!((wakes(&c1), wakes(&c2), wakes(&c3)), (0, 0, 0));
    assert_eq!(sem.available_permits(), 0);
    sem.add_permits(2);
    assert_eq!((wakes(&c1), wakes(&c2), wakes(&c3)), (1, 1, 0));
    let p1 = match poll_with(a1.as_mut(), &w1) {
        Poll::Ready(p) => p.unwrap(),
        Poll::Pending => panic!("first waiter not served"),
    };
    assert_eq!(p1.num_permits(), 2);
    let Poll::Ready(Ok(p2)) = poll_with(a2.as_mut(), &w2) else {
        panic!("second waiter not served");
    };
    assert!(poll_with(a3.as_mut(), &w3).is_pending());
    drop(p1);
    assert_eq!(wakes(&c3), 1);
    assert!(poll_with(a3.as_mut(), &w3).is_ready());
    drop(p2);
}

#[test]
fn no_barging_past_a_queued_waiter() {
    let sem = Semaphore::new(1);
    let held = sem.try_acquire_many(1).unwrap();
    let (w, _c) = counting();
    let mut big = pin!(sem.acquire_many(2));
    assert!(poll_with(big.as_mut(), &w).is_pending());
    drop(held); // goes to the queued waiter, not to the free count
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::NoPermits));
    let mut late = pin!(sem.acquire());
    assert!(poll_with(late.as_mut(), &w).is_pending());
    sem.add_permits(1);
    let Poll::Ready(Ok(p)) = poll_with(big.as_mut(), &w) else {
        panic!("the first waiter was not served");
    };
    assert!(poll_with(late.as_mut(), &w).is_pending());
    drop(p);
    assert!(poll_with(late.as_mut(), &w).is_ready());
}

#[test]
fn dropped_acquire_gives_back_its_partial_permits() {
    let sem = Semaphore::new(2);
    let (w, _c) = counting();
    let (w2, c2) = counting();
    {
        let mut big = Box::pin(sem.acquire_many(3));
        assert!(poll_with(big.as_mut(), &w).is_pending());
        let mut small = pin!(sem.acquire());
        assert!(poll_with(small.as_mut(), &w2).is_pending());
        assert_eq!(sem.available_permits(), 0);
        // `big` holds two; dropping it passes one to `small`.
        drop(big);
        assert_eq!(wakes(&c2), 1);
        assert_eq!(sem.available_permits(), 1);
        let Poll::Ready(Ok(p)) = poll_with(small.as_mut(), &w2) else {
            panic!("the waiter behind was not served");
        };
        assert_eq!(sem.available_permits(), 1);
        drop(p);
    }
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn dropped_acquire_that_was_served_passes_the_permit_on() {
    let sem = Semaphore::new(0);
    let (w1, c1) = counting();
    let (w2, c2) = counting();
    let mut first = Box::pin(sem.acquire());
    let mut second = pin!(sem.acquire());
    assert!(poll_with(first.as_mut(), &w1).is_pending());
    assert!(poll_with(second.as_mut(), &w2).is_pending());
    sem.add_permits(1);
    assert_eq!((wakes(&c1), wakes(&c2)), (1, 0));
    drop(first); // woken but never polled again: the permit goes on
    assert_eq!(wakes(&c2), 1);
    assert!(poll_with(second.as_mut(), &w2).is_ready());
    assert_eq!(sem.available_permits(), 1);
}

#[test]
fn close_fails_waiters_and_later_acquires() {
    let sem = Semaphore::new(1);
    let held = sem.try_acquire().unwrap();
    let (w, c) = counting();
    let mut waiting = pin!(sem.acquire_many(2));
    assert!(poll_with(waiting.as_mut(), &w).is_pending());
    sem.close();
    assert!(sem.is_closed());
    assert_eq!(wakes(&c), 1);
    match poll_with(waiting.as_mut(), &w) {
        Poll::Ready(Err(e)) => assert_eq!(e.to_string(), "semaphore closed"),
        _ => panic!("a queued acquire survived close"),
    }
    assert_eq!(sem.try_acquire().err(), Some(TryAcquireError::Closed));
    let mut late = pin!(sem.acquire());
    assert!(matches!(poll_with(late.as_mut(), &w), Poll::Ready(Err(_))));
    drop(held); // permits held stay valid and go back
    assert_eq!(sem.available_permits(), 1);
}

#[test]
fn owned_permits_keep_the_semaphore() {
    let sem = Arc::new(Semaphore::new(2));
    let p = sem.clone().try_acquire_many_owned(2).unwrap();
    assert!(Arc::ptr_eq(p.semaphore(), &sem));
    assert!(sem.clone().try_acquire_owned().is_err());
    drop(p);
    let (w, _c) = counting();
    let mut a = pin!(sem.clone().acquire_many_owned(2));
    match poll_with(a.as_mut(), &w) {
        Poll::Ready(Ok(p)) => assert_eq!(p.num_permits(), 2),
        _ => panic!("owned acquire not served"),
    }
    assert_eq!(sem.available_permits(), 2);
}

#[test]
#[should_panic(expected = "MAX_PERMITS")]
fn add_permits_past_the_maximum_panics() {
    let sem = Semaphore::new(Semaphore::MAX_PERMITS);
    sem.add_permits(1);
}

#[test]
fn acquire_error_is_an_error() {
    fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
    is_error::<AcquireError>();
    is_error::<TryAcquireError>();
    is_error::<spindle::sync::TryLockError>();
}

rt_test! {
    fn close_wakes_a_waiting_task() {
        let sem = Arc::new(Semaphore::new(0));
        let s = sem.clone();
        let h = spindle::spawn(async move { s.acquire().await.map(drop) });
        common::until(|| sem.available_permits() == 0 && !h.is_finished()).await;
        spindle::yield_now().await;
        sem.close();
        assert!(h.await.unwrap().is_err());
    }
}

rt_test! {
    fn semaphore_limits_concurrency() {
        let sem = Arc::new(Semaphore::new(3));
        let inside = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..50)
            .map(|_| {
                let (sem, inside) = (sem.clone(), inside.clone());
                spindle::spawn(async move {
                    let _p = sem.acquire().await.unwrap();
                    assert!(inside.fetch_add(1, SeqCst) < 3);
                    spindle::yield_now().await;
                    inside.fetch_sub(1, SeqCst);
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
        assert_eq!(sem.available_permits(), 3);
    }
}

#[test]
fn mutex_guards_and_accessors() {
    let mut m = Mutex::new(5);
    *m.get_mut() += 1;
    {
        let g = m.try_lock().unwrap();
        assert_eq!(*g, 6);
        assert!(m.try_lock().is_err());
        assert_eq!(format!("{m:?}"), "Mutex { data: <locked> }");
    }
    let m = Arc::new(m);
    let mut g = m.clone().try_lock_owned().unwrap();
    *g += 1;
    assert!(Arc::ptr_eq(g.mutex(), &m));
    drop(g);
    let m = Arc::try_unwrap(m).unwrap();
    assert_eq!(m.into_inner(), 7);
}

#[test]
fn mutex_is_fair_and_cancel_safe() {
    let m = Mutex::new(0);
    let held = m.try_lock().unwrap();
    let (w1, c1) = counting();
    let (w2, c2) = counting();
    let mut first = Box::pin(m.lock());
    let mut second = pin!(m.lock());
    assert!(poll_with(first.as_mut(), &w1).is_pending());
    assert!(poll_with(second.as_mut(), &w2).is_pending());
    drop(held);
    assert_eq!((wakes(&c1), wakes(&c2)), (1, 0));
    assert!(
        m.try_lock().is_err(),
        "try_lock took the lock from a waiter"
    );
    drop(first); // handed the lock, dropped unpolled: it goes on
    assert_eq!(wakes(&c2), 1);
    assert!(poll_with(second.as_mut(), &w2).is_ready());
}

#[test]
fn blocking_lock_from_plain_threads() {
    let m = Arc::new(Mutex::new(0u64));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let m = m.clone();
            std::thread::spawn(move || {
                for _ in 0..common::scaled(1000) {
                    *m.blocking_lock() += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*m.blocking_lock(), 4 * common::scaled(1000) as u64);
}

#[test]
fn blocking_lock_waits_for_a_task_to_unlock() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    let m = Arc::new(Mutex::new(0));
    let guard = m.clone().try_lock_owned().unwrap();
    let m2 = m.clone();
    let t = std::thread::spawn(move || *m2.blocking_lock() + 1);
    rt.block_on(async move {
        spindle::yield_now().await;
        let mut g = guard;
        *g = 41;
    });
    assert_eq!(t.join().unwrap(), 42);
}

#[test]
#[should_panic(expected = "blocking_lock called on a spindle runtime thread")]
fn blocking_lock_on_a_runtime_thread_panics() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let m = Mutex::new(0);
    rt.block_on(async {
        drop(m.blocking_lock());
    });
}

/// As the panic's message advises: inside `block_in_place` a worker has
/// given its core away, and its thread may block like a plain one.
#[test]
fn blocking_lock_inside_block_in_place_waits_for_a_task_to_unlock() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    let m = Arc::new(Mutex::new(0));
    let got = rt.block_on(async move {
        let guard = m.clone().lock_owned().await;
        let blocked =
            spindle::spawn(async move { spindle::block_in_place(|| *m.blocking_lock() + 1) });
        spindle::time::sleep(std::time::Duration::from_millis(20)).await;
        let mut g = guard;
        *g = 41;
        drop(g);
        blocked.await.unwrap()
    });
    assert_eq!(got, 42);
}

/// The same after the monitor took the core away first (the task blocked
/// its worker beyond `handoff_after`): `block_in_place` then has nothing
/// to hand off, and the thread still drives no task.
#[test]
#[cfg_attr(miri, ignore = "waits on the monitor's timing, not a memory check")]
fn blocking_lock_inside_block_in_place_after_a_retake_takes_the_lock() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .handoff_after(Some(std::time::Duration::from_millis(1)))
        .build()
        .unwrap();
    let m = Arc::new(Mutex::new(41));
    let got = rt.block_on(async move {
        spindle::spawn(async move {
            // Blocked, not running: the monitor hands the core off.
            std::thread::sleep(std::time::Duration::from_millis(200));
            spindle::block_in_place(|| *m.blocking_lock() + 1)
        })
        .await
        .unwrap()
    });
    assert_eq!(got, 42);
    assert!(rt.metrics().handoffs >= 1);
}

/// On a worker whose core was not handed off (the current-thread
/// runtime's `block_in_place` runs in place), blocking still panics.
#[test]
#[should_panic(expected = "blocking_lock called on a spindle runtime thread")]
fn blocking_lock_inside_block_in_place_on_the_current_thread_runtime_panics() {
    let rt = spindle::Builder::new_current_thread().build().unwrap();
    let m = Mutex::new(0);
    rt.block_on(async {
        spindle::block_in_place(|| drop(m.blocking_lock()));
    });
}

rt_test! {
    fn mutex_counter_under_contention() {
        let tasks = 32;
        let rounds = common::scaled(2000);
        let m = Arc::new(Mutex::new(0usize));
        let handles: Vec<_> = (0..tasks)
            .map(|i| {
                let m = m.clone();
                spindle::spawn(async move {
                    for r in 0..rounds {
                        if (i + r) % 2 == 0 {
                            let mut g = m.lock().await;
                            let v = *g;
                            spindle::yield_now().await; // held across a yield
                            *g = v + 1;
                        } else {
                            *m.clone().lock_owned().await += 1;
                            spindle::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.await.unwrap();
        }
        assert_eq!(*m.lock().await, tasks * rounds);
    }
}

#[test]
fn notify_one_stores_one_permit() {
    let n = Notify::new();
    n.notify_one();
    n.notify_one(); // still one
    let (w, _c) = counting();
    assert!(poll_with(pin!(n.notified()), &w).is_ready());
    assert!(poll_with(pin!(n.notified()), &w).is_pending());
}

#[test]
fn notify_one_wakes_the_oldest_waiter() {
    let n = Notify::new();
    let (w1, c1) = counting();
    let (w2, c2) = counting();
    let mut a = pin!(n.notified());
    let mut b = pin!(n.notified());
    assert!(poll_with(a.as_mut(), &w1).is_pending());
    assert!(poll_with(b.as_mut(), &w2).is_pending());
    n.notify_one();
    assert_eq!((wakes(&c1), wakes(&c2)), (1, 0));
    assert!(poll_with(a.as_mut(), &w1).is_ready());
    assert!(poll_with(b.as_mut(), &w2).is_pending());
    // Polled again, a completed `Notified` stays ready and queues nothing.
    assert!(poll_with(a.as_mut(), &w1).is_ready());
    n.notify_one();
    assert_eq!(wakes(&c2), 1);
}

#[test]
fn notify_waiters_wakes_all_and_stores_nothing() {
    let n = Notify::new();
    let (w, c) = counting();
    let mut a = pin!(n.notified());
    let mut b = pin!(n.notified());
    let mut unpolled = pin!(n.notified()); // made before the call: counts
    assert!(poll_with(a.as_mut(), &w).is_pending());
    assert!(poll_with(b.as_mut(), &w).is_pending());
    n.notify_waiters();
    assert_eq!(wakes(&c), 2);
    assert!(poll_with(a.as_mut(), &w).is_ready());
    assert!(poll_with(b.as_mut(), &w).is_ready());
    assert!(poll_with(unpolled.as_mut(), &w).is_ready());
    assert!(poll_with(pin!(n.notified()), &w).is_pending());
}

#[test]
fn dropped_notified_passes_its_notification_on() {
    let n = Notify::new();
    let (w1, _c1) = counting();
    let (w2, c2) = counting();
    let mut a = Box::pin(n.notified());
    let mut b = pin!(n.notified());
    assert!(poll_with(a.as_mut(), &w1).is_pending());
    assert!(poll_with(b.as_mut(), &w2).is_pending());
    n.notify_one();
    drop(a);
    assert_eq!(wakes(&c2), 1);
    assert!(poll_with(b.as_mut(), &w2).is_ready());
    // With nobody left to take it, a passed-on notification is stored.
    let mut c = Box::pin(n.notified());
    assert!(poll_with(c.as_mut(), &w1).is_pending());
    n.notify_one();
    drop(c);
    assert!(poll_with(pin!(n.notified()), &w1).is_ready());
}

rt_test! {
    fn notify_between_tasks() {
        let n = Arc::new(Notify::new());
        let done = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (n, done) = (n.clone(), done.clone());
                spindle::spawn(async move {
                    n.notified().await;
                    done.fetch_add(1, SeqCst);
                })
            })
            .collect();
        for i in 0..4 {
            n.notify_one();
            common::until(|| done.load(SeqCst) > i).await;
        }
        for h in handles {
            h.await.unwrap();
        }
    }
}
