//! Unit tests of the rendezvous channel's takers.

use super::*;

/// Many receives parked at once and each given a value, round after
/// round, with the receive given the last value drained only after the
/// next round's receives have parked (so the last taker handed is
/// still filled when they look): the drained takers are swept back
/// into use, and the channel's takers stay within a small multiple of
/// the receives.
#[test]
fn drained_takers_behind_a_filled_one_are_reused() {
    const RECEIVES: usize = 40;
    let ch = Channel::<usize>::new();
    let waker = Waker::noop();
    let mut keys = vec![None; RECEIVES];
    let mut late: Option<(usize, usize)> = None; // (receive, its value)
    let mut next = 0;
    for round in 0..50 {
        let mut parked = Vec::new();
        for (i, key) in keys.iter_mut().enumerate() {
            if key.is_none() {
                assert!(ch.poll_take(key, waker, true).is_pending());
                parked.push(i);
            }
        }
        if let Some((i, v)) = late.take() {
            assert!(
                matches!(ch.poll_take(&mut keys[i], waker, true), Poll::Ready(Ok(got)) if got == v)
            );
        }
        // Gives go to the oldest waiting taker first: park order.
        let given: Vec<(usize, usize)> = parked.iter().map(|&i| (i, next + i)).collect();
        for &(_, v) in &given {
            assert!(matches!(ch.send(v, waker, false), SendState::Given));
        }
        next += 1000;
        let (last, rest) = given.split_last().unwrap();
        for &(i, v) in rest {
            match ch.poll_take(&mut keys[i], waker, true) {
                Poll::Ready(Ok(got)) => assert_eq!(got, v, "round {round}"),
                other => panic!("receive {i} of round {round}: {other:?}"),
            }
        }
        late = Some(*last);
    }
    let takers = ch.inner.lock().takers.len();
    assert!(
        takers <= 2 * RECEIVES + 8,
        "{takers} takers for {RECEIVES} receives"
    );
}
