//! What the loom models of `sync` share.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Wake;

/// A waker that counts its wakes.
#[derive(Default)]
pub(super) struct Count(pub(super) AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}
