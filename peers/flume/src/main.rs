//! Benchmark peer: flume on OS threads, the channel rows only.
//!
//! The rows themselves are the shared threads rows of
//! `spindle_peer_common::threads`; this file supplies the channel and the
//! select loop (`flume::Selector`).

use flume::{Receiver, Selector};
use spindle_peer_common::witness::SelectTally;
use spindle_peer_common::{run_main, threads};

spindle_peer_common::mpmc_channel!(Flume, flume);

fn main() {
    run_main(
        "flume",
        |w| threads::channel_crate_support(w, true),
        |req| threads::run_channel_row::<Flume>(req, Some(select_tally)),
    );
}

/// The consumer of select_k: a `Selector` over the receivers still open,
/// built afresh for each wait as flume's selectors are; a receiver is
/// dropped from the set once its producer has hung up and it is drained.
/// flume's selection checks for a message and then for the hang-up, so a
/// producer that sends its last messages and hangs up between the two is
/// reported gone with them still queued: they are taken before the
/// receiver leaves the set.
fn select_tally(receivers: Vec<Receiver<u64>>) -> SelectTally {
    let mut tally = SelectTally::new(receivers.len());
    let mut open: Vec<(usize, Receiver<u64>)> = receivers.into_iter().enumerate().collect();
    while !open.is_empty() {
        let got = open
            .iter()
            .enumerate()
            .fold(Selector::new(), |sel, (at, &(arm, ref r))| {
                sel.recv(r, move |res| res.map(|v| (arm, v)).map_err(|_| at))
            })
            .wait();
        match got {
            Ok((arm, v)) => tally.record(arm, v),
            Err(at) => {
                let (arm, r) = open.swap_remove(at);
                for v in r.drain() {
                    tally.record(arm, v);
                }
            }
        }
    }
    tally
}
