//! The hello example's command line: what it accepts, and errors that
//! name the argument at fault.

mod common;

use common::args::{parse, Args, Command, DEFAULT_ADDR};

fn parsed(args: &[&str]) -> Result<Command, String> {
    parse(args.iter().map(|a| a.to_string()))
}

#[test]
fn defaults_and_every_flag() {
    let default = Args {
        addr: DEFAULT_ADDR.to_string(),
        workers: None,
        http2: false,
    };
    assert_eq!(parsed(&[]), Ok(Command::Serve(default)));
    let all = parsed(&["--addr", "127.0.0.1:0", "--workers", "3", "--http2"]);
    let want = Args {
        addr: "127.0.0.1:0".to_string(),
        workers: Some(3),
        http2: true,
    };
    assert_eq!(all, Ok(Command::Serve(want)));
    assert_eq!(parsed(&["--workers", "2", "--help"]), Ok(Command::Help));
    assert_eq!(parsed(&["-h"]), Ok(Command::Help));
}

#[test]
fn each_bad_argument_is_named() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--workers", "0"],
            "--workers `0`: expected a whole number of at least 1",
        ),
        (&["--workers", "two"], "--workers `two`"),
        (
            &["--workers", "-1"],
            "--workers `-1`: expected a whole number",
        ),
        (&["--workers"], "--workers needs a value (--workers N)"),
        (&["--addr"], "--addr needs a value (--addr HOST:PORT)"),
        (&["--addr", "--http2"], "--addr needs a value"),
        (&["--port", "80"], "unknown argument `--port`"),
        (&["serve"], "unknown argument `serve`"),
    ];
    for (args, want) in cases {
        let got = parsed(args).expect_err("a bad command line");
        assert!(
            got.contains(want),
            "for {args:?}: {got:?} should say {want:?}"
        );
    }
}
