//! Cancelling tasks, on every scheduler flavour through `rt_test!`: abort
//! of an idle task, of a running one (at its next suspension) and after
//! completion (the output stays), abort on drop, a cancelled future
//! dropped where it was pinned, and cancellation tokens.

mod common;

use common::{DropCounter, Gate};
use spindle::{CancellationToken, JoinError};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

rt_test! {
    fn abort_an_idle_task_drops_its_future() {
        let drops = DropCounter::new();
        let t = drops.track();
        let gate = Gate::new();
        let h = spindle::spawn({
            let gate = gate.clone();
            async move {
                let _t = t;
                gate.wait().await;
                unreachable!("aborted task resumed");
            }
        });
        spindle::yield_now().await; // let it park
        h.abort();
        h.abort(); // idempotent
        let err: JoinError = h.await.unwrap_err();
        assert!(err.is_cancelled(), "{err:?}");
        assert_eq!(drops.drops(), 1);
    }
}

rt_test! {
    fn an_aborted_or_cancelled_future_is_dropped_where_it_was_pinned() {
        let moved = Arc::new(AtomicUsize::new(0));
        // Aborted while idle.
        let probe = common::PinProbe::new(&moved);
        let h = spindle::spawn(probe);
        spindle::yield_now().await; // polled once: pending, pinned
        h.abort();
        assert!(h.await.unwrap_err().is_cancelled());
        // Aborted while running: cancelled at its next suspension, inside
        // the probe.
        let (tx, rx) = std::sync::mpsc::channel::<spindle::AbortHandle>();
        let probe = common::PinProbe::new(&moved);
        let h = spindle::spawn(async move {
            rx.recv().unwrap().abort();
            probe.await;
        });
        tx.send(h.abort_handle()).unwrap();
        assert!(h.await.unwrap_err().is_cancelled());
        // Cancelled with its scope.
        let probe = common::PinProbe::new(&moved);
        let r = spindle::scope(|s| async move {
            drop(s.spawn(probe));
            spindle::yield_now().await;
            s.cancel();
        })
        .await;
        drop(r);
        assert_eq!(moved.load(SeqCst), 0, "a pinned future was moved to be dropped");
    }
}

rt_test! {
    fn abort_while_running_cancels_at_the_next_suspension() {
        let reached = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = std::sync::mpsc::channel::<spindle::AbortHandle>();
        let r = reached.clone();
        let h = spindle::spawn(async move {
            let me = rx.recv().unwrap();
            me.abort(); // abort ourselves while running
            r.fetch_add(1, SeqCst);
            spindle::yield_now().await; // cancelled here
            r.fetch_add(1, SeqCst);
        });
        tx.send(h.abort_handle()).unwrap();
        assert!(h.await.unwrap_err().is_cancelled());
        assert_eq!(reached.load(SeqCst), 1);
    }
}

rt_test! {
    fn abort_after_completion_keeps_the_output() {
        let h = spindle::spawn(async { 3 });
        while !h.is_finished() {
            spindle::yield_now().await;
        }
        h.abort();
        assert_eq!(h.await.unwrap(), 3);
    }
}

rt_test! {
    fn abort_on_drop_cancels() {
        let drops = DropCounter::new();
        let t = drops.track();
        let gate = Gate::new();
        let g = gate.clone();
        let h = spindle::spawn(async move {
            let _t = t;
            g.wait().await;
        })
        .abort_on_drop();
        spindle::yield_now().await;
        drop(h);
        common::until(|| drops.drops() == 1).await;
        assert_eq!(drops.drops(), 1);
    }
}

rt_test! {
    fn cancellation_tokens() {
        let root = CancellationToken::new();
        let child = root.child_token();
        let grandchild = child.child_token();
        let waiters: Vec<_> = (0..10)
            .map(|_| {
                let g = grandchild.clone();
                spindle::spawn(async move { g.cancelled().await })
            })
            .collect();
        let c2 = child.clone();
        let r = spindle::spawn(async move { c2.run_until_cancelled(Gate::new().wait()).await });
        spindle::yield_now().await;
        assert!(!grandchild.is_cancelled());
        root.cancel();
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(r.await.unwrap(), None);
        assert!(root.child_token().is_cancelled(), "a child of a cancelled token is born cancelled");
        let independent = CancellationToken::new();
        let c = independent.child_token();
        c.cancel();
        assert!(!independent.is_cancelled(), "children don't cancel parents");
    }
}
