//! The channel rows on plain OS threads, written once over a small blocking
//! channel trait and instantiated by the std, crossbeam, flume and kanal
//! peers, so that these four differ only in the channel they use.
//!
//! Threads are the tasks of these rows, so spawning them is part of the
//! timed workload, as spawning tasks is for the async peers.

use crate::catalogue::{CHAN_CAPACITY, FANOUT_CAPACITY, FANOUT_WORKERS, PINGPONG_CAPACITY};
use crate::kernels::{payload, payload_value};
use crate::peer::Measured;
use crate::witness::SelectTally;
use std::thread;

/// A blocking bounded channel as the threads rows use it. `bounded(0)` is a
/// rendezvous channel.
pub trait Channel {
    type Sender<T: Send + 'static>: Send + 'static;
    type Receiver<T: Send + 'static>: Send + 'static;
    /// A receiving end several threads can share (MPMC).
    type Shared<T: Send + 'static>: Clone + Send + 'static;

    fn bounded<T: Send + 'static>(cap: usize) -> (Self::Sender<T>, Self::Receiver<T>);
    /// Sends, blocking while full; panics if every receiver is gone.
    fn send<T: Send + 'static>(tx: &Self::Sender<T>, v: T);
    /// Receives, blocking while empty; `None` once closed and drained.
    fn recv<T: Send + 'static>(rx: &Self::Receiver<T>) -> Option<T>;
    fn share<T: Send + 'static>(rx: Self::Receiver<T>) -> Self::Shared<T>;
    fn recv_shared<T: Send + 'static>(rx: &Self::Shared<T>) -> Option<T>;
}

/// pingpong: a pinger and a ponger thread over two capacity-1 channels.
pub fn pingpong<C: Channel>(n: u64) -> Measured {
    Measured::time(|| {
        let (ping_tx, ping_rx) = C::bounded::<u64>(PINGPONG_CAPACITY);
        let (pong_tx, pong_rx) = C::bounded::<u64>(PINGPONG_CAPACITY);
        let ponger = thread::spawn(move || {
            while let Some(k) = C::recv(&ping_rx) {
                C::send(&pong_tx, k);
            }
        });
        let pinger = thread::spawn(move || {
            let mut sum = 0;
            for k in 0..n {
                C::send(&ping_tx, k);
                sum += C::recv(&pong_rx).expect("ponger hung up");
            }
            sum
        });
        let sum = pinger.join().unwrap();
        ponger.join().unwrap();
        sum
    })
}

/// fanout: one producer, 100 worker threads sharing one bounded(1024) channel.
pub fn fanout<C: Channel>(n: u64) -> Measured {
    Measured::time(|| {
        let (tx, rx) = C::bounded::<u64>(FANOUT_CAPACITY);
        let rx = C::share(rx);
        let workers: Vec<_> = (0..FANOUT_WORKERS)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || {
                    let mut sum = 0;
                    while let Some(v) = C::recv_shared(&rx) {
                        sum += v;
                    }
                    sum
                })
            })
            .collect();
        drop(rx);
        for v in 1..=n {
            C::send(&tx, v);
        }
        drop(tx);
        workers.into_iter().map(|w| w.join().unwrap()).sum::<u64>()
    })
}

/// chan_single: one thread sends 1000 then receives 1000, repeated.
pub fn chan_single<C: Channel>(n: u64) -> Measured {
    Measured::time(|| {
        thread::spawn(move || {
            let (tx, rx) = C::bounded::<u64>(CHAN_CAPACITY);
            let mut sum = 0;
            let mut next = 0;
            while next < n {
                let end = (next + CHAN_CAPACITY as u64).min(n);
                for v in next..end {
                    C::send(&tx, v);
                }
                for _ in next..end {
                    sum += C::recv(&rx).unwrap();
                }
                next = end;
            }
            sum
        })
        .join()
        .unwrap()
    })
}

/// Producer → consumer of `make(i)` for `i in 0..n` over a channel of `cap`,
/// the consumer summing `value(&msg)`: chan_buffered, chan_unbuffered and the
/// payload rows.
fn producer_consumer<C: Channel, T: Send + 'static>(
    n: u64,
    cap: usize,
    make: fn(u64) -> T,
    value: fn(&T) -> u64,
) -> Measured {
    Measured::time(|| {
        let (tx, rx) = C::bounded::<T>(cap);
        let consumer = thread::spawn(move || {
            let mut sum = 0;
            while let Some(m) = C::recv(&rx) {
                sum += value(&m);
            }
            sum
        });
        let producer = thread::spawn(move || {
            for i in 0..n {
                C::send(&tx, make(i));
            }
        });
        producer.join().unwrap();
        consumer.join().unwrap()
    })
}

/// chan_buffered: producer → consumer over bounded(1000).
pub fn chan_buffered<C: Channel>(n: u64) -> Measured {
    producer_consumer::<C, u64>(n, CHAN_CAPACITY, |i| i, |&v| v)
}

/// chan_unbuffered: producer → consumer over a rendezvous channel.
pub fn chan_unbuffered<C: Channel>(n: u64) -> Measured {
    producer_consumer::<C, u64>(n, 0, |i| i, |&v| v)
}

/// payload_B: chan_buffered with `[u8; B]` messages moved by value.
pub fn payload_rows<C: Channel>(bytes: usize, n: u64) -> Measured {
    fn run<C: Channel, const B: usize>(n: u64) -> Measured {
        producer_consumer::<C, [u8; B]>(n, CHAN_CAPACITY, payload::<B>, payload_value::<B>)
    }
    match bytes {
        4 => run::<C, 4>(n),
        16 => run::<C, 16>(n),
        256 => run::<C, 256>(n),
        1024 => run::<C, 1024>(n),
        b => panic!("no payload row of {b} bytes"),
    }
}

/// select_k: `k` producer threads, producer `p` sending `p·(n/k) + j` for
/// `j in 0..n/k` on its own bounded(1000) channel; `consume` is the peer's
/// select loop over the `k` receivers, returning what each arm delivered.
pub fn select_rows<C: Channel>(
    n: u64,
    k: usize,
    consume: impl FnOnce(Vec<C::Receiver<u64>>) -> SelectTally + Send + 'static,
) -> Measured {
    let (tally, elapsed) = crate::timed(|| {
        let per = n / k as u64;
        let mut receivers = Vec::with_capacity(k);
        let mut producers = Vec::with_capacity(k);
        for p in 0..k as u64 {
            let (tx, rx) = C::bounded::<u64>(CHAN_CAPACITY);
            receivers.push(rx);
            producers.push(thread::spawn(move || {
                for j in 0..per {
                    C::send(&tx, p * per + j);
                }
            }));
        }
        let consumer = thread::spawn(move || consume(receivers));
        producers.into_iter().for_each(|p| p.join().unwrap());
        consumer.join().unwrap()
    });
    tally.measured(elapsed)
}

/// Implements [`Channel`] for an MPMC channel crate whose API has the usual
/// shape (`bounded(cap)`, a cloneable `Receiver`, `send`/`recv` returning
/// `Result`): `mpmc_channel!(Crossbeam, crossbeam_channel);`.
#[macro_export]
macro_rules! mpmc_channel {
    ($name:ident, $krate:ident) => {
        struct $name;

        impl $crate::threads::Channel for $name {
            type Sender<T: Send + 'static> = $krate::Sender<T>;
            type Receiver<T: Send + 'static> = $krate::Receiver<T>;
            type Shared<T: Send + 'static> = $krate::Receiver<T>;

            fn bounded<T: Send + 'static>(cap: usize) -> ($krate::Sender<T>, $krate::Receiver<T>) {
                $krate::bounded(cap)
            }
            fn send<T: Send + 'static>(tx: &$krate::Sender<T>, v: T) {
                tx.send(v).expect("receiver hung up");
            }
            fn recv<T: Send + 'static>(rx: &$krate::Receiver<T>) -> Option<T> {
                rx.recv().ok()
            }
            fn share<T: Send + 'static>(rx: $krate::Receiver<T>) -> $krate::Receiver<T> {
                rx
            }
            fn recv_shared<T: Send + 'static>(rx: &$krate::Receiver<T>) -> Option<T> {
                rx.recv().ok()
            }
        }
    };
}

/// A select_k consumer: receives from all `k` receivers until each is closed
/// and drained, returning the sum and each arm's count.
pub type SelectLoop<C> = fn(Vec<<C as Channel>::Receiver<u64>>) -> SelectTally;

/// The rows a channel crate on threads expresses: the channel rows, and the
/// select rows when the crate has a select.
pub fn channel_crate_support(workload: &str, has_select: bool) -> crate::Support {
    use crate::catalogue::{payload_bytes, select_arity};
    match workload {
        "pingpong" | "fanout" | "chan_single" | "chan_buffered" | "chan_unbuffered" => Ok(()),
        w if payload_bytes(w).is_some() => Ok(()),
        w if select_arity(w).is_some() && !has_select => Err("the crate has no select"),
        w if select_arity(w).is_some() => Ok(()),
        _ => Err("a channel crate, not a task runtime: channel rows only"),
    }
}

/// Runs one of the channel rows of [`channel_crate_support`] on channel `C`;
/// `select` is the crate's select_k consumer (`None` without select).
pub fn run_channel_row<C: Channel>(
    req: &crate::Request,
    select: Option<SelectLoop<C>>,
) -> Measured {
    use crate::catalogue::{payload_bytes, select_arity};
    let n = req.size;
    match req.workload.as_str() {
        "pingpong" => pingpong::<C>(n),
        "fanout" => fanout::<C>(n),
        "chan_single" => chan_single::<C>(n),
        "chan_buffered" => chan_buffered::<C>(n),
        "chan_unbuffered" => chan_unbuffered::<C>(n),
        w if payload_bytes(w).is_some() => payload_rows::<C>(payload_bytes(w).unwrap(), n),
        w => select_rows::<C>(
            n,
            select_arity(w).expect("a channel row"),
            select.expect("a crate with select"),
        ),
    }
}
