//! Benchmark peer: spindle (to be filled in).
fn main() {
    let _ = spindle_peer_common::parse_args();
    spindle_peer_common::unsupported("*", "not written yet");
}
