//! The FizzBuzz pipeline of steady_state's "performant" lesson, on
//! spindle-actor:
//!
//! ```text
//! heartbeat --heartbeat--> worker
//! generator --values (1<<20)--> worker --fizzbuzz (1<<20)--> logger
//! ```
//!
//! The generator fills half a channel at a time; on each heartbeat the
//! worker classifies up to a whole channel (two half batches), copying
//! through its double buffer or, with `--zero-copy`, reading and writing in
//! place on the channels' memory; the logger counts F/B/FB/V. After
//! `--beats` beats the heartbeat asks the graph to stop; the generator
//! stops and closes `values`, the worker drains it and closes `fizzbuzz`,
//! the logger drains that. The totals of every actor are printed and
//! checked against each other and against the closed form for 1..=N: the
//! exit status is 1 if anything does not match.
//!
//! ```sh
//! cargo run --release -p spindle-actor --example fizzbuzz -- --rate 2 --beats 1000 --zero-copy \
//!     --telemetry 127.0.0.1:9900
//! ```

mod app;
mod args;
mod generator;
mod heartbeat;
mod logger;
mod messages;
mod worker;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use args::{Args, USAGE};

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("fizzbuzz: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut rt = spindle::Builder::new_multi_thread();
    if let Some(w) = args.workers {
        rt = rt.workers(w);
    }
    let rt = match rt.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fizzbuzz: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (graph, totals) = app::build(&args);
    let t0 = Instant::now();
    let running = match graph.start(rt.handle()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fizzbuzz: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = running.stop_on_ctrl_c() {
        eprintln!("fizzbuzz: {e} (Ctrl-C will not stop the graph gracefully)");
    }
    if let Some(addr) = running.telemetry_addr() {
        println!(
            "Telemetry on http://{addr}/ (graph: http://{addr}/graph.dot, metrics: http://{addr}/metrics)"
        );
    }
    println!(
        "fizzbuzz: {} mode, channels of {}, batches of {}, heartbeat every {:?} for {} beats",
        if args.zero_copy {
            "zero-copy"
        } else {
            "copy (double buffer)"
        },
        args.capacity,
        args.capacity / 2,
        args.rate,
        args.beats
    );
    let report = running.block_until_stopped(Duration::from_secs(30));
    let secs = t0.elapsed().as_secs_f64();
    let out = totals.take();
    println!(
        "Totals: generated {}, worker values {} messages {}, logger {} ({}); {:.1} M messages/s over {secs:.2} s",
        out.generated,
        out.work.values,
        out.work.messages,
        out.counts.total(),
        out.counts,
        out.generated as f64 / secs / 1e6
    );
    if std::env::var_os("FIZZBUZZ_REPORT").is_some() {
        print!("{report}");
    }
    let problems = out.problems(&report);
    for p in &problems {
        eprintln!("fizzbuzz: {p}");
    }
    if problems.is_empty() {
        println!("Check: OK (totals match at every end; F/B/FB/V match the closed form)");
    }
    if !args.linger.is_zero() {
        std::thread::sleep(args.linger);
    }
    drop(running);
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
