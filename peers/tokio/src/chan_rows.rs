//! The channel rows on Tokio: pingpong, fanout, chan_single, chan_buffered
//! and chan_unbuffered (`producer_consumer`), payload_B, select_k and the
//! FizzBuzz pipelines (the module docs in `main.rs` say which primitive
//! each row uses).

use crate::timed;
use spindle_peer_common::catalogue::{
    fizzbuzz_batch, CHAN_CAPACITY, FANOUT_CAPACITY, FANOUT_WORKERS, PINGPONG_CAPACITY,
};
use spindle_peer_common::kernels::{self, payload, payload_value, FizzCounts};
use spindle_peer_common::witness::SelectTally;
use spindle_peer_common::Measured;
use tokio::sync::mpsc;

/// pingpong: pinger and ponger tasks over two capacity-1 channels.
pub(crate) async fn pingpong(n: u64) -> u64 {
    let (ping_tx, mut ping_rx) = mpsc::channel::<u64>(PINGPONG_CAPACITY);
    let (pong_tx, mut pong_rx) = mpsc::channel::<u64>(PINGPONG_CAPACITY);
    let ponger = tokio::spawn(async move {
        while let Some(k) = ping_rx.recv().await {
            pong_tx.send(k).await.unwrap();
        }
    });
    let pinger = tokio::spawn(async move {
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

/// fanout: a producer task, 100 worker tasks on one bounded(1024) MPMC
/// `async_channel`.
pub(crate) async fn fanout(n: u64) -> u64 {
    let (tx, rx) = async_channel::bounded::<u64>(FANOUT_CAPACITY);
    let workers: Vec<_> = (0..FANOUT_WORKERS)
        .map(|_| {
            let rx = rx.clone();
            tokio::spawn(async move {
                let mut sum = 0;
                while let Ok(v) = rx.recv().await {
                    sum += v;
                }
                sum
            })
        })
        .collect();
    drop(rx);
    tokio::spawn(async move {
        for v in 1..=n {
            tx.send(v).await.unwrap();
        }
    });
    let mut sum = 0;
    for w in workers {
        sum += w.await.unwrap();
    }
    sum
}

/// chan_single: one task sends 1000 then receives 1000, repeated.
pub(crate) async fn chan_single(n: u64) -> u64 {
    tokio::spawn(async move {
        let (tx, mut rx) = mpsc::channel::<u64>(CHAN_CAPACITY);
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
    cap: usize,
    make: fn(u64) -> T,
    value: fn(&T) -> u64,
) -> u64 {
    let (tx, mut rx) = mpsc::channel::<T>(cap);
    let consumer = tokio::spawn(async move {
        let mut sum = 0;
        while let Some(m) = rx.recv().await {
            sum += value(&m);
        }
        sum
    });
    tokio::spawn(async move {
        for i in 0..n {
            tx.send(make(i)).await.unwrap();
        }
    });
    consumer.await.unwrap()
}

/// payload_B: chan_buffered with `[u8; B]` messages by value.
pub(crate) async fn payload_row(bytes: usize, n: u64) -> Measured {
    async fn row<const B: usize>(n: u64) -> Measured {
        timed(producer_consumer::<[u8; B]>(
            n,
            CHAN_CAPACITY,
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
/// bounded(1000) channel; one consumer task selects over the k channels.
/// The select_k consumer loop over the given `(receiver, open)` pairs: a
/// `tokio::select!` with one branch per channel, disabled once it is closed.
macro_rules! select_loop {
    ($(($arm:literal, $rx:ident, $open:ident)),+) => {{
        let mut tally = SelectTally::new([$($arm),+].len());
        loop {
            tokio::select! {
                $(v = $rx.recv(), if $open => match v {
                    Some(v) => tally.record($arm, v),
                    None => $open = false,
                },)+
                else => break,
            }
        }
        tally
    }};
}

pub(crate) async fn select(n: u64, k: usize) -> SelectTally {
    let per = n / k as u64;
    let mut rxs = Vec::with_capacity(k);
    for p in 0..k as u64 {
        let (tx, rx) = mpsc::channel::<u64>(CHAN_CAPACITY);
        rxs.push(rx);
        tokio::spawn(async move {
            for j in 0..per {
                tx.send(p * per + j).await.unwrap();
            }
        });
    }
    let consumer = tokio::spawn(async move {
        let mut rxs = rxs.into_iter();
        let mut next = || rxs.next().unwrap();
        match k {
            1 => {
                let (mut a, mut oa) = (next(), true);
                select_loop!((0, a, oa))
            }
            2 => {
                let (mut a, mut oa, mut b, mut ob) = (next(), true, next(), true);
                select_loop!((0, a, oa), (1, b, ob))
            }
            4 => {
                let (mut a, mut oa, mut b, mut ob) = (next(), true, next(), true);
                let (mut c, mut oc, mut d, mut od) = (next(), true, next(), true);
                select_loop!((0, a, oa), (1, b, ob), (2, c, oc), (3, d, od))
            }
            k => panic!("no select row over {k} channels"),
        }
    });
    consumer.await.unwrap()
}

/// fizzbuzz_pipeline(_zc): generator → worker → logger tasks. Messages
/// travel in batches of half a channel; each link is an mpsc channel of two
/// batches (a full channel's worth) and buffers return upstream on recycle
/// channels, so the hot path allocates nothing.
/// - copy (double buffer): the worker writes classes into a separate class
///   buffer and hands the value buffer back;
/// - zero-copy: the worker overwrites each value with its class in place and
///   forwards the same buffer.
pub(crate) async fn fizzbuzz(n: u64, zero_copy: bool) -> FizzCounts {
    const LINK: usize = 2; // batches per link: the whole channel
    const POOL: usize = 4; // buffers per pool: two in the link, one each end
    let batch = fizzbuzz_batch(n);
    let (free_tx, mut free_rx) = mpsc::channel::<Vec<u64>>(POOL);
    let (class_free_tx, mut class_free_rx) = mpsc::channel::<Vec<u8>>(POOL);
    for _ in 0..POOL {
        free_tx.send(Vec::with_capacity(batch)).await.unwrap();
        if !zero_copy {
            class_free_tx.send(Vec::with_capacity(batch)).await.unwrap();
        }
    }
    let (values_tx, mut values_rx) = mpsc::channel::<Vec<u64>>(LINK);
    tokio::spawn(async move {
        let mut next = 1;
        while next <= n {
            let mut buf = free_rx.recv().await.unwrap();
            next = kernels::fill_batch(&mut buf, next, batch, n);
            values_tx.send(buf).await.unwrap();
        }
    });
    if zero_copy {
        let (out_tx, mut out_rx) = mpsc::channel::<Vec<u64>>(LINK);
        tokio::spawn(async move {
            while let Some(mut buf) = values_rx.recv().await {
                kernels::classify_in_place(&mut buf);
                out_tx.send(buf).await.unwrap();
            }
        });
        let logger = tokio::spawn(async move {
            let mut counts = FizzCounts::default();
            while let Some(buf) = out_rx.recv().await {
                counts.add_all(&buf);
                let _ = free_tx.send(buf).await; // the generator may be done
            }
            counts
        });
        logger.await.unwrap()
    } else {
        let (out_tx, mut out_rx) = mpsc::channel::<Vec<u8>>(LINK);
        tokio::spawn(async move {
            while let Some(values) = values_rx.recv().await {
                let mut classes = class_free_rx.recv().await.unwrap();
                kernels::classify_into(&values, &mut classes);
                let _ = free_tx.send(values).await;
                out_tx.send(classes).await.unwrap();
            }
        });
        let logger = tokio::spawn(async move {
            let mut counts = FizzCounts::default();
            while let Some(classes) = out_rx.recv().await {
                counts.add_all(&classes);
                let _ = class_free_tx.send(classes).await;
            }
            counts
        });
        logger.await.unwrap()
    }
}
