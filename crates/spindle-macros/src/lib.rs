//! `#[spindle::main]` and `#[spindle::test]` (filled in with the runtime core).
