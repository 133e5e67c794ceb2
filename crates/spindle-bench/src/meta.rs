//! Facts about the run that every output records: when, which commit, which
//! machine (cores, CPU model from /proc/cpuinfo), which toolchains.
//!
//! Dates are UTC, written as RFC 3339 (`2026-11-21T19:30:00Z`) from the Unix
//! time with a hand-written civil-date conversion (no date crate needed), and
//! also kept as Unix seconds, which is what the freshness check compares.
//! Every probe degrades to `"unknown"` rather than failing the run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub cores: usize,
    pub cpu_model: String,
    pub os: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Toolchains {
    pub rustc: String,
    pub go: String,
    /// The crates the peers stand on, name → version, from `Cargo.lock`.
    #[serde(default)]
    pub crates: BTreeMap<String, String>,
}

impl Toolchains {
    /// One line: `rustc 1.95.0 (…); go1.26 …; tokio 1.x, …`.
    pub fn display(&self) -> String {
        let crates: Vec<String> = self
            .crates
            .iter()
            .map(|(name, version)| format!("{name} {version}"))
            .collect();
        format!("{}; {}; {}", self.rustc, self.go, crates.join(", "))
    }
}

/// The crates whose versions a report names: each peer's runtime or
/// channel crate.
pub const PEER_CRATES: &[&str] = &[
    "tokio",
    "async-channel",
    "rayon",
    "crossbeam-channel",
    "flume",
    "kanal",
    "smol",
    "async-executor",
    "may",
    "monoio",
    "local-sync",
    "steady_state",
    "rusteron-client",
];

/// The versions of [`PEER_CRATES`] in the root `Cargo.lock` and, for the
/// crates it lacks, in the lock of each peer that is a workspace of its own.
fn peer_crate_versions(root: &Path) -> BTreeMap<String, String> {
    let locks = std::iter::once(root.join("Cargo.lock")).chain(
        crate::peers::OWN_WORKSPACE_PEERS
            .iter()
            .map(|p| root.join(p.dir).join("Cargo.lock")),
    );
    // The root lock's version of a crate wins: it is the one the root
    // workspace's peers run.
    let mut versions = BTreeMap::new();
    for lock in locks {
        if let Ok(text) = std::fs::read_to_string(lock) {
            for (name, version) in locked_versions(&text, PEER_CRATES) {
                versions.entry(name).or_insert(version);
            }
        }
    }
    versions
}

/// The versions `Cargo.lock` pins for `names` (a name it lacks is left out;
/// a crate locked at two versions shows both).
pub fn locked_versions(lock: &str, names: &[&str]) -> BTreeMap<String, String> {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut name: Option<&str> = None;
    for line in lock.lines() {
        let value = |key: &str| {
            line.strip_prefix(key)
                .map(|v| v.trim().trim_matches('"'))
                .filter(|_| line.starts_with(key))
        };
        if line.starts_with("[[package]]") {
            name = None;
        } else if let Some(n) = value("name = ") {
            name = names.contains(&n).then_some(n);
        } else if let (Some(n), Some(v)) = (name, value("version = ")) {
            found.entry(n.to_string()).or_default().push(v.to_string());
        }
    }
    found.into_iter().map(|(n, v)| (n, v.join("/"))).collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// Unique per suite run (Unix time in nanoseconds, hex): groups history lines.
    #[serde(default)]
    pub run_id: String,
    /// RFC 3339 UTC.
    pub date: String,
    pub timestamp_unix: u64,
    pub git_commit: String,
    /// Uncommitted changes in the tree when it ran.
    pub git_dirty: bool,
    /// Git tree id of `crates/spindle` as it was on disk when the suite ran
    /// (uncommitted changes included): lets `check-fresh` see that a run
    /// measured exactly the runtime HEAD holds.
    #[serde(default)]
    pub spindle_tree: Option<String>,
    pub machine: Machine,
    pub toolchains: Toolchains,
    /// `/proc/loadavg`'s 1/5/15-minute averages when the run started and
    /// ended: other load on the machine makes every time less trustworthy.
    #[serde(default)]
    pub loadavg_start: String,
    #[serde(default)]
    pub loadavg_end: String,
}

/// Writes `value` as pretty JSON to `<out>/<name>` (creating `out`).
pub fn save_json<T: Serialize>(
    out: &Path,
    name: &str,
    value: &T,
) -> Result<std::path::PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("could not create {}: {e}", out.display()))?;
    let path = out.join(name);
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    Ok(path)
}

/// The 1, 5 and 15-minute load averages, or "unknown".
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Unix seconds → `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(unix: u64) -> String {
    let (y, mo, d) = civil_from_days((unix / 86_400) as i64);
    let s = unix % 86_400;
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

fn first_line(cmd: &str, args: &[&str], dir: &Path) -> Option<String> {
    let o = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let s = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()?
        .trim()
        .to_string();
    (!s.is_empty()).then_some(s)
}

pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| {
                    l.starts_with("model name")
                        || l.starts_with("Model")
                        || l.starts_with("Hardware")
                })
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Unix time of the last commit touching `path` (relative to `root`).
pub fn last_commit_touching(root: &Path, path: &str) -> Option<u64> {
    first_line("git", &["log", "-1", "--format=%ct", "--", path], root)?
        .parse()
        .ok()
}

/// The tree id `path` would have if the working tree were committed now,
/// computed in a throw-away copy of the index (the real index is untouched).
pub fn worktree_tree_id(root: &Path, path: &str) -> Option<String> {
    let index = first_line(
        "git",
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
        root,
    )?;
    let tmp = std::env::temp_dir().join(format!("spindle-bench-index-{}", std::process::id()));
    std::fs::copy(&index, &tmp).ok()?;
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_INDEX_FILE", &tmp)
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    let prefix = format!("{path}/");
    let id = git(&["add", "-A", "--", path])
        .and_then(|_| git(&["write-tree", "--prefix", &prefix]))
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let _ = std::fs::remove_file(&tmp);
    id.filter(|s| !s.is_empty())
}

/// The tree id of `path` in HEAD.
pub fn head_tree_id(root: &Path, path: &str) -> Option<String> {
    first_line("git", &["rev-parse", &format!("HEAD:{path}")], root)
}

/// `path` has changes not committed (tracked or untracked).
pub fn uncommitted(root: &Path, path: &str) -> bool {
    Command::new("git")
        .args(["status", "--porcelain", "--", path])
        .current_dir(root)
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false)
}

pub fn collect(root: &Path) -> RunMeta {
    let ts = now_unix();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let go = std::env::var("GO").unwrap_or_else(|_| "go".into());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    RunMeta {
        run_id: format!("{nanos:x}"),
        date: rfc3339(ts),
        timestamp_unix: ts,
        git_commit: first_line("git", &["rev-parse", "HEAD"], root)
            .unwrap_or_else(|| "unknown".into()),
        git_dirty: Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=no"])
            .current_dir(root)
            .output()
            .map(|o| !o.stdout.is_empty())
            .unwrap_or(false),
        spindle_tree: worktree_tree_id(root, "crates/spindle"),
        machine: Machine {
            cores: cores(),
            cpu_model: cpu_model(),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        },
        toolchains: Toolchains {
            rustc: first_line(&rustc, &["-V"], root).unwrap_or_else(|| "unknown".into()),
            go: first_line(&go, &["version"], root).unwrap_or_else(|| "not installed".into()),
            crates: peer_crate_versions(root),
        },
        loadavg_start: loadavg(),
        loadavg_end: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_locked_versions_of_named_crates() {
        let lock = "version = 4\n\n[[package]]\nname = \"tokio\"\nversion = \"1.54.0\"\n\
                    source = \"registry\"\n\n[[package]]\nname = \"tokio-macros\"\n\
                    version = \"2.6.0\"\n\n[[package]]\nname = \"rand\"\nversion = \"0.8.5\"\n\n\
                    [[package]]\nname = \"rand\"\nversion = \"0.9.1\"\n";
        let v = locked_versions(lock, &["tokio", "rand", "kanal"]);
        assert_eq!(v.get("tokio").map(String::as_str), Some("1.54.0"));
        assert_eq!(v.get("rand").map(String::as_str), Some("0.8.5/0.9.1"));
        assert_eq!(v.len(), 2, "{v:?}");
    }

    #[test]
    fn formats_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
