//! [`Builder`] (`spindle::task::Builder`): a spawn with options, as Tokio's
//! `task::Builder`. Its one option today is a name, which shows in the
//! runtime's reports beside the task's id (a slow poll, the dump, a stall
//! report: `task/names.rs`) and in its `tracing` span (`task.name`,
//! feature `tracing`). It lives at the crate root, above the schedulers it
//! spawns on, like `JoinSet`.

use crate::task::names::Named;
use crate::task::JoinHandle;
use std::future::Future;

/// Spawns a task with options.
///
/// ```
/// # spindle::Runtime::new().unwrap().block_on(async {
/// let h = spindle::task::Builder::new().name("flush-cache").spawn(async { 7 });
/// assert_eq!(h.await.unwrap(), 7);
/// # });
/// ```
#[derive(Debug, Default, Clone)]
pub struct Builder<'a> {
    name: Option<&'a str>,
}

impl<'a> Builder<'a> {
    /// A spawn with no options set.
    pub fn new() -> Builder<'a> {
        Builder::default()
    }

    /// Names the task: the runtime's reports show the name beside the
    /// task's id, and so does its `tracing` span (`task.name`).
    pub fn name(mut self, name: &'a str) -> Builder<'a> {
        self.name = Some(name);
        self
    }

    /// Spawns `future` as [`spawn`](crate::spawn) does.
    ///
    /// # Panics
    /// Outside any runtime, as `spawn`.
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let _name = crate::task::span::NextName::set(self.name);
        match self.name {
            Some(name) => crate::spawn(Named::new(name, future)),
            None => crate::spawn(future),
        }
    }

    /// Spawns `future` on `handle`'s runtime, as [`Handle::spawn`](crate::Handle::spawn) does.
    #[track_caller]
    pub fn spawn_on<F>(self, future: F, handle: &crate::Handle) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let _name = crate::task::span::NextName::set(self.name);
        match self.name {
            Some(name) => handle.spawn(Named::new(name, future)),
            None => handle.spawn(future),
        }
    }
}
