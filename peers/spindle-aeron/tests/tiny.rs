//! Runs the built peer: `list`, then both Aeron rows at their tiny size,
//! checking each result line against the catalogue.

#[test]
fn every_supported_row_gives_the_catalogue_result() {
    spindle_peer_common::check::check_peer(
        env!("CARGO_BIN_EXE_peer-spindle-aeron"),
        "spindle-aeron",
    );
}
