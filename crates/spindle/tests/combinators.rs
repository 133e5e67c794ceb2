//! `join_all`, `race` and `when_n`, on every scheduler flavour: outputs in
//! order, losers dropped (cancelled, over abort-on-drop handles), and a
//! future yielding inside a large `join_all` letting other tasks run.

mod common;

use common::{DropCounter, Gate};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

rt_test! {
    fn join_all_race_when_n() {
        let hs: Vec<_> = (0..50u32).map(|i| spindle::spawn(async move { i * 2 })).collect();
        let outs: Vec<u32> = spindle::join_all(hs).await.into_iter().map(Result::unwrap).collect();
        assert_eq!(outs, (0..50).map(|i| i * 2).collect::<Vec<_>>());

        let drops = DropCounter::new();
        let t = drops.track();
        let slow: std::pin::Pin<Box<dyn std::future::Future<Output = u32> + Send>> = Box::pin(async move {
            let _t = t;
            Gate::new().wait().await;
            0
        });
        let fast: std::pin::Pin<Box<dyn std::future::Future<Output = u32> + Send>> = Box::pin(async { 9 });
        assert_eq!(spindle::race(vec![slow, fast]).await, Some((1, 9)));
        assert_eq!(drops.drops(), 1, "the loser was dropped");

        let futs: Vec<_> = (0..10u32).map(|i| Box::pin(async move { i })).collect();
        let firsts = spindle::when_n(3, futs).await;
        assert_eq!(firsts.len(), 3);
        assert!(spindle::race(Vec::<std::future::Ready<u8>>::new()).await.is_none());
    }
}

rt_test! {
    fn race_over_abort_on_drop_handles_cancels_losing_tasks() {
        let drops = DropCounter::new();
        let t = drops.track();
        let loser = spindle::spawn(async move {
            let _t = t;
            Gate::new().wait().await;
            1
        })
        .abort_on_drop();
        let winner = spindle::spawn(async { 2 }).abort_on_drop();
        let (i, v) = spindle::race(vec![loser, winner]).await.unwrap();
        assert_eq!((i, v.unwrap()), (1, 2));
        common::until(|| drops.drops() == 1).await;
        assert_eq!(drops.drops(), 1);
    }
}

/// A task yielding inside a `join_all` of over 32 futures (each polled with
/// its own waker) gives the other tasks of its worker their turn: each
/// future is polled once per poll of the group. (Were a future that wakes
/// itself polled again at once, this test would hang on the current-thread
/// and one-worker flavours.)
#[test]
fn yielding_inside_a_large_join_all_lets_other_tasks_run() {
    for (name, rt) in common::flavours() {
        let (done, finished) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            rt.block_on(async {
                let flag = Arc::new(AtomicBool::new(false));
                let f = flag.clone();
                drop(spindle::spawn(async move { f.store(true, SeqCst) }));
                spindle::join_all((0..33).map(|_| {
                    let flag = flag.clone();
                    async move {
                        while !flag.load(SeqCst) {
                            spindle::yield_now().await;
                        }
                    }
                }))
                .await;
            });
            let _ = done.send(());
        });
        finished
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{name}: the group never let the flag's task run"));
        t.join().unwrap();
    }
}
