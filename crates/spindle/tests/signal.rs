//! Unix signals as streams: arrivals seen by every listener, the default
//! action gone, and the signals that cannot be listened for refused by name.
//!
//! Each test uses signals of its own: a signal reaches the whole process.

mod common;

use futures_util::StreamExt;
use spindle::signal::unix::{signal, SignalKind};
use std::io::ErrorKind;

fn raise(kind: SignalKind) {
    signal_hook::low_level::raise(kind.as_raw_value()).unwrap();
}

rt_test! {
    fn every_listener_sees_each_arrival() {
        let mut a = signal(SignalKind::user_defined1()).unwrap();
        let mut b = signal(SignalKind::user_defined1()).unwrap();
        // A listener in another task, made before the signal; it says when
        // it saw the first arrival, so the second cannot collapse into it.
        let mut c = signal(SignalKind::user_defined1()).unwrap();
        let (seen_tx, seen_rx) = spindle::chan::oneshot::<()>();
        let task = spindle::spawn(async move {
            c.recv().await;
            seen_tx.send(()).unwrap();
            c.recv().await;
        });
        raise(SignalKind::user_defined1());
        a.recv().await;
        b.next().await.unwrap();
        seen_rx.await.unwrap();
        raise(SignalKind::user_defined1());
        a.recv().await;
        b.recv().await;
        task.await.unwrap();
    }
}

#[test]
fn sigterm_and_sighup_no_longer_end_the_process() {
    spindle::Runtime::new().unwrap().block_on(async {
        for kind in [SignalKind::terminate(), SignalKind::hangup()] {
            let mut s = signal(kind).unwrap();
            assert_eq!(s.kind(), kind);
            raise(kind);
            s.recv().await; // still alive: the program decides
        }
    });
}

#[test]
fn a_signal_that_cannot_be_caught_is_refused_by_name() {
    for (kind, name) in [
        (SignalKind::from_raw(libc::SIGKILL), "SIGKILL (9)"),
        (SignalKind::from_raw(libc::SIGSEGV), "SIGSEGV (11)"),
        (SignalKind::from_raw(4096), "signal 4096"),
        (SignalKind::from_raw(0), "signal 0"),
    ] {
        let e = signal(kind).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().contains(name), "{e}");
    }
}
