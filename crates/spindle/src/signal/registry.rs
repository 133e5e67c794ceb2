//! The process-wide signal registry: one listener thread for every signal
//! any task listens for, and a generation count and waiters per signal.
//!
//! Protocol:
//! - The first listener installs, once, a `signal_hook` iterator and a
//!   small thread, `spindle-signal`, blocked on it. Each signal is added to
//!   the iterator once, the first time somebody listens for it; its handler
//!   only writes to the iterator's self-pipe.
//! - For every arrival the thread reads, it bumps that signal's generation
//!   and wakes its waiters, under the registry's lock. Arrivals read
//!   together collapse into one: a waiter learns "at least once since".
//! - A `Waiter` remembers the generation it last saw and is ready once the
//!   current one differs, so it sees every arrival after it was made, even
//!   one before its first poll. A pending waiter keeps its waker in a map
//!   under its own id; polling replaces it and dropping removes it.
//!
//! From the first listener for a signal on, its default action (ending the
//! process, for most) is gone: the program decides what it does.

use std::collections::BTreeMap;
use std::io;
use std::os::raw::c_int;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct Slot {
    generation: u64,
    wakers: BTreeMap<u64, Waker>,
}

struct Registry {
    /// A slot per signal added to the iterator.
    slots: BTreeMap<c_int, Slot>,
    next_id: u64,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: BTreeMap::new(),
    next_id: 0,
});

/// The listener's handle, or why it could not start (kept for every caller).
static LISTENER: OnceLock<Result<signal_hook::iterator::Handle, String>> = OnceLock::new();

fn registry() -> MutexGuard<'static, Registry> {
    // A waker that panicked while the lock was held left valid data.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts listening for `signal` (once per process); `name` is how errors
/// call it.
pub(crate) fn listen(signal: c_int, name: &str) -> io::Result<()> {
    let fail = |why: &dyn std::fmt::Display| {
        io::Error::other(format!("could not listen for {name}: {why}"))
    };
    let handle = match LISTENER.get_or_init(start) {
        Ok(handle) => handle,
        Err(e) => return Err(fail(e)),
    };
    let mut r = registry();
    if r.slots.contains_key(&signal) {
        return Ok(());
    }
    // The slot first, so the listener has somewhere to count the first arrival.
    r.slots.insert(signal, Slot::default());
    if let Err(e) = handle.add_signal(signal) {
        r.slots.remove(&signal);
        return Err(fail(&e));
    }
    Ok(())
}

fn start() -> Result<signal_hook::iterator::Handle, String> {
    let signals =
        signal_hook::iterator::Signals::new([] as [c_int; 0]).map_err(|e| e.to_string())?;
    let handle = signals.handle();
    std::thread::Builder::new()
        .name("spindle-signal".into())
        .spawn(move || run(signals))
        .map_err(|e| e.to_string())?;
    Ok(handle)
}

/// The listener thread: a new generation per arrival read.
fn run(mut signals: signal_hook::iterator::Signals) {
    for signal in signals.forever() {
        let woken = {
            let mut r = registry();
            let slot = r.slots.entry(signal).or_default();
            slot.generation += 1;
            std::mem::take(&mut slot.wakers)
        };
        woken.into_values().for_each(Waker::wake);
    }
    crate::report::warn(
        crate::report::Kind::Signal,
        format_args!("spindle: the signal listener stopped"),
    );
}

/// One task's wait for arrivals of one signal.
pub(crate) struct Waiter {
    signal: c_int,
    /// The generation this waiter has seen.
    seen: u64,
    /// Its key in the slot's wakers while it is pending.
    id: Option<u64>,
}

impl Waiter {
    /// Waits for arrivals after now; `listen(signal)` must have succeeded.
    pub(crate) fn new(signal: c_int) -> Waiter {
        let seen = registry().slots.get(&signal).map_or(0, |s| s.generation);
        Waiter {
            signal,
            seen,
            id: None,
        }
    }

    /// Ready once an arrival came since the last `Ready` (or since `new`).
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut r = registry();
        let Registry { slots, next_id } = &mut *r;
        let slot = slots.entry(self.signal).or_default();
        if slot.generation != self.seen {
            self.seen = slot.generation;
            if let Some(id) = self.id.take() {
                slot.wakers.remove(&id);
            }
            return Poll::Ready(());
        }
        let id = *self.id.get_or_insert_with(|| {
            *next_id += 1;
            *next_id
        });
        match slot.wakers.get_mut(&id) {
            Some(old) => old.clone_from(cx.waker()),
            None => {
                slot.wakers.insert(id, cx.waker().clone());
            }
        }
        Poll::Pending
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            if let Some(slot) = registry().slots.get_mut(&self.signal) {
                slot.wakers.remove(&id);
            }
        }
    }
}
