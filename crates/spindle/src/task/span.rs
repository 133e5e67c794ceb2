//! With the `tracing` feature, every spawned task runs inside a `tracing`
//! span of its own, `task`, with target `spindle` and the fields `task.id`
//! (a process-wide spawn count, from 1) and `spawn.location` (the spawn
//! call's `file:line:column`, through `#[track_caller]`). The span is
//! entered for each poll, so events a task emits carry them. Without the
//! feature, `instrument` is the identity and costs nothing.

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
        spawn.location = %location,
    );
    tracing::Instrument::instrument(future, span)
}

#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn instrument<F>(future: F) -> F {
    future
}
