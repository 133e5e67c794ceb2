//! Running a test body under many schedules: [`explore`], and the seed of
//! `#[spindle::test(deterministic)]` ([`seed_from_env`]).
//!
//! Each run is on a fresh deterministic runtime
//! ([`Builder::new_deterministic`](crate::Builder::new_deterministic)):
//! one thread, paused time, and the next ready task picked at random from
//! the run's seed. An ordering bug that a plain run never meets (a
//! read-modify-write split by an `.await`, a task that assumes another
//! ran first) shows under some seed, and that seed replays the failing
//! run exactly: set `SPINDLE_SEED` to it and `explore` runs that seed
//! alone, or build `Builder::new_deterministic(seed)` by hand.
//!
//! ```
//! use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
//! use std::sync::Arc;
//!
//! /// An increment split by an await: a read, then a write of what it read
//! /// plus one. Two at once may overwrite each other.
//! async fn bump(n: Arc<AtomicU32>) {
//!     let seen = n.load(SeqCst);
//!     spindle::yield_now().await;
//!     n.store(seen + 1, SeqCst);
//! }
//!
//! let found = std::panic::catch_unwind(|| {
//!     spindle::test::explore(200, || async {
//!         let n = Arc::new(AtomicU32::new(0));
//!         let a = spindle::spawn(bump(n.clone()));
//!         let b = spindle::spawn(bump(n.clone()));
//!         a.await.unwrap();
//!         b.await.unwrap();
//!         assert_eq!(n.load(SeqCst), 2, "lost update");
//!     });
//! });
//! assert!(found.is_err(), "no schedule of 200 lost the update");
//! ```

use crate::Builder;
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// The environment variable that makes [`explore`] run one seed only.
pub const SEED_VAR: &str = "SPINDLE_SEED";

/// Runs `body()` to completion on a deterministic runtime once per seed,
/// `seeds` seeds in all (1, 2, …; or only `SPINDLE_SEED` when it is set).
/// The first run that panics stops the exploration: its seed is printed on
/// stderr with the line that replays it, and the panic goes on, with the
/// seed added to its message.
///
/// # Panics
/// When a run panics (above), when `SPINDLE_SEED` is not a number, or
/// when `seeds` is zero.
pub fn explore<F, Fut>(seeds: u64, body: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    assert!(seeds > 0, "spindle::test::explore needs at least one seed");
    let chosen: Box<dyn Iterator<Item = u64>> = match env_seed() {
        Some(seed) => Box::new(std::iter::once(seed)),
        None => Box::new(1..=seeds),
    };
    for seed in chosen {
        if let Err(panic) = run_seed(seed, &body) {
            crate::report::warn(
                crate::report::Kind::TestSeed,
                format_args!(
                    "spindle::test::explore: failed with seed {seed}; replay it with \
                     {SEED_VAR}={seed} (or Builder::new_deterministic({seed}))"
                ),
            );
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied());
            match why {
                Some(why) => panic!("seed {seed}: {why}"),
                None => resume_unwind(panic),
            }
        }
    }
}

/// The seed `SPINDLE_SEED` names, else `default`: the seed of
/// `#[spindle::test(deterministic)]`.
///
/// # Panics
/// When `SPINDLE_SEED` is set but not a whole number.
pub fn seed_from_env(default: u64) -> u64 {
    env_seed().unwrap_or(default)
}

fn env_seed() -> Option<u64> {
    let v = std::env::var(SEED_VAR).ok()?;
    Some(v.trim().parse::<u64>().unwrap_or_else(|_| {
        panic!("{SEED_VAR}={v:?} is not a seed: use a whole number, as explore prints it")
    }))
}

/// One run of `body` under `seed`; the panic, if it panicked.
fn run_seed<F, Fut>(seed: u64, body: &F) -> Result<(), Box<dyn std::any::Any + Send>>
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    let rt = Builder::new_deterministic(seed)
        .build()
        .unwrap_or_else(|e| panic!("spindle::test::explore: no runtime for seed {seed}: {e}"));
    catch_unwind(AssertUnwindSafe(|| rt.block_on(body())))
}
