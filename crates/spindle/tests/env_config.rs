//! Environment settings, in a test binary of their own: setting a variable
//! would race with every runtime the other tests build in their process
//! (and one test here, for the same reason, goes through them in turn).

fn build_with(var: &str, value: &str) -> Result<spindle::Runtime, spindle::BuildError> {
    std::env::set_var(var, value);
    let rt = spindle::Builder::new_multi_thread().workers(1).build();
    std::env::remove_var(var);
    rt
}

#[test]
fn environment_settings_apply_and_bad_ones_are_build_errors_naming_them() {
    let err = build_with("SPINDLE_SLOW_POLL_US", "fast").unwrap_err();
    assert!(
        err.to_string().contains("SPINDLE_SLOW_POLL_US=\"fast\""),
        "{err}"
    );
    let err = build_with("SPINDLE_TRACK_SPAWNS", "maybe").unwrap_err();
    assert!(
        err.to_string().contains("SPINDLE_TRACK_SPAWNS=\"maybe\""),
        "{err}"
    );
    let rt = build_with("SPINDLE_TRACK_SPAWNS", "1").unwrap();
    assert!(rt.dump().contains("tasks by spawn site"), "{}", rt.dump());
    let rt = build_with("SPINDLE_TRACK_SPAWNS", "0").unwrap();
    assert!(!rt.dump().contains("tasks by spawn site"), "{}", rt.dump());
}
