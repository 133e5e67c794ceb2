//! The channel rows on May: pingpong, fanout, chan_single, chan_buffered
//! and chan_unbuffered (`producer_consumer`), payload_B, select_k and the
//! FizzBuzz pipelines, with the bounded channel May's primitives make
//! (the module docs in `main.rs` say which primitive each row uses).

use crate::{join, timed};
use may::cqueue;
use may::go;
use may::sync::mpsc;
use spindle_peer_common::catalogue::{
    fizzbuzz_batch, CHAN_CAPACITY, FANOUT_CAPACITY, FANOUT_WORKERS,
};
use spindle_peer_common::kernels::{self, payload, payload_value, FizzCounts};
use spindle_peer_common::witness::SelectTally;
use spindle_peer_common::Measured;
use std::time::Instant;

/// May's channels are unbounded; a bounded channel is one of them plus a
/// May `Semphore` counting its free slots.
mod bounded {
    use may::sync::{mpmc, mpsc, Semphore};
    use std::sync::Arc;

    /// The sending half: `send` parks the coroutine while the channel is full.
    pub struct Sender<S> {
        tx: S,
        slots: Arc<Semphore>,
    }

    /// The receiving half: `recv` gives the message's slot back.
    pub struct Receiver<R> {
        rx: R,
        slots: Arc<Semphore>,
    }

    /// An SPSC/MPSC channel of `cap` messages.
    pub fn channel<T>(cap: usize) -> (Sender<mpsc::Sender<T>>, Receiver<mpsc::Receiver<T>>) {
        let (tx, rx) = mpsc::channel();
        let slots = Arc::new(Semphore::new(cap));
        (
            Sender {
                tx,
                slots: slots.clone(),
            },
            Receiver { rx, slots },
        )
    }

    /// An MPMC channel of `cap` messages.
    pub fn mpmc<T>(cap: usize) -> (Sender<mpmc::Sender<T>>, Receiver<mpmc::Receiver<T>>) {
        let (tx, rx) = mpmc::channel();
        let slots = Arc::new(Semphore::new(cap));
        (
            Sender {
                tx,
                slots: slots.clone(),
            },
            Receiver { rx, slots },
        )
    }

    impl<T> Sender<mpsc::Sender<T>> {
        pub fn send(&self, v: T) {
            self.slots.wait();
            self.tx.send(v).expect("receiver dropped");
        }
    }

    impl<T> Sender<mpmc::Sender<T>> {
        pub fn send(&self, v: T) {
            self.slots.wait();
            self.tx.send(v).expect("receivers dropped");
        }
    }

    impl<T> Receiver<mpsc::Receiver<T>> {
        /// The next message, or `None` once every sender is gone and the
        /// channel is drained.
        pub fn recv(&self) -> Option<T> {
            let v = self.rx.recv().ok()?;
            self.slots.post();
            Some(v)
        }
    }

    impl<T> Receiver<mpmc::Receiver<T>> {
        pub fn recv(&self) -> Option<T> {
            let v = self.rx.recv().ok()?;
            self.slots.post();
            Some(v)
        }
    }

    impl<T> Clone for Receiver<mpmc::Receiver<T>> {
        fn clone(&self) -> Self {
            Receiver {
                rx: self.rx.clone(),
                slots: self.slots.clone(),
            }
        }
    }
}

/// pingpong: pinger and ponger coroutines over two channels, each holding at
/// most the one message in flight.
pub(crate) fn pingpong(n: u64) -> u64 {
    let (ping_tx, ping_rx) = mpsc::channel::<u64>();
    let (pong_tx, pong_rx) = mpsc::channel::<u64>();
    let ponger = go!(move || {
        while let Ok(k) = ping_rx.recv() {
            pong_tx.send(k).unwrap();
        }
    });
    let pinger = go!(move || {
        let mut sum = 0;
        for k in 0..n {
            ping_tx.send(k).unwrap();
            sum += pong_rx.recv().unwrap();
        }
        sum
    });
    let sum = join(pinger);
    join(ponger);
    sum
}

/// fanout: a producer coroutine, 100 worker coroutines on one bounded(1024)
/// MPMC channel.
pub(crate) fn fanout(n: u64) -> u64 {
    let (tx, rx) = bounded::mpmc::<u64>(FANOUT_CAPACITY);
    let workers: Vec<_> = (0..FANOUT_WORKERS)
        .map(|_| {
            let rx = rx.clone();
            go!(move || {
                let mut sum = 0;
                while let Some(v) = rx.recv() {
                    sum += v;
                }
                sum
            })
        })
        .collect();
    drop(rx);
    go!(move || {
        for v in 1..=n {
            tx.send(v);
        }
    });
    workers.into_iter().map(join).sum()
}

/// chan_single: one coroutine sends 1000 then receives 1000, repeated; the
/// channel never holds more than 1000.
pub(crate) fn chan_single(n: u64) -> u64 {
    join(go!(move || {
        let (tx, rx) = mpsc::channel::<u64>();
        let (mut sum, mut next) = (0, 0);
        while next < n {
            let end = (next + CHAN_CAPACITY as u64).min(n);
            for v in next..end {
                tx.send(v).unwrap();
            }
            for _ in next..end {
                sum += rx.recv().unwrap();
            }
            next = end;
        }
        sum
    }))
}

/// Producer coroutine → consumer coroutine of `make(i)`, `i in 0..n`, on a
/// bounded(`cap`) channel, summing `value`.
pub(crate) fn producer_consumer<T: Send + 'static>(
    n: u64,
    cap: usize,
    make: fn(u64) -> T,
    value: fn(&T) -> u64,
) -> u64 {
    let (tx, rx) = bounded::channel::<T>(cap);
    let consumer = go!(move || {
        let mut sum = 0;
        while let Some(m) = rx.recv() {
            sum += value(&m);
        }
        sum
    });
    go!(move || {
        for i in 0..n {
            tx.send(make(i));
        }
    });
    join(consumer)
}

/// payload_B: chan_buffered with `[u8; B]` messages by value.
pub(crate) fn payload_row(bytes: usize, n: u64) -> Measured {
    fn row<const B: usize>(n: u64) -> Measured {
        timed(|| producer_consumer::<[u8; B]>(n, CHAN_CAPACITY, payload::<B>, payload_value::<B>))
    }
    match bytes {
        4 => row::<4>(n),
        16 => row::<16>(n),
        256 => row::<256>(n),
        1024 => row::<1024>(n),
        b => panic!("no payload row of {b} bytes"),
    }
}

/// select_k: k producer coroutines, producer p sending `p·(n/k) + j` on its
/// own bounded(1000) channel; the consumer polls a `cqueue` fed by one
/// select coroutine per channel (see the module docs).
pub(crate) fn select(n: u64, k: usize) -> Measured {
    let start = Instant::now();
    let per = n / k as u64;
    let mut rxs = Vec::with_capacity(k);
    for p in 0..k as u64 {
        let (tx, rx) = bounded::channel::<u64>(CHAN_CAPACITY);
        rxs.push(rx);
        go!(move || {
            for j in 0..per {
                tx.send(p * per + j);
            }
        });
    }
    let tally = join(go!(move || {
        cqueue::scope(|cqueue| {
            for (arm, rx) in rxs.into_iter().enumerate() {
                go!(cqueue, arm, move |es| {
                    while let Some(v) = rx.recv() {
                        es.send(v as usize);
                    }
                });
            }
            let mut tally = SelectTally::new(k);
            while let Ok(ev) = cqueue.poll(None) {
                tally.record(ev.token, ev.extra as u64);
            }
            tally
        })
    }));
    Measured::new(tally.sum, start.elapsed()).with("per_arm", tally.per_arm_value())
}

/// fizzbuzz_pipeline(_zc): generator → worker → logger coroutines. Messages
/// travel in batches of half a channel; each link is a bounded channel of
/// two batches (a full channel's worth) and buffers return upstream on
/// recycle channels (holding at most the pool's four), so the hot path
/// allocates nothing.
/// - copy (double buffer): the worker writes classes into a separate class
///   buffer and hands the value buffer back;
/// - zero-copy: the worker overwrites each value with its class in place and
///   forwards the same buffer.
pub(crate) fn fizzbuzz(n: u64, zero_copy: bool) -> FizzCounts {
    const LINK: usize = 2; // batches per link: the whole channel
    const POOL: usize = 4; // buffers per pool: two in the link, one each end
    let batch = fizzbuzz_batch(n);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u64>>();
    let (class_free_tx, class_free_rx) = mpsc::channel::<Vec<u8>>();
    for _ in 0..POOL {
        free_tx.send(Vec::with_capacity(batch)).unwrap();
        if !zero_copy {
            class_free_tx.send(Vec::with_capacity(batch)).unwrap();
        }
    }
    let (values_tx, values_rx) = bounded::channel::<Vec<u64>>(LINK);
    go!(move || {
        let mut next = 1;
        while next <= n {
            let mut buf = free_rx.recv().unwrap();
            next = kernels::fill_batch(&mut buf, next, batch, n);
            values_tx.send(buf);
        }
    });
    if zero_copy {
        let (out_tx, out_rx) = bounded::channel::<Vec<u64>>(LINK);
        go!(move || {
            while let Some(mut buf) = values_rx.recv() {
                kernels::classify_in_place(&mut buf);
                out_tx.send(buf);
            }
        });
        join(go!(move || {
            let mut counts = FizzCounts::default();
            while let Some(buf) = out_rx.recv() {
                counts.add_all(&buf);
                let _ = free_tx.send(buf); // the generator may be done
            }
            counts
        }))
    } else {
        let (out_tx, out_rx) = bounded::channel::<Vec<u8>>(LINK);
        go!(move || {
            while let Some(values) = values_rx.recv() {
                let mut classes = class_free_rx.recv().unwrap();
                kernels::classify_into(&values, &mut classes);
                let _ = free_tx.send(values);
                out_tx.send(classes);
            }
        });
        join(go!(move || {
            let mut counts = FizzCounts::default();
            while let Some(classes) = out_rx.recv() {
                counts.add_all(&classes);
                let _ = class_free_tx.send(classes);
            }
            counts
        }))
    }
}
