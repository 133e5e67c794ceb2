//! Loom models of the capped wake-ups on a stand-in for the bounded ring:
//! one word holding the message count and the flag, moved by one RMW per
//! send or receive, as the ring's claims move `tail` and `head`. (The real
//! ring cannot be modelled with two parked receivers: they spin, one yield
//! a step, on a preempted sender's claim, and loom's branches run out; the
//! wait-list logic is the same.)

use super::*;
use crate::loom::Arc;
use loom::thread;
use std::task::Wake;

const FLAG: u64 = 2;
const ONE: u64 = 8; // above the flag bits of a claim word (`bias.rs`: BIASED is 4)

struct Ring {
    word: ClaimWord,
    receivers: WaitList,
}

impl Ring {
    fn signal(&self) -> Signal<'_> {
        Signal::Flag(&self.word, FLAG)
    }

    fn send(&self) {
        if self.word.raw().fetch_add(ONE, Ordering::AcqRel) & FLAG != 0 {
            self.receivers.notify_one(self.signal());
        }
    }

    fn try_recv(&self) -> bool {
        let mut w = self.word.raw().load(Ordering::Acquire);
        while w >= ONE {
            match self
                .word
                .raw()
                .compare_exchange(w, w - ONE, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
        false
    }

    /// `Chan::poll_recv` and `recv_done`: try, register, re-check.
    fn poll_recv(&self, key: &mut Option<usize>, waker: &Waker) -> bool {
        let mut registered = false;
        loop {
            if self.try_recv() {
                if key.is_some()
                    && self.receivers.complete(key, self.signal())
                    && self.word.raw().load(Ordering::Acquire) >= ONE
                {
                    self.receivers.wake_oldest(self.signal());
                }
                return true;
            }
            if registered {
                return false;
            }
            self.receivers.register(key, waker, self.signal());
            registered = true;
        }
    }
}

struct Unpark(loom::thread::Thread);

impl Wake for Unpark {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// `recv_blocking`: poll, park until woken, poll again.
fn recv_blocking(ring: &Ring) {
    let waker = Waker::from(std::sync::Arc::new(Unpark(thread::current())));
    let mut key = None;
    while !ring.poll_recv(&mut key, &waker) {
        thread::park();
    }
}

/// Two parked receivers, two messages, one wake-up in flight: the
/// second message's notify is absorbed (or its claim sees the flag
/// down), so the receiver woken first must pass it on. A receiver left
/// asleep beside a message shows as a loom deadlock.
#[test]
fn capped_wakeups_are_passed_on() {
    loom::model(|| {
        let ring = Arc::new(Ring {
            word: ClaimWord::new(),
            receivers: WaitList::with_limit(1),
        });
        let rs: Vec<_> = (0..2)
            .map(|_| {
                let ring = ring.clone();
                thread::spawn(move || recv_blocking(&ring))
            })
            .collect();
        ring.send();
        ring.send();
        for r in rs {
            r.join().unwrap();
        }
        assert_eq!(ring.word.raw().load(Ordering::Relaxed) & !FLAG, 0);
    });
}
