//! `wrk`, the load generator nobody here wrote: found on the PATH, or
//! installed with `apt-get` when it is missing and this process may (root,
//! or password-less sudo); otherwise an error saying how to install it.
//! Its `--latency` report is parsed into [`WrkResult`].

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// What one wrk run reported.
#[derive(Debug, Clone, PartialEq)]
pub struct WrkResult {
    pub requests: u64,
    pub seconds: f64,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    /// Socket errors (connect, read, write, timeout) and non-2xx/3xx responses.
    pub errors: u64,
}

/// How to run wrk.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    pub connections: u32,
    pub threads: u32,
    pub duration: Duration,
}

/// wrk's path, installing it when it is missing and that is possible.
pub fn ensure() -> Result<PathBuf, String> {
    if let Some(p) = on_path("wrk") {
        return Ok(p);
    }
    let how = "install it with `sudo apt-get install wrk` (Debian, Ubuntu) or build \
               https://github.com/wg/wrk, then run again";
    let Some(apt) = on_path("apt-get") else {
        return Err(format!(
            "wrk is not installed and there is no apt-get here: {how}"
        ));
    };
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        Command::new(apt)
    } else {
        let mut sudo = Command::new("sudo");
        sudo.arg("-n").arg(apt);
        sudo
    };
    eprintln!("spindle-bench: wrk is missing; installing it with apt-get");
    let status = cmd
        .args(["install", "-y", "-qq", "wrk"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null())
        .status();
    match (status, on_path("wrk")) {
        (Ok(s), Some(p)) if s.success() => Ok(p),
        (Ok(s), _) => Err(format!(
            "wrk is not installed and apt-get failed ({s}): {how}"
        )),
        (Err(e), _) => Err(format!(
            "wrk is not installed and apt-get could not run ({e}): {how}"
        )),
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| p.is_file())
}

/// Runs wrk against `url` and parses its report.
pub fn run(wrk: &PathBuf, url: &str, load: Load) -> Result<WrkResult, String> {
    let secs = load.duration.as_secs_f64().ceil().max(1.0) as u64;
    let out = Command::new(wrk)
        .args([
            "--latency",
            "-t",
            &load.threads.to_string(),
            "-c",
            &load.connections.to_string(),
            "-d",
            &format!("{secs}s"),
            url,
        ])
        .output()
        .map_err(|e| format!("could not run {}: {e}", wrk.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "wrk {url} failed ({}): {}{}",
            out.status,
            text.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse(&text).map_err(|e| format!("wrk {url}: {e} in its report:\n{text}"))
}

/// Parses wrk's `--latency` report.
pub fn parse(text: &str) -> Result<WrkResult, String> {
    let mut r = WrkResult {
        requests: 0,
        seconds: 0.0,
        requests_per_s: f64::NAN,
        p50_us: f64::NAN,
        p99_us: f64::NAN,
        errors: 0,
    };
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["50%", v] => r.p50_us = micros(v)?,
            ["99%", v] => r.p99_us = micros(v)?,
            [n, "requests", "in", t, ..] => {
                r.requests = n.parse().map_err(|_| format!("requests `{n}`"))?;
                r.seconds = micros(t.trim_end_matches(','))? / 1e6;
            }
            ["Requests/sec:", v] => {
                r.requests_per_s = v.parse().map_err(|_| format!("Requests/sec `{v}`"))?
            }
            ["Socket", "errors:", rest @ ..] => {
                for n in rest
                    .iter()
                    .filter_map(|w| w.trim_end_matches(',').parse::<u64>().ok())
                {
                    r.errors += n;
                }
            }
            ["Non-2xx", "or", "3xx", "responses:", n] => {
                r.errors += n.parse::<u64>().map_err(|_| format!("Non-2xx `{n}`"))?
            }
            _ => {}
        }
    }
    if r.requests_per_s.is_nan() || r.p50_us.is_nan() || r.p99_us.is_nan() || r.seconds == 0.0 {
        return Err("no Requests/sec, latency distribution or duration".into());
    }
    Ok(r)
}

/// `575.00us`, `1.22ms`, `5.00s`, `2.00m` in microseconds.
fn micros(v: &str) -> Result<f64, String> {
    let split = v
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("`{v}`: no unit"))?;
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().map_err(|_| format!("`{v}`: not a number"))?;
    let scale = match unit {
        "us" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "m" => 60e6,
        _ => return Err(format!("`{v}`: unknown unit")),
    };
    Ok(n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "Running 5s test @ http://127.0.0.1:8080/plaintext
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   602.34us  177.68us   5.06ms   86.66%
    Req/Sec   106.91k     4.19k  113.43k    72.00%
  Latency Distribution
     50%  575.00us
     75%  650.00us
     90%  747.00us
     99%    1.22ms
  531858 requests in 5.00s, 66.95MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 5
Requests/sec: 106349.92
Transfer/sec:     13.39MB
";

    #[test]
    fn parses_the_latency_report() {
        let r = parse(REPORT).unwrap();
        assert_eq!(r.requests, 531_858);
        assert_eq!(r.seconds, 5.0);
        assert_eq!(r.requests_per_s, 106_349.92);
        assert_eq!(r.p50_us, 575.0);
        assert_eq!(r.p99_us, 1220.0);
        assert_eq!(r.errors, 8);
    }

    #[test]
    fn a_report_without_figures_is_an_error() {
        assert!(parse("unable to connect to 127.0.0.1:1 Connection refused").is_err());
        assert!(micros("12.0xs").is_err());
    }
}
