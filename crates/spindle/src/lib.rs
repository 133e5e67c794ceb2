//! spindle: an M:N work-stealing runtime for millions of lightweight tasks.

#![deny(unsafe_op_in_unsafe_fn)]

pub(crate) mod loom;
