//! Benchmark peer: kanal on OS threads, the channel rows only.
//!
//! The rows themselves are the shared threads rows of
//! `spindle_peer_common::threads`; this file supplies the channel. kanal has
//! no select, so the select rows are unsupported.

use spindle_peer_common::{run_main, threads};

spindle_peer_common::mpmc_channel!(Kanal, kanal);

fn main() {
    run_main(
        "kanal",
        |w| threads::channel_crate_support(w, false),
        |req| threads::run_channel_row::<Kanal>(req, None),
    );
}
