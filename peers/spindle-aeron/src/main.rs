//! Benchmark peer: spindle-actor across two processes over Aeron.
//!
//! It runs the Aeron rows only (`fizzbuzz_distributed_ipc`, `_udp`): the
//! FizzBuzz pipeline split into a publisher pod (`generator → publish`)
//! and a subscriber pod (`subscribe → worker → logger`). The udp row adds
//! the heartbeat stream beside the numbers, for latency under that load;
//! the ipc row measures the numbers alone. The pods are the
//! ones `spindle-actor-aeron`'s `distributed` example runs, compiled in
//! from its files (one copy of them): this binary starts itself twice with
//! `--role publish|subscribe`, as the example does.
//!
//! The timed region is the subscriber's, from its first message to the end
//! of the stream: process start, the media driver and Aeron's connection
//! set-up are outside it, as runtime start-up is for every other row. Each
//! pod's runtime has W workers. For ipc both pods share the media driver
//! this process embeds; for udp each pod embeds its own and they meet on
//! a loopback port.

#[path = "../../../crates/spindle-actor-aeron/examples/distributed/args.rs"]
mod args;
#[path = "../../../crates/spindle-actor-aeron/examples/distributed/heartbeat.rs"]
mod heartbeat;
#[path = "../../../crates/spindle-actor-aeron/examples/distributed/launch.rs"]
mod launch;
#[path = "../../../crates/spindle-actor-aeron/examples/distributed/pods.rs"]
mod pods;

use spindle_peer_common::catalogue::AERON_ROWS;
use spindle_peer_common::{run_main, Measured, Request, Support};
use std::time::Duration;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().is_some_and(|a| a == "--role") {
        launch::main(&argv);
    }
    run_main("spindle-aeron", support, run);
}

fn support(workload: &str) -> Support {
    if AERON_ROWS.contains(&workload) {
        Ok(())
    } else {
        Err("this peer runs the rows across processes over Aeron only; peer spindle runs the rest")
    }
}

fn run(req: &Request) -> Measured {
    let transport = match req.workload.as_str() {
        "fizzbuzz_distributed_udp" => args::Transport::Udp,
        _ => args::Transport::Ipc,
    };
    let plan = args::Args {
        role: args::Role::Launch { transport },
        messages: req.size,
        workers: Some(req.workers),
        heartbeat: transport == args::Transport::Udp,
        telemetry: None,
        channel: None,
        aeron_dir: None,
    };
    let outcome = launch::launch(transport, &plan).unwrap_or_else(|e| fail(&e));
    let sub = &outcome.subscriber;
    let field = |k: &str| sub.field(k).unwrap_or_else(|e| fail(&e));
    let [v, f, b, fb] = sub.counts().unwrap_or_else(|e| fail(&e));
    let mut m = Measured::new(
        format!("F:{f},B:{b},FB:{fb},V:{v}"),
        Duration::from_secs_f64(field("seconds")),
    )
    .with("missed", field("missed"));
    for key in ["hb_p50_us", "hb_p99_us"] {
        if let Ok(us) = sub.field(key) {
            m = m.with(key, us);
        }
    }
    m
}

fn fail(why: &str) -> ! {
    eprintln!("peer-spindle-aeron: {why}");
    std::process::exit(1)
}
