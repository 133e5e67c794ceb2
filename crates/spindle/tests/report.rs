//! The report hook: spindle's own messages (a stall, a slow poll) reach a
//! program's hook instead of stderr, and a panicking hook harms nobody.
//!
//! One test: the hook is process-wide.

use spindle::report::{self, Kind, Level};
use spindle::time::{self, Duration};
use std::sync::{Arc, Mutex};

type Seen = Arc<Mutex<Vec<(Kind, Level, String)>>>;

fn collect() -> Seen {
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    report::set_hook(move |r| {
        sink.lock()
            .unwrap()
            .push((r.kind, r.level, r.message.to_string()));
    });
    seen
}

fn wait_for(seen: &Seen, kind: Kind) -> (Level, String) {
    for _ in 0..1000 {
        if let Some((_, level, text)) = seen.lock().unwrap().iter().find(|r| r.0 == kind) {
            return (*level, text.clone());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no {kind:?} report; got {:?}", seen.lock().unwrap());
}

#[test]
fn reports_go_through_the_hook() {
    let seen = collect();

    // A stall, reported by the default `on_stall`.
    let rt = spindle::Builder::new_multi_thread()
        .workers(2)
        .stall_detection(Some(Duration::from_millis(100)))
        .build()
        .unwrap();
    let (tx, rx) = spindle::chan::oneshot::<()>();
    drop(rt.spawn(async move {
        let _ = rx.await;
    }));
    let (level, text) = wait_for(&seen, Kind::Stall);
    assert_eq!(level, Level::Warn);
    assert!(text.contains("possible deadlock"), "{text}");
    drop(tx);
    drop(rt);

    // A slow poll: a debug report, which the default hook would drop.
    let rt = spindle::Builder::new_multi_thread()
        .workers(1)
        .handoff_after(None)
        .slow_poll_threshold(Some(Duration::from_millis(1)))
        .build()
        .unwrap();
    rt.block_on(async {
        // Let the monitor calibrate the poll clock first.
        time::sleep(Duration::from_millis(50)).await;
        spindle::spawn(async { std::thread::sleep(Duration::from_millis(3)) })
            .await
            .unwrap();
    });
    let (level, text) = wait_for(&seen, Kind::SlowPoll);
    assert_eq!(level, Level::Debug);
    assert!(text.contains("polled task"), "{text}");

    // A hook that panics loses its report, nothing else.
    report::set_hook(|_| panic!("a broken hook"));
    report::warn(Kind::Stall, format_args!("into the broken hook"));
    report::reset_hook();
    report::emit(
        Kind::SlowPoll,
        Level::Debug,
        format_args!("dropped by the default hook"),
    );
}
