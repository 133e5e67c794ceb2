//! Finding, building and interrogating the peers.
//!
//! The Rust peers are workspace binaries (`peer-spindle`, `peer-tokio`, …);
//! they are built with one `cargo build --profile <p> -p <pkg>…` (the `CARGO`
//! variable's cargo when set, else `cargo`; its output goes to stderr) and
//! found in `<target>/<profile dir>/`, where `<target>` is `CARGO_TARGET_DIR`
//! when set, else `<workspace>/target`. When the joint build fails each
//! package is built alone, so that one broken peer leaves the others usable.
//! A peer whose dependency tree is too big for the root workspace
//! (steady_state) is a workspace of its own, built into `<target>/<name>/`.
//! The Go peer is built with `go build -o <target>/go/peer-go .` in
//! `peers/go`; no `go` on the PATH (or no module yet) makes Go unavailable
//! with that reason and nothing else changes. `--no-build` skips building and
//! takes whatever binaries exist. Extra peers (`--peer-bin NAME=PATH`) are
//! taken as they are; the tests use them for fake peers.
//!
//! Every available binary is asked `list`; its `workload X` lines say which
//! rows it runs and `unsupported X reason` lines why not. A binary that fails
//! `list` without naming any workload is unavailable, with its own reason.
//!
//! Invariant: a [`Peer`] handed to the runner exists on disk and answered
//! `list` with at least one workload.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::runner::{run_process, tail, Exit};

mod build;

pub use build::example;
use build::{build_peers, cargo, profile_dir};

/// A Rust peer of the root workspace.
pub struct RustPeer {
    /// The peer's name, as `--peer` takes it.
    pub name: &'static str,
    /// Its cargo package.
    pub package: &'static str,
    /// Its binary's name.
    pub bin: &'static str,
}

/// The Rust peers of the root workspace.
pub const RUST_PEERS: &[RustPeer] = &[
    RustPeer {
        name: "spindle",
        package: "spindle-peer-spindle",
        bin: "peer-spindle",
    },
    RustPeer {
        name: "tokio",
        package: "spindle-peer-tokio",
        bin: "peer-tokio",
    },
    RustPeer {
        name: "smol",
        package: "spindle-peer-smol",
        bin: "peer-smol",
    },
    RustPeer {
        name: "may",
        package: "spindle-peer-may",
        bin: "peer-may",
    },
    RustPeer {
        name: "monoio",
        package: "spindle-peer-monoio",
        bin: "peer-monoio",
    },
    RustPeer {
        name: "std",
        package: "spindle-peer-std",
        bin: "peer-std",
    },
    RustPeer {
        name: "rayon",
        package: "spindle-peer-rayon",
        bin: "peer-rayon",
    },
    RustPeer {
        name: "crossbeam",
        package: "spindle-peer-crossbeam",
        bin: "peer-crossbeam",
    },
    RustPeer {
        name: "flume",
        package: "spindle-peer-flume",
        bin: "peer-flume",
    },
    RustPeer {
        name: "kanal",
        package: "spindle-peer-kanal",
        bin: "peer-kanal",
    },
    RustPeer {
        name: "spindle-aeron",
        package: "spindle-peer-spindle-aeron",
        bin: "peer-spindle-aeron",
    },
];

/// A Rust peer in a workspace of its own, because its dependency tree is
/// too big for the root one. It is built with `cargo build --manifest-path
/// <dir>/Cargo.toml --target-dir <target>/<name>` and found in that
/// target's profile folder.
pub struct OwnWorkspacePeer {
    /// The peer's name, as `--peer` takes it.
    pub name: &'static str,
    /// Its manifest folder, relative to the workspace root.
    pub dir: &'static str,
    /// Its binary's name.
    pub bin: &'static str,
}

/// The Rust peers in a workspace of their own.
pub const OWN_WORKSPACE_PEERS: &[OwnWorkspacePeer] = &[OwnWorkspacePeer {
    name: "steady_state",
    dir: "peers/steady_state",
    bin: "peer-steady_state",
}];

/// Peers `--peer all` leaves out of the quick and tiny profiles, and why:
/// the full profile, or naming them, runs them.
pub const FULL_PROFILE_ONLY: &[(&str, &str)] = &[
    (
        "steady_state",
        "its own workspace of about 240 crates takes minutes to build, past the quick run's budget",
    ),
    (
        "spindle-aeron",
        "it builds Aeron's C client and media driver from source (CMake >= 3.30, libclang: \
         scripts/aeron-deps installs them), minutes on a fresh machine",
    ),
];

/// Every built-in peer, in report order.
pub const KNOWN: &[&str] = &[
    "spindle",
    "go",
    "tokio",
    "smol",
    "may",
    "monoio",
    "steady_state",
    "std",
    "rayon",
    "crossbeam",
    "flume",
    "kanal",
    "spindle-aeron",
];

/// A peer ready to run.
#[derive(Debug, Clone)]
pub struct Peer {
    pub name: String,
    pub path: PathBuf,
    /// Its `list` answer: workload → Ok, or Err(reason it cannot run it).
    pub workloads: BTreeMap<String, Result<(), String>>,
}

impl Peer {
    /// The peer says it runs this workload.
    pub fn lists(&self, workload: &str) -> bool {
        matches!(self.workloads.get(workload), Some(Ok(())))
    }
    /// Ok, or why the peer will not run this workload.
    pub fn support(&self, workload: &str) -> Result<(), String> {
        match self.workloads.get(workload) {
            Some(r) => r.clone(),
            None => Err("not in the peer's list".into()),
        }
    }
}

/// A requested peer: ready, or why not.
#[derive(Debug, Clone)]
pub struct PeerInfo {
    pub name: String,
    pub available: Result<Peer, String>,
}

/// How to obtain peer binaries.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub no_build: bool,
    /// Cargo profile for the Rust peers (`release`, or `dev` for smoke tests).
    pub cargo_profile: String,
    /// Extra peers given as NAME=PATH.
    pub extra: Vec<(String, PathBuf)>,
}

/// The workspace root: from this crate's manifest dir, else `cargo locate-project`.
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(root) = here.parent().and_then(Path::parent) {
        let manifest = root.join("Cargo.toml");
        if std::fs::read_to_string(&manifest).is_ok_and(|s| s.contains("[workspace]")) {
            return root.to_path_buf();
        }
    }
    let out = Command::new(cargo())
        .args(["locate-project", "--workspace", "--message-format", "plain"])
        .output();
    if let Ok(o) = out {
        if o.status.success() {
            let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            if let Some(d) = p.parent() {
                return d.to_path_buf();
            }
        }
    }
    PathBuf::from(".")
}

/// `CARGO_TARGET_DIR` (relative to the current directory, as cargo reads it), else `<root>/target`.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                std::env::current_dir().unwrap_or_default().join(d)
            }
        }
        _ => root.join("target"),
    }
}

/// Asks a binary `list`; `Err` makes the peer unavailable.
pub fn query_list(path: &Path) -> Result<BTreeMap<String, Result<(), String>>, String> {
    let o = run_process(path, &["list".into()], &[], Duration::from_secs(30))
        .map_err(|e| format!("could not start {}: {e}", path.display()))?;
    let mut map = BTreeMap::new();
    for line in o.stdout.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("workload") => {
                if let Some(n) = it.next() {
                    map.insert(n.to_string(), Ok(()));
                }
            }
            Some("unsupported") => {
                if let Some(n) = it.next() {
                    let reason: Vec<&str> = it.collect();
                    let reason = if reason.is_empty() {
                        "unsupported".to_string()
                    } else {
                        reason.join(" ")
                    };
                    map.insert(n.to_string(), Err(reason));
                }
            }
            _ => {}
        }
    }
    if map.values().any(Result::is_ok) {
        return Ok(map);
    }
    let said = [tail(&o.stderr, 2), tail(&o.stdout, 2)]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" | ");
    let exit = match o.exit {
        Exit::Code(c) => format!("exit {c}"),
        Exit::Signal(s) => format!("signal {s}"),
        Exit::TimedOut => "timed out".into(),
    };
    Err(format!(
        "`list` names no workload ({exit}{}{said})",
        if said.is_empty() { "" } else { ": " }
    ))
}

/// Every valid peer name: the built-in ones and the extras.
pub fn all_names(opts: &BuildOptions) -> Vec<String> {
    let mut v: Vec<String> = KNOWN.iter().map(|s| s.to_string()).collect();
    for (n, _) in &opts.extra {
        if !v.contains(n) {
            v.push(n.clone());
        }
    }
    v
}

/// Resolves `all` or a comma list against the valid names, keeping report order.
pub fn select(spec: &str, opts: &BuildOptions) -> Result<Vec<String>, String> {
    let valid = all_names(opts);
    if spec.trim() == "all" {
        return Ok(valid);
    }
    let mut wanted = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if !valid.iter().any(|v| v == part) {
            return Err(format!(
                "unknown peer `{part}`; valid names: all, {}",
                valid.join(", ")
            ));
        }
        wanted.push(part.to_string());
    }
    if wanted.is_empty() {
        return Err("no peer named; use `all` or a comma list".into());
    }
    Ok(valid.into_iter().filter(|v| wanted.contains(v)).collect())
}

/// Builds (unless told not to) and interrogates the named peers.
pub fn discover(names: &[String], opts: &BuildOptions) -> Vec<PeerInfo> {
    let root = workspace_root();
    let target = target_dir(&root);
    let extra: BTreeMap<&str, &PathBuf> = opts.extra.iter().map(|(n, p)| (n.as_str(), p)).collect();
    let build_errors = if opts.no_build {
        BTreeMap::new()
    } else {
        build_peers(&root, &target, names, opts, &extra)
    };
    names
        .iter()
        .map(|name| {
            let path = match extra.get(name.as_str()) {
                Some(p) => (*p).clone(),
                None => built_path(&target, &opts.cargo_profile, name),
            };
            let available = if let Some(e) = build_errors.get(name) {
                Err(e.clone())
            } else if !path.exists() {
                Err(format!(
                    "no binary at {}{}",
                    path.display(),
                    if opts.no_build { " (--no-build)" } else { "" }
                ))
            } else {
                query_list(&path).map(|workloads| Peer {
                    name: name.clone(),
                    path: path.clone(),
                    workloads,
                })
            };
            PeerInfo {
                name: name.clone(),
                available,
            }
        })
        .collect()
}

/// The Go peer's binary.
fn go_bin(target: &Path) -> PathBuf {
    target.join("go").join("peer-go")
}

/// Where the build puts peer `name`'s binary under `target`.
fn built_path(target: &Path, profile: &str, name: &str) -> PathBuf {
    if name == "go" {
        go_bin(target)
    } else if let Some(p) = OWN_WORKSPACE_PEERS.iter().find(|p| p.name == name) {
        target.join(name).join(profile_dir(profile)).join(p.bin)
    } else {
        let bin = RUST_PEERS
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.bin)
            .unwrap_or("?");
        target.join(profile_dir(profile)).join(bin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> BuildOptions {
        BuildOptions {
            no_build: true,
            cargo_profile: "release".into(),
            extra: vec![("fake".into(), "/x".into())],
        }
    }

    #[test]
    fn selects_peers_in_report_order_and_rejects_unknown_names() {
        assert_eq!(
            select("tokio,spindle", &opts()).unwrap(),
            vec!["spindle", "tokio"]
        );
        assert!(select("all", &opts())
            .unwrap()
            .contains(&"fake".to_string()));
        let e = select("spindle,nodejs", &opts()).unwrap_err();
        assert!(
            e.contains("nodejs") && e.contains("tokio") && e.contains("fake"),
            "{e}"
        );
    }

    #[test]
    fn workspace_root_holds_the_workspace_manifest() {
        assert!(workspace_root().join("peers").is_dir());
        assert_eq!(profile_dir("dev"), "debug");
        assert_eq!(profile_dir("release"), "release");
    }
}
