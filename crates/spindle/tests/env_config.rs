//! Environment settings, in a test binary of their own: setting a variable
//! would race with every runtime the other tests build in their process.

#[test]
fn a_bad_slow_poll_setting_is_a_build_error_naming_it() {
    std::env::set_var("SPINDLE_SLOW_POLL_US", "fast");
    let err = spindle::Builder::new_multi_thread()
        .workers(1)
        .build()
        .unwrap_err();
    std::env::remove_var("SPINDLE_SLOW_POLL_US");
    assert!(
        err.to_string().contains("SPINDLE_SLOW_POLL_US=\"fast\""),
        "{err}"
    );
}
