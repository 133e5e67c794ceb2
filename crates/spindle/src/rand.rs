//! `xorshift32`: the one pseudo-random step of the crate, which spreads a
//! worker's steal attempts across victims (`sched/multi_thread/steal.rs`)
//! and shuffles a `select!`'s arms (`chan/select.rs`). Not for
//! cryptography. A state is never 0: a step maps 0 to 0 and every other
//! value to another non-zero one, so each caller seeds with an odd number.

/// One xorshift32 step (shifts 13, 17, 5): the next state, which is also
/// the number drawn.
#[inline]
pub(crate) fn xorshift32(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}
