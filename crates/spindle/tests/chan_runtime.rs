//! The channels on spindle's own schedulers (current-thread, one worker, N
//! workers): tasks on both ends, tasks against threads, select! loops,
//! senders outnumbering capacity 100:1.

mod chan_common;

use chan_common::scale;
use spindle::chan;
use spindle::Runtime;
use std::time::Duration;

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        (
            "current_thread",
            spindle::Builder::new_current_thread().build().unwrap(),
        ),
        ("1 worker", Runtime::builder().workers(1).build().unwrap()),
        ("2 workers", Runtime::builder().workers(2).build().unwrap()),
    ]
}

#[test]
fn many_tasks_through_a_small_channel() {
    for (name, rt) in runtimes() {
        let total = rt.block_on(async {
            let (tx, rx) = chan::bounded::<u64>(1);
            let senders = 100u64;
            let per = scale(50) as u64;
            let mut hs = Vec::new();
            for s in 0..senders {
                let tx = tx.clone();
                hs.push(spindle::spawn(async move {
                    for i in 0..per {
                        tx.send(s * per + i).await.unwrap();
                    }
                }));
            }
            drop(tx);
            let consumers: Vec<_> = (0..4)
                .map(|_| {
                    let rx = rx.clone();
                    spindle::spawn(async move {
                        let mut sum = 0u64;
                        while let Ok(v) = rx.recv().await {
                            sum += v;
                        }
                        sum
                    })
                })
                .collect();
            drop(rx);
            for h in hs {
                h.await.unwrap();
            }
            let mut total = 0;
            for c in consumers {
                total += c.await.unwrap();
            }
            let n = senders * per;
            assert_eq!(total, n * (n - 1) / 2, "{name}");
            total
        });
        assert!(total > 0);
    }
}

#[test]
fn tasks_and_threads_both_ways() {
    for (name, rt) in runtimes() {
        let (tx, rx) = chan::bounded::<u32>(2);
        let (back_tx, back_rx) = chan::unbounded::<u32>();
        let th = std::thread::spawn(move || {
            for i in 0..scale(500) as u32 {
                tx.send_blocking(i).unwrap();
            }
        });
        let echo = std::thread::spawn(move || {
            let mut n = 0;
            while back_rx.recv_blocking().is_ok() {
                n += 1;
            }
            n
        });
        rt.block_on(async move {
            let h = spindle::spawn(async move {
                while let Ok(v) = rx.recv().await {
                    back_tx.send(v).await.unwrap();
                }
            });
            h.await.unwrap();
        });
        th.join().unwrap();
        assert_eq!(echo.join().unwrap(), scale(500), "{name}");
    }
}

#[test]
fn select_loop_on_runtime() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (tx1, rx1) = chan::bounded::<u32>(1);
            let (tx2, rx2) = chan::rendezvous::<u32>();
            let n = scale(300) as u32;
            let p1 = spindle::spawn(async move {
                for i in 0..n {
                    tx1.send(i).await.unwrap();
                }
            });
            let p2 = spindle::spawn(async move {
                for i in 0..n {
                    tx2.send(i).await.unwrap();
                }
            });
            let (mut a, mut b) = (0, 0);
            // A closed channel is always ready (as in Go): leave the select
            // once one side closes and drain the other directly.
            loop {
                spindle::select! {
                    v = rx1.recv() => match v { Ok(_) => a += 1, Err(_) => break },
                    v = rx2.recv() => match v { Ok(_) => b += 1, Err(_) => break },
                }
            }
            while rx1.recv().await.is_ok() {
                a += 1;
            }
            while rx2.recv().await.is_ok() {
                b += 1;
            }
            p1.await.unwrap();
            p2.await.unwrap();
            assert_eq!((a, b), (n, n), "{name}");
        });
    }
}

/// Bursts into a ring read by far more parked receivers than CPUs, with
/// pauses that let them all park again: the capped wake-ups in flight
/// (`chan/waiters/`) must still bring every message to some receiver,
/// and close must still end every receiver. Sums and counts checked; a
/// lost wake-up shows as a hang.
#[test]
fn bursts_into_a_ring_with_many_parked_receivers() {
    for (name, rt) in runtimes() {
        let (count, sum, sent) = rt.block_on(async {
            let (tx, rx) = chan::bounded::<u64>(16);
            let receivers: Vec<_> = (0..64)
                .map(|_| {
                    let rx = rx.clone();
                    spindle::spawn(async move {
                        let (mut n, mut sum) = (0u64, 0u64);
                        while let Ok(v) = rx.recv().await {
                            n += 1;
                            sum += v;
                        }
                        (n, sum)
                    })
                })
                .collect();
            // A thread among them, parking through the same list.
            let thread_rx = rx.clone();
            let thread = std::thread::spawn(move || {
                let (mut n, mut sum) = (0u64, 0u64);
                while let Ok(v) = thread_rx.recv_blocking() {
                    n += 1;
                    sum += v;
                }
                (n, sum)
            });
            drop(rx);
            let bursts = scale(300) as u64;
            let mut next = 1u64;
            for b in 0..bursts {
                for _ in 0..=(b % 24) {
                    tx.send(next).await.unwrap();
                    next += 1;
                }
                spindle::time::sleep(std::time::Duration::from_micros(50)).await;
            }
            drop(tx);
            let (mut count, mut sum) = thread.join().unwrap();
            for r in receivers {
                let (n, s) = r.await.unwrap();
                count += n;
                sum += s;
            }
            (count, sum, next - 1)
        });
        assert_eq!(count, sent, "{name}");
        assert_eq!(sum, sent * (sent + 1) / 2, "{name}");
    }
}

/// Rendezvous receivers on tasks, one after another, reuse the taker the
/// last one left (`zero/mod.rs`: "Kept wakers"): a sender that finds a receiver
/// parked hands it the value and wakes it in place; a taker reused by
/// another task wakes that task, not the finished one whose waker it kept,
/// and a thread receiver reusing it (a foreign waker) is woken too. Every
/// value arrives once, in order.
#[test]
fn rendezvous_receivers_reuse_one_taker_and_each_is_woken() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (tx, rx) = chan::rendezvous::<u32>();
            let per = scale(20) as u32;
            let total = 5 * per;
            let sender = spindle::spawn(async move {
                for i in 0..total {
                    // Most times the receiver parks its taker first.
                    for _ in 0..3 {
                        spindle::yield_now().await;
                    }
                    tx.send(i).await.unwrap();
                }
            });
            let mut got = Vec::new();
            for r in 0..4u32 {
                if r == 2 {
                    // A plain thread in the middle: its waker is not a task's.
                    let thread_rx = rx.clone();
                    let v = spindle::spawn_blocking(move || {
                        (0..per)
                            .map(|_| thread_rx.recv_blocking().unwrap())
                            .collect::<Vec<_>>()
                    })
                    .await
                    .unwrap();
                    got.extend(v);
                }
                let task_rx = rx.clone();
                let receiver = async move {
                    let mut v = Vec::new();
                    for _ in 0..per {
                        v.push(task_rx.recv().await.unwrap());
                    }
                    v
                };
                // A receive woken through the wrong task's waker would hang:
                // fail instead.
                let v = spindle::time::timeout(Duration::from_secs(60), spindle::spawn(receiver))
                    .await
                    .unwrap_or_else(|_| panic!("{name}: receiver {r} never woken"))
                    .unwrap();
                got.extend(v);
            }
            sender.await.unwrap();
            assert_eq!(got, (0..total).collect::<Vec<_>>(), "{name}");
        });
    }
}

/// Rendezvous senders on tasks, one after another, reuse the offer slot
/// the last one left (`zero/mod.rs`: "Taken without the lock", "Kept wakers"):
/// each send completes only once its value is taken (no offer is left
/// queued behind it), a slot reused by another task wakes that task, not
/// the finished one whose waker it kept, and a thread sender reusing the
/// slot (a foreign waker) is woken too.
#[test]
fn rendezvous_senders_reuse_one_slot_and_each_is_woken() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (tx, rx) = chan::rendezvous::<u32>();
            let per = scale(20) as u32;
            let receiver = spindle::spawn(async move {
                let mut got = Vec::new();
                while let Ok(v) = rx.recv().await {
                    got.push(v);
                }
                got
            });
            for s in 0..4u32 {
                let task_tx = tx.clone();
                let sender = async move {
                    for i in 0..per {
                        task_tx.send(s * 1000 + i).await.unwrap();
                        assert_eq!(task_tx.len(), 0, "a send completed before its take");
                    }
                };
                if s == 2 {
                    // A plain thread in the middle: its waker is not a task's.
                    let thread_tx = tx.clone();
                    spindle::spawn_blocking(move || {
                        for i in 0..per {
                            thread_tx.send_blocking(9000 + i).unwrap();
                        }
                    })
                    .await
                    .unwrap();
                }
                // A send woken through the wrong task's waker would hang:
                // fail instead.
                spindle::time::timeout(Duration::from_secs(60), spindle::spawn(sender))
                    .await
                    .unwrap_or_else(|_| panic!("{name}: sender {s} never woken"))
                    .unwrap();
            }
            drop(tx);
            let got = receiver.await.unwrap();
            let mut want: Vec<u32> = (0..4u32)
                .flat_map(|s| (0..per).map(move |i| s * 1000 + i))
                .chain((0..per).map(|i| 9000 + i))
                .collect();
            want.sort_unstable();
            let mut sorted = got.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, want, "{name}");
        });
    }
}

/// A thread that sends 7 on `tx` 50 ms from now, giving `tx` back (the
/// channel open) when joined.
fn send_seven_later(tx: chan::Sender<u32>) -> std::thread::JoinHandle<chan::Sender<u32>> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        tx.send_blocking(7).unwrap();
        tx
    })
}

/// A `select!` arm that polls other futures with contexts of its own must
/// poll them for real in its first pass: a `JoinHandle` runs a task it
/// just spawned inline, and that task's receive must join the channel's
/// wait list. (With a thread-local probe flag, the inlined receive would
/// register nowhere and the task would sleep for good.)
#[test]
fn a_task_run_inline_by_a_select_arm_waits_for_real() {
    for (name, rt) in runtimes() {
        let (tx, rx) = chan::bounded::<u32>(1);
        let sender = send_seven_later(tx);
        let got = rt.block_on(async move {
            let (_keep, never) = chan::bounded::<u32>(1);
            let child = spindle::spawn(async move { rx.recv().await });
            spindle::time::timeout(Duration::from_secs(10), async {
                spindle::select! {
                    r = child => r.unwrap(),
                    _ = never.recv() => unreachable!(),
                }
            })
            .await
        });
        drop(sender.join().unwrap());
        assert_eq!(got, Ok(Ok(7)), "{name}: the inlined receive never woke");
    }
}

/// The same through a large `race` (over 32 futures, each polled with a
/// waker of its own and polled again only when that waker fires).
#[test]
fn a_large_race_inside_a_select_arm_waits_for_real() {
    for (name, rt) in runtimes() {
        let (tx, rx) = chan::bounded::<u32>(1);
        let sender = send_seven_later(tx);
        let got = rt.block_on(async {
            let (_keep, never) = chan::bounded::<u32>(1);
            let group = spindle::race((0..33).map(|_| rx.recv()));
            spindle::time::timeout(Duration::from_secs(10), async {
                spindle::select! {
                    r = group => r.unwrap().1,
                    _ = never.recv() => unreachable!(),
                }
            })
            .await
        });
        drop(sender.join().unwrap());
        assert_eq!(got, Ok(Ok(7)), "{name}: no receive of the race registered");
    }
}

/// The async timed calls take `Duration::MAX` as no limit (adding it to
/// `Instant::now()` would panic).
#[test]
fn async_timeouts_of_duration_max_wait_without_limit() {
    for (name, rt) in runtimes() {
        let got = rt.block_on(async {
            let (tx, rx) = chan::bounded::<u32>(1);
            tx.send_timeout(1, Duration::MAX).await.unwrap();
            let first = rx.recv_timeout(Duration::MAX).await;
            let late = spindle::spawn(async move {
                spindle::time::sleep(Duration::from_millis(20)).await;
                tx.send(2).await.unwrap();
            });
            let second = rx.recv_timeout(Duration::MAX).await;
            late.await.unwrap();
            (first, second)
        });
        assert_eq!(got, (Ok(1), Ok(2)), "{name}");
    }
}
