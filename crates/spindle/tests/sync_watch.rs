//! `spindle::sync::watch`: the latest value wins, every receiver sees a
//! change, what counts as seen (`borrow`, `borrow_and_update`, `subscribe`,
//! `mark_*`), the closed channel from either end, the three ways to send,
//! a cancelled `changed()` losing nothing, `wait_for`, one wake per waiter
//! per send, and a multi-thread stress where every watcher ends on the
//! last value.
//!
//! Most cases poll the futures by hand with a waker that counts its wakes,
//! so that each step (who was woken, what each receiver has seen) is
//! checked exactly.

mod common;

use common::{counting, poll_with, wakes};

use spindle::sync::watch::{self, error::RecvError, error::SendError};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

#[test]
fn the_latest_value_wins() {
    let (tx, mut rx) = watch::channel(0);
    for v in 1..=5 {
        tx.send(v).unwrap();
    }
    let (w, _c) = counting();
    assert_eq!(poll_with(pin!(rx.changed()), &w), Poll::Ready(Ok(())));
    assert_eq!(*rx.borrow(), 5);
    // The five sends were one change to this receiver.
    assert!(poll_with(pin!(rx.changed()), &w).is_pending());
}

#[test]
fn every_receiver_sees_a_change() {
    let (tx, rx) = watch::channel("a");
    let mut rxs = vec![rx.clone(), tx.subscribe(), rx];
    assert_eq!(tx.receiver_count(), 3);
    tx.send("b").unwrap();
    for rx in &mut rxs {
        assert_eq!(rx.has_changed(), Ok(true));
        let seen = rx.borrow_and_update();
        assert!(seen.has_changed());
        assert_eq!(*seen, "b");
        drop(seen);
        assert_eq!(rx.has_changed(), Ok(false));
    }
}

#[test]
fn what_counts_as_seen() {
    let (tx, mut rx) = watch::channel(1);
    // The initial value is seen; `borrow` does not mark a new one.
    assert_eq!(rx.has_changed(), Ok(false));
    assert!(!rx.borrow().has_changed());
    tx.send(2).unwrap();
    assert!(rx.borrow().has_changed());
    assert_eq!(rx.has_changed(), Ok(true));
    // A clone starts from what its original saw; `subscribe` from now.
    let clone = rx.clone();
    let subscribed = tx.subscribe();
    assert_eq!(clone.has_changed(), Ok(true));
    assert_eq!(subscribed.has_changed(), Ok(false));
    assert_eq!(*subscribed.borrow(), 2);
    rx.mark_unchanged();
    assert_eq!(rx.has_changed(), Ok(false));
    rx.mark_changed();
    assert_eq!(rx.has_changed(), Ok(true));
    let (w, _c) = counting();
    assert!(poll_with(pin!(rx.changed()), &w).is_ready());
    assert_eq!(rx.has_changed(), Ok(false));
    assert!(!tx.borrow().has_changed());
    assert!(rx.same_channel(&clone) && tx.same_channel(&tx.clone()));
    assert!(!rx.same_channel(&watch::channel(2).1));
}

#[test]
fn changed_after_the_last_sender_returns_the_unseen_value_first() {
    let (tx, mut rx) = watch::channel(0);
    let tx2 = tx.clone();
    assert_eq!(tx.sender_count(), 2);
    tx.send(7).unwrap();
    drop(tx);
    assert_eq!(rx.has_changed(), Ok(true), "one sender is left");
    drop(tx2);
    assert!(rx.is_closed());
    // As Tokio's, `has_changed` fails once closed; `changed` does not
    // until the last value is seen.
    assert!(rx.has_changed().is_err());
    let (w, _c) = counting();
    assert_eq!(poll_with(pin!(rx.changed()), &w), Poll::Ready(Ok(())));
    assert_eq!(*rx.borrow(), 7);
    assert!(failed(poll_with(pin!(rx.changed()), &w)));
}

/// Whether a `changed()` returned its error.
fn failed(p: Poll<Result<(), RecvError>>) -> bool {
    matches!(p, Poll::Ready(Err(_)))
}

/// The error of a closed channel, from a receiver of one.
fn closed_error() -> RecvError {
    let (tx, rx) = watch::channel(());
    drop(tx);
    rx.has_changed().unwrap_err()
}

#[test]
fn dropping_the_last_sender_wakes_every_waiter() {
    let (tx, mut rx1) = watch::channel(0);
    let mut rx2 = rx1.clone();
    let (w1, c1) = counting();
    let (w2, c2) = counting();
    let mut a = pin!(rx1.changed());
    let mut b = pin!(rx2.changed());
    assert!(poll_with(a.as_mut(), &w1).is_pending());
    assert!(poll_with(b.as_mut(), &w2).is_pending());
    drop(tx);
    assert_eq!((wakes(&c1), wakes(&c2)), (1, 1));
    assert!(failed(poll_with(a.as_mut(), &w1)));
    assert!(failed(poll_with(b.as_mut(), &w2)));
}

#[test]
fn send_without_receivers_gives_the_value_back() {
    let (tx, rx) = watch::channel(String::from("kept"));
    drop(rx);
    assert!(tx.is_closed());
    let SendError(back) = tx.send(String::from("lost")).unwrap_err();
    assert_eq!(back, "lost");
    assert_eq!(*tx.borrow(), "kept");
    // The other sends store the value all the same.
    assert_eq!(tx.send_replace(String::from("stored")), "kept");
    let rx = tx.subscribe();
    assert!(!tx.is_closed());
    assert_eq!(*rx.borrow(), "stored");
    tx.send(String::from("sent")).unwrap();
    assert_eq!(*rx.borrow(), "sent");

    let tx = watch::Sender::new(0u8);
    assert_eq!(tx.send(3).unwrap_err().into_inner(), 3);
    let _rx = tx.subscribe();
    assert!(tx.send(4).is_ok());
    assert_eq!(*watch::Sender::<u8>::default().borrow(), 0);
}

#[test]
fn send_replace_modify_and_if_modified() {
    let (tx, mut rx) = watch::channel(vec![1]);
    let (w, c) = counting();
    let mut waiting = Box::pin(rx.changed());
    assert!(poll_with(waiting.as_mut(), &w).is_pending());
    // Not modified: changed in place all the same, but no one is told.
    assert!(!tx.send_if_modified(|v| {
        v.push(2);
        false
    }));
    assert_eq!(wakes(&c), 0);
    assert!(poll_with(waiting.as_mut(), &w).is_pending());
    assert!(tx.send_if_modified(|v| {
        v.push(3);
        true
    }));
    assert_eq!(wakes(&c), 1);
    assert!(poll_with(waiting.as_mut(), &w).is_ready());
    drop(waiting);
    assert_eq!(*rx.borrow_and_update(), [1, 2, 3]);
    tx.send_modify(|v| v.clear());
    assert_eq!(rx.has_changed(), Ok(true));
    assert_eq!(tx.send_replace(vec![9]), Vec::<i32>::new());
    assert_eq!(*rx.borrow_and_update(), [9]);
}

#[test]
fn a_panicking_modify_keeps_its_change_and_tells_no_one() {
    let (tx, mut rx) = watch::channel(0);
    let (w, c) = counting();
    let mut waiting = Box::pin(rx.changed());
    assert!(poll_with(waiting.as_mut(), &w).is_pending());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tx.send_modify(|v| {
            *v = 1;
            panic!("in the middle of a change");
        })
    }));
    assert!(panicked.is_err());
    assert_eq!(wakes(&c), 0);
    assert_eq!(*tx.borrow(), 1);
    tx.send(2).unwrap();
    assert_eq!(wakes(&c), 1);
    assert!(poll_with(waiting.as_mut(), &w).is_ready());
    drop(waiting);
    assert_eq!(*rx.borrow(), 2);
}

#[test]
fn one_send_wakes_each_waiter_once() {
    let (tx, rx) = watch::channel(0);
    let mut rxs: Vec<_> = (0..3).map(|_| rx.clone()).collect();
    let counts: Vec<_> = (0..3).map(|_| counting()).collect();
    let mut futs: Vec<_> = rxs.iter_mut().map(|r| Box::pin(r.changed())).collect();
    for (f, (w, _)) in futs.iter_mut().zip(&counts) {
        assert!(poll_with(f.as_mut(), w).is_pending());
        // A second poll refreshes the waker; it does not queue it twice.
        assert!(poll_with(f.as_mut(), w).is_pending());
    }
    tx.send(1).unwrap();
    tx.send(2).unwrap(); // the waiters were taken by the first send
    for (f, (w, c)) in futs.iter_mut().zip(&counts) {
        assert_eq!(wakes(c), 1);
        assert!(poll_with(f.as_mut(), w).is_ready());
    }
    drop(futs);
    assert!(rxs.iter().all(|r| *r.borrow() == 2));
}

#[test]
fn a_dropped_changed_loses_nothing() {
    let (tx, mut rx) = watch::channel(0);
    let (w, c) = counting();
    // Dropped while queued: the send that follows wakes no one.
    let mut first = Box::pin(rx.changed());
    assert!(poll_with(first.as_mut(), &w).is_pending());
    drop(first);
    tx.send(1).unwrap();
    assert_eq!(wakes(&c), 0);
    assert!(poll_with(pin!(rx.changed()), &w).is_ready());
    // Woken, then dropped before it could return: the change is still
    // there for the next one.
    let mut second = Box::pin(rx.changed());
    assert!(poll_with(second.as_mut(), &w).is_pending());
    tx.send(2).unwrap();
    assert_eq!(wakes(&c), 1);
    drop(second);
    assert_eq!(rx.has_changed(), Ok(true));
    assert!(poll_with(pin!(rx.changed()), &w).is_ready());
    assert_eq!(*rx.borrow(), 2);
}

#[test]
fn wait_for_checks_the_value_now_then_each_change() {
    let (tx, mut rx) = watch::channel(1);
    let (w, c) = counting();
    {
        let now = poll_with(pin!(rx.wait_for(|v| *v == 1)), &w);
        let Poll::Ready(Ok(seen)) = now else {
            panic!("wait_for did not take the value now");
        };
        assert!(!seen.has_changed());
    }
    let mut checked = Vec::new();
    {
        let mut even = pin!(rx.wait_for(|v| {
            checked.push(*v);
            *v % 2 == 0
        }));
        assert!(poll_with(even.as_mut(), &w).is_pending());
        tx.send(3).unwrap();
        assert!(poll_with(even.as_mut(), &w).is_pending());
        tx.send(5).unwrap();
        tx.send(6).unwrap();
        assert_eq!(wakes(&c), 2);
        let Poll::Ready(Ok(seen)) = poll_with(even.as_mut(), &w) else {
            panic!("wait_for missed 6");
        };
        assert_eq!(*seen, 6);
        assert!(seen.has_changed());
    }
    // 5 was replaced before it was checked.
    assert_eq!(checked, [1, 3, 6]);
    assert_eq!(rx.has_changed(), Ok(false));
    tx.send(7).unwrap();
    drop(tx);
    assert!(matches!(
        poll_with(pin!(rx.wait_for(|v| *v == 8)), &w),
        Poll::Ready(Err(_))
    ));
    assert_eq!(*rx.borrow(), 7);
}

#[test]
fn closed_completes_when_the_last_receiver_goes() {
    let (tx, rx) = watch::channel(());
    let rx2 = tx.subscribe();
    let (w, c) = counting();
    {
        let mut closed = pin!(tx.closed());
        assert!(poll_with(closed.as_mut(), &w).is_pending());
        drop(rx);
        assert_eq!(wakes(&c), 0);
        assert!(poll_with(closed.as_mut(), &w).is_pending());
        drop(rx2);
        assert_eq!(wakes(&c), 1);
        assert!(poll_with(closed.as_mut(), &w).is_ready());
    }
    assert!(poll_with(pin!(tx.closed()), &w).is_ready());
    // A new receiver opens it again.
    let _rx = tx.subscribe();
    assert!(poll_with(pin!(tx.closed()), &w).is_pending());
}

#[test]
fn errors_are_errors() {
    fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
    is_error::<SendError<String>>();
    is_error::<RecvError>();
    assert_eq!(format!("{:?}", SendError(5)), "SendError(..)");
    assert!(closed_error().to_string().contains("closed"));
    let (tx, rx) = watch::channel(3);
    assert!(format!("{tx:?}").contains("receivers: 1"));
    assert!(format!("{rx:?}").contains("senders: 1"));
    assert!(format!("{:?}", rx.borrow()).contains("value: 3"));
}

rt_test! {
    fn changed_across_tasks() {
        let (tx, mut rx) = watch::channel(0);
        let mut rx2 = rx.clone();
        let waiter = spindle::spawn(async move { *rx.wait_for(|v| *v >= 3).await.unwrap() });
        let follower = spindle::spawn(async move {
            let mut last = 0;
            while rx2.changed().await.is_ok() {
                last = *rx2.borrow_and_update();
            }
            last
        });
        for v in 1..=3 {
            tx.send(v).unwrap();
            spindle::yield_now().await;
        }
        assert_eq!(waiter.await.unwrap(), 3);
        drop(tx);
        assert_eq!(follower.await.unwrap(), 3, "the sender's drop ends the loop");
    }
}

rt_test! {
    fn closed_across_tasks() {
        let (tx, rx) = watch::channel(0);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let mut rx = rx.clone();
                spindle::spawn(async move { rx.changed().await.unwrap() })
            })
            .collect();
        drop(rx);
        tx.send(1).unwrap();
        tx.closed().await;
        assert!(tx.is_closed());
        for h in handles {
            h.await.unwrap();
        }
    }
}

/// One sender and many watchers on two workers: each watcher waits for
/// the last value, so a lost wake-up leaves one waiting and times out.
#[test]
fn every_watcher_ends_on_the_last_value() {
    let watchers = if cfg!(miri) { 4 } else { 100 };
    let sends = common::scaled(10_000) as u64;
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    rt.block_on(async move {
        let (tx, rx) = watch::channel(0u64);
        let handles: Vec<_> = (0..watchers)
            .map(|_| {
                let mut rx = rx.clone();
                spindle::spawn(async move {
                    let mut last = 0;
                    let mut changes = 0u64;
                    while last != sends {
                        rx.changed().await.unwrap();
                        let v = *rx.borrow_and_update();
                        assert!(v > last, "a change went back: {last} then {v}");
                        (last, changes) = (v, changes + 1);
                    }
                    changes
                })
            })
            .collect();
        drop(rx);
        for v in 1..=sends {
            tx.send(v).unwrap();
            if v % 64 == 0 {
                spindle::yield_now().await;
            }
        }
        let all = spindle::join_all(handles);
        let patience = common::patience() * 2;
        let changes = spindle::time::timeout(patience, all)
            .await
            .expect("a watcher missed the last value");
        for c in changes {
            assert!((1..=sends).contains(&c.unwrap()));
        }
        assert_eq!(tx.receiver_count(), 0);
    });
}

/// A watcher that gives up on each `changed()` after a millisecond and
/// starts a new one, while the sender keeps sending: a wait dropped with
/// the change it was woken for loses nothing, so the watcher still ends on
/// the last value.
#[test]
fn a_watcher_cancelling_its_waits_ends_on_the_last_value() {
    let sends = common::scaled(2_000) as u64;
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .unwrap();
    rt.block_on(async move {
        let (tx, mut rx) = watch::channel(0u64);
        let watcher = spindle::spawn(async move {
            let mut cancelled = 0;
            loop {
                let wait = spindle::time::timeout(Duration::from_millis(1), rx.changed());
                match wait.await {
                    Ok(changed) => changed.unwrap(),
                    Err(_) => {
                        cancelled += 1;
                        continue;
                    }
                }
                if *rx.borrow_and_update() == sends {
                    return cancelled;
                }
            }
        });
        for v in 1..=sends {
            tx.send(v).unwrap();
            if v % 16 == 0 {
                spindle::time::sleep(Duration::from_millis(1)).await;
            }
        }
        let done = spindle::time::timeout(common::patience(), watcher).await;
        done.expect("the watcher missed the last value").unwrap();
    });
}

#[test]
fn handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<watch::Sender<Vec<u8>>>();
    send_sync::<watch::Receiver<Vec<u8>>>();
    fn send<T: Send>(_: &T) {}
    let (_tx, mut rx) = watch::channel(0);
    send(&rx.changed());
    send(&rx.wait_for(|_| true));
    let shared = Arc::new(watch::channel(0).0);
    send(&shared.closed());
}
