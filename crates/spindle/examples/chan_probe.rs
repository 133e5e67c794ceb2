//! Rough channel throughput between OS threads, every sum checked (the
//! benchmark suite with its statistics is spindle-bench):
//! `cargo run -p spindle --release --example chan_probe`

use spindle::chan::{self, Receiver, Sender};
use std::thread;
use std::time::Instant;

fn mpmc(name: &str, tx: Sender<u64>, rx: Receiver<u64>, p: u64, c: usize, n: u64) {
    let t = Instant::now();
    let cons: Vec<_> = (0..c)
        .map(|_| {
            let rx = rx.clone();
            thread::spawn(move || {
                let mut s = 0u64;
                while let Ok(v) = rx.recv_blocking() {
                    s += v;
                }
                s
            })
        })
        .collect();
    drop(rx);
    let prods: Vec<_> = (0..p)
        .map(|_| {
            let tx = tx.clone();
            thread::spawn(move || {
                for i in 0..n / p {
                    tx.send_blocking(i).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    for h in prods {
        h.join().unwrap();
    }
    let s: u64 = cons.into_iter().map(|h| h.join().unwrap()).sum();
    let per = n / p;
    assert_eq!(s, p * per * (per - 1) / 2);
    let el = t.elapsed();
    println!(
        "{name:<28} {:>8.1} ns/msg {:>8.2} Mmsg/s",
        el.as_nanos() as f64 / n as f64,
        n as f64 / el.as_secs_f64() / 1e6
    );
}

fn main() {
    let n = 1_000_000;
    let (t, r) = chan::bounded(1024);
    mpmc("bounded(1024) 1p1c", t, r, 1, 1, n);
    let (t, r) = chan::bounded(1024);
    mpmc("bounded(1024) 4p4c", t, r, 4, 4, n);
    let (t, r) = chan::bounded(1);
    mpmc("bounded(1) 1p1c", t, r, 1, 1, n / 10);
    let (t, r) = chan::unbounded();
    mpmc("unbounded 1p1c", t, r, 1, 1, n);
    let (t, r) = chan::unbounded();
    mpmc("unbounded 4p4c", t, r, 4, 4, n);
    let (t, r) = chan::rendezvous();
    mpmc("rendezvous 1p1c", t, r, 1, 1, n / 10);

    let (mut p, mut c) = chan::spsc::<u64>(1024);
    let t0 = Instant::now();
    let h = thread::spawn(move || {
        for i in 0..n {
            p.send_blocking(i).unwrap();
        }
    });
    let mut s = 0;
    while let Ok(v) = c.recv_blocking() {
        s += v;
    }
    h.join().unwrap();
    assert_eq!(s, n * (n - 1) / 2);
    let el = t0.elapsed();
    println!(
        "{:<28} {:>8.1} ns/msg",
        "spsc(1024) send/recv",
        el.as_nanos() as f64 / n as f64
    );
}
