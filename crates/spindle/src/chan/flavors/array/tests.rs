//! Unit tests of the bounded ring: positions and laps, slot layout,
//! owned claim words, and the `WAITING` flag a claim reports.

use std::mem::size_of;

use super::slots::Slot;
use super::*;
use crate::chan::error::{TryRecvError, TrySendError};

/// Positions step through every index of a lap, then jump to the next
/// lap; `len` follows across laps for capacities on and off a power of 2.
#[test]
fn positions_wrap_by_lap_and_len_follows() {
    for cap in [1usize, 2, 3, 5, 8] {
        let ch = Channel::<u32>::new(cap);
        let mut pos = 0;
        for i in 0..3 * cap as u64 {
            assert_eq!(pos & (ch.one_lap - 1), i % cap as u64, "cap {cap}");
            assert_eq!(pos / ch.one_lap, i / cap as u64, "cap {cap}");
            pos = ch.next(pos);
        }
        for round in 0..3u32 {
            for k in 0..cap as u32 {
                assert_eq!(ch.len(), k as usize);
                assert_eq!(ch.try_push(round * 100 + k), Ok(false));
            }
            assert_eq!(ch.len(), cap);
            assert!(matches!(ch.try_push(7), Err(TrySendError::Full(7))));
            for k in 0..cap as u32 {
                assert_eq!(ch.try_pop().unwrap(), (round * 100 + k, false));
            }
            assert_eq!(ch.len(), 0);
            assert!(matches!(ch.try_pop(), Err(TryRecvError::Empty)));
        }
    }
}

/// Large messages get slots on cache lines, message first; small ones
/// stay packed. Across laps every message comes out whole, and those
/// left in the ring are dropped once with it.
#[test]
fn large_messages_sit_on_cache_lines_and_drop_once() {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    struct Big(Arc<AtomicUsize>, [u8; 200]);
    impl Drop for Big {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let ch = Channel::<Big>::new(5);
    for i in 0..5 {
        let at = ch.buf.get(i) as *const Slot<Big> as usize;
        assert_eq!(at % 64, 0, "slot {i} at {at:#x}");
    }
    for i in 0..12u8 {
        assert_eq!(ch.try_push(Big(drops.clone(), [i; 200])).ok(), Some(false));
        if i >= 2 {
            let (m, _) = ch.try_pop().ok().unwrap();
            assert!(m.1.iter().all(|&b| b == i - 2), "message {}", i - 2);
        }
    }
    assert_eq!(drops.load(Ordering::Relaxed), 10);
    drop(ch);
    assert_eq!(
        drops.load(Ordering::Relaxed),
        12,
        "the two left were dropped with the ring"
    );

    let small = Channel::<u64>::new(3);
    let (a, b) = (small.buf.get(0), small.buf.get(1));
    let stride = b as *const Slot<u64> as usize - a as *const Slot<u64> as usize;
    assert_eq!(stride, size_of::<Slot<u64>>(), "small messages stay packed");
}

/// A thread's run of claims makes it the owner of both words (its
/// claims then plain stores, `bias.rs`); a claim from another thread
/// takes each word back first, and nothing is lost or reordered; after
/// `MAX_BIASES` ownerships the words stay shared.
#[test]
fn a_thread_owns_the_words_until_another_claims() {
    let owning = crate::chan::flavors::bias::worth_owning();
    let ch = std::sync::Arc::new(Channel::<u64>::new(4));
    let (mut next_in, mut next_out) = (0u64, 0u64);
    let runs = if cfg!(miri) { 130 } else { 200 };
    for round in 0..6 {
        for _ in 0..runs {
            assert_eq!(ch.try_push(next_in), Ok(false));
            next_in += 1;
            assert_eq!(ch.try_pop().unwrap(), (next_out, false));
            next_out += 1;
        }
        let owned = ch.head.is_owned() && ch.tail.is_owned();
        assert_eq!(owned, owning && round < 4, "round {round}");
        // [x]; the other thread pushes x + 1 and takes x.
        assert_eq!(ch.try_push(next_in), Ok(false));
        let (c, mine, theirs) = (ch.clone(), next_out, next_in + 1);
        std::thread::spawn(move || {
            assert_eq!(c.try_push(theirs), Ok(false));
            assert_eq!(c.try_pop().unwrap(), (mine, false));
        })
        .join()
        .unwrap();
        assert!(!ch.head.is_owned() && !ch.tail.is_owned(), "round {round}");
        assert_eq!(ch.try_pop().unwrap(), (theirs, false));
        (next_in, next_out) = (theirs + 1, theirs + 1);
    }
    if owning {
        assert!(ch.head.shared_for_good() && ch.tail.shared_for_good());
    }
}

/// A claim reports the `WAITING` flag of the word it moved, and leaves
/// the flag in place.
#[test]
fn claims_report_the_waiting_flag() {
    let ch = Channel::<u32>::new(2);
    ch.tail.raise(WAITING, Ordering::Relaxed);
    assert_eq!(ch.try_push(1), Ok(true));
    assert_eq!(ch.try_push(2), Ok(true));
    assert_eq!(ch.try_pop().unwrap(), (1, false));
    ch.head.raise(WAITING, Ordering::Relaxed);
    assert_eq!(ch.try_pop().unwrap(), (2, true));
    assert!(ch.close());
    assert!(matches!(ch.try_pop(), Err(TryRecvError::Closed)));
    assert!(matches!(ch.try_push(3), Err(TrySendError::Closed(3))));
}
