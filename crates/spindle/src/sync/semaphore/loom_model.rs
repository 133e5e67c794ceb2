//! Loom models of the semaphore: its word, its queue and the races
//! between a release, a queueing acquire and a cancel.

use super::super::loom_support::Count;
use super::acquire::Acquire;
use super::*;
use crate::chan::blocking::block_on;
use crate::loom::{AtomicUsize, Ordering::SeqCst};
use loom::thread;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

fn poll_once(f: Pin<&mut Acquire<'_>>, waker: &Waker) -> Poll<Result<(), AcquireError>> {
    f.poll(&mut Context::from_waker(waker))
}

/// A release races the cancel of the waiter at the front, with a second
/// waiter behind it: whichever comes first, the permit ends with the
/// second waiter (woken and served), never lost with the first.
#[test]
fn a_release_racing_a_cancelled_waiter_loses_no_permit() {
    loom::model(|| {
        let sem = crate::loom::Arc::new(Semaphore::new(0));
        let count = std::sync::Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let first_waker = Waker::from(std::sync::Arc::new(Count::default()));
        let mut first = Box::pin(Acquire::new(&sem, 1));
        let mut second = Box::pin(Acquire::new(&sem, 1));
        assert!(poll_once(first.as_mut(), &first_waker).is_pending());
        assert!(poll_once(second.as_mut(), &waker).is_pending());
        let releaser = {
            let sem = sem.clone();
            thread::spawn(move || sem.release(1))
        };
        drop(first);
        releaser.join().unwrap();
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(matches!(
            poll_once(second.as_mut(), &waker),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(sem.available_permits(), 0);
        drop(second);
        sem.release(1);
        assert_eq!(sem.available_permits(), 1);
    });
}

/// Two threads acquire the one permit that a third gives back: each
/// gets it in turn (a lost wake-up is a loom deadlock), never both at
/// once, and it is back at the end.
#[test]
fn two_acquirers_and_one_releaser() {
    loom::model(|| {
        let sem = crate::loom::Arc::new(Semaphore::new(0));
        let inside = crate::loom::Arc::new(AtomicUsize::new(0));
        let acquirers: Vec<_> = (0..2)
            .map(|_| {
                let (sem, inside) = (sem.clone(), inside.clone());
                thread::spawn(move || {
                    let acquire = std::pin::pin!(Acquire::new(&sem, 1));
                    block_on(acquire).unwrap();
                    assert_eq!(inside.fetch_add(1, SeqCst), 0, "two holders");
                    inside.fetch_sub(1, SeqCst);
                    sem.release(1);
                })
            })
            .collect();
        sem.release(1);
        for t in acquirers {
            t.join().unwrap();
        }
        assert_eq!(sem.available_permits(), 1);
    });
}

/// A `try_acquire` racing a release while a waiter is queued: the permit
/// goes to the waiter whatever the order (no barging), and the waiter is
/// woken once.
#[test]
fn a_try_acquire_never_barges_past_a_queued_waiter() {
    loom::model(|| {
        let sem = crate::loom::Arc::new(Semaphore::new(0));
        let count = std::sync::Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut waiter = Box::pin(Acquire::new(&sem, 1));
        assert!(poll_once(waiter.as_mut(), &waker).is_pending());
        let releaser = {
            let sem = sem.clone();
            thread::spawn(move || sem.release(1))
        };
        assert!(sem.try_acquire().is_err(), "barged past the queue");
        releaser.join().unwrap();
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(matches!(
            poll_once(waiter.as_mut(), &waker),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(sem.available_permits(), 0);
    });
}

/// A fast release racing the first poll of an acquire that finds no
/// permit: either the acquire sees the permit and takes it, or it queues
/// and the release (seeing `WAITING`) hands it over and wakes it; the
/// permit is never left free with the waiter asleep.
#[test]
fn a_release_racing_a_queueing_acquire_is_not_lost() {
    loom::model(|| {
        let sem = crate::loom::Arc::new(Semaphore::new(0));
        let releaser = {
            let sem = sem.clone();
            thread::spawn(move || sem.release(1))
        };
        let acquire = std::pin::pin!(Acquire::new(&sem, 1));
        block_on(acquire).unwrap();
        releaser.join().unwrap();
        assert_eq!(sem.available_permits(), 0);
        sem.release(1);
        assert_eq!(sem.available_permits(), 1);
    });
}

/// A mutex's unlock (`release_sole`, one compare-exchange from the held
/// word) racing a lock that finds it held and queues: the queued lock is
/// handed the permit and woken, or takes it itself; afterwards the permit
/// is free again for `try_take_sole`, whose guess of the word holds.
#[test]
fn a_sole_release_racing_a_queueing_acquire_is_not_lost() {
    loom::model(|| {
        let sem = crate::loom::Arc::new(Semaphore::new(1));
        assert!(sem.try_take_sole());
        assert!(!sem.try_take_sole(), "took a held permit");
        let unlocker = {
            let sem = sem.clone();
            thread::spawn(move || sem.release_sole())
        };
        let acquire = std::pin::pin!(Acquire::new(&sem, 1));
        block_on(acquire).unwrap();
        unlocker.join().unwrap();
        assert_eq!(sem.available_permits(), 0);
        sem.release_sole();
        assert!(sem.try_take_sole(), "a free permit with nobody queued");
    });
}

/// A waiter served by a release racing a second acquire that queues: the
/// served waiter's entry is freed at once, so the second may get the same
/// key. The first is then dropped without being told: it must give its
/// permit on (to the second) and never touch the key it held.
#[test]
fn a_served_waiter_dropped_untold_passes_its_permit_on() {
    loom::model(|| {
        let sem = crate::loom::Arc::new(Semaphore::new(0));
        let count = std::sync::Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut first = Box::pin(Acquire::new(&sem, 1));
        assert!(poll_once(first.as_mut(), &waker).is_pending());
        let releaser = {
            let sem = sem.clone();
            thread::spawn(move || sem.release(1))
        };
        let mut second = Box::pin(Acquire::new(&sem, 1));
        assert!(
            poll_once(second.as_mut(), &waker).is_pending(),
            "the permit is the first waiter's"
        );
        releaser.join().unwrap();
        drop(first);
        assert!(matches!(
            poll_once(second.as_mut(), &waker),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(sem.available_permits(), 0);
        drop(second);
        assert_eq!(sem.available_permits(), 0, "the second holds it now");
    });
}
