//! Benchmark peer: flume on OS threads, the channel rows only.
//!
//! The rows themselves are the shared threads rows of
//! `spindle_peer_common::threads`; this file supplies the channel and the
//! select loop (`flume::Selector`).

use flume::{Receiver, Selector};
use spindle_peer_common::{run_main, threads};

spindle_peer_common::mpmc_channel!(Flume, flume);

fn main() {
    run_main(
        "flume",
        |w| threads::channel_crate_support(w, true),
        |req| threads::run_channel_row::<Flume>(req, Some(select_sum)),
    );
}

/// The consumer of select_k: a `Selector` over the receivers still open,
/// built afresh for each wait as flume's selectors are; a receiver is
/// dropped from the set once its producer has hung up and it is drained.
fn select_sum(mut receivers: Vec<Receiver<u64>>) -> u64 {
    let mut sum = 0;
    while !receivers.is_empty() {
        let got = receivers
            .iter()
            .enumerate()
            .fold(Selector::new(), |sel, (i, r)| {
                sel.recv(r, move |res| res.map_err(|_| i))
            })
            .wait();
        match got {
            Ok(v) => sum += v,
            Err(i) => {
                receivers.swap_remove(i);
            }
        }
    }
    sum
}
