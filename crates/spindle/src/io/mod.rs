//! I/O: the readiness reactor (`reactor.rs`) the driver polls.

pub(crate) mod reactor;
