//! Loom models of the ring (`ring/`) and its wake-up slots
//! (`waker_slot.rs`), run on the real code:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 \
//!     cargo test -p spindle-actor --release --lib loom_models
//! ```
//!
//! - `ring_wakeup_data`: a consumer parked on an empty ring while the
//!   producer publishes batches that wrap: every value arrives once, in
//!   order, and the consumer is never left asleep (a lost wake-up shows as
//!   a loom deadlock).
//! - `ring_wakeup_room`: a producer parked on a full ring while the consumer
//!   releases.
//! - `ring_close_drains`: close racing a parked consumer: the consumer gets
//!   every published value, then sees drained.
//! - `ring_consumer_gone_wakes_producer`: a producer parked for room wakes
//!   when the consumer goes away.

use crate::ring::ring;
use loom::thread;
use std::task::{Context, Poll};

/// Polls `f` on this loom thread, parking on a loom condvar between polls.
fn block_on<R>(mut f: impl FnMut(&mut Context<'_>) -> Poll<R>) -> R {
    use loom::sync::{Condvar, Mutex};
    use std::sync::Arc;
    use std::task::{Wake, Waker};
    struct P(Mutex<bool>, Condvar);
    impl Wake for P {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            *self.0.lock().unwrap() = true;
            self.1.notify_one();
        }
    }
    let p = Arc::new(P(Mutex::new(false), Condvar::new()));
    let w = Waker::from(p.clone());
    let mut cx = Context::from_waker(&w);
    loop {
        if let Poll::Ready(v) = f(&mut cx) {
            return v;
        }
        let mut g = p.0.lock().unwrap();
        while !*g {
            g = p.1.wait(g).unwrap();
        }
        *g = false;
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(f);
}

#[test]
fn ring_wakeup_data() {
    model(|| {
        let (mut p, mut c) = ring::<u32>(2);
        let t = thread::spawn(move || {
            // Two batches; the second wraps (positions 2..3 -> slot 0).
            let mut sent = 0;
            for batch in [&[1u32, 2][..], &[3][..]] {
                let mut off = 0;
                while off < batch.len() {
                    block_on(|cx| p.poll_vacant(1, cx)).expect("consumer alive");
                    off += p.push_slice(&batch[off..]);
                }
                sent += batch.len();
            }
            assert_eq!(sent, 3);
        });
        let mut got = Vec::new();
        while got.len() < 3 {
            let a = block_on(|cx| c.poll_avail(1, cx));
            assert!(a > 0, "closed before every value arrived");
            let mut buf = [0u32; 2];
            let n = c.pop_slice(&mut buf);
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, [1, 2, 3]);
        t.join().unwrap();
    });
}

#[test]
fn ring_wakeup_room() {
    model(|| {
        let (mut p, mut c) = ring::<u32>(1);
        p.try_push(1).unwrap();
        let t = thread::spawn(move || {
            assert_eq!(c.try_pop_spin(), 1);
            c
        });
        let v = block_on(|cx| p.poll_vacant(1, cx));
        assert_eq!(v, Some(1));
        p.try_push(2).unwrap();
        let mut c = t.join().unwrap();
        assert_eq!(c.try_pop(), Some(2));
    });
}

#[test]
fn ring_close_drains() {
    model(|| {
        let (mut p, mut c) = ring::<u32>(2);
        let t = thread::spawn(move || {
            p.try_push(7).unwrap();
            drop(p); // closes
        });
        let mut got = Vec::new();
        loop {
            let a = block_on(|cx| c.poll_avail(2, cx));
            if a == 0 {
                break;
            }
            got.push(c.try_pop().unwrap());
        }
        assert_eq!(got, [7]);
        assert!(c.is_drained());
        t.join().unwrap();
    });
}

#[test]
fn ring_consumer_gone_wakes_producer() {
    model(|| {
        let (mut p, c) = ring::<u32>(1);
        p.try_push(1).unwrap();
        let t = thread::spawn(move || drop(c));
        assert_eq!(block_on(|cx| p.poll_vacant(1, cx)), None);
        t.join().unwrap();
    });
}

impl<T> crate::ring::Consumer<T> {
    /// Test helper: pops, yielding to loom until a value is there.
    fn try_pop_spin(&mut self) -> T {
        loop {
            if let Some(v) = self.try_pop() {
                return v;
            }
            loom::thread::yield_now();
        }
    }
}
