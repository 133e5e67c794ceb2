//! Runtime metrics: polls and spawns counted, and spawn tracking's count of
//! registered tasks (every task from its spawn on, none once finished).

mod common;

use common::Gate;

rt_test! {
    fn metrics_count_polls_and_spawns() {
        let handle = spindle::Handle::current();
        let before = handle.metrics();
        let hs: Vec<_> = (0..100).map(|_| spindle::spawn(async {})).collect();
        for h in hs {
            h.await.unwrap();
        }
        let after = handle.metrics();
        assert!(after.total(|w| w.polls) >= before.total(|w| w.polls) + 100);
        assert!(after.total(|w| w.spawns) + after.remote_schedules >= before.total(|w| w.spawns) + 100);
    }
}

#[test]
fn spawn_tracking_registers_tasks_at_spawn_and_lets_go_when_they_finish() {
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .track_spawns(true)
        .build()
        .unwrap();
    let gate = Gate::new();
    let n = common::scaled(200) as u64;
    let (g, h) = (gate.clone(), rt.handle().clone());
    let total = rt.block_on(async move {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let g = g.clone();
                h.spawn(async move {
                    g.wait().await; // idle once, then finish
                    i
                })
            })
            .collect();
        // Every task is registered from its spawn on, waiting or not.
        assert_eq!(
            spindle::Handle::current().metrics().registered_tasks,
            n as usize
        );
        g.open();
        let mut total = 0;
        for h in handles {
            total += h.await.unwrap();
        }
        total
    });
    assert_eq!(total, n * (n - 1) / 2);
    assert_eq!(rt.metrics().registered_tasks, 0);
    drop(gate);
}
