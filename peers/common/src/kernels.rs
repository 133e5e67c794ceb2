//! The plain sequential code the compute rows run, shared so that every Rust
//! peer runs the very same loop and only the runtime around it differs.

use std::hint::black_box;

/// Naive recursive Fibonacci (fib, and fib_par below its cut-off).
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// `1² + … + n²`; the bound goes through `black_box` so the optimiser cannot
/// replace the loop by its closed form.
pub fn sum_squares(n: u64) -> u64 {
    let n = black_box(n);
    let mut sum = 0u64;
    for i in 1..=n {
        sum = sum.wrapping_add(i * i);
    }
    sum
}

/// Counts the primes `≤ n` by trial division.
pub fn count_primes(n: u64) -> u64 {
    let mut count = 0;
    for k in 2..=black_box(n) {
        let mut d = 2;
        let mut prime = true;
        while d * d <= k {
            if k % d == 0 {
                prime = false;
                break;
            }
            d += 1;
        }
        count += u64::from(prime);
    }
    count
}

/// skynet done without tasks: the sum of the leaf ids `id..id + size`, walked
/// as the same 10-ary tree (used below a threads peer's parallel threshold).
pub fn skynet_seq(id: u64, size: u64) -> u64 {
    if size == 1 {
        return id;
    }
    let child = size / crate::catalogue::SKYNET_FANOUT;
    (0..crate::catalogue::SKYNET_FANOUT)
        .map(|c| skynet_seq(id + c * child, child))
        .sum()
}

/// async_compute's body for task `i` before (`j < 50`) or after the yield:
/// one addition per step, as Go's loop does. LLVM replaces a sum over a
/// range by its closed form whatever the bounds, so each term passes
/// through `black_box` (a store and a load beside the running sum, which
/// stays in a register); the inputs do too, so nothing is known ahead.
pub fn compute_steps(i: u64, steps: std::ops::Range<u64>) -> u64 {
    let (i, steps) = black_box((i, steps));
    let mut sum = 0u64;
    for j in steps {
        sum += black_box(i + j);
    }
    sum
}

/// FizzBuzz classes, one byte each.
pub const VALUE: u8 = 0;
pub const FIZZ: u8 = 1;
pub const BUZZ: u8 = 2;
pub const FIZZBUZZ: u8 = 3;

/// The class of each remainder mod 15 (0 is FizzBuzz, 3/6/9/12 Fizz, 5/10 Buzz).
const CLASS_OF_REM15: [u8; 15] = [
    FIZZBUZZ, VALUE, VALUE, FIZZ, VALUE, BUZZ, FIZZ, VALUE, VALUE, FIZZ, BUZZ, VALUE, FIZZ, VALUE,
    VALUE,
];

/// The worker's classification of one value: one remainder and a table
/// lookup, no branches (every peer, Go included, classifies this way).
#[inline]
pub fn classify(v: u64) -> u8 {
    CLASS_OF_REM15[(v % 15) as usize]
}

/// fizzbuzz copy variant: the worker's batch, classes written into a
/// separate (reused) buffer.
pub fn classify_into(values: &[u64], classes: &mut Vec<u8>) {
    classes.clear();
    classes.extend(values.iter().map(|&v| classify(v)));
}

/// fizzbuzz zero-copy variant: the worker's batch, each value overwritten in
/// place by its class.
pub fn classify_in_place(buf: &mut [u64]) {
    buf.iter_mut().for_each(|v| *v = u64::from(classify(*v)));
}

/// fizzbuzz: the generator's next batch, `next..=min(next + batch - 1, n)`
/// into the reused `buf`; returns the value after the batch.
pub fn fill_batch(buf: &mut Vec<u64>, next: u64, batch: usize, n: u64) -> u64 {
    let end = (next + batch as u64 - 1).min(n);
    buf.clear();
    buf.extend(next..=end);
    end + 1
}

/// The logger's counts; `Display` gives the catalogue's `F:..,B:..,FB:..,V:..`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FizzCounts(pub [u64; 4]);

impl FizzCounts {
    #[inline]
    pub fn add(&mut self, class: u8) {
        self.0[class as usize & 3] += 1;
    }

    /// Counts a batch of classes (values of any integer width holding 0..=3).
    pub fn add_all<T: Copy + Into<u64>>(&mut self, classes: &[T]) {
        for &c in classes {
            self.0[(c.into() & 3) as usize] += 1;
        }
    }
}

impl std::fmt::Display for FizzCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [v, fi, b, fb] = self.0;
        write!(f, "F:{fi},B:{b},FB:{fb},V:{v}")
    }
}

/// payload_B: message `i` — index `i` as a little-endian u32 in the first 4
/// bytes, every other byte `i as u8`.
#[inline]
pub fn payload<const B: usize>(i: u64) -> [u8; B] {
    let mut m = [i as u8; B];
    m[..4].copy_from_slice(&(i as u32).to_le_bytes());
    m
}

/// payload_B: what the consumer adds for one message, checking its last
/// byte against the index it carries (a torn or mixed-up message panics).
#[inline]
pub fn payload_value<const B: usize>(m: &[u8; B]) -> u64 {
    let i = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
    // With B = 4 the last byte is the u32's top byte; otherwise it is filler.
    let last = if B > 4 { i as u8 } else { (i >> 24) as u8 };
    assert_eq!(m[B - 1], last, "payload {i}: last byte corrupt");
    u64::from(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_catalogue() {
        use crate::catalogue::expected;
        assert_eq!(fib(20).to_string(), expected("fib", 20, 1).unwrap());
        assert_eq!(
            sum_squares(1000).to_string(),
            expected("sum_squares", 1000, 1).unwrap()
        );
        assert_eq!(
            count_primes(10_000).to_string(),
            expected("primes", 10_000, 1).unwrap()
        );
        assert_eq!(
            skynet_seq(0, 1000).to_string(),
            expected("skynet", 1000, 1).unwrap()
        );
        let mut c = FizzCounts::default();
        (1..=100u64).for_each(|v| c.add(classify(v)));
        assert_eq!(
            c.to_string(),
            expected("fizzbuzz_pipeline", 100, 1).unwrap()
        );
        // The table is the FizzBuzz rule, value by value.
        for v in (0..3000u64).chain(u64::MAX - 3000..=u64::MAX) {
            let rule = match (v % 3 == 0, v % 5 == 0) {
                (true, true) => FIZZBUZZ,
                (true, false) => FIZZ,
                (false, true) => BUZZ,
                (false, false) => VALUE,
            };
            assert_eq!(classify(v), rule, "classify({v})");
        }
        assert_eq!(payload_value(&payload::<4>(300)), 300);
        assert_eq!(payload_value(&payload::<16>(70_000)), 70_000);
    }
}
