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
//! `1..=N` and nothing was missed. A heartbeat stream beside the numbers
//! gives the latency under that load (`heartbeat.rs`).

mod args;
mod heartbeat;
mod launch;
mod pods;

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    launch::main(&argv)
}
