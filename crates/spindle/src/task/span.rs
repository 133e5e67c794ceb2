//! With the `tracing` feature, every spawned task runs inside a `tracing`
//! span of its own, `task`, with target `spindle` and the fields `task.id`
//! (a process-wide spawn count, from 1), `spawn.location` (the spawn
//! call's `file:line:column`, through `#[track_caller]`) and, for a task
//! spawned through `task::Builder::name`, `task.name`. The span is entered
//! for each poll, so events a task emits carry them. Without the feature,
//! `instrument` is the identity and costs nothing, and names are dropped.
//!
//! A name reaches `instrument` through `NextName`: it is set on the
//! spawning thread for the length of one spawn call, which creates the
//! span synchronously on that thread, and cleared after it (by the guard's
//! drop, so also when the spawn panics).

#[cfg(feature = "tracing")]
std::thread_local! {
    /// The name of the task the current spawn call creates, if any.
    static NEXT_NAME: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// While it lives, the task the current thread spawns gets `name`
/// (held as a guard, not a closure, so that `#[track_caller]` still sees
/// the user's spawn call).
pub(crate) struct NextName(());

impl NextName {
    pub(crate) fn set(name: Option<&str>) -> NextName {
        #[cfg(feature = "tracing")]
        NEXT_NAME.with(|n| n.set(name.map(str::to_string)));
        #[cfg(not(feature = "tracing"))]
        let _ = name;
        NextName(())
    }
}

impl Drop for NextName {
    fn drop(&mut self) {
        #[cfg(feature = "tracing")]
        NEXT_NAME.with(|n| n.set(None));
    }
}

#[cfg(feature = "tracing")]
#[track_caller]
pub(crate) fn instrument<F>(future: F) -> tracing::instrument::Instrumented<F> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let location = std::panic::Location::caller();
    let span = tracing::trace_span!(
        target: "spindle",
        "task",
        task.id = NEXT_ID.fetch_add(1, Relaxed),
        task.name = tracing::field::Empty,
        spawn.location = %location,
    );
    if let Some(name) = NEXT_NAME.with(|n| n.take()) {
        span.record("task.name", name.as_str());
    }
    tracing::Instrument::instrument(future, span)
}

#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn instrument<F>(future: F) -> F {
    future
}
