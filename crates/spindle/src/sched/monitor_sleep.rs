//! `MonitorSleep`: the monitor's long sleep, and waking it early.
//!
//! While every worker sleeps the monitor (`monitor.rs`) lengthens its rounds
//! up to `MAX_ROUND` (10 ms): an idle runtime should cost nothing. But a
//! worker that wakes into a blocking call then waits up to a whole long
//! round before the monitor notices and hands its queue to a new thread,
//! with everything queued behind it (a heartbeat, say) stuck that long. So a
//! worker leaving its sleep wakes a dozing monitor (one in its long
//! sleep), as Go's `entersyscall` wakes a sysmon that sleeps.
//!
//! ```text
//! flag: AtomicBool   set:   the monitor sleeps a long round (it saw every
//!                           worker asleep after setting it)
//!                    clear: the monitor sleeps a short round or runs one,
//!                           or a worker took the flag to wake it
//! ```
//!
//! Protocol (Dekker, with SeqCst fences as in `idle.rs`, which loom checks
//! where it would not check SeqCst accesses alone): the monitor sets the
//! flag, fences, *then* reads whether every worker sleeps; a waking worker
//! is counted awake (an RMW in `Idle`, by itself or by its notifier, either
//! way before it returns from its park), fences, *then* reads the flag. The
//! two fences are ordered one way or the other: the monitor sees the worker
//! awake (and sleeps a short round), or the worker sees the flag (and wakes
//! it). Only one party takes a set flag (`swap`),
//! so a dozing monitor is woken at most once per long round. (A worker may
//! also take the flag in the moment before the monitor clears it for a
//! short round: one spurious early round, harmless.)

use crate::loom::{fence, AtomicBool, Ordering::*};

/// The flag of the monitor's long sleep (module docs).
#[derive(Default)]
pub(crate) struct MonitorSleep {
    flag: AtomicBool,
}

impl MonitorSleep {
    /// Monitor: may it sleep a long round? Sets the flag, then asks
    /// `all_asleep` (which reads the idle state); clears it again when some
    /// worker is awake.
    pub(crate) fn begin(&self, all_asleep: impl FnOnce() -> bool) -> bool {
        self.flag.store(true, Relaxed);
        fence(SeqCst);
        if all_asleep() {
            return true;
        }
        self.flag.store(false, Relaxed);
        false
    }

    /// Monitor, after a long round began with `begin() == true`: `true`
    /// when a worker woke it early (it took the flag).
    pub(crate) fn end(&self) -> bool {
        !self.flag.swap(false, Relaxed)
    }

    /// Worker, just counted awake: `true` when it took the flag and must
    /// unpark the monitor.
    pub(crate) fn wake(&self) -> bool {
        // Only after a park (the fence is no cost beside it); the cheap
        // load before the swap: the flag is rarely set.
        fence(SeqCst);
        self.flag.load(Relaxed) && self.flag.swap(false, Relaxed)
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::MonitorSleep;
    use crate::loom::{Arc, AtomicBool, Ordering::SeqCst};
    use crate::sched::idle::Idle;
    use loom::thread;

    /// A worker wakes while the monitor decides to sleep long: either the
    /// monitor sees it awake, or it sees the flag and wakes the monitor.
    #[test]
    fn a_waking_worker_never_leaves_the_monitor_dozing() {
        loom::model(|| {
            let idle = Arc::new(Idle::new(1));
            idle.worker_to_parked(0);
            let sleep = Arc::new(MonitorSleep::default());
            let unparked = Arc::new(AtomicBool::new(false));
            let worker = {
                let (idle, sleep, unparked) = (idle.clone(), sleep.clone(), unparked.clone());
                thread::spawn(move || {
                    idle.worker_from_parked(0);
                    if sleep.wake() {
                        unparked.store(true, SeqCst);
                    }
                })
            };
            let long = sleep.begin(|| idle.num_sleeping() == 1);
            worker.join().unwrap();
            if long {
                assert!(unparked.load(SeqCst), "worker awake, monitor left dozing");
                assert!(sleep.end(), "the wake took the flag");
            }
        });
    }
}
