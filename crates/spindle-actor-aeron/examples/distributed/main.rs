//! FizzBuzz across two processes over Aeron.
//!
//! `cargo run --release -p spindle-actor-aeron --example distributed -- --transport ipc --messages 10000000`
//!
//! The launcher (no `--role`) starts the subscriber pod, then the publisher
//! pod, as two processes of this same binary; for ipc it embeds the media
//! driver both pods share, for udp each pod embeds its own and they meet
//! on a loopback port. Each pod prints one `POD ...` line when it stops;
//! the launcher prints both, messages per second end to end, and exits 0
//! only when the subscriber's counts match FizzBuzz's closed form for
//! `1..=N` and nothing was missed.

mod args;
mod pods;

use args::{Role, Transport};
use spindle_actor_aeron::{DriverMode, Pod};
use std::process::{Command, Stdio};

/// Aeron's largest MTU: a frame of up to 64 KiB, about 8,000 numbers, is
/// one Aeron message (on loopback, and on networks with jumbo frames or
/// IP fragmentation; a real network's 1,500-byte MTU wants `mtu=1408`).
const MTU: u32 = 65504;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("distributed: {e}\n\n{}", args::USAGE);
            std::process::exit(2);
        }
    };
    let outcome = match &args.role {
        Role::Launch { transport } => launch(*transport, args.messages),
        role => run_pod(role, &args),
    };
    match outcome {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("distributed: {e}");
            std::process::exit(1);
        }
    }
}

/// One pod, in this process.
fn run_pod(role: &Role, a: &args::Args) -> Result<String, String> {
    let mode = match &a.aeron_dir {
        Some(dir) => DriverMode::External(dir.clone()),
        None => DriverMode::Embedded,
    };
    let pod = Pod::connect(mode).map_err(|e| e.to_string())?;
    let channel = a.channel.as_deref().expect("checked by args::parse");
    match role {
        Role::Publish => pods::run_publisher(&pod, channel, a.messages),
        Role::Subscribe => pods::run_subscriber(&pod, channel),
        Role::Launch { .. } => unreachable!("handled by main"),
    }
}

/// Both pods as child processes; the verdict on their totals.
fn launch(transport: Transport, n: u64) -> Result<String, String> {
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
        let mut v = vec![
            "--role".to_string(),
            role.into(),
            "--channel".into(),
            channel.clone(),
        ];
        v.extend(["--messages".into(), n.to_string()]);
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
    let pub_line = finish(publisher, "publish")?;
    let sub_line = finish(subscriber, "subscribe")?;
    println!("{pub_line}\n{sub_line}");
    verdict(&sub_line, n)
}

/// Waits for a pod; its `POD` line, or why it failed.
fn finish(child: std::process::Child, role: &str) -> Result<String, String> {
    let out = child
        .wait_with_output()
        .map_err(|e| format!("the {role} pod: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().find(|l| l.starts_with("POD ")) {
        Some(line) if out.status.success() => Ok(line.to_string()),
        _ => Err(format!("the {role} pod failed ({})", out.status)),
    }
}

/// Checks the subscriber's line against the closed form.
fn verdict(line: &str, n: u64) -> Result<String, String> {
    let field = |k: &str| -> Result<f64, String> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no `{k}=` in `{line}`"))
    };
    let got = [field("V")?, field("F")?, field("B")?, field("FB")?].map(|x| x as u64);
    let want = pods::expected(n);
    let (missed, secs) = (field("missed")? as u64, field("seconds")?);
    if got != want || missed != 0 {
        return Err(format!(
            "totals do not match: got [V, F, B, FB] = {got:?}, FizzBuzz of 1..={n} gives {want:?}; missed {missed}"
        ));
    }
    Ok(format!(
        "OK: {n} messages, totals match FizzBuzz's closed form; {:.1} M messages/s end to end \
         (subscriber's first message to its last)",
        n as f64 / secs / 1e6
    ))
}

fn free_udp_port() -> Result<u16, String> {
    let s =
        std::net::UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("no free UDP port: {e}"))?;
    s.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}
