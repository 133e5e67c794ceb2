//! Every output of a suite run, written under `--out` (default `bench/`):
//! `latest.json` (replaced), `history.jsonl` (appended), `latest.benchstat.txt`
//! (replaced) and `report.html` (regenerated from the latest run and the
//! whole history). The terminal table is rendered by [`table`].

pub mod benchstat;
pub mod history;
pub mod html;
pub mod json;
mod svg;
pub mod table;

use std::path::{Path, PathBuf};

use json::LatestRun;

pub const LATEST: &str = "latest.json";
pub const HISTORY: &str = "history.jsonl";
pub const BENCHSTAT: &str = "latest.benchstat.txt";
pub const REPORT: &str = "report.html";

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Saves a finished run: JSON, history line per row, benchstat, HTML.
pub fn save(out: &Path, run: &LatestRun) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    write(&out.join(LATEST), &(json::to_string(run) + "\n"))?;
    history::append(&out.join(HISTORY), run)
        .map_err(|e| format!("cannot append to history: {e}"))?;
    write(&out.join(BENCHSTAT), &benchstat::render(run))?;
    regenerate(out, run)
}

/// Rewrites `report.html` from a run and the history on disk.
pub fn regenerate(out: &Path, run: &LatestRun) -> Result<PathBuf, String> {
    let (hist, _) = history::read(&out.join(HISTORY));
    let path = out.join(REPORT);
    write(&path, &html::render(run, &hist))?;
    Ok(path)
}
