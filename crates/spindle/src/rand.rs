//! `xorshift32`: the one pseudo-random step of the crate, which spreads a
//! worker's steal attempts across victims (`sched/multi_thread/steal.rs`),
//! shuffles a `select!`'s arms (`chan/select.rs`) and picks the next task
//! of a deterministic runtime (`sched/current_thread.rs`). Not for
//! cryptography. A state is never 0: a step maps 0 to 0 and every other
//! value to another non-zero one, so each caller seeds with an odd number.
//!
//! Each thread has one state for the draws that need no state of their
//! own ([`with_thread_rng`]); a deterministic runtime seeds it
//! ([`seed_thread`]) so that its `select!`s choose the same way on every
//! run with that seed.

use std::cell::Cell;

thread_local! {
    static THREAD_RNG: Cell<u32> = Cell::new(random_seed());
}

/// One xorshift32 step (shifts 13, 17, 5): the next state, which is also
/// the number drawn.
#[inline]
pub(crate) fn xorshift32(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}

/// Runs `f` on this thread's random state (it returns the new state).
#[inline]
pub(crate) fn with_thread_rng<R>(f: impl FnOnce(u32) -> (u32, R)) -> R {
    THREAD_RNG.with(|c| {
        let (next, r) = f(c.get());
        c.set(next);
        r
    })
}

/// Seeds this thread's random state from `seed` (any value).
pub(crate) fn seed_thread(seed: u64) {
    THREAD_RNG.with(|c| c.set(odd_seed(seed)));
}

/// A non-zero xorshift32 state from any 64-bit seed, mixed first
/// (splitmix64's finaliser) so that neighbouring seeds start far apart.
pub(crate) fn odd_seed(seed: u64) -> u32 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((z >> 32) as u32) | 1
}

/// A seed that differs between threads and runs.
fn random_seed() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(&h as *const _ as usize);
    (h.finish() as u32) | 1
}
