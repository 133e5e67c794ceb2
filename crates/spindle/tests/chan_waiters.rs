//! Deterministic replays of wait-list races, one thread each: a waker whose
//! `clone` runs code stands for other threads acting inside the window
//! where the channel clones a waiter's waker (under its wait-list lock,
//! between taking the entry out of `Notified` and raising the flag).

use spindle::chan;
use std::cell::RefCell;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Wake, Waker};

thread_local! {
    /// Run (once) by the next clone of a `hook_waker`.
    static ON_CLONE: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
}

fn hook_clone(_: *const ()) -> RawWaker {
    if let Some(f) = ON_CLONE.with(|h| h.borrow_mut().take()) {
        f();
    }
    RawWaker::new(std::ptr::null(), &HOOK)
}

fn hook_nop(_: *const ()) {}

static HOOK: RawWakerVTable = RawWakerVTable::new(hook_clone, hook_nop, hook_nop, hook_nop);

fn hook_waker() -> Waker {
    // SAFETY: every function of the vtable ignores the (null) data pointer.
    unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &HOOK)) }
}

/// A waker that counts its wakes.
struct Wakes(AtomicUsize);

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// The bounded ring caps its wake-ups in flight at the CPU count (`limit`).
/// Receiver R1 is woken, finds its message taken, and parks again while
/// two sends land with every wake-up slot still taken (they notify nobody).
/// Its re-check takes the first; the second must not sit beside receiver B
/// asleep: R1 still held the wake-up those sends counted on, and passes it
/// on when it completes.
#[test]
fn a_receiver_that_parks_again_after_a_wake_up_passes_it_on() {
    let limit = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (tx, rx) = chan::bounded::<u32>(limit + 8);
    let hook = hook_waker();
    let mut r1 = Box::pin(rx.recv());
    assert!(r1
        .as_mut()
        .poll(&mut Context::from_waker(&hook))
        .is_pending());
    let mut others: Vec<_> = (1..limit).map(|_| Box::pin(rx.recv())).collect();
    for o in &mut others {
        let mut cx = Context::from_waker(Waker::noop());
        assert!(o.as_mut().poll(&mut cx).is_pending());
    }
    let b_wakes = Arc::new(Wakes(AtomicUsize::new(0)));
    let b_waker = Waker::from(b_wakes.clone());
    let mut b = Box::pin(rx.recv());
    assert!(b
        .as_mut()
        .poll(&mut Context::from_waker(&b_waker))
        .is_pending());

    // `limit` sends wake R1 and the others: every slot is taken, B stays
    // parked. A receiver that never parked takes those messages.
    for i in 0..limit as u32 {
        tx.try_send(i).unwrap();
    }
    for _ in 0..limit {
        rx.try_recv().unwrap();
    }
    assert_eq!(b_wakes.0.load(SeqCst), 0);

    // R1 polled again: empty, so it parks; two sends land meanwhile.
    let tx2 = tx.clone();
    ON_CLONE.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            tx2.try_send(100).unwrap();
            tx2.try_send(101).unwrap();
        }))
    });
    let mut cx = Context::from_waker(&hook);
    assert_eq!(r1.as_mut().poll(&mut cx), Poll::Ready(Ok(100)));
    drop(r1);
    assert_eq!(rx.len(), 1, "101 is buffered");
    assert_eq!(
        b_wakes.0.load(SeqCst),
        1,
        "B must be woken for 101: nobody else will be until the next send"
    );
    let mut cx = Context::from_waker(&b_waker);
    assert_eq!(b.as_mut().poll(&mut cx), Poll::Ready(Ok(101)));
    drop(others);
}
