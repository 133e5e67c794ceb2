//! The example's command line: the one-command launcher, or one pod.

use std::net::SocketAddr;
use std::path::PathBuf;

pub const USAGE: &str = "\
usage: distributed [--transport ipc|udp] [--messages N] [--workers W] [--heartbeat]
                   [--telemetry ADDR]
       distributed --role publish|subscribe --channel URI [--messages N] [--workers W]
                   [--heartbeat] [--telemetry ADDR] [--aeron-dir DIR]

With no --role: starts a subscriber pod and a publisher pod as two processes
(on 127.0.0.1 for udp), runs FizzBuzz across them, prints both pods' totals
and messages per second, and exits 0 only when the totals match.
With --role: runs that one pod (two machines: the same --channel on both,
an aeron:udp endpoint on the subscriber's host). Without --aeron-dir a pod
embeds its own media driver. --workers sets each pod's runtime workers
(default: one per core). --heartbeat adds a second stream on the channel,
a timestamp a millisecond, and reports its latency under the numbers' load
(both pods need it). --telemetry serves a pod's telemetry page and /metrics
on ADDR (loopback, e.g. 127.0.0.1:9900); the launcher gives the publisher
ADDR and the subscriber the next port.";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Launch { transport: Transport },
    Publish,
    Subscribe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Ipc,
    Udp,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub role: Role,
    pub messages: u64,
    /// Each pod's runtime workers; `None` for one per core.
    pub workers: Option<usize>,
    /// Whether the heartbeat stream runs beside the numbers.
    pub heartbeat: bool,
    /// Where this pod (for the launcher: the publisher) serves telemetry.
    pub telemetry: Option<SocketAddr>,
    pub channel: Option<String>,
    pub aeron_dir: Option<PathBuf>,
}

pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut transport = Transport::Ipc;
    let mut role = None;
    let mut out = Args {
        role: Role::Publish,
        messages: 10_000_000,
        workers: None,
        heartbeat: false,
        telemetry: None,
        channel: None,
        aeron_dir: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("`{flag}` needs a value"));
        match flag.as_str() {
            "--transport" => {
                transport = match value()?.as_str() {
                    "ipc" => Transport::Ipc,
                    "udp" => Transport::Udp,
                    v => return Err(format!("`--transport {v}`: expected ipc or udp")),
                }
            }
            "--messages" => {
                let v = value()?;
                out.messages = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    format!("`--messages {v}`: expected a whole number of at least 1")
                })?;
            }
            "--workers" => {
                let v = value()?;
                out.workers = Some(v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    format!("`--workers {v}`: expected a whole number of at least 1")
                })?);
            }
            "--role" => {
                role = Some(match value()?.as_str() {
                    "publish" => Role::Publish,
                    "subscribe" => Role::Subscribe,
                    v => return Err(format!("`--role {v}`: expected publish or subscribe")),
                })
            }
            "--heartbeat" => out.heartbeat = true,
            "--telemetry" => {
                let v = value()?;
                out.telemetry = Some(v.parse().map_err(|_| {
                    format!("`--telemetry {v}`: expected an address such as 127.0.0.1:9900")
                })?);
            }
            "--channel" => out.channel = Some(value()?.clone()),
            "--aeron-dir" => out.aeron_dir = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    out.role = match role {
        Some(r) => {
            if out.channel.is_none() {
                return Err("`--role` needs `--channel URI`".into());
            }
            r
        }
        None => Role::Launch { transport },
    };
    Ok(out)
}
