//! The ring's unit tests: wrap-around, in-place runs, drops, and two
//! threads through every batch path (scaled down under miri).

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

#[test]
fn runs_split_at_the_end() {
    assert_eq!(runs(0, 3, 8), (0, 3, 0));
    assert_eq!(runs(6, 4, 8), (6, 2, 2));
    assert_eq!(runs(16, 8, 8), (0, 8, 0));
}

#[test]
fn slices_wrap_and_keep_order() {
    let (mut p, mut c) = ring::<u32>(5);
    let mut next = 0u32;
    let mut seen = Vec::new();
    for round in 0..20 {
        let batch: Vec<u32> = (next..next + (round % 4 + 1)).collect();
        let n = p.push_slice(&batch);
        next += n as u32;
        let mut buf = [0u32; 3];
        let k = c.pop_slice(&mut buf[..(round as usize % 3) + 1]);
        seen.extend_from_slice(&buf[..k]);
    }
    let mut rest = vec![0; 5];
    let k = c.pop_slice(&mut rest);
    seen.extend_from_slice(&rest[..k]);
    assert_eq!(seen, (0..next).collect::<Vec<_>>());
}

#[test]
fn poke_and_peek_in_place() {
    let (mut p, mut c) = ring::<u64>(4);
    assert_eq!(p.poke(3), 3);
    let (a, b) = p.poked();
    assert_eq!((a.len(), b.len()), (3, 0));
    a.copy_from_slice(&[1, 2, 3]);
    p.publish_poked(3);
    let (a, b) = c.peek_runs(10);
    assert_eq!((a, b), (&[1u64, 2, 3][..], &[][..]));
    c.release(2);
    // Positions 3..6: slot 3, then slots 0 and 1 (wrapped).
    assert_eq!(p.poke(10), 3);
    let (a, b) = p.poked();
    assert_eq!((a.len(), b.len()), (1, 2));
    a[0] = 4;
    b[0] = 5;
    b[1] = 6;
    p.publish_poked(3);
    let (a, b) = c.peek_runs(10);
    assert_eq!((a, b), (&[3u64, 4][..], &[5u64, 6][..]));
    c.release(4);
    assert_eq!(c.avail(), 0);
    assert_eq!((p.ring().sent(), p.ring().taken()), (6, 6));
}

struct Counted<'a>(&'a AtomicUsize);
impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Relaxed);
    }
}

#[test]
fn every_value_dropped_once() {
    let drops = AtomicUsize::new(0);
    {
        let (mut p, mut c) = ring::<Counted<'_>>(3);
        for _ in 0..3 {
            assert!(p.try_push(Counted(&drops)).is_ok());
        }
        assert!(p.try_push(Counted(&drops)).is_err()); // full: dropped by the caller
        assert_eq!(drops.load(Relaxed), 1);
        assert_eq!(c.avail(), 3);
        c.release(1);
        assert_eq!(drops.load(Relaxed), 2);
        let v = c.try_pop().unwrap();
        drop(v);
        assert_eq!(drops.load(Relaxed), 3);
        let mut q: Vec<_> = (0..4).map(|_| Counted(&drops)).collect();
        assert_eq!(p.push_from(&mut q), 2);
        drop(q);
        assert_eq!(drops.load(Relaxed), 5);
        let mut out = Vec::new();
        assert_eq!(c.pop_into(&mut out, 1), 1);
        drop(out);
        assert_eq!(drops.load(Relaxed), 6);
    } // two values left in the ring
    assert_eq!(drops.load(Relaxed), 8);
}

/// Two threads, every batch path: copies and in-place runs that wrap.
#[test]
fn threads_move_every_value_once_in_order() {
    let n: u64 = if cfg!(miri) { 300 } else { 200_000 };
    let (mut p, mut c) = ring::<u64>(13);
    let t = std::thread::spawn(move || {
        let mut next = 0u64;
        let mut round = 0usize;
        while next < n {
            let want = ((round % 5) + 1).min((n - next) as usize);
            if round.is_multiple_of(2) {
                let src: Vec<u64> = (next..next + want as u64).collect();
                next += p.push_slice(&src) as u64;
            } else {
                let k = p.poke(want);
                let (a, b) = p.poked();
                for (i, s) in a.iter_mut().chain(b.iter_mut()).enumerate() {
                    *s = next + i as u64;
                }
                p.publish_poked(k);
                next += k as u64;
            }
            round += 1;
            std::thread::yield_now();
        }
    });
    let mut seen = 0u64;
    let mut buf = [0u64; 4];
    let mut round = 0usize;
    loop {
        let drained = c.is_drained();
        if round.is_multiple_of(2) {
            let (a, b) = c.peek_runs(7);
            let k = a.len() + b.len();
            for &v in a.iter().chain(b) {
                assert_eq!(v, seen);
                seen += 1;
            }
            c.release(k);
        } else {
            let k = c.pop_slice(&mut buf);
            for &v in &buf[..k] {
                assert_eq!(v, seen);
                seen += 1;
            }
        }
        if drained {
            break;
        }
        round += 1;
        std::thread::yield_now();
    }
    t.join().unwrap();
    assert_eq!(seen, n);
}

#[test]
fn close_then_drain() {
    let (mut p, mut c) = ring::<u8>(2);
    p.try_push(1).unwrap();
    drop(p);
    assert!(!c.is_drained());
    assert_eq!(c.try_pop(), Some(1));
    assert!(c.is_drained());
}
