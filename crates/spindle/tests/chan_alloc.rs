//! No allocation per message on the bounded and unbounded hot paths, nor per
//! wait once the waiter slab has grown (a global allocator counting the
//! allocations of the calling thread only, so the test harness's own threads
//! do not count).

mod chan_common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocs() -> usize {
    ALLOCS.with(|c| c.get())
}

#[test]
fn hot_paths_do_not_allocate_per_message() {
    use chan_common::{block_on, poll_once};
    use spindle::chan;

    // Bounded: try_send/try_recv, async send/recv, batch.
    let (tx, rx) = chan::bounded::<u64>(64);
    let mut buf = Vec::with_capacity(64);
    let before = allocs();
    for i in 0..10_000 {
        tx.try_send(i).unwrap();
        assert_eq!(rx.try_recv(), Ok(i));
        block_on(tx.send(i)).unwrap();
        assert_eq!(block_on(rx.recv()), Ok(i));
    }
    for _ in 0..100 {
        for i in 0..64 {
            tx.try_send(i).unwrap();
        }
        buf.clear();
        assert_eq!(rx.try_recv_batch(&mut buf, 64), Ok(64));
    }
    // block_on allocates its waker once per call; count only channel work.
    let bounded = allocs() - before;
    assert!(bounded <= 20_000 + 10, "bounded: {bounded} allocations");

    // The same without the test executor: zero allocations.
    let before = allocs();
    for i in 0..10_000 {
        tx.try_send(i).unwrap();
        assert_eq!(rx.try_recv(), Ok(i));
    }
    assert_eq!(allocs() - before, 0, "bounded try_send/try_recv allocated");

    // Waiting: once the slab has an entry, a pending recv registers without
    // allocating (the noop waker is not cloned into a new allocation).
    let mut f = rx.recv();
    assert!(poll_once(&mut f).is_pending());
    drop(f);
    let before = allocs();
    for _ in 0..1000 {
        let mut f = rx.recv();
        assert!(poll_once(&mut f).is_pending());
        drop(f);
    }
    assert_eq!(allocs() - before, 0, "parking a receiver allocated");

    // Unbounded: one block per 32 messages, not one allocation per message.
    let (tx, rx) = chan::unbounded::<u64>();
    let before = allocs();
    for i in 0..3200 {
        tx.try_send(i).unwrap();
    }
    for i in 0..3200 {
        assert_eq!(rx.try_recv(), Ok(i));
    }
    let unbounded = allocs() - before;
    assert!(
        unbounded <= 101,
        "unbounded: {unbounded} allocations for 3200 messages"
    );
}
