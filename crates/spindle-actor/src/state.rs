//! [`ActorState`]: state that outlives a run of an actor, so that a
//! restarted actor carries on where the failed run left off.
//!
//! # Invariants
//! - The value lives in the shared cell whenever no [`StateGuard`] holds
//!   it; a guard takes it out and puts it back when dropped — also when the
//!   run's future is dropped after a panic, so the state survives with
//!   every update made before the panic (an update torn by the panic itself
//!   is kept as it was left: make each update a single assignment, or
//!   commit it after the work that may fail).
//! - At most one guard exists at a time ([`ActorState::lock`] fails
//!   otherwise); the guard is `Send`, so it may be held across `.await`.

use crate::loom::lock_std;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

/// State kept across restarts of an actor: create it outside the actor's
/// closure, clone it in, and [`lock`](ActorState::lock) it in each run.
pub struct ActorState<T> {
    cell: Arc<Mutex<Slot<T>>>,
}

enum Slot<T> {
    Empty,
    Here(T),
    Held,
}

impl<T> Clone for ActorState<T> {
    fn clone(&self) -> Self {
        ActorState {
            cell: self.cell.clone(),
        }
    }
}

impl<T> Default for ActorState<T> {
    fn default() -> Self {
        ActorState::empty()
    }
}

impl<T> ActorState<T> {
    /// State starting as `value`.
    pub fn new(value: T) -> ActorState<T> {
        ActorState {
            cell: Arc::new(Mutex::new(Slot::Here(value))),
        }
    }

    /// State with no value yet; the first [`lock_or_init`](Self::lock_or_init)
    /// creates it.
    pub fn empty() -> ActorState<T> {
        ActorState {
            cell: Arc::new(Mutex::new(Slot::Empty)),
        }
    }

    /// Takes the state for this run, creating it with `init` the first
    /// time. Panics if another guard holds it (two runs of one actor never
    /// overlap, so that is a bug in the caller).
    pub fn lock_or_init(&self, init: impl FnOnce() -> T) -> StateGuard<T> {
        let mut g = lock_std(&self.cell);
        let value = match std::mem::replace(&mut *g, Slot::Held) {
            Slot::Here(v) => v,
            Slot::Empty => {
                // Empty while `init` runs (the lock keeps other runs out): a
                // panic in it leaves the state for the next run to create,
                // where `Held` would have refused every restart for good.
                *g = Slot::Empty;
                let v = init();
                *g = Slot::Held;
                v
            }
            Slot::Held => panic!("ActorState locked twice at the same time"),
        };
        StateGuard {
            cell: self.cell.clone(),
            value: Some(value),
        }
    }

    /// [`lock_or_init`](Self::lock_or_init) with `T::default()`.
    pub fn lock(&self) -> StateGuard<T>
    where
        T: Default,
    {
        self.lock_or_init(T::default)
    }

    /// A copy of the value, if it exists and no guard holds it.
    pub fn snapshot(&self) -> Option<T>
    where
        T: Clone,
    {
        match &*lock_std(&self.cell) {
            Slot::Here(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// Takes the value out for good (after the graph stopped, say).
    pub fn take(&self) -> Option<T> {
        let mut g = lock_std(&self.cell);
        match std::mem::replace(&mut *g, Slot::Empty) {
            Slot::Here(v) => Some(v),
            other => {
                *g = other;
                None
            }
        }
    }
}

impl<T> fmt::Debug for ActorState<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match &*lock_std(&self.cell) {
            Slot::Empty => "empty",
            Slot::Here(_) => "here",
            Slot::Held => "held",
        };
        f.debug_struct("ActorState").field("slot", &s).finish()
    }
}

/// The state, held by one run; puts it back when dropped.
pub struct StateGuard<T> {
    cell: Arc<Mutex<Slot<T>>>,
    value: Option<T>,
}

impl<T> Deref for StateGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value.as_ref().expect("held until drop")
    }
}

impl<T> DerefMut for StateGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value.as_mut().expect("held until drop")
    }
}

impl<T> Drop for StateGuard<T> {
    fn drop(&mut self) {
        if let Some(v) = self.value.take() {
            *lock_std(&self.cell) = Slot::Here(v);
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for StateGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A first run whose `init` panics leaves the state to create again,
    /// for the restart (left locked, every restart would panic "locked
    /// twice").
    #[test]
    fn a_panicking_init_leaves_the_state_to_create_again() {
        let s = ActorState::<u32>::empty();
        let s2 = s.clone();
        let r = std::panic::catch_unwind(move || {
            let _g = s2.lock_or_init(|| panic!("init failed"));
        });
        assert!(r.is_err());
        assert_eq!(*s.lock_or_init(|| 7), 7);
    }

    #[test]
    fn survives_a_panicking_holder() {
        let s = ActorState::new(0u32);
        let s2 = s.clone();
        let r = std::panic::catch_unwind(move || {
            let mut g = s2.lock();
            *g += 5;
            panic!("boom");
        });
        assert!(r.is_err());
        assert_eq!(s.snapshot(), Some(5));
        let g = s.lock();
        assert_eq!(s.snapshot(), None, "held");
        drop(g);
        assert_eq!(s.take(), Some(5));
        assert_eq!(*s.lock_or_init(|| 9), 9);
    }
}
