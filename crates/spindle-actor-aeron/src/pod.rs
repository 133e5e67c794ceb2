//! [`Pod`]: one process's connection to Aeron, through a media driver it
//! embeds or one already running.
//!
//! Invariants:
//! - an embedded driver runs in this process on a thread of its own, in
//!   Aeron's shared threading mode (one thread for conductor, sender and
//!   receiver: a pod should not take three cores from its actors), in a
//!   directory of its own that it deletes when it stops;
//! - the client is dropped before the driver it talks to (field order);
//! - every error names what failed: the driver directory, the channel and
//!   stream, and Aeron's own message.

use crate::error::AeronError;
use rusteron_client::{Aeron, AeronCError, AeronContext, IntoCString};
use rusteron_media_driver::testing::EmbeddedDriver;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a pod finds its media driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverMode {
    /// Launch one in this process (a fresh directory under the system's
    /// temporary directory, removed at the end).
    Embedded,
    /// Launch one in this process, in `dir` (a pod that others join
    /// through `DriverMode::External(dir)`).
    EmbeddedAt(PathBuf),
    /// Use the driver already running with this directory.
    External(PathBuf),
}

/// A process's Aeron client (and its embedded driver). Cheap to clone.
#[derive(Clone)]
pub struct Pod {
    inner: Arc<Inner>,
}

struct Inner {
    // Field order: the client goes before the driver it talks to.
    aeron: Aeron,
    dir: String,
    _driver: Option<EmbeddedDriver>,
}

impl Pod {
    /// Connects, launching a driver first unless `mode` is external.
    pub fn connect(mode: DriverMode) -> Result<Pod, AeronError> {
        let (driver, dir) = match &mode {
            DriverMode::Embedded => {
                let d = launch(None)?;
                let dir = d.dir().to_string();
                (Some(d), dir)
            }
            DriverMode::EmbeddedAt(dir) => {
                let d = launch(Some(dir))?;
                let dir = d.dir().to_string();
                (Some(d), dir)
            }
            DriverMode::External(dir) => {
                if !dir.join("cnc.dat").exists() {
                    return Err(AeronError::Driver(format!(
                        "no media driver runs with directory {} (no cnc.dat there)",
                        dir.display()
                    )));
                }
                (None, dir.display().to_string())
            }
        };
        let aeron = client(&dir).map_err(|e| {
            AeronError::Driver(format!(
                "could not connect to the media driver in {dir}: {}",
                describe(&e)
            ))
        })?;
        Ok(Pod {
            inner: Arc::new(Inner {
                aeron,
                dir,
                _driver: driver,
            }),
        })
    }

    /// The driver's directory (give it to a pod that should share it).
    pub fn dir(&self) -> &str {
        &self.inner.dir
    }

    pub(crate) fn aeron(&self) -> &Aeron {
        &self.inner.aeron
    }
}

impl std::fmt::Debug for Pod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pod")
            .field("dir", &self.inner.dir)
            .field("embedded", &self.inner._driver.is_some())
            .finish()
    }
}

/// Launches an embedded driver, in `dir` when given.
fn launch(dir: Option<&Path>) -> Result<EmbeddedDriver, AeronError> {
    if let Some(dir) = dir {
        check_writable(dir)?;
    }
    EmbeddedDriver::launch_with(|ctx| {
        ctx.set_threading_mode(
            rusteron_media_driver::bindings::aeron_threading_mode_enum::AERON_THREADING_MODE_SHARED,
        )?;
        if let Some(dir) = dir {
            ctx.set_dir(&dir.display().to_string().into_c_string())?;
        }
        Ok(())
    })
    .map_err(|e| {
        AeronError::Driver(format!(
            "could not launch the embedded media driver{}: {}",
            dir.map(|d| format!(" in {}", d.display()))
                .unwrap_or_default(),
            e.message()
                .map_or_else(|| format!("code {}", e.code), str::to_string)
        ))
    })
}

/// A driver directory must be creatable and writable: say so by name
/// before Aeron fails less clearly.
fn check_writable(dir: &Path) -> Result<(), AeronError> {
    let parent = dir.parent().unwrap_or(dir);
    let probe = parent.join(format!(".spindle-aeron-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| {
        AeronError::Driver(format!(
            "the driver directory {} cannot be created: {} is not writable ({e})",
            dir.display(),
            parent.display()
        ))
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

fn client(dir: &str) -> Result<Aeron, AeronCError> {
    let ctx = AeronContext::new()?;
    ctx.set_dir(&dir.into_c_string())?;
    let aeron = Aeron::new(&ctx)?;
    aeron.start()?;
    Ok(aeron)
}

/// An Aeron error as text: its attached message, else Aeron's last one.
pub(crate) fn describe(e: &AeronCError) -> String {
    let msg = e
        .message()
        .map(str::to_string)
        .unwrap_or_else(|| Aeron::errmsg().to_string());
    let msg = msg.trim();
    if msg.is_empty() {
        format!("{:?} (code {})", e.kind(), e.code)
    } else {
        format!("{msg} (code {})", e.code)
    }
}

/// Waits (sleeping, not spinning) until `ready(&value)`, `timeout`, or
/// a shutdown request to the actor; gives the value back either way. The
/// value is moved in and out rather than borrowed, so the future stays
/// `Send` with Aeron's handles, which are `Send` but not `Sync`.
pub(crate) async fn wait_for<V>(
    ctx: &spindle_actor::ActorContext,
    value: V,
    ready: impl Fn(&V) -> bool,
    timeout: std::time::Duration,
) -> Result<V, V> {
    let start = std::time::Instant::now();
    loop {
        if ready(&value) {
            return Ok(value);
        }
        if start.elapsed() >= timeout || ctx.is_stopping() {
            return Err(value);
        }
        spindle::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// How long an actor waits for the driver to add its publication or
/// subscription (it blocks its own thread meanwhile).
pub(crate) const ADD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
