//! [`task_local!`](crate::task_local) and [`LocalKey`]: values scoped to a
//! future, which follow it across workers, as Tokio's.
//!
//! A key is a thread-local slot. [`LocalKey::scope`] wraps a future in a
//! [`TaskLocalFuture`] that holds the value and, for the length of each
//! poll of the inner future (and of its drop), moves the value into the
//! slot of the thread doing it and back out afterwards. So the value is
//! wherever the future runs, on whichever worker, and nowhere else; no
//! runtime support is needed, and it works under any executor.
//!
//! Invariants:
//! - The slot holds a value only while a scope's poll, drop or
//!   [`LocalKey::sync_scope`] closure runs on this thread; nested scopes of
//!   one key stack (the inner value is seen inside, the outer one again
//!   after).
//! - The value goes back to its scope even when the poll panics (a guard
//!   swaps it back on unwind).
//! - A `with` closure that enters a scope of the same key while it holds
//!   the borrow panics (a `RefCell` double borrow), never aliases.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Declares task-local keys: `static NAME: Type;`, each a [`LocalKey`].
///
/// ```
/// spindle::task_local! {
///     static REQUEST_ID: u64;
/// }
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let id = REQUEST_ID
///     .scope(7, async {
///         spindle::yield_now().await; // may resume on another worker
///         REQUEST_ID.get()
///     })
///     .await;
/// assert_eq!(id, 7);
/// assert!(REQUEST_ID.try_with(|_| ()).is_err(), "outside every scope");
/// # });
/// ```
#[macro_export]
macro_rules! task_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty; $($rest:tt)*) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
        $crate::task_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $crate::__task_local_key!($(#[$attr])* $vis $name, $t);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __task_local_key {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::task::LocalKey<$t> = {
            ::std::thread_local! {
                static __SLOT: ::std::cell::RefCell<::std::option::Option<$t>> =
                    const { ::std::cell::RefCell::new(::std::option::Option::None) };
            }
            $crate::task::LocalKey::__new(&__SLOT, ::std::stringify!($name))
        };
    };
}

/// A key made by [`task_local!`](crate::task_local): set for a future with
/// [`scope`](LocalKey::scope), read inside it with [`with`](LocalKey::with),
/// [`try_with`](LocalKey::try_with) or [`get`](LocalKey::get).
pub struct LocalKey<T: 'static> {
    slot: &'static std::thread::LocalKey<RefCell<Option<T>>>,
    name: &'static str,
}

/// [`LocalKey::try_with`] outside every scope of its key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AccessError {
    name: &'static str,
}

impl fmt::Debug for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessError")
            .field("key", &self.name)
            .finish()
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "task-local `{}` read outside its scope: set it with `{}.scope(value, future)`",
            self.name, self.name
        )
    }
}

impl std::error::Error for AccessError {}

impl<T: 'static> LocalKey<T> {
    #[doc(hidden)]
    pub const fn __new(
        slot: &'static std::thread::LocalKey<RefCell<Option<T>>>,
        name: &'static str,
    ) -> Self {
        LocalKey { slot, name }
    }

    /// `future` with this key set to `value` while it runs.
    pub fn scope<F: Future>(&'static self, value: T, future: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture {
            key: self,
            value: Some(value),
            future: Some(future),
        }
    }

    /// Runs `f` with this key set to `value`, on this thread.
    pub fn sync_scope<R>(&'static self, value: T, f: impl FnOnce() -> R) -> R {
        let mut value = Some(value);
        self.enter(&mut value, f)
    }

    /// Calls `f` with the value of the innermost scope.
    ///
    /// # Panics
    /// Outside every scope of this key; the message names the key.
    pub fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`with`](LocalKey::with), or an [`AccessError`] outside every scope.
    pub fn try_with<R>(&'static self, f: impl FnOnce(&T) -> R) -> Result<R, AccessError> {
        let f = |cell: &RefCell<Option<T>>| cell.borrow().as_ref().map(f);
        match self.slot.try_with(f) {
            Ok(Some(r)) => Ok(r),
            _ => Err(AccessError { name: self.name }),
        }
    }

    /// Moves `value` into this thread's slot for the length of `f`, and
    /// back out afterwards, also when `f` panics; the slot's earlier
    /// content (an outer scope's value) waits in `value` meanwhile.
    fn enter<R>(&'static self, value: &mut Option<T>, f: impl FnOnce() -> R) -> R {
        type Slot<T> = std::thread::LocalKey<RefCell<Option<T>>>;
        struct Restore<'a, T: 'static> {
            slot: &'static Slot<T>,
            value: &'a mut Option<T>,
        }
        impl<T: 'static> Drop for Restore<'_, T> {
            fn drop(&mut self) {
                self.slot
                    .with(|cell| std::mem::swap(&mut *cell.borrow_mut(), self.value));
            }
        }
        self.slot
            .with(|cell| std::mem::swap(&mut *cell.borrow_mut(), value));
        let _restore = Restore {
            slot: self.slot,
            value,
        };
        f()
    }
}

impl<T: Clone + 'static> LocalKey<T> {
    /// A clone of the value of the innermost scope.
    ///
    /// # Panics
    /// Outside every scope of this key.
    pub fn get(&'static self) -> T {
        self.with(T::clone)
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalKey")
            .field("name", &self.name)
            .finish()
    }
}

/// A future run with a task-local value set, from [`LocalKey::scope`].
#[must_use = "futures do nothing unless polled"]
pub struct TaskLocalFuture<T: 'static, F> {
    key: &'static LocalKey<T>,
    /// The value, here between polls and in the slot during them.
    value: Option<T>,
    future: Option<F>,
}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// The value, if the future has not been polled to completion.
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        // SAFETY: `value` is never pinned (only `future` is), so moving
        // it out does not move pinned data.
        unsafe { self.get_unchecked_mut() }.value.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: only `future` is pinned, and nothing moves it out of
        // `this` (setting its `Option` to `None` drops it in place).
        let this = unsafe { self.get_unchecked_mut() };
        let key = this.key;
        let (value, future) = (&mut this.value, &mut this.future);
        key.enter(value, || {
            let Some(fut) = future.as_mut() else {
                panic!("`TaskLocalFuture` polled after it completed");
            };
            // SAFETY: `fut` lives in the pinned `self` and is never moved
            // (structural pinning, above).
            let poll = unsafe { Pin::new_unchecked(fut) }.poll(cx);
            if poll.is_ready() {
                *future = None; // dropped in place, with the value in scope
            }
            poll
        })
    }
}

impl<T: 'static, F> Drop for TaskLocalFuture<T, F> {
    fn drop(&mut self) {
        // The inner future is dropped with its value in scope, so that its
        // destructors see it (as Tokio's do). `value` is `None` only while
        // a poll runs, never here.
        if self.future.is_some() && self.value.is_some() {
            let key = self.key;
            let (value, future) = (&mut self.value, &mut self.future);
            key.enter(value, || *future = None);
        }
    }
}

impl<T: fmt::Debug + 'static, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture")
            .field("key", &self.key.name)
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}
