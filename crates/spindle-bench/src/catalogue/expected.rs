//! The catalogue rows' expected-result formulas: each gives the `result` a
//! peer must print for size `n` with `w` workers, computed independently of
//! any peer. They agree with the peers' own copy in `peers/common` (a test
//! compares the two), so a slip in either shows.

use std::fmt::Write as _;

/// T(n) = n(n-1)/2, the sum of 0..n.
pub fn tri(n: u64) -> u128 {
    let n = n as u128;
    if n == 0 {
        0
    } else {
        n * (n - 1) / 2
    }
}

pub(super) fn e_tri(n: u64, _: usize) -> String {
    tri(n).to_string()
}
pub(super) fn e_sum_1_to_n(n: u64, _: usize) -> String {
    tri(n + 1).to_string()
}
pub(super) fn e_fib(n: u64, _: usize) -> String {
    let (mut a, mut b) = (0u128, 1u128);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a.to_string()
}
pub(super) fn e_sum_squares(n: u64, _: usize) -> String {
    let n = n as u128;
    (n * (n + 1) * (2 * n + 1) / 6).to_string()
}
/// π(n) by a sieve (the peers use trial division; the two must agree).
pub(super) fn e_primes(n: u64, _: usize) -> String {
    if n < 2 {
        return "0".into();
    }
    let n = n as usize;
    let mut composite = vec![false; n + 1];
    let mut count = 0u64;
    for i in 2..=n {
        if !composite[i] {
            count += 1;
            let mut j = i * i;
            while j <= n {
                composite[j] = true;
                j += i;
            }
        }
    }
    count.to_string()
}
pub(super) fn e_async_compute(n: u64, _: usize) -> String {
    (100 * tri(n) + 4950 * n as u128).to_string()
}
pub(super) fn e_blocking(n: u64, w: usize) -> String {
    (4 * w as u128 * n as u128).to_string()
}
pub(super) fn e_fizzbuzz(n: u64, _: usize) -> String {
    let fb = n / 15;
    let f = n / 3 - fb;
    let b = n / 5 - fb;
    let v = n - f - b - fb;
    let mut s = String::new();
    let _ = write!(s, "F:{f},B:{b},FB:{fb},V:{v}");
    s
}
pub(super) fn e_times_5(n: u64, _: usize) -> String {
    (n as u128 * 5).to_string()
}
pub(super) fn e_times_10(n: u64, _: usize) -> String {
    (n as u128 * 10).to_string()
}
pub(super) fn e_times_20(n: u64, _: usize) -> String {
    (n as u128 * 20).to_string()
}
pub(super) fn e_times_100(n: u64, _: usize) -> String {
    (n as u128 * 100).to_string()
}
