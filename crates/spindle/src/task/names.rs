//! Task names (`task::Builder::name`) by task id, for the runtime's own
//! reports: a slow poll, the dump's slowest polls and a stall report name
//! a named task beside its id, and a runtime's metrics list its named
//! tasks ([`NamedTask`]).
//!
//! Invariants:
//! - only named tasks pay: their future is wrapped in [`Named`], which
//!   enters the name at the task's first poll (the first moment its id is
//!   known, `task::try_id`) and takes it out when the future is dropped
//!   (the task finished or was cancelled), before its allocation is
//!   freed, so an id that is reused never shows an old name;
//! - so every entry is a task whose future still exists; a task not yet
//!   polled has no entry;
//! - each entry notes the runtime that first polled the task, the one it
//!   was spawned on (`sched::Handle::key`);
//! - the table is one process-wide mutex, touched twice in a named task's
//!   life and when a report is written.

use super::Id;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

static NAMES: Mutex<BTreeMap<usize, Entry>> = Mutex::new(BTreeMap::new());

/// A named task in the table.
struct Entry {
    name: Arc<str>,
    /// The key of the runtime that polled it (`sched::Handle::key`).
    runtime: usize,
}

fn names() -> MutexGuard<'static, BTreeMap<usize, Entry>> {
    NAMES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A task spawned with a name (`task::Builder::name`) whose future exists
/// and has been polled, as [`RuntimeMetrics::named_tasks`](crate::RuntimeMetrics::named_tasks)
/// lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedTask {
    /// The task's id.
    pub id: Id,
    /// Its name.
    pub name: Arc<str>,
}

/// The name of the task at `addr`, if it was spawned with one.
pub(crate) fn name_of(addr: usize) -> Option<Arc<str>> {
    names().get(&addr).map(|e| e.name.clone())
}

/// The named tasks of the runtime whose key is `runtime`, by id.
pub(crate) fn on_runtime(runtime: usize) -> Vec<NamedTask> {
    names()
        .iter()
        .filter(|(_, e)| e.runtime == runtime)
        .map(|(&addr, e)| NamedTask {
            id: Id::from_addr(addr),
            name: e.name.clone(),
        })
        .collect()
}

/// A task as the reports write it: its id, and its name if it has one
/// (`0x55d0c1a2b3c0 "flusher"`).
pub(crate) fn describe(addr: usize) -> String {
    match name_of(addr) {
        Some(name) => written(addr, &name),
        None => format!("{addr:#x}"),
    }
}

fn written(addr: usize, name: &str) -> String {
    format!("{addr:#x} {name:?}")
}

/// Whether any task has a name now.
pub(crate) fn any() -> bool {
    !names().is_empty()
}

/// The named tasks among `addrs` (sorted), as [`describe`] writes them.
pub(crate) fn named_among(addrs: &[usize]) -> Vec<String> {
    let names = names();
    names
        .iter()
        .filter(|(a, _)| addrs.binary_search(a).is_ok())
        .map(|(&a, e)| written(a, &e.name))
        .collect()
}

/// A named task's future (module invariants).
pub(crate) struct Named<F> {
    name: Arc<str>,
    /// The task's id once entered in the table; 0 before.
    entered: usize,
    future: F,
}

impl<F> Named<F> {
    pub(crate) fn new(name: &str, future: F) -> Named<F> {
        Named {
            name: name.into(),
            entered: 0,
            future,
        }
    }
}

impl<F: Future> Future for Named<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // `Named`'s `Drop` does not move `future` either.
        // SAFETY: `future` is structurally pinned, never moved out of the
        // pinned `Named`; the other fields are plain data.
        let this = unsafe { self.get_unchecked_mut() };
        if this.entered == 0 {
            if let Some(id) = super::try_id() {
                let addr = id.addr();
                let runtime = crate::sched::Handle::try_current().map_or(0, |h| h.key());
                let name = this.name.clone();
                names().insert(addr, Entry { name, runtime });
                this.entered = addr;
            }
        }
        // SAFETY: as above: `future` is never moved.
        unsafe { Pin::new_unchecked(&mut this.future) }.poll(cx)
    }
}

impl<F> Drop for Named<F> {
    fn drop(&mut self) {
        if self.entered != 0 {
            names().remove(&self.entered);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_named_task_is_in_the_table_from_its_first_poll_to_its_end() {
        let rt = crate::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let gate = std::sync::Arc::new(crate::sync::Notify::new());
            let g = gate.clone();
            let h = crate::task::Builder::new()
                .name("flusher")
                .spawn(async move { g.notified().await });
            let id = h.id().addr();
            crate::yield_now().await; // its first poll
            assert_eq!(name_of(id).as_deref(), Some("flusher"));
            assert_eq!(named_among(&[1, id]), [format!("{id:#x} \"flusher\"")]);
            assert_eq!(describe(id), format!("{id:#x} \"flusher\""));
            gate.notify_one();
            h.await.unwrap();
            assert_eq!(name_of(id), None, "taken out when the future is dropped");
        });
    }
}
