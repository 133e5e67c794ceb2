//! The hello example's command line: `--addr HOST:PORT`, `--workers N`,
//! `--http2`, `--help`.
//!
//! Invariants: every error names the argument it is about and what was
//! wrong with it; nothing here touches the network (the address is
//! resolved when it is bound, and that error names it too).

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Serve(Args),
    Help,
}

/// The server's settings.
#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    /// Where to listen (port 0 picks a free one).
    pub addr: String,
    /// Worker threads (`None`: spindle's default, `SPINDLE_WORKERS` or one
    /// per CPU).
    pub workers: Option<usize>,
    /// Also serve HTTP/2 with prior knowledge on the same port.
    pub http2: bool,
}

pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

pub const USAGE: &str = "usage: hello [--addr HOST:PORT] [--workers N] [--http2]

  --addr HOST:PORT  where to listen (default 127.0.0.1:8080; port 0 picks one)
  --workers N       spindle worker threads (default: SPINDLE_WORKERS or one per CPU)
  --http2           also serve HTTP/2 with prior knowledge (h2c) on the same port

Serves GET /plaintext and GET /json (TechEmpower's tests); 404 otherwise.";

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut args = args.into_iter();
    let mut out = Args {
        addr: DEFAULT_ADDR.to_string(),
        workers: None,
        http2: false,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => out.addr = value(&mut args, "--addr", "HOST:PORT")?,
            "--workers" => {
                let n = value(&mut args, "--workers", "N")?;
                out.workers = Some(workers(&n)?);
            }
            "--http2" => out.http2 = true,
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Command::Serve(out))
}

/// The value after `flag`; an error if there is none or it is another flag.
fn value(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
    what: &str,
) -> Result<String, String> {
    match args.next() {
        Some(v) if !v.starts_with("--") => Ok(v),
        _ => Err(format!("{flag} needs a value ({flag} {what})")),
    }
}

fn workers(n: &str) -> Result<usize, String> {
    match n.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "--workers `{n}`: expected a whole number of at least 1"
        )),
    }
}
