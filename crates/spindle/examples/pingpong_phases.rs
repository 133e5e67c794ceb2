//! pingpong on one worker, timed in phases: how a round trip's time moves
//! within one run. Its Go side is `scripts/pingpong-phases-go/main.go`
//! (GOMAXPROCS=1); run the two one after the other to see whether a
//! change of speed comes from the runtime or from the host it runs on
//! (`docs/profiles.md`, "pingpong's two speeds").
//! `cargo run -p spindle --release --example pingpong_phases [phases [round trips a phase]]`
//! prints each phase's ns a round trip on one line; the sum is checked.

use spindle::chan;
use std::time::Instant;

/// `phases` phases of `per_phase` round trips over two rendezvous
/// channels; each phase's ns a round trip.
async fn pingpong(phases: u64, per_phase: u64) -> Vec<u64> {
    let n = phases * per_phase;
    let (ping_tx, ping_rx) = chan::rendezvous::<u64>();
    let (pong_tx, pong_rx) = chan::rendezvous::<u64>();
    let ponger = spindle::spawn(async move {
        while let Ok(k) = ping_rx.recv().await {
            pong_tx.send(k).await.unwrap();
        }
    });
    let pinger = spindle::spawn(async move {
        let mut times = Vec::with_capacity(phases as usize);
        let mut sum = 0;
        let mut t = Instant::now();
        for k in 0..n {
            ping_tx.send(k).await.unwrap();
            sum += pong_rx.recv().await.unwrap();
            if (k + 1) % per_phase == 0 {
                times.push(t.elapsed().as_nanos() as u64 / per_phase);
                t = Instant::now();
            }
        }
        assert_eq!(sum, n * (n - 1) / 2);
        times
    });
    let times = pinger.await.unwrap();
    ponger.await.unwrap();
    times
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut number = |what: &str, default: u64| {
        args.next().map_or(default, |s| {
            s.parse()
                .unwrap_or_else(|_| panic!("{what}: a number, not `{s}`"))
        })
    };
    let phases = number("phases", 40);
    let per_phase = number("round trips a phase", 50_000);
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .expect("runtime");
    let times = rt.block_on(pingpong(phases, per_phase));
    let line: Vec<String> = times.iter().map(u64::to_string).collect();
    println!("spindle: {}", line.join(" "));
}
