//! Runs every row the monoio peer supports at its tiny size and checks the
//! result against the catalogue (`spindle_peer_common::check`).

#[test]
fn every_supported_row_at_tiny_size() {
    spindle_peer_common::check::check_peer(env!("CARGO_BIN_EXE_peer-monoio"), "monoio");
}
