//! pingpong over two rendezvous channels with the order of the first park
//! forced, so both steady states can be timed: receivers parked first
//! (*takers*: each send hands its value to a parked receive) and senders
//! parked first (*offers*: each receive takes a parked send's value).
//! Sums checked; the benchmark suite with its statistics is spindle-bench.
//! `cargo run -p spindle --release --example pingpong_modes [round trips [takers|offers]]`
//! (one mode given: one run of it, for `scripts/count-locked`; else three
//! of each, alternating).

use spindle::chan;
use std::time::Instant;

/// One pingpong of `n` round trips; `receivers_first` makes the ponger park
/// its receive before the pinger sends (else the pinger parks its send
/// before the ponger receives). Returns ns per round trip.
async fn pingpong(n: u64, receivers_first: bool) -> f64 {
    let (ping_tx, ping_rx) = chan::rendezvous::<u64>();
    let (pong_tx, pong_rx) = chan::rendezvous::<u64>();
    let t = Instant::now();
    let ponger = spindle::spawn(async move {
        if !receivers_first {
            while ping_rx.is_empty() {
                spindle::yield_now().await;
            }
        }
        while let Ok(k) = ping_rx.recv().await {
            pong_tx.send(k).await.unwrap();
        }
    });
    let pinger = spindle::spawn(async move {
        if receivers_first {
            for _ in 0..100 {
                spindle::yield_now().await;
            }
        }
        let mut sum = 0;
        for k in 0..n {
            ping_tx.send(k).await.unwrap();
            sum += pong_rx.recv().await.unwrap();
        }
        sum
    });
    let sum = pinger.await.unwrap();
    ponger.await.unwrap();
    assert_eq!(sum, n * (n - 1) / 2);
    t.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n = args
        .next()
        .map_or(1_000_000, |s| s.parse().expect("round trips: a number"));
    let modes = match args.next().as_deref() {
        None => vec![true, false, true, false, true, false],
        Some("takers") => vec![true],
        Some("offers") => vec![false],
        Some(other) => panic!("mode: `takers` or `offers`, not `{other}`"),
    };
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .build()
        .expect("runtime");
    for receivers_first in modes {
        let ns = rt.block_on(pingpong(n, receivers_first));
        let mode = if receivers_first { "takers" } else { "offers" };
        println!("{mode}: {ns:6.1} ns a round trip");
    }
}
