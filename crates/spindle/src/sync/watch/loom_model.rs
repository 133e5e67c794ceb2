//! Loom models of a watch channel's wake-ups: a change or the last
//! sender's drop racing a `changed()` never leaves it waiting for ever (a
//! lost wake-up is a loom deadlock), and the last receiver's drop racing
//! `closed()` likewise.

use super::*;
use crate::chan::blocking::block_on;
use loom::thread;
use std::pin::pin;

/// A send races a receiver between comparing versions and queueing its
/// waker: `changed()` returns either way, and the receiver then sees the
/// value sent, marked seen.
#[test]
fn a_send_racing_changed() {
    loom::model(|| {
        let (tx, mut rx) = channel(0);
        let sender = thread::spawn(move || {
            tx.send(1).unwrap();
            tx
        });
        assert!(block_on(pin!(rx.changed())).is_ok());
        assert_eq!(*rx.borrow(), 1);
        assert_eq!(rx.has_changed(), Ok(false));
        drop(sender.join().unwrap());
    });
}

/// A send and then the drop of the last sender race a waiting receiver:
/// its first `changed()` returns the value sent (seen or not when the
/// sender left), the second the error.
#[test]
fn the_last_sender_dropped_racing_changed() {
    loom::model(|| {
        let (tx, mut rx) = channel(0);
        let tx2 = tx.clone();
        let sender = thread::spawn(move || {
            tx.send(1).unwrap();
            drop(tx);
        });
        drop(tx2);
        assert!(block_on(pin!(rx.changed())).is_ok());
        assert_eq!(*rx.borrow_and_update(), 1);
        assert!(block_on(pin!(rx.changed())).is_err());
        sender.join().unwrap();
    });
}

/// The last receiver's drop races `closed()`: it returns either way.
#[test]
fn the_last_receiver_dropped_racing_closed() {
    loom::model(|| {
        let (tx, rx) = channel(0);
        let rx2 = rx.clone();
        let receiver = thread::spawn(move || drop(rx));
        drop(rx2);
        block_on(pin!(tx.closed()));
        assert!(tx.is_closed());
        receiver.join().unwrap();
    });
}

/// Two receivers, in different shards of the `changed()` waiters, wait
/// while a send takes the shards one by one: both return, each seeing
/// the value sent.
#[test]
fn a_send_wakes_receivers_in_every_shard() {
    loom::model(|| {
        let (tx, rx) = channel(0);
        let rx2 = rx.clone();
        assert_ne!(rx.shard, rx2.shard, "the model needs two shards");
        let waiters: Vec<_> = [rx, rx2]
            .into_iter()
            .map(|mut rx| {
                thread::spawn(move || {
                    assert!(block_on(pin!(rx.changed())).is_ok());
                    assert_eq!(*rx.borrow(), 1);
                })
            })
            .collect();
        tx.send(1).unwrap();
        for w in waiters {
            w.join().unwrap();
        }
    });
}
