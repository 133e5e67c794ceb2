//! Building the peers: the workspace's Rust peers in one cargo call (each
//! alone when that fails), the peers with a workspace of their own, and the
//! Go peer (the module docs in `mod.rs` say where each binary goes).

use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{go_bin, target_dir, workspace_root, BuildOptions, OWN_WORKSPACE_PEERS, RUST_PEERS};
use crate::runner::tail;

pub(super) fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

pub(super) fn profile_dir(profile: &str) -> &str {
    match profile {
        "dev" | "test" => "debug",
        "bench" => "release",
        p => p,
    }
}

pub(super) fn stderr_stdio() -> Stdio {
    match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => Stdio::from(fd),
        Err(_) => Stdio::inherit(),
    }
}

/// Builds the requested Rust peers; returns the packages that failed, with why.
pub(super) fn build_rust(root: &Path, profile: &str, pkgs: &[&str]) -> BTreeMap<String, String> {
    let mut failed = BTreeMap::new();
    if pkgs.is_empty() {
        return failed;
    }
    let mut cmd = Command::new(cargo());
    cmd.current_dir(root).args(["build", "--profile", profile]);
    for p in pkgs {
        cmd.args(["-p", p]);
    }
    eprintln!(
        "spindle-bench: building peers: cargo build --profile {profile} -p {}",
        pkgs.join(" -p ")
    );
    match cmd.stdout(stderr_stdio()).status() {
        Ok(s) if s.success() => return failed,
        Ok(_) => {}
        Err(e) => {
            for p in pkgs {
                failed.insert(p.to_string(), format!("could not run cargo: {e}"));
            }
            return failed;
        }
    }
    // Attribute the failure: build each alone, keep its error text.
    for p in pkgs {
        if let Err(why) = build_alone(root, profile, p) {
            failed.insert(p.to_string(), why);
        }
    }
    failed
}

/// Builds one Rust peer; the error names the first error lines cargo printed.
pub(super) fn build_alone(root: &Path, profile: &str, p: &str) -> Result<(), String> {
    let out = Command::new(cargo())
        .current_dir(root)
        .args([
            "build",
            "--profile",
            profile,
            "-p",
            p,
            "--message-format",
            "short",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let lines: Vec<&str> = err
                .lines()
                .filter(|l| l.contains("error"))
                .take(3)
                .collect();
            Err(format!(
                "build failed: {} (see `cargo build --profile {profile} -p {p}`)",
                lines.join(" | ")
            ))
        }
        Err(e) => Err(format!("could not run cargo: {e}")),
    }
}

/// Builds (unless `--no-build`) and finds an example of a workspace
/// package: `spindle-bench http` serves spindle with `spindle-hyper`'s
/// `hello` example.
pub fn example(package: &str, example: &str, opts: &BuildOptions) -> Result<PathBuf, String> {
    let root = workspace_root();
    let profile = &opts.cargo_profile;
    if !opts.no_build {
        eprintln!("spindle-bench: building cargo build --profile {profile} -p {package} --example {example}");
        let status = Command::new(cargo())
            .current_dir(&root)
            .args([
                "build",
                "--profile",
                profile,
                "-p",
                package,
                "--example",
                example,
            ])
            .stdout(stderr_stdio())
            .status()
            .map_err(|e| format!("could not run cargo: {e}"))?;
        if !status.success() {
            return Err(format!(
                "build failed (see `cargo build --profile {profile} -p {package} --example {example}`)"
            ));
        }
    }
    let path = target_dir(&root)
        .join(profile_dir(profile))
        .join("examples")
        .join(example);
    if path.exists() {
        Ok(path)
    } else {
        Err(format!("no binary at {}", path.display()))
    }
}

/// Builds a peer that is a workspace of its own (`OWN_WORKSPACE_PEERS`).
pub(super) fn build_own_workspace(dir: &Path, target: &Path, profile: &str) -> Result<(), String> {
    let manifest = dir.join("Cargo.toml");
    eprintln!(
        "spindle-bench: building peers: cargo build --profile {profile} --manifest-path {} --target-dir {}",
        manifest.display(),
        target.display()
    );
    let o = Command::new(cargo())
        .args(["build", "--profile", profile, "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target)
        .stdout(stderr_stdio())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if o.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    eprint!("{err}");
    Err(format!(
        "build failed: {} (see `cargo build --profile {profile} --manifest-path {}`)",
        tail(&err, 3),
        manifest.display()
    ))
}

/// Builds the Go peer into `<target>/go/peer-go`.
pub(super) fn build_go(root: &Path, out: &Path) -> Result<(), String> {
    let dir = root.join("peers/go");
    if !dir.join("go.mod").exists() {
        return Err("peers/go has no go.mod yet".into());
    }
    let go = std::env::var("GO").unwrap_or_else(|_| "go".into());
    eprintln!(
        "spindle-bench: building peers: (cd peers/go && {go} build -o {} .)",
        out.display()
    );
    let o = Command::new(&go)
        .current_dir(&dir)
        .args(["build", "-o"])
        .arg(out)
        .arg(".")
        .stdout(stderr_stdio())
        .stderr(Stdio::piped())
        .output();
    match o {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "`{go}` not found on PATH: install Go {} or newer (https://go.dev/dl, or \
             `apt-get install golang-go`), or name its binary with GO=/path/to/go",
            go_version_wanted(root)
        )),
        Err(e) => Err(format!("could not run `{go}`: {e}")),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            eprint!("{err}");
            Err(format!("go build failed: {}", tail(&err, 3)))
        }
    }
}

/// The Go version `peers/go/go.mod` asks for.
pub(super) fn go_version_wanted(root: &Path) -> String {
    std::fs::read_to_string(root.join("peers/go/go.mod"))
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("go ").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "1.26".into())
}

/// Builds the named peers that are not `extra` binaries: the Rust peers of
/// this workspace in one cargo call, those with a workspace of their own,
/// and the Go peer; returns the peers that failed, with why.
pub(super) fn build_peers(
    root: &Path,
    target: &Path,
    names: &[String],
    opts: &BuildOptions,
    extra: &BTreeMap<&str, &PathBuf>,
) -> BTreeMap<String, String> {
    let mut build_errors: BTreeMap<String, String> = BTreeMap::new();
    let pkgs: Vec<&str> = RUST_PEERS
        .iter()
        .filter(|p| names.iter().any(|x| x == p.name) && !extra.contains_key(p.name))
        .map(|p| p.package)
        .collect();
    let failed = build_rust(root, &opts.cargo_profile, &pkgs);
    for p in RUST_PEERS {
        if let Some(e) = failed.get(p.package) {
            build_errors.insert(p.name.to_string(), e.clone());
        }
    }
    for p in OWN_WORKSPACE_PEERS {
        if names.iter().any(|n| n == p.name) && !extra.contains_key(p.name) {
            let own_target = target.join(p.name);
            if let Err(e) = build_own_workspace(&root.join(p.dir), &own_target, &opts.cargo_profile)
            {
                build_errors.insert(p.name.to_string(), e);
            }
        }
    }
    if names.iter().any(|n| n == "go") && !extra.contains_key("go") {
        if let Err(e) = build_go(root, &go_bin(target)) {
            build_errors.insert("go".into(), e);
        }
    }
    build_errors
}
