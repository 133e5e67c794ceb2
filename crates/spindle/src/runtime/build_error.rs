//! [`BuildError`]: why `Builder::build` refused, each variant naming the
//! setting that was wrong.

use std::fmt;

/// Why a runtime could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// `workers(0)`, or `SPINDLE_WORKERS` not a positive integer.
    InvalidWorkers(String),
    /// An environment setting (`SPINDLE_SLOW_POLL_US`, `SPINDLE_TRACK_SPAWNS`)
    /// that does not parse.
    InvalidEnv(String),
    /// `coop_budget(0)`: a task could then complete no operation at all.
    InvalidBudget(String),
    /// The OS refused a worker thread.
    Spawn(std::io::Error),
    /// The I/O driver (epoll) could not be created.
    Driver(std::io::Error),
    /// `start_paused(true)` on a multi-thread runtime: only a current-thread
    /// runtime's clock can be paused.
    PausedMultiThread,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::InvalidWorkers(why) => write!(f, "invalid worker count: {why}"),
            BuildError::InvalidEnv(why) => write!(f, "invalid environment setting: {why}"),
            BuildError::InvalidBudget(why) => write!(f, "invalid cooperative budget: {why}"),
            BuildError::Spawn(e) => write!(f, "could not start a worker thread: {e}"),
            BuildError::Driver(e) => write!(f, "could not create the I/O driver: {e}"),
            BuildError::PausedMultiThread => f.write_str(
                "start_paused(true) needs a current-thread runtime \
                 (Builder::new_current_thread): a multi-thread runtime's clock cannot be paused",
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Spawn(e) | BuildError::Driver(e) => Some(e),
            BuildError::InvalidWorkers(_)
            | BuildError::InvalidEnv(_)
            | BuildError::InvalidBudget(_)
            | BuildError::PausedMultiThread => None,
        }
    }
}
