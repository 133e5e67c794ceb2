//! The witness fields a result line carries beside its result, checked
//! here, independently of the peers' own copy (`peers/common`'s
//! `witness.rs`): a sum alone cannot tell how it was reached.
//!
//! - select_k, `per_arm=a,b,…`: every arm delivered its producer's `n/k`
//!   messages (a consumer that never polled an arm, or one that stopped
//!   early, shows here even where the sum would match);
//! - sleep_1m, `min_lateness_ns`: no sleep woke before its deadline;
//! - live_1m, `peak_alive`: all `n` tasks were alive at one instant;
//! - semaphore_limit, `peak_holders`: the 8 permits were all held at one
//!   instant and never more (a semaphore that let a ninth task in, or
//!   tasks that never overlapped, shows here).
//!
//! A line without its row's witness fails the row: every peer reports them.

use std::collections::BTreeMap;

/// Why the witness fields of `workload`'s line at size `n` do not hold.
pub fn check(workload: &str, n: u64, extra: &BTreeMap<String, String>) -> Result<(), String> {
    let field = |key: &str| {
        extra
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| format!("the line has no `{key}` witness"))
    };
    if let Some(k) = workload
        .strip_prefix("select_")
        .and_then(|k| k.parse::<u64>().ok())
    {
        let v = field("per_arm")?;
        let counts: Vec<Option<u64>> = v.split(',').map(|c| c.parse().ok()).collect();
        let fair = counts.len() as u64 == k && counts.iter().all(|&c| c == Some(n / k));
        if !fair {
            return Err(format!(
                "per_arm={v}: each of the {k} arms must deliver its producer's {} messages",
                n / k
            ));
        }
    }
    match workload {
        "sleep_1m" => {
            let v = field("min_lateness_ns")?;
            match v.parse::<i64>() {
                Ok(late) if late >= 0 => {}
                Ok(_) => {
                    return Err(format!(
                        "min_lateness_ns={v}: a sleep woke before its deadline"
                    ))
                }
                Err(_) => return Err(format!("min_lateness_ns={v}: not an integer")),
            }
        }
        "live_1m" => {
            let v = field("peak_alive")?;
            if v.parse::<u64>().ok() != Some(n) {
                return Err(format!(
                    "peak_alive={v}: all {n} tasks must be alive at one instant"
                ));
            }
        }
        "semaphore_limit" => {
            const PERMITS: u64 = 8;
            let v = field("peak_holders")?;
            if v.parse::<u64>().ok() != Some(PERMITS.min(n)) {
                return Err(format!(
                    "peak_holders={v}: the {PERMITS} permits must all be held at one instant, never more"
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

    fn line(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_select_that_favours_one_arm_fails() {
        assert!(check("select_2", 10, &line(&[("per_arm", "5,5")])).is_ok());
        let e = check("select_2", 10, &line(&[("per_arm", "10,0")])).unwrap_err();
        assert!(e.contains("per_arm=10,0"), "{e}");
        assert!(check("select_4", 8, &line(&[("per_arm", "2,2,2")])).is_err());
        assert!(check("select_1", 8, &line(&[]))
            .unwrap_err()
            .contains("per_arm"));
    }

    #[test]
    fn an_early_sleep_and_a_missing_task_fail() {
        assert!(check("sleep_1m", 10, &line(&[("min_lateness_ns", "12")])).is_ok());
        assert!(check("sleep_1m", 10, &line(&[("min_lateness_ns", "-1")])).is_err());
        assert!(check("sleep_1m", 10, &line(&[])).is_err());
        assert!(check("live_1m", 10, &line(&[("peak_alive", "10")])).is_ok());
        assert!(check("live_1m", 10, &line(&[("peak_alive", "9")])).is_err());
    }

    #[test]
    fn a_semaphore_over_or_under_its_limit_fails() {
        let ok = line(&[("peak_holders", "8")]);
        assert!(check("semaphore_limit", 1000, &ok).is_ok());
        for bad in ["9", "7", "0", "x"] {
            let e = check("semaphore_limit", 1000, &line(&[("peak_holders", bad)]));
            assert!(e.unwrap_err().contains("peak_holders"));
        }
        assert!(check("semaphore_limit", 3, &line(&[("peak_holders", "3")])).is_ok());
        assert!(check("semaphore_limit", 10, &line(&[])).is_err());
    }

    #[test]
    fn other_rows_need_no_witness() {
        assert!(check("skynet", 10, &line(&[])).is_ok());
    }
}
