//! `check-fresh`: Seq's rule that the committed benchmark run must be recent.
//!
//! Fails when `bench/latest.json` is missing, has no spindle row that
//! passed its check (spindle failed to build, say), is older than
//! `--max-age`, or is older than the last git commit touching
//! `crates/spindle` (a runtime change since the last measurement). Ages are written `90s`, `30m`, `24h`, `7d`.
//!
//! One exception to the commit-time rule: a run that recorded the tree id
//! of `crates/spindle` it measured, equal to HEAD's, is current whatever the
//! commit's date, so that committing a runtime change together with its
//! benchmark run (the commit is then newer than the run) is not a false alarm.

/// Parses `24h`-style durations into seconds.
pub fn parse_age(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a number and a unit, like 24h"))?;
    let mult = match unit {
        "s" | "" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{s}`: unit must be s, m, h or d")),
    };
    Ok(n * mult)
}

/// Ok(message) when fresh, Err(why) when stale.
pub fn check(
    spindle_rows: usize,
    run_unix: u64,
    now_unix: u64,
    max_age_s: u64,
    last_runtime_commit: Option<u64>,
    same_tree: bool,
) -> Result<String, String> {
    if spindle_rows == 0 {
        return Err("benchmarks are stale: the latest run has no spindle row that passed its check; run `cargo run --release -p spindle-bench` and commit bench/".into());
    }
    let age = now_unix.saturating_sub(run_unix);
    if age > max_age_s {
        return Err(format!(
            "benchmarks are stale: the latest run is {} old, more than {}; run `cargo run --release -p spindle-bench` and commit bench/",
            human(age),
            human(max_age_s)
        ));
    }
    if let Some(c) = last_runtime_commit.filter(|_| !same_tree) {
        if c > run_unix {
            return Err(format!(
                "benchmarks are stale: crates/spindle changed {} after the latest run; run the suite again and commit bench/",
                human(c - run_unix)
            ));
        }
    }
    Ok(format!(
        "benchmarks are fresh: latest run {} old",
        human(age)
    ))
}

fn human(s: u64) -> String {
    if s >= 86_400 {
        format!("{:.1}d", s as f64 / 86_400.0)
    } else if s >= 3600 {
        format!("{:.1}h", s as f64 / 3600.0)
    } else if s >= 60 {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_and_rules() {
        assert_eq!(parse_age("24h").unwrap(), 86_400);
        assert_eq!(parse_age("30m").unwrap(), 1800);
        assert_eq!(parse_age("2d").unwrap(), 172_800);
        assert!(parse_age("h").is_err() && parse_age("3w").is_err());
        assert!(check(9, 1000, 1100, 3600, None, false).is_ok());
        assert!(check(9, 1000, 8200, 3600, None, false)
            .unwrap_err()
            .contains("stale"));
        assert!(check(9, 1000, 1100, 3600, Some(1050), false)
            .unwrap_err()
            .contains("crates/spindle"));
        assert!(check(9, 1000, 1100, 3600, Some(900), false).is_ok());
        // The run measured exactly HEAD's runtime: a later commit date is fine...
        assert!(check(9, 1000, 1100, 3600, Some(1050), true).is_ok());
        // ...but never past the age limit.
        assert!(check(9, 1000, 8200, 3600, Some(1050), true).is_err());
        // A run without spindle measured is no evidence, however recent.
        assert!(check(0, 1000, 1100, 3600, None, false)
            .unwrap_err()
            .contains("no spindle row"));
    }
}
