//! What a peer reports beside its result so that the harness can check how
//! the result was reached, not only its value. A sum alone cannot tell a
//! select loop that drained one arm first from a fair one, a sleep that
//! returned early from one that waited, or a million live tasks from a
//! million run one after another, or a semaphore that kept its limit from
//! one that let a ninth task in.
//!
//! | row       | key               | what it says                               | passes when                |
//! |-----------|-------------------|--------------------------------------------|----------------------------|
//! | select_k  | `per_arm`         | messages each arm delivered, `a,b,…`       | k values, each `n/k`       |
//! | sleep_1m  | `min_lateness_ns` | the earliest wake minus its deadline (ns)  | `≥ 0`                      |
//! | live_1m   | `peak_alive`      | the most tasks alive at one instant        | `= n`                      |
//! | semaphore_limit | `peak_holders` | the most permits held at one instant | `= min(8, n)`              |
//!
//! The harness checks these with its own copy of the rule
//! (`spindle-bench`'s `witness::check`); [`check`] here is the
//! peers' tests' copy.
//!
//! [`Lateness`] and [`Alive`] have `const` constructors so that a peer can
//! hold them in a `static`: a million tasks then share them without a
//! reference count.

use crate::peer::Measured;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// select_k's consumer result: the sum and how many messages each arm gave.
#[derive(Debug, Clone, Default)]
pub struct SelectTally {
    pub sum: u64,
    pub per_arm: Vec<u64>,
}

impl SelectTally {
    pub fn new(arms: usize) -> Self {
        SelectTally {
            sum: 0,
            per_arm: vec![0; arms],
        }
    }

    /// Counts message `v` received on arm `arm`.
    #[inline]
    pub fn record(&mut self, arm: usize, v: u64) {
        self.sum += v;
        self.per_arm[arm] += 1;
    }

    /// The `per_arm` value of the result line.
    pub fn per_arm_value(&self) -> String {
        let v: Vec<String> = self.per_arm.iter().map(u64::to_string).collect();
        v.join(",")
    }

    /// The row's measurement: the sum as its result, `per_arm` beside it.
    pub fn measured(&self, elapsed: Duration) -> Measured {
        Measured::new(self.sum, elapsed).with("per_arm", self.per_arm_value())
    }
}

/// sleep_1m's earliest wake relative to its deadline, shared by all tasks.
#[derive(Debug)]
pub struct Lateness(AtomicI64);

impl Default for Lateness {
    fn default() -> Self {
        Self::new()
    }
}

impl Lateness {
    pub const fn new() -> Self {
        Lateness(AtomicI64::new(i64::MAX))
    }

    /// Records one wake at `now` for a sleep due at `deadline`. Most wakes
    /// are later than the earliest seen, and then only read the shared word.
    pub fn observe(&self, deadline: Instant, now: Instant) {
        let late = match now.checked_duration_since(deadline) {
            Some(d) => d.as_nanos().min(i64::MAX as u128) as i64,
            None => {
                -(deadline
                    .duration_since(now)
                    .as_nanos()
                    .min(i64::MAX as u128) as i64)
            }
        };
        if late < self.0.load(Ordering::Relaxed) {
            self.0.fetch_min(late, Ordering::Relaxed);
        }
    }

    /// The smallest lateness observed (negative: a sleep returned early).
    pub fn min_ns(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// live_1m's count of tasks alive now and the peak of that count (also
/// semaphore_limit's count of permits held).
#[derive(Debug, Default)]
pub struct Alive {
    now: AtomicU64,
    peak: AtomicU64,
}

impl Alive {
    pub const fn new() -> Self {
        Alive {
            now: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        }
    }

    /// A task starts; returns how many are alive with it.
    pub fn enter(&self) -> u64 {
        let alive = self.now.fetch_add(1, Ordering::AcqRel) + 1;
        self.peak.fetch_max(alive, Ordering::AcqRel);
        alive
    }

    /// A task is about to finish.
    pub fn leave(&self) {
        self.now.fetch_sub(1, Ordering::AcqRel);
    }

    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Acquire)
    }
}

/// Checks a result line's witness fields for `workload` at size `n`.
pub fn check(workload: &str, n: u64, field: impl Fn(&str) -> Option<String>) -> Result<(), String> {
    let need = |key: &str| field(key).ok_or_else(|| format!("no `{key}` field"));
    if let Some(k) = crate::catalogue::select_arity(workload) {
        let v = need("per_arm")?;
        let arms: Vec<&str> = v.split(',').collect();
        let share = (n / k as u64).to_string();
        if arms.len() != k || arms.iter().any(|a| *a != share) {
            return Err(format!("per_arm={v}: want {k} arms of {share}"));
        }
    }
    match workload {
        "sleep_1m" => {
            let v = need("min_lateness_ns")?;
            match v.parse::<i64>() {
                Ok(late) if late >= 0 => {}
                _ => {
                    return Err(format!(
                        "min_lateness_ns={v}: a sleep woke before its deadline"
                    ))
                }
            }
        }
        "live_1m" => {
            let v = need("peak_alive")?;
            if v != n.to_string() {
                return Err(format!("peak_alive={v}: want all {n} tasks alive at once"));
            }
        }
        "semaphore_limit" => {
            let v = need("peak_holders")?;
            let permits = crate::catalogue::SEMAPHORE_PERMITS as u64;
            if v.parse::<u64>().ok() != Some(permits.min(n)) {
                return Err(format!(
                    "peak_holders={v}: want the {permits} permits all held at once, never more"
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fair_select_passes_and_a_lopsided_one_fails() {
        let mut t = SelectTally::new(2);
        t.record(0, 1);
        t.record(1, 2);
        let v = t.per_arm_value();
        assert_eq!(v, "1,1");
        assert!(check("select_2", 2, |_| Some(v.clone())).is_ok());
        assert!(check("select_2", 2, |_| Some("2,0".into())).is_err());
        assert!(check("select_2", 2, |_| Some("1".into())).is_err());
        assert!(check("select_2", 2, |_| None).is_err());
    }

    #[test]
    fn an_early_wake_fails() {
        let l = Lateness::default();
        let t = Instant::now();
        l.observe(t, t + Duration::from_micros(5));
        assert_eq!(l.min_ns(), 5_000);
        l.observe(t + Duration::from_micros(1), t);
        assert_eq!(l.min_ns(), -1_000);
        let v = l.min_ns().to_string();
        assert!(check("sleep_1m", 10, |_| Some(v.clone())).is_err());
        assert!(check("sleep_1m", 10, |_| Some("0".into())).is_ok());
    }

    #[test]
    fn a_semaphore_over_its_limit_fails() {
        let h = Alive::default();
        for _ in 0..9 {
            h.enter();
        }
        let v = h.peak().to_string();
        assert!(check("semaphore_limit", 1000, |_| Some(v.clone())).is_err());
        assert!(check("semaphore_limit", 1000, |_| Some("8".into())).is_ok());
        assert!(check("semaphore_limit", 1000, |_| Some("1".into())).is_err());
    }

    #[test]
    fn tasks_run_one_after_another_fail_live_1m() {
        let a = Alive::default();
        for _ in 0..3 {
            a.enter();
            a.leave();
        }
        assert_eq!(a.peak(), 1);
        assert!(check("live_1m", 3, |_| Some(a.peak().to_string())).is_err());
        a.enter();
        a.enter();
        a.enter();
        assert!(check("live_1m", 3, |_| Some(a.peak().to_string())).is_ok());
    }
}
