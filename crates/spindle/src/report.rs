//! What spindle and spindle-actor report on their own (a possible deadlock,
//! an actor restarted, a telemetry server that cannot accept), through one
//! hook a program can replace.
//!
//! - Every such message goes through [`emit`]; no library module writes to
//!   stderr itself.
//! - The default hook writes [`Level::Warn`] reports to stderr, one line
//!   (or block) each, and drops [`Level::Debug`] ones (a slow poll, a
//!   worker's queue handed off), which are frequent and only counted in
//!   [`RuntimeMetrics`](crate::RuntimeMetrics) unless asked for. With the
//!   `tracing` feature it sends every report to `tracing` instead, as an
//!   event with target `spindle` at the report's level and its kind as the
//!   field `kind`.
//! - [`set_hook`] replaces the hook for the whole process (a service routes
//!   reports to its own log, a test collects them); the hook runs on the
//!   thread that reports, so it must not block for long. A hook that
//!   panics is caught: the report is lost, the reporter carries on.

use std::fmt;
use std::sync::{Arc, RwLock};

/// How much a report matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Routine and frequent: for tracing, not for a terminal.
    Debug,
    /// Something a person should see.
    Warn,
}

/// What a report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// The stall detector's report of a possible deadlock (its text is the
    /// [`StallReport`](crate::StallReport)).
    Stall,
    /// A poll longer than the runtime's slow-poll threshold.
    SlowPoll,
    /// A worker blocked past `handoff_after`; its queue went to another.
    Handoff,
    /// A runtime dump asked for with `SIGQUIT`.
    Dump,
    /// The process-wide signal listener stopped.
    Signal,
    /// `spindle::test::explore` names the seed that failed.
    TestSeed,
    /// A spindle-actor actor failed and was restarted, or stopped its graph.
    Restart,
    /// A spindle-actor telemetry server's accept failed or recovered.
    Telemetry,
    /// A transport between processes (spindle-actor-aeron) lost or missed
    /// messages, or lost its peer.
    Transport,
}

/// One report: what it is about, how much it matters, and its text.
pub struct Report<'a> {
    /// What it is about.
    pub kind: Kind,
    /// How much it matters.
    pub level: Level,
    /// Its text, as the default hook writes it.
    pub message: fmt::Arguments<'a>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Report")
            .field("kind", &self.kind)
            .field("level", &self.level)
            .field("message", &self.message.to_string())
            .finish()
    }
}

type Hook = Arc<dyn Fn(&Report<'_>) + Send + Sync>;

/// `None` while the default hook is in place.
static HOOK: RwLock<Option<Hook>> = RwLock::new(None);

/// Replaces the hook every report goes through, for the whole process.
///
/// ```
/// spindle::report::set_hook(|r| {
///     if r.level >= spindle::report::Level::Warn {
///         println!("[spindle {:?}] {}", r.kind, r.message);
///     }
/// });
/// # spindle::report::reset_hook();
/// ```
pub fn set_hook(hook: impl Fn(&Report<'_>) + Send + Sync + 'static) {
    *HOOK.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(hook));
}

/// Puts the default hook back.
pub fn reset_hook() {
    *HOOK.write().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Sends a report through the hook. For spindle's own crates (and
/// libraries built on spindle that want their reports routed alike).
pub fn emit(kind: Kind, level: Level, message: fmt::Arguments<'_>) {
    let report = Report {
        kind,
        level,
        message,
    };
    // Cloned out, so a hook may report or replace the hook itself.
    let hook = HOOK.read().unwrap_or_else(|e| e.into_inner()).clone();
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match hook {
        Some(hook) => hook(&report),
        None => default_hook(&report),
    }));
}

/// [`emit`] at [`Level::Warn`].
pub fn warn(kind: Kind, message: fmt::Arguments<'_>) {
    emit(kind, Level::Warn, message)
}

#[cfg(not(feature = "tracing"))]
fn default_hook(report: &Report<'_>) {
    if report.level >= Level::Warn {
        eprintln!("{}", report.message);
    }
}

#[cfg(feature = "tracing")]
fn default_hook(report: &Report<'_>) {
    let kind = report.kind;
    match report.level {
        Level::Debug => tracing::debug!(target: "spindle", ?kind, "{}", report.message),
        Level::Warn => tracing::warn!(target: "spindle", ?kind, "{}", report.message),
    }
}
