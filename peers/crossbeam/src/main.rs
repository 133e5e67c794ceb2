//! Benchmark peer: crossbeam-channel on OS threads, the channel rows only.
//!
//! The rows themselves are the shared threads rows of
//! `spindle_peer_common::threads`; this file supplies the channel and the
//! select loop (`crossbeam_channel::Select`).

use crossbeam_channel::{Receiver, Select};
use spindle_peer_common::witness::SelectTally;
use spindle_peer_common::{run_main, threads};

spindle_peer_common::mpmc_channel!(Crossbeam, crossbeam_channel);

fn main() {
    run_main(
        "crossbeam",
        |w| threads::channel_crate_support(w, true),
        |req| threads::run_channel_row::<Crossbeam>(req, Some(select_tally)),
    );
}

/// The consumer of select_k: a `Select` over the k receivers, each removed
/// once its producer has hung up and it is drained.
fn select_tally(receivers: Vec<Receiver<u64>>) -> SelectTally {
    let mut sel = Select::new();
    for r in &receivers {
        sel.recv(r);
    }
    let mut open = receivers.len();
    let mut tally = SelectTally::new(open);
    while open > 0 {
        let op = sel.select();
        let i = op.index();
        match op.recv(&receivers[i]) {
            Ok(v) => tally.record(i, v),
            Err(_) => {
                sel.remove(i);
                open -= 1;
            }
        }
    }
    tally
}
