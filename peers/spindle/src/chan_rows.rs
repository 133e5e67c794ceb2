//! The channel rows on spindle: pingpong, fanout, chan_single, chan_buffered
//! and chan_unbuffered (`producer_consumer`), payload_B, select_k and the
//! FizzBuzz pipelines (`fizzbuzz.rs` has their stages).

use crate::timed;
use spindle::chan;
use spindle_peer_common::catalogue::{CHAN_CAPACITY, FANOUT_CAPACITY, FANOUT_WORKERS};
use spindle_peer_common::kernels::{payload, payload_value};
use spindle_peer_common::witness::SelectTally;
use spindle_peer_common::Measured;
use std::time::Instant;

/// pingpong: pinger and ponger tasks over two rendezvous channels.
pub(crate) async fn pingpong(n: u64) -> u64 {
    let (ping_tx, ping_rx) = chan::rendezvous::<u64>();
    let (pong_tx, pong_rx) = chan::rendezvous::<u64>();
    let ponger = spindle::spawn(async move {
        while let Ok(k) = ping_rx.recv().await {
            pong_tx.send(k).await.unwrap();
        }
    });
    let pinger = spindle::spawn(async move {
        let mut sum = 0;
        for k in 0..n {
            ping_tx.send(k).await.unwrap();
            sum += pong_rx.recv().await.unwrap();
        }
        sum
    });
    let sum = pinger.await.unwrap();
    ponger.await.unwrap();
    sum
}

/// fanout: a producer task, 100 worker tasks on one bounded(1024) channel.
pub(crate) async fn fanout(n: u64) -> u64 {
    let (tx, rx) = chan::bounded::<u64>(FANOUT_CAPACITY);
    let workers: Vec<_> = (0..FANOUT_WORKERS)
        .map(|_| {
            let rx = rx.clone();
            spindle::spawn(async move {
                let mut sum = 0;
                while let Ok(v) = rx.recv().await {
                    sum += v;
                }
                sum
            })
        })
        .collect();
    drop(rx);
    drop(spindle::spawn(async move {
        for v in 1..=n {
            tx.send(v).await.unwrap();
        }
    }));
    let mut sum = 0;
    for w in workers {
        sum += w.await.unwrap();
    }
    sum
}

/// chan_single: one task sends 1000 then receives 1000, repeated.
pub(crate) async fn chan_single(n: u64) -> u64 {
    spindle::spawn(async move {
        let (tx, rx) = chan::bounded::<u64>(CHAN_CAPACITY);
        let (mut sum, mut next) = (0, 0);
        while next < n {
            let end = (next + CHAN_CAPACITY as u64).min(n);
            for v in next..end {
                tx.send(v).await.unwrap();
            }
            for _ in next..end {
                sum += rx.recv().await.unwrap();
            }
            next = end;
        }
        sum
    })
    .await
    .unwrap()
}

/// Producer task → consumer task of `make(i)`, `i in 0..n`, summing `value`.
pub(crate) async fn producer_consumer<T: Send + 'static>(
    n: u64,
    (tx, rx): (chan::Sender<T>, chan::Receiver<T>),
    make: fn(u64) -> T,
    value: fn(&T) -> u64,
) -> u64 {
    let consumer = spindle::spawn(async move {
        let mut sum = 0;
        while let Ok(m) = rx.recv().await {
            sum += value(&m);
        }
        sum
    });
    drop(spindle::spawn(async move {
        for i in 0..n {
            tx.send(make(i)).await.unwrap();
        }
    }));
    consumer.await.unwrap()
}

/// payload_B: chan_buffered with `[u8; B]` messages by value.
pub(crate) async fn payload_row(bytes: usize, n: u64) -> Measured {
    async fn row<const B: usize>(n: u64) -> Measured {
        timed(producer_consumer::<[u8; B]>(
            n,
            chan::bounded(CHAN_CAPACITY),
            payload::<B>,
            payload_value::<B>,
        ))
        .await
    }
    match bytes {
        4 => row::<4>(n).await,
        16 => row::<16>(n).await,
        256 => row::<256>(n).await,
        1024 => row::<1024>(n).await,
        b => panic!("no payload row of {b} bytes"),
    }
}

/// select_k: k producer tasks, producer p sending `p·(n/k) + j` on its own
/// bounded(1000) channel; one consumer task selects over the k channels
/// until all are closed and drained.
pub(crate) async fn select(n: u64, k: usize) -> SelectTally {
    let per = n / k as u64;
    let mut rxs = Vec::with_capacity(k);
    for p in 0..k as u64 {
        let (tx, rx) = chan::bounded::<u64>(CHAN_CAPACITY);
        rxs.push(rx);
        drop(spindle::spawn(async move {
            for j in 0..per {
                tx.send(p * per + j).await.unwrap();
            }
        }));
    }
    spindle::spawn(async move {
        let mut tally = SelectTally::new(k);
        let mut open = vec![true; k];
        // As Go's nil channel: a closed channel's arm never completes again
        // (else its always-ready `Err` would spin the loop).
        let recv = |i: usize, open: bool| {
            let rx = &rxs[i];
            async move {
                match open {
                    true => rx.recv().await,
                    false => std::future::pending().await,
                }
            }
        };
        fn note(t: &mut SelectTally, open: &mut [bool], i: usize, r: Result<u64, chan::RecvError>) {
            match r {
                Ok(v) => t.record(i, v),
                Err(_) => open[i] = false,
            }
        }
        match k {
            1 => {
                while open[0] {
                    spindle::select! {
                        r = recv(0, true) => note(&mut tally, &mut open, 0, r),
                    }
                }
            }
            2 => {
                while open.iter().any(|&o| o) {
                    let (o0, o1) = (open[0], open[1]);
                    spindle::select! {
                        r = recv(0, o0) => note(&mut tally, &mut open, 0, r),
                        r = recv(1, o1) => note(&mut tally, &mut open, 1, r),
                    }
                }
            }
            4 => {
                while open.iter().any(|&o| o) {
                    let (o0, o1, o2, o3) = (open[0], open[1], open[2], open[3]);
                    spindle::select! {
                        r = recv(0, o0) => note(&mut tally, &mut open, 0, r),
                        r = recv(1, o1) => note(&mut tally, &mut open, 1, r),
                        r = recv(2, o2) => note(&mut tally, &mut open, 2, r),
                        r = recv(3, o3) => note(&mut tally, &mut open, 3, r),
                    }
                }
            }
            k => panic!("no select row over {k} channels"),
        }
        tally
    })
    .await
    .unwrap()
}

/// fizzbuzz_pipeline(_zc) on spindle-actor (`fizzbuzz.rs`); with telemetry
/// on, the line also says how many scrapes the server answered during the
/// run (`scrapes=`).
pub(crate) async fn fizzbuzz(n: u64, zero_copy: bool) -> Measured {
    let start = Instant::now();
    let (counts, scrapes) = crate::fizzbuzz::run(n, zero_copy).await;
    let m = Measured::new(counts, start.elapsed());
    match scrapes {
        Some(k) => m.with("scrapes", k),
        None => m,
    }
}
