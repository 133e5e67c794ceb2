//! [`SpindleTimer`]: hyper's `Timer`, on spindle's timer wheels.
//!
//! Invariants:
//! - Every sleep handed to hyper is a [`SpindleSleep`], a
//!   `spindle::time::Sleep` inside: one millisecond resolution, never
//!   early (spindle's `time` module).
//! - `reset` moves the deadline of a `SpindleSleep` in place (no new
//!   allocation, the old wheel entry freed on the next poll's re-arm); a
//!   sleep from another timer is replaced by a new one.
//! - `now` is spindle's clock, so hyper's deadlines follow paused time in
//!   tests (`spindle::time::pause`) as the sleeps do.
//! - A sleep first polled outside a spindle runtime panics, saying so,
//!   unless its deadline has passed (spindle's `Sleep`); hyper polls its
//!   sleeps inside the connection futures, which spindle tasks poll.

use hyper::rt::{Sleep, Timer};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// hyper's timer on spindle: header-read timeouts, keep-alive pings and
/// the other timeouts hyper's builders take `.timer(SpindleTimer::new())`
/// for.
#[derive(Clone, Copy, Debug, Default)]
pub struct SpindleTimer;

impl SpindleTimer {
    /// The timer (it holds nothing: the runtime polling a sleep is the one
    /// whose wheel keeps it).
    pub fn new() -> SpindleTimer {
        SpindleTimer
    }
}

impl Timer for SpindleTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        Box::pin(SpindleSleep(spindle::time::sleep(duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(SpindleSleep(spindle::time::sleep_until(deadline.into())))
    }

    fn now(&self) -> Instant {
        spindle::time::now().into_std()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<SpindleSleep>() {
            Some(ours) => ours.get_mut().0.reset(new_deadline.into()),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// The sleep [`SpindleTimer`] gives hyper: a `spindle::time::Sleep`.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct SpindleSleep(spindle::time::Sleep);

impl SpindleSleep {
    /// When this sleep completes (`None`: never).
    pub fn deadline(&self) -> Option<Instant> {
        self.0.deadline().map(spindle::time::Instant::into_std)
    }
}

impl Future for SpindleSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // spindle's `Sleep` is `Unpin`.
        Pin::new(&mut self.get_mut().0).poll(cx)
    }
}

impl Sleep for SpindleSleep {}

#[cfg(test)]
mod tests {
    use super::{SpindleSleep, SpindleTimer};
    use hyper::rt::{Sleep, Timer};
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::{Duration, Instant};

    /// A sleep that is not ours: ready at once.
    struct Foreign;

    impl Future for Foreign {
        type Output = ();
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            Poll::Ready(())
        }
    }

    impl Sleep for Foreign {}

    fn deadline_of(sleep: &mut Pin<Box<dyn Sleep>>) -> Option<Instant> {
        let ours = sleep.as_mut().downcast_mut_pin::<SpindleSleep>();
        ours.expect("a SpindleSleep").deadline()
    }

    #[test]
    fn reset_moves_our_sleep_in_place_and_replaces_a_foreign_one() {
        let timer = SpindleTimer::new();
        let later = Instant::now() + Duration::from_secs(60);
        let mut sleep = timer.sleep(Duration::from_secs(3600));
        let before: *const () = (&*sleep as *const dyn Sleep).cast();
        timer.reset(&mut sleep, later);
        let after: *const () = (&*sleep as *const dyn Sleep).cast();
        assert_eq!(before, after, "the same allocation, reset in place");
        assert_eq!(deadline_of(&mut sleep), Some(later));

        let mut foreign: Pin<Box<dyn Sleep>> = Box::pin(Foreign);
        timer.reset(&mut foreign, later);
        assert_eq!(deadline_of(&mut foreign), Some(later));
    }

    #[test]
    fn sleeps_fire_on_the_runtime_and_now_follows_paused_time() {
        let rt = spindle::Builder::new_current_thread()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async {
            let timer = SpindleTimer::new();
            let start = timer.now();
            let mut sleep = timer.sleep(Duration::from_secs(10));
            // Reset earlier while armed: it fires at the new deadline.
            std::future::poll_fn(|cx| {
                assert!(sleep.as_mut().poll(cx).is_pending());
                Poll::Ready(())
            })
            .await;
            timer.reset(&mut sleep, start + Duration::from_secs(2));
            sleep.await;
            // Paused time auto-advanced to the deadline, not past it.
            assert_eq!(timer.now() - start, Duration::from_secs(2));
            timer.sleep_until(start + Duration::from_secs(5)).await;
            assert_eq!(timer.now() - start, Duration::from_secs(5));
        });
    }
}
