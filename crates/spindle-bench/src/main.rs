//! `spindle-bench`: see the crate README; all logic lives in the library.
fn main() {
    std::process::exit(spindle_bench::cli::main());
}
