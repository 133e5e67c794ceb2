//! A runtime's timers: one wheel per worker (a shard, behind its own mutex,
//! so that workers arming timers do not fight over one lock), a tick clock
//! and the hint that tells the driver when to wake.
//!
//! Protocol with the driver (`driver/mod.rs`):
//! - Only the holder of the driver lock fires timers (`process`).
//! - `next` is a lower bound on the earliest armed tick over all shards.
//!   `process` stores `u64::MAX` *before* scanning the shards and lowers it
//!   to what it finds after; an insert lowers it (`fetch_min`) *after*
//!   filing under the shard lock. Either the insert's `fetch_min` comes
//!   after the store (and survives it), or its shard unlock came before the
//!   scan's lock of that shard (and the scan sees the timer): the hint is
//!   never above the earliest armed timer once both are done. An insert
//!   first *loads* `next` and skips the `fetch_min` when the hint is
//!   already at or below its tick (most timers are not the earliest: one
//!   locked instruction fewer per sleep). The skip keeps the argument
//!   (both are SeqCst): if our load comes after the store of `u64::MAX` in
//!   the SeqCst order, it reads that value or a later one, at or below our
//!   tick only if some insert or scan lowered it since; if it comes
//!   before, the scan's lock of our shard cannot have come before our
//!   lock (the store would then happen before our load), so the scan sees
//!   the timer.
//! - An insert that lowers `next` notifies the driver (sticky: a notify
//!   before the driver blocks makes that block return at once). The parked
//!   driver computed its timeout from `next`, so a timer earlier than that
//!   timeout always lowers `next` below it, or a concurrent insert already
//!   did and notified.
//!
//! Ticks are milliseconds since the runtime's epoch. A deadline rounds *up*
//! to a tick and the clock rounds *down*, so a timer never fires early.

use super::clock::Clock;
use super::wheel::{Key, Wheel};
use crate::loom::{lock, AtomicBool, AtomicU64, CachePadded, Mutex, Ordering::SeqCst};
use std::task::Waker;
use std::time::{Duration, Instant};

/// One tick of the wheel: how late a timer may fire from rounding alone.
pub(crate) const RESOLUTION: Duration = Duration::from_millis(1);
const TICK_NS: u128 = RESOLUTION.as_nanos();
/// Wakers woken per shard lock hold while firing.
const FIRE_BATCH: usize = 1024;

pub(crate) struct Timers {
    /// The time every deadline is compared with (virtual while paused).
    pub(crate) clock: Clock,
    epoch: Instant,
    shards: Box<[CachePadded<Mutex<Wheel>>]>,
    next: AtomicU64,
    shut_down: AtomicBool,
    /// The wakers `process` takes out of a shard, kept between calls so
    /// that firing does not grow a new vector each turn (only the driver
    /// lock's holder uses it: the mutex is never contended).
    due: Mutex<Vec<Waker>>,
}

/// Where an armed timer lives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    shard: u32,
    key: Key,
}

/// What `Timers::arm` did.
pub(crate) enum Armed {
    /// The deadline has passed: the timer is due now.
    Due,
    /// Filed; `notify` says the driver must be told (a new earliest timer).
    Filed { slot: Slot, notify: bool },
    /// The runtime shut down: the timer will never fire.
    ShutDown,
}

impl Timers {
    pub(crate) fn new(shards: usize, clock: Clock) -> Timers {
        Timers {
            epoch: clock.now(),
            clock,
            shards: (0..shards.max(1))
                .map(|_| CachePadded(Mutex::new(Wheel::new())))
                .collect(),
            next: AtomicU64::new(u64::MAX),
            shut_down: AtomicBool::new(false),
            due: Mutex::new(Vec::new()),
        }
    }

    /// The tick a deadline rounds up to.
    fn deadline_tick(&self, deadline: Instant) -> u64 {
        let ns = deadline.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(ns.div_ceil(TICK_NS)).unwrap_or(u64::MAX)
    }

    /// The last tick that has fully begun.
    fn now_tick(&self, now: Instant) -> u64 {
        let ns = now.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(ns / TICK_NS).unwrap_or(u64::MAX)
    }

    fn tick_instant(&self, tick: u64) -> Option<Instant> {
        self.epoch.checked_add(Duration::from_millis(tick))
    }

    /// Arms a timer for `deadline` on shard `hint` (any number: it wraps).
    pub(crate) fn arm(&self, hint: usize, deadline: Instant, waker: &Waker) -> Armed {
        if self.shut_down.load(SeqCst) {
            return Armed::ShutDown;
        }
        let when = self.deadline_tick(deadline);
        let shard = hint % self.shards.len();
        let key = {
            let mut wheel = lock(&self.shards[shard]);
            // Again under the shard's lock: `shut_down` sets the flag, then
            // takes each shard's wakers under its lock, so a waker filed
            // after that take would be kept for good (with the task it
            // holds).
            if self.shut_down.load(SeqCst) {
                return Armed::ShutDown;
            }
            match wheel.insert(when, waker.clone()) {
                Ok(key) => key,
                Err(_) => return Armed::Due,
            }
        };
        // SeqCst load: see the module docs (a skip must not miss the
        // driver's reset of the hint).
        let notify = when < self.next.load(SeqCst) && when < self.next.fetch_min(when, SeqCst);
        Armed::Filed {
            slot: Slot {
                shard: shard as u32,
                key,
            },
            notify,
        }
    }

    /// Whether the timer has fired, freeing it if so (one lock for both);
    /// if not, `waker` is the one it will wake (none after shutdown, which
    /// dropped the wakers: as in `arm`).
    pub(crate) fn poll(&self, slot: Slot, waker: &Waker) -> bool {
        let mut wheel = lock(&self.shards[slot.shard as usize]);
        if self.shut_down.load(SeqCst) {
            return false;
        }
        wheel.poll(slot.key, waker)
    }

    /// Frees the timer (fired or not).
    pub(crate) fn remove(&self, slot: Slot) {
        lock(&self.shards[slot.shard as usize]).remove(slot.key);
    }

    /// Whether a timer may be due now (cheap: one load and a clock read).
    pub(crate) fn maybe_due(&self) -> bool {
        let next = self.next.load(SeqCst);
        next != u64::MAX && next <= self.now_tick(self.clock.now())
    }

    /// How long the driver may block before the next timer is due;
    /// `None` (until notified) while the clock is paused, since a paused
    /// clock does not reach a deadline by waiting.
    pub(crate) fn until_next(&self) -> Option<Duration> {
        if self.clock.is_paused() {
            return None;
        }
        match self.next.load(SeqCst) {
            u64::MAX => None,
            tick => Some(self.tick_instant(tick).map_or(Duration::MAX, |t| {
                t.saturating_duration_since(self.clock.now())
            })),
        }
    }

    /// When the earliest armed timer is due (a lower bound), if any.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        match self.next.load(SeqCst) {
            u64::MAX => None,
            tick => self.tick_instant(tick),
        }
    }

    /// Fires every due timer, waking its task; returns how many fired.
    /// Called only by the holder of the driver lock.
    pub(crate) fn process(&self) -> usize {
        let now = self.now_tick(self.clock.now());
        self.next.store(u64::MAX, SeqCst);
        let mut fired = 0;
        let mut wakers = lock(&self.due);
        for shard in self.shards.iter() {
            loop {
                let (more, next) = {
                    let mut wheel = lock(shard);
                    let more = wheel.advance(now, &mut wakers, FIRE_BATCH);
                    (more, wheel.next_expiration())
                };
                fired += wakers.len();
                // Woken outside the lock: a wake may schedule, and a task
                // polled inline may arm a timer on this very shard. A
                // foreign waker's panic stays here: the batch's other
                // timers are already marked fired, and `next` must still
                // be set from every shard.
                crate::task::wake_all(&mut wakers);
                if !more {
                    if let Some(next) = next {
                        self.next.fetch_min(next, SeqCst);
                    }
                    break;
                }
            }
        }
        fired
    }

    /// Timers armed and not yet fired, over all shards.
    pub(crate) fn armed(&self) -> usize {
        self.shards.iter().map(|s| lock(s).armed()).sum()
    }

    /// Runtime shutdown: no timer fires any more; their wakers are dropped
    /// (the tasks holding them are being cancelled).
    pub(crate) fn shut_down(&self) {
        self.shut_down.store(true, SeqCst);
        for shard in self.shards.iter() {
            let wakers = lock(shard).take_wakers();
            drop(wakers);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::task::Wake;

    struct Nothing;
    impl Wake for Nothing {
        fn wake(self: Arc<Self>) {}
    }

    /// Shutdown drops every waker, and a timer polled after it files none
    /// again (the waker would hold its task for good).
    #[test]
    fn after_shutdown_no_timer_keeps_a_waker() {
        let timers = Timers::new(2, Clock::new(false, false));
        let inner = Arc::new(Nothing);
        let waker = Waker::from(inner.clone());
        let far = Instant::now() + Duration::from_secs(3600);
        let Armed::Filed { slot, .. } = timers.arm(0, far, &waker) else {
            panic!("a far timer is filed");
        };
        assert_eq!(
            Arc::strong_count(&inner),
            3,
            "ours, the waker's, the wheel's"
        );
        timers.shut_down();
        assert_eq!(Arc::strong_count(&inner), 2);
        assert!(!timers.poll(slot, &waker));
        assert!(matches!(timers.arm(1, far, &waker), Armed::ShutDown));
        assert_eq!(Arc::strong_count(&inner), 2, "a waker filed after shutdown");
    }

    /// A foreign waker that panics when its timer fires: the other timers
    /// of the batch are still woken, and the next deadline (another shard's
    /// far timer) is still known afterwards.
    #[test]
    fn a_panicking_waker_does_not_stop_the_timers() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        struct Boom;
        impl Wake for Boom {
            fn wake(self: Arc<Self>) {
                panic!("a foreign waker panicked");
            }
        }
        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, SeqCst);
            }
        }
        let timers = Timers::new(2, Clock::new(false, false));
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let soon = Instant::now() + Duration::from_millis(1);
        let far = Instant::now() + Duration::from_secs(3600);
        let boom = Waker::from(Arc::new(Boom));
        let counted = Waker::from(count.clone());
        assert!(matches!(timers.arm(0, soon, &boom), Armed::Filed { .. }));
        assert!(matches!(timers.arm(0, soon, &counted), Armed::Filed { .. }));
        assert!(matches!(timers.arm(1, far, &counted), Armed::Filed { .. }));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(timers.process(), 2);
        assert_eq!(count.0.load(SeqCst), 1, "the other due timer was woken");
        assert!(
            timers.until_next().is_some(),
            "the far timer is still known"
        );
    }
}
