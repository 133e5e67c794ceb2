//! One file per channel kind; the public handles live in `chan/mod.rs`
//! (bounded, unbounded, rendezvous) or in the flavor file itself (oneshot,
//! broadcast, spsc, whose handles differ in shape).

pub(crate) mod array;
pub(crate) mod bias;
pub(crate) mod broadcast;
pub(crate) mod list;
pub(crate) mod oneshot;
pub(crate) mod spsc;
pub(crate) mod zero;
