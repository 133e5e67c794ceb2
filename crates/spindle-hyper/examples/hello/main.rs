//! hyper on spindle, serving TechEmpower's plaintext and json tests.
//!
//! `cargo run --release -p spindle-hyper --example hello -- --addr 127.0.0.1:8080 [--workers N] [--http2]`
//!
//! `GET /plaintext` → `Hello, World!`; `GET /json` →
//! `{"message":"Hello, World!"}`; anything else 404. HTTP/1 with
//! keep-alive (and HTTP/2 with prior knowledge under `--http2`),
//! `TCP_NODELAY` on every connection. A malformed request gets hyper's
//! 400 and the server goes on. Ctrl-C stops it.
//!
//! Try `curl -i http://127.0.0.1:8080/plaintext`, or
//! `curl --http2-prior-knowledge http://127.0.0.1:8080/json` with `--http2`.
//!
//! Files: `args.rs` (the command line), `routes.rs` (the handler),
//! `server.rs` (the accept loop and hyper's builders); the tests in
//! `tests/` serve `routes.rs` through `server.rs` too.

mod args;
mod routes;
mod server;

use args::{Args, Command};
use server::Protocol;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(Command::Serve(args)) => args,
        Ok(Command::Help) => {
            println!("{}", args::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("hello: {e}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    let mut builder = spindle::Builder::new_multi_thread();
    if let Some(n) = args.workers {
        builder = builder.workers(n);
    }
    let rt = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hello: could not start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let workers = rt.workers();
    rt.block_on(run(args, workers))
}

async fn run(args: Args, workers: usize) -> ExitCode {
    let listener = match spindle::net::TcpListener::bind(args.addr.as_str()).await {
        Ok(l) => l,
        Err(e) => {
            // e names the address: "could not bind 127.0.0.1:8080: Address already in use ..."
            eprintln!("hello: --addr {}: {e}", args.addr);
            return ExitCode::FAILURE;
        }
    };
    let (protocol, speaks) = match args.http2 {
        false => (Protocol::Http1, "HTTP/1"),
        true => (Protocol::Http1AndHttp2, "HTTP/1 and HTTP/2"),
    };
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    println!("listening on http://{addr} ({speaks}, {workers} workers)");
    spindle::select! {
        r = spindle::signal::ctrl_c() => r.expect("the SIGINT handler installs"),
        () = server::serve(listener, protocol, routes::hello) => {}
    }
    println!("interrupted: stopping");
    ExitCode::SUCCESS
}
