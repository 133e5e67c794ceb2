//! With the `tracing` feature, every spawned task runs inside a `tracing`
//! span of its own, `task`, with target `spindle` and the fields
//! `spawn.location` (the spawn call's `file:line:column`, through
//! `#[track_caller]`), `task.id` (its [`Id`](super::Id), recorded at its
//! first poll: the id is the task's address, known only once it is
//! allocated) and, for a task spawned through `task::Builder::name`,
//! `task.name`. The span is entered for each poll, so events a task emits
//! carry them. Without the feature, `instrument` is the identity and costs
//! nothing, and names are dropped.
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
pub(crate) fn instrument<F>(future: F) -> tracing::instrument::Instrumented<RecordId<F>> {
    let location = std::panic::Location::caller();
    let span = tracing::trace_span!(
        target: "spindle",
        "task",
        spawn.location = %location,
        task.id = tracing::field::Empty,
        task.name = tracing::field::Empty,
    );
    if let Some(name) = NEXT_NAME.with(|n| n.take()) {
        span.record("task.name", name.as_str());
    }
    let future = RecordId {
        future,
        recorded: false,
    };
    tracing::Instrument::instrument(future, span)
}

/// Records the task's id in its span (entered around this poll) at the
/// first poll.
#[cfg(feature = "tracing")]
pub(crate) struct RecordId<F> {
    future: F,
    recorded: bool,
}

#[cfg(feature = "tracing")]
impl<F: std::future::Future> std::future::Future for RecordId<F> {
    type Output = F::Output;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        // SAFETY: `future` is structurally pinned (never moved out of the
        // pinned `RecordId`); `recorded` is plain data, not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        if !this.recorded {
            this.recorded = true;
            if let Some(id) = super::try_id() {
                tracing::Span::current().record("task.id", tracing::field::display(id));
            }
        }
        // SAFETY: as above: `future` is never moved.
        unsafe { std::pin::Pin::new_unchecked(&mut this.future) }.poll(cx)
    }
}

#[cfg(not(feature = "tracing"))]
#[inline(always)]
pub(crate) fn instrument<F>(future: F) -> F {
    future
}
