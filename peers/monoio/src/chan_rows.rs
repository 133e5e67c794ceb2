//! The channel rows on one core: `local-sync`'s bounded `mpsc` between
//! tasks of one monoio runtime, `monoio::select!` over several (the
//! module docs of `main.rs` say why one core).

use spindle_peer_common::catalogue::{CHAN_CAPACITY, PINGPONG_CAPACITY};
use spindle_peer_common::kernels::{payload, payload_value};
use spindle_peer_common::witness::SelectTally;

/// chan_single: one task sends a capacity's worth into its own channel,
/// then receives it, until n values have gone through.
pub(crate) async fn chan_single(n: u64) -> u64 {
    monoio::spawn(async move {
        let (tx, mut rx) = local_sync::mpsc::bounded::channel::<u64>(CHAN_CAPACITY);
        let (mut sum, mut next) = (0, 0);
        while next < n {
            let end = (next + CHAN_CAPACITY as u64).min(n);
            for v in next..end {
                tx.send(v).await.expect("the receiver is alive");
            }
            for _ in next..end {
                sum += rx.recv().await.expect("a value was sent");
            }
            next = end;
        }
        sum
    })
    .await
}

/// chan_buffered, chan_unbuffered and payload_B: a producer task sends
/// `make(i)` for `i in 0..n` into a bounded channel of `cap`, a consumer
/// task sums `value` of what it receives until the channel closes.
pub(crate) async fn producer_consumer<T: 'static>(
    n: u64,
    cap: usize,
    make: fn(u64) -> T,
    value: fn(&T) -> u64,
) -> u64 {
    let (tx, mut rx) = local_sync::mpsc::bounded::channel::<T>(cap);
    let consumer = monoio::spawn(async move {
        let mut sum = 0;
        while let Some(m) = rx.recv().await {
            sum += value(&m);
        }
        sum
    });
    let producer = monoio::spawn(async move {
        for i in 0..n {
            tx.send(make(i)).await.expect("the consumer is alive");
        }
    });
    producer.await;
    consumer.await
}

/// payload_B: chan_buffered with `[u8; B]` messages by value.
pub(crate) async fn payload_row(bytes: usize, n: u64) -> u64 {
    async fn row<const B: usize>(n: u64) -> u64 {
        producer_consumer::<[u8; B]>(n, CHAN_CAPACITY, payload::<B>, payload_value::<B>).await
    }
    match bytes {
        4 => row::<4>(n).await,
        16 => row::<16>(n).await,
        256 => row::<256>(n).await,
        1024 => row::<1024>(n).await,
        b => panic!("no payload row of {b} bytes"),
    }
}

/// pingpong: two tasks bounce `k` over two capacity-1 channels, n times.
pub(crate) async fn pingpong(n: u64) -> u64 {
    let (ping_tx, mut ping_rx) = local_sync::mpsc::bounded::channel::<u64>(PINGPONG_CAPACITY);
    let (pong_tx, mut pong_rx) = local_sync::mpsc::bounded::channel::<u64>(PINGPONG_CAPACITY);
    let ponger = monoio::spawn(async move {
        while let Some(k) = ping_rx.recv().await {
            pong_tx.send(k).await.expect("the pinger is alive");
        }
    });
    let pinger = monoio::spawn(async move {
        let mut sum = 0;
        for k in 0..n {
            ping_tx.send(k).await.expect("the ponger is alive");
            sum += pong_rx.recv().await.expect("the ponger answers");
        }
        sum
    });
    let sum = pinger.await;
    ponger.await;
    sum
}

/// The select_k consumer's loop: `monoio::select!` over the open
/// receivers, an arm disabled once its channel is closed and drained, until
/// every arm is (the `else` branch).
macro_rules! select_loop {
    ($(($arm:literal, $rx:ident, $open:ident)),+) => {{
        let mut tally = SelectTally::new([$($arm),+].len());
        loop {
            monoio::select! {
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

/// select_k: k producer tasks, producer p sending `p·(n/k) + j` on its own
/// bounded channel; one consumer task selects over the k channels.
pub(crate) async fn select(n: u64, k: usize) -> SelectTally {
    let per = n / k as u64;
    let mut rxs = Vec::with_capacity(k);
    for p in 0..k as u64 {
        let (tx, rx) = local_sync::mpsc::bounded::channel::<u64>(CHAN_CAPACITY);
        rxs.push(rx);
        monoio::spawn(async move {
            for j in 0..per {
                tx.send(p * per + j).await.expect("the consumer is alive");
            }
        });
    }
    let consumer = monoio::spawn(async move {
        let mut rxs = rxs.into_iter();
        let mut next = || rxs.next().expect("k receivers");
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
    consumer.await
}
