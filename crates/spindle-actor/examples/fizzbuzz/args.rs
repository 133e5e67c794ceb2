//! Command-line flags of the fizzbuzz example.

use std::time::Duration;

pub const USAGE: &str = "\
fizzbuzz: generator -> worker (FizzBuzz) -> logger, heartbeat-driven

USAGE: cargo run --release -p spindle-actor --example fizzbuzz -- [FLAGS]

  --rate MS           heartbeat period in milliseconds (default 2)
  --beats N           heartbeats before the graph stops (default 30000)
  --zero-copy         work in place on channel memory (default: copy, double buffer)
  --capacity N        slots per channel (default 1048576 = 1<<20); batches are half of it
  --telemetry ADDR    serve telemetry on ADDR, e.g. 127.0.0.1:9900 (loopback only)
  --placement P       tasks (default), team (worker and logger share a task) or threads
  --workers N         runtime worker threads (default: the cores available)
  --linger SECS       keep the telemetry server up this long after the stop
  -h, --help          this text
";

#[derive(Debug, Clone)]
pub struct Args {
    pub rate: Duration,
    pub beats: u64,
    pub zero_copy: bool,
    pub capacity: usize,
    pub telemetry: Option<String>,
    pub placement: Placement,
    pub workers: Option<usize>,
    pub linger: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Tasks,
    Team,
    Threads,
}

fn value<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse()
        .map_err(|_| format!("{flag}: `{v}` is not a valid value"))
}

impl Args {
    pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut a = Args {
            rate: Duration::from_millis(2),
            beats: 30_000,
            zero_copy: false,
            capacity: 1 << 20,
            telemetry: None,
            placement: Placement::Tasks,
            workers: None,
            linger: Duration::ZERO,
        };
        while let Some(flag) = it.next() {
            match flag.as_str() {
                "--rate" => a.rate = Duration::from_millis(value(&flag, it.next())?),
                "--beats" => a.beats = value(&flag, it.next())?,
                "--zero-copy" => a.zero_copy = true,
                "--capacity" => a.capacity = value(&flag, it.next())?,
                "--telemetry" => a.telemetry = Some(value(&flag, it.next())?),
                "--workers" => a.workers = Some(value(&flag, it.next())?),
                "--linger" => a.linger = Duration::from_secs_f64(value(&flag, it.next())?),
                "--placement" => {
                    a.placement = match value::<String>(&flag, it.next())?.as_str() {
                        "tasks" => Placement::Tasks,
                        "team" => Placement::Team,
                        "threads" => Placement::Threads,
                        p => {
                            return Err(format!("--placement: `{p}` is not tasks, team or threads"))
                        }
                    }
                }
                "-h" | "--help" => return Err(String::new()),
                f => return Err(format!("unknown flag `{f}`")),
            }
        }
        if a.capacity < 2 {
            return Err("--capacity must be at least 2".into());
        }
        if a.rate.is_zero() {
            return Err("--rate must be at least 1 ms".into());
        }
        Ok(a)
    }
}
