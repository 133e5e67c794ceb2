//! What flows between the actors, and the logger's counts.

/// The worker's verdict on one value (one byte in the channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Verdict {
    #[default]
    Value = 0,
    Fizz = 1,
    Buzz = 2,
    FizzBuzz = 3,
}

impl Verdict {
    #[inline]
    pub fn of(v: u64) -> Verdict {
        match (v.is_multiple_of(3), v.is_multiple_of(5)) {
            (true, true) => Verdict::FizzBuzz,
            (true, false) => Verdict::Fizz,
            (false, true) => Verdict::Buzz,
            (false, false) => Verdict::Value,
        }
    }
}

/// Classifies `inp` into `out` (the same length).
#[inline]
pub fn classify(inp: &[u64], out: &mut [Verdict]) {
    for (o, &v) in out.iter_mut().zip(inp) {
        *o = Verdict::of(v);
    }
}

/// The logger's totals, by class: `[V, F, B, FB]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts(pub [u64; 4]);

impl Counts {
    /// Adds a run of verdicts (255 at a time into byte counters, which the
    /// compiler vectorises).
    pub fn add(&mut self, run: &[Verdict]) {
        for chunk in run.chunks(255) {
            let mut k = [0u8; 4];
            for &m in chunk {
                let m = m as u8;
                k[0] += u8::from(m == 0);
                k[1] += u8::from(m == 1);
                k[2] += u8::from(m == 2);
                k[3] += u8::from(m == 3);
            }
            for (t, k) in self.0.iter_mut().zip(k) {
                *t += u64::from(k);
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The counts FizzBuzz must give for `1..=n` (closed form).
    pub fn expected(n: u64) -> Counts {
        let fb = n / 15;
        let f = n / 3 - fb;
        let b = n / 5 - fb;
        Counts([n - f - b - fb, f, b, fb])
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [v, fi, b, fb] = self.0;
        write!(f, "F:{fi}, B:{b}, FB:{fb}, V:{v}")
    }
}
