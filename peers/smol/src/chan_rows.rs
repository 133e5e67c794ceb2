//! The channel rows on smol: pingpong, fanout, chan_single, chan_buffered
//! and chan_unbuffered (`producer_consumer`), payload_B, select_k and the
//! FizzBuzz pipelines (the module docs in `main.rs` say which primitive
//! each row uses).

use crate::{timed, EX};
use futures::StreamExt as _;
use spindle_peer_common::catalogue::{
    fizzbuzz_batch, CHAN_CAPACITY, FANOUT_CAPACITY, FANOUT_WORKERS, PINGPONG_CAPACITY,
};
use spindle_peer_common::kernels::{self, payload, payload_value, FizzCounts};
use spindle_peer_common::witness::SelectTally;
use spindle_peer_common::Measured;
use std::time::Instant;

/// pingpong: pinger and ponger tasks over two capacity-1 channels.
pub(crate) async fn pingpong(n: u64) -> u64 {
    let (ping_tx, ping_rx) = async_channel::bounded::<u64>(PINGPONG_CAPACITY);
    let (pong_tx, pong_rx) = async_channel::bounded::<u64>(PINGPONG_CAPACITY);
    let ponger = EX.spawn(async move {
        while let Ok(k) = ping_rx.recv().await {
            pong_tx.send(k).await.unwrap();
        }
    });
    let pinger = EX.spawn(async move {
        let mut sum = 0;
        for k in 0..n {
            ping_tx.send(k).await.unwrap();
            sum += pong_rx.recv().await.unwrap();
        }
        sum
    });
    let sum = pinger.await;
    ponger.await;
    sum
}

/// fanout: a producer task, 100 worker tasks on one bounded(1024) channel.
pub(crate) async fn fanout(n: u64) -> u64 {
    let (tx, rx) = async_channel::bounded::<u64>(FANOUT_CAPACITY);
    let workers: Vec<_> = (0..FANOUT_WORKERS)
        .map(|_| {
            let rx = rx.clone();
            EX.spawn(async move {
                let mut sum = 0;
                while let Ok(v) = rx.recv().await {
                    sum += v;
                }
                sum
            })
        })
        .collect();
    drop(rx);
    EX.spawn(async move {
        for v in 1..=n {
            tx.send(v).await.unwrap();
        }
    })
    .detach();
    let mut sum = 0;
    for w in workers {
        sum += w.await;
    }
    sum
}

/// chan_single: one task sends 1000 then receives 1000, repeated.
pub(crate) async fn chan_single(n: u64) -> u64 {
    EX.spawn(async move {
        let (tx, rx) = async_channel::bounded::<u64>(CHAN_CAPACITY);
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
}

/// Producer task → consumer task of `make(i)`, `i in 0..n`, summing `value`.
pub(crate) async fn producer_consumer<T: Send + 'static>(
    n: u64,
    cap: usize,
    make: fn(u64) -> T,
    value: fn(&T) -> u64,
) -> u64 {
    let (tx, rx) = async_channel::bounded::<T>(cap);
    let consumer = EX.spawn(async move {
        let mut sum = 0;
        while let Ok(m) = rx.recv().await {
            sum += value(&m);
        }
        sum
    });
    EX.spawn(async move {
        for i in 0..n {
            tx.send(make(i)).await.unwrap();
        }
    })
    .detach();
    consumer.await
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
/// The select_k consumer loop over the given `(arm, receiver)` pairs: a
/// `futures::select!` with one `select_next_some` branch per channel (the
/// receivers pinned, as a `Receiver` is not `Unpin`); a closed and drained
/// channel's branch is done, and `complete` ends the loop.
macro_rules! select_loop {
    ($tally:ident; $(($arm:expr, $rx:ident)),+) => {{
        $(let mut $rx = std::pin::pin!($rx);)+
        loop {
            futures::select! {
                $(v = $rx.select_next_some() => $tally.record($arm, v),)+
                complete => break,
            }
        }
    }};
}

pub(crate) async fn select(n: u64, k: usize) -> Measured {
    let start = Instant::now();
    let per = n / k as u64;
    let mut rxs = Vec::with_capacity(k);
    for p in 0..k as u64 {
        let (tx, rx) = async_channel::bounded::<u64>(CHAN_CAPACITY);
        rxs.push(rx);
        EX.spawn(async move {
            for j in 0..per {
                tx.send(p * per + j).await.unwrap();
            }
        })
        .detach();
    }
    let consumer = EX.spawn(async move {
        let mut tally = SelectTally::new(k);
        let mut rxs = rxs.into_iter();
        let mut next = || rxs.next().unwrap();
        match k {
            1 => {
                let a = next();
                select_loop!(tally; (0, a));
            }
            2 => {
                let (a, b) = (next(), next());
                select_loop!(tally; (0, a), (1, b));
            }
            4 => {
                let (a, b, c, d) = (next(), next(), next(), next());
                select_loop!(tally; (0, a), (1, b), (2, c), (3, d));
            }
            k => panic!("no select row over {k} channels"),
        }
        tally
    });
    let tally = consumer.await;
    Measured::new(tally.sum, start.elapsed()).with("per_arm", tally.per_arm_value())
}

/// fizzbuzz_pipeline(_zc): generator → worker → logger tasks. Messages
/// travel in batches of half a channel; each link is a channel of two
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
    let (free_tx, free_rx) = async_channel::bounded::<Vec<u64>>(POOL);
    let (class_free_tx, class_free_rx) = async_channel::bounded::<Vec<u8>>(POOL);
    for _ in 0..POOL {
        free_tx.send(Vec::with_capacity(batch)).await.unwrap();
        if !zero_copy {
            class_free_tx.send(Vec::with_capacity(batch)).await.unwrap();
        }
    }
    let (values_tx, values_rx) = async_channel::bounded::<Vec<u64>>(LINK);
    EX.spawn(async move {
        let mut next = 1;
        while next <= n {
            let mut buf = free_rx.recv().await.unwrap();
            next = kernels::fill_batch(&mut buf, next, batch, n);
            values_tx.send(buf).await.unwrap();
        }
    })
    .detach();
    if zero_copy {
        let (out_tx, out_rx) = async_channel::bounded::<Vec<u64>>(LINK);
        EX.spawn(async move {
            while let Ok(mut buf) = values_rx.recv().await {
                kernels::classify_in_place(&mut buf);
                out_tx.send(buf).await.unwrap();
            }
        })
        .detach();
        let logger = EX.spawn(async move {
            let mut counts = FizzCounts::default();
            while let Ok(buf) = out_rx.recv().await {
                counts.add_all(&buf);
                let _ = free_tx.send(buf).await; // the generator may be done
            }
            counts
        });
        logger.await
    } else {
        let (out_tx, out_rx) = async_channel::bounded::<Vec<u8>>(LINK);
        EX.spawn(async move {
            while let Ok(values) = values_rx.recv().await {
                let mut classes = class_free_rx.recv().await.unwrap();
                kernels::classify_into(&values, &mut classes);
                let _ = free_tx.send(values).await;
                out_tx.send(classes).await.unwrap();
            }
        })
        .detach();
        let logger = EX.spawn(async move {
            let mut counts = FizzCounts::default();
            while let Ok(classes) = out_rx.recv().await {
                counts.add_all(&classes);
                let _ = class_free_tx.send(classes).await;
            }
            counts
        });
        logger.await
    }
}
