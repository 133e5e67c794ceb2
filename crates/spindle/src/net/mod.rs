//! TCP and UDP sockets for spindle tasks, on the runtime's reactor
//! (`io/reactor.rs`). (Being written.)
