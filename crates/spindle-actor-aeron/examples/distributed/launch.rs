//! Running what the command line asks for: one pod in this process, or
//! both pods as two processes of this same program and the verdict on
//! their totals. The benchmark peer `peer-spindle-aeron` shares this file.

use crate::args::{self, Args, Role, Transport};
use crate::pods::{self, Counts};
use spindle_actor_aeron::{DriverMode, Pod};
use std::net::SocketAddr;
use std::process::{Command, Stdio};

/// Aeron's largest MTU: a frame of up to 64 KiB, about 8,000 numbers, is
/// one Aeron message (on loopback, and on networks with jumbo frames or
/// IP fragmentation; a real network's 1,500-byte MTU wants `mtu=1408`).
const MTU: u32 = 65504;

/// Runs `argv` (the arguments after the program's name), prints the
/// outcome and exits: 0 when it succeeded, 1 when it failed, 2 on bad
/// arguments.
pub fn main(argv: &[String]) -> ! {
    let args = match args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("distributed: {e}\n\n{}", args::USAGE);
            std::process::exit(2);
        }
    };
    let outcome = match &args.role {
        Role::Launch { transport } => launch(*transport, &args).and_then(|o| {
            println!("{}\n{}", o.publisher.0, o.subscriber.0);
            o.verdict(args.messages)
        }),
        role => run_pod(role, &args),
    };
    match outcome {
        Ok(line) => {
            println!("{line}");
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("distributed: {e}");
            std::process::exit(1);
        }
    }
}

/// One pod, in this process; its `POD` line.
fn run_pod(role: &Role, a: &Args) -> Result<String, String> {
    let mode = match &a.aeron_dir {
        Some(dir) => DriverMode::External(dir.clone()),
        None => DriverMode::Embedded,
    };
    let pod = Pod::connect(mode).map_err(|e| e.to_string())?;
    let channel = a.channel.as_deref().expect("checked by args::parse");
    match role {
        Role::Publish => pods::run_publisher(&pod, channel, a),
        Role::Subscribe => pods::run_subscriber(&pod, channel, a),
        Role::Launch { .. } => unreachable!("handled by main"),
    }
}

/// The `POD key=value ...` line a pod printed when it stopped.
pub struct PodLine(pub String);

impl PodLine {
    /// The number after `key=`.
    pub fn field(&self, key: &str) -> Result<f64, String> {
        self.0
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no `{key}=` in `{}`", self.0))
    }

    /// The subscriber's `[V, F, B, FB]` counts.
    pub fn counts(&self) -> Result<Counts, String> {
        let c = [
            self.field("V")?,
            self.field("F")?,
            self.field("B")?,
            self.field("FB")?,
        ];
        Ok(c.map(|x| x as u64))
    }
}

/// Both pods' lines.
pub struct Outcome {
    pub publisher: PodLine,
    pub subscriber: PodLine,
}

impl Outcome {
    /// The subscriber's counts against FizzBuzz's closed form for
    /// `1..=n`, and nothing missed; the rate when they match.
    pub fn verdict(&self, n: u64) -> Result<String, String> {
        let sub = &self.subscriber;
        let (got, want) = (sub.counts()?, pods::expected(n));
        let missed = sub.field("missed")? as u64;
        if got != want || missed != 0 {
            return Err(format!(
                "totals do not match: got [V, F, B, FB] = {got:?}, FizzBuzz of 1..={n} gives {want:?}; missed {missed}"
            ));
        }
        let mut line = format!(
            "OK: {n} messages, totals match FizzBuzz's closed form; {:.1} M messages/s end to end \
             (subscriber's first message to its last)",
            n as f64 / sub.field("seconds")? / 1e6
        );
        if let (Ok(p50), Ok(p99)) = (sub.field("hb_p50_us"), sub.field("hb_p99_us")) {
            line += &format!("; heartbeat latency p50 {p50} us, p99 {p99} us");
        }
        Ok(line)
    }
}

/// Both pods as child processes of this program, to their end: `a`'s
/// messages, workers and heartbeat, over `transport`.
pub fn launch(transport: Transport, a: &Args) -> Result<Outcome, String> {
    let n = a.messages;
    // For ipc both pods use the driver this process embeds.
    let shared = match transport {
        Transport::Ipc => Some(Pod::connect(DriverMode::Embedded).map_err(|e| e.to_string())?),
        Transport::Udp => None,
    };
    let channel = match transport {
        Transport::Ipc => format!("aeron:ipc?term-length=8m|mtu={MTU}"),
        Transport::Udp => {
            let port = free_udp_port()?;
            format!("aeron:udp?endpoint=127.0.0.1:{port}|term-length=8m|mtu={MTU}|rcv-wnd=2m|so-rcvbuf=2m|so-sndbuf=2m")
        }
    };
    let pod_args = |role: &str| {
        let mut v = vec!["--role".to_string(), role.into(), "--channel".into()];
        v.extend([channel.clone(), "--messages".into(), n.to_string()]);
        if let Some(w) = a.workers {
            v.extend(["--workers".into(), w.to_string()]);
        }
        if a.heartbeat {
            v.push("--heartbeat".into());
        }
        if let Some(addr) = a.telemetry {
            // The subscriber serves on the next port (port 0: any free one).
            let port = match (role, addr.port()) {
                ("subscribe", p) if p != 0 => p.wrapping_add(1),
                (_, p) => p,
            };
            v.extend([
                "--telemetry".into(),
                SocketAddr::new(addr.ip(), port).to_string(),
            ]);
        }
        if let Some(p) = &shared {
            v.extend(["--aeron-dir".into(), p.dir().to_string()]);
        }
        v
    };
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let spawn = |role: &str| {
        Command::new(&me)
            .args(pod_args(role))
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the {role} pod: {e}"))
    };
    let subscriber = spawn("subscribe")?;
    let publisher = spawn("publish")?;
    let publisher = finish(publisher, "publish")?;
    let subscriber = finish(subscriber, "subscribe")?;
    Ok(Outcome {
        publisher,
        subscriber,
    })
}

/// Waits for a pod; its `POD` line, or why it failed.
fn finish(child: std::process::Child, role: &str) -> Result<PodLine, String> {
    let out = child
        .wait_with_output()
        .map_err(|e| format!("the {role} pod: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().find(|l| l.starts_with("POD ")) {
        Some(line) if out.status.success() => Ok(PodLine(line.to_string())),
        _ => Err(format!("the {role} pod failed ({})", out.status)),
    }
}

fn free_udp_port() -> Result<u16, String> {
    let s =
        std::net::UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("no free UDP port: {e}"))?;
    s.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}
