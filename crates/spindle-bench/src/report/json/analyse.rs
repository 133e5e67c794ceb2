//! From the runner's rows to the saved model: [`analyse`] turns each row
//! into a [`RowJson`] (statistics of the in-process times, outside
//! measurements, the paired ratios to Go and Tokio) and adds the
//! geometric-mean summary: spindle against every other peer, over the
//! runtime rows and, apart, over the compiler rows ([`geomeans`]).
//!
//! Invariants: a row that is not ok keeps no samples, no statistics and no
//! ratio; ratios are this row's time over the reference peer's, paired by
//! round.

use std::collections::BTreeMap;

use super::{Geomean, LatestRun, PeerStatus, RowJson, REFERENCES, SCHEMA};
use crate::meta::RunMeta;
use crate::peers::PeerInfo;
use crate::runner::{Row, Sample, Status};
use crate::stats::{self, Ratio};
use crate::workloads::Summarised;

fn secs(ns: f64) -> f64 {
    ns / 1e9
}

/// The status and error a row is saved with: an ok row without a counted
/// run is failed.
fn status_of(r: &Row, counted: bool) -> (&'static str, Option<String>) {
    if r.ok() && !counted {
        return ("failed", Some("no counted run".into()));
    }
    match &r.status {
        Status::Ok => ("ok", None),
        Status::Failed(e) => ("failed", Some(e.clone())),
        Status::Unsupported(e) => ("unsupported", Some(e.clone())),
        Status::Skipped(e) => ("skipped", Some(e.clone())),
    }
}

/// A runner's row as saved: its statistics and outside measurements come
/// from its counted runs, and a row that is not ok keeps none.
fn row_json(r: &Row) -> RowJson {
    let ok = r.ok() && !r.samples.is_empty();
    let (status, error) = status_of(r, ok);
    let counted: &[Sample] = if ok { &r.samples } else { &[] };
    let samples: Vec<u64> = counted.iter().map(|s| s.ns).collect();
    let f: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    let s = stats::summarize(&f);
    let pick = |g: fn(&stats::Summary) -> f64| s.as_ref().map(g);
    let mean_of =
        |v: &[u64]| (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64 / v.len() as f64);
    let user: Vec<u64> = counted.iter().map(|s| s.user_ns).collect();
    let sys: Vec<u64> = counted.iter().map(|s| s.sys_ns).collect();
    RowJson {
        workload: r.workload.name.into(),
        group: r.workload.group.into(),
        peer: r.peer.clone(),
        command: r.command.clone(),
        ok,
        status: status.into(),
        error,
        result: r.result.clone(),
        expected: r.expected.clone(),
        ops: r.ops,
        size: r.size,
        workers: r.workers,
        median_ns: pick(|s| s.median),
        mean_ns: pick(|s| s.mean),
        min_ns: pick(|s| s.min),
        max_ns: pick(|s| s.max),
        stddev_ns: pick(|s| s.stddev),
        mad_ns: pick(|s| s.mad),
        outliers: s.as_ref().map(|s| s.outliers.clone()).unwrap_or_default(),
        ns_per_op: match (pick(|s| s.median), r.ops) {
            (Some(m), Some(o)) if o > 0 && ok => Some(m / o as f64),
            _ => None,
        },
        wall_ns: counted.iter().map(|s| s.wall_ns).collect(),
        peak_rss_bytes: counted.iter().map(|s| s.peak_rss_bytes).max(),
        rss_floor_bytes: counted.iter().map(|s| s.rss_floor_bytes).max(),
        extra: r.extra.clone(),
        timed_share: None,
        ratios: BTreeMap::new(),
        mean: pick(|s| s.mean).map(secs),
        stddev: pick(|s| s.stddev).map(secs),
        median: pick(|s| s.median).map(secs),
        min: pick(|s| s.min).map(secs),
        max: pick(|s| s.max).map(secs),
        user: mean_of(&user).map(secs),
        system: mean_of(&sys).map(secs),
        times: f.iter().map(|&x| secs(x)).collect(),
        user_ns: user,
        sys_ns: sys,
        samples_ns: samples,
    }
}

/// A row whose own time is under this share of its process's wall time
/// less start-up is flagged, when the time it did not count is more than
/// [`UNTIMED_FLOOR_NS`].
pub const TIMED_SHARE_FLOOR: f64 = 0.5;

/// Below this much uncounted time a low share is process start-up's jitter
/// (a run of a few hundred microseconds varies by as much), not work the
/// peer left out of its timed region.
pub const UNTIMED_FLOOR_NS: f64 = 5e6;

/// Sets every ok row's [`RowJson::timed_share`]. A peer's start-up is the
/// least wall-minus-own time over all its runs in this run (process start,
/// runtime build and tear-down of its lightest row); what a row spends
/// outside its timed region beyond that is work the peer did not time.
pub fn add_timed_shares(rows: &mut [RowJson]) {
    let mut startup: BTreeMap<String, u64> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.ok) {
        for (wall, own) in r.wall_ns.iter().zip(&r.samples_ns) {
            let outside = wall.saturating_sub(*own);
            let least = startup.entry(r.peer.clone()).or_insert(outside);
            *least = (*least).min(outside);
        }
    }
    for r in rows.iter_mut().filter(|r| r.ok) {
        let walls: Vec<f64> = r.wall_ns.iter().map(|&w| w as f64).collect();
        let (Some(wall), Some(own)) = (stats::median(&walls), r.median_ns) else {
            continue;
        };
        let beyond_startup = wall - startup[&r.peer] as f64;
        if beyond_startup - own > UNTIMED_FLOOR_NS {
            r.timed_share = Some((own / beyond_startup).min(1.0));
        }
    }
}

/// Adds paired ratios to the reference peers, in place.
pub fn add_ratios(rows: &mut [RowJson]) {
    let refs: BTreeMap<(String, String), Vec<f64>> = rows
        .iter()
        .filter(|r| r.ok && REFERENCES.contains(&r.peer.as_str()))
        .map(|r| ((r.workload.clone(), r.peer.clone()), r.samples_f64()))
        .collect();
    for r in rows.iter_mut().filter(|r| r.ok) {
        for reference in REFERENCES {
            if r.peer == *reference {
                continue;
            }
            if let Some(b) = refs.get(&(r.workload.clone(), reference.to_string())) {
                if let Some(ratio) = stats::paired_ratio(&r.samples_f64(), b) {
                    r.ratios.insert(reference.to_string(), ratio);
                }
            }
        }
    }
}

/// Geometric means of `peer`'s ratios to every other peer in `rows`, one
/// per class of rows that counts ([`Summarised::Runtime`], then
/// [`Summarised::Compiler`]); blocking_pressure counts in neither.
pub fn geomeans(rows: &[RowJson], peer: &str) -> Vec<Geomean> {
    let ours: BTreeMap<&str, &RowJson> = rows
        .iter()
        .filter(|r| r.ok && r.peer == peer)
        .map(|r| (r.workload.as_str(), r))
        .collect();
    let mut others: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.peer != peer) {
        if !others.contains(&r.peer.as_str()) {
            others.push(&r.peer);
        }
    }
    let mut out = Vec::new();
    for class in [Summarised::Runtime, Summarised::Compiler] {
        for other in &others {
            let paired: Vec<(String, Ratio)> = rows
                .iter()
                .filter(|r| r.ok && r.peer == *other && summarised(&r.workload) == class)
                .filter_map(|r| {
                    let mine = ours.get(r.workload.as_str())?;
                    let ratio = stats::paired_ratio(&mine.samples_f64(), &r.samples_f64())?;
                    Some((r.workload.clone(), ratio))
                })
                .collect();
            let ratios: Vec<f64> = paired.iter().map(|(_, r)| r.ratio).collect();
            let Some(g) = stats::geomean(&ratios) else {
                continue;
            };
            let count = |f: fn(&Ratio) -> bool| paired.iter().filter(|(_, r)| f(r)).count();
            out.push(Geomean {
                peer: peer.into(),
                against: other.to_string(),
                class: class.as_str().into(),
                geomean: g,
                rows: paired.len(),
                faster: count(|r| r.significant && r.ratio < 1.0),
                slower: count(|r| r.significant && r.ratio > 1.0),
                not_significant: count(|r| !r.significant),
                workloads: paired.into_iter().map(|(w, _)| w).collect(),
            });
        }
    }
    out
}

/// The rows a summary line covers, said the short way: all of its class's
/// rows in this run, or the ones it covers, or all but a few.
pub fn coverage(g: &Geomean, summary: &[Geomean]) -> String {
    let mut class_rows: Vec<&str> = Vec::new();
    for other in summary.iter().filter(|o| o.class == g.class) {
        for w in &other.workloads {
            if !class_rows.contains(&w.as_str()) {
                class_rows.push(w);
            }
        }
    }
    let missing: Vec<&str> = class_rows
        .iter()
        .copied()
        .filter(|w| !g.workloads.iter().any(|x| x == w))
        .collect();
    if missing.is_empty() {
        format!("every {} row of this run", g.class)
    } else if missing.len() < g.workloads.len() {
        format!("all {} rows but {}", g.class, missing.join(", "))
    } else {
        g.workloads.join(", ")
    }
}

fn summarised(workload: &str) -> Summarised {
    crate::workloads::find(workload).map_or(Summarised::Runtime, |w| w.summarised())
}

pub struct RunSettings {
    pub profile: String,
    pub workers: usize,
    pub warmup: u32,
    pub runs: u32,
}

/// Analyses the runner's rows into the saved model.
pub fn analyse(
    meta: RunMeta,
    settings: RunSettings,
    peers: &[PeerInfo],
    rows: &[Row],
) -> LatestRun {
    let mut results: Vec<RowJson> = rows.iter().map(row_json).collect();
    add_timed_shares(&mut results);
    add_ratios(&mut results);
    let summary = geomeans(&results, "spindle");
    LatestRun {
        schema: SCHEMA,
        meta,
        profile: settings.profile,
        workers: settings.workers,
        warmup: settings.warmup,
        runs: settings.runs,
        peers: peers
            .iter()
            .map(|p| PeerStatus {
                name: p.name.clone(),
                available: p.available.is_ok(),
                reason: p.available.as_ref().err().cloned(),
                path: p
                    .available
                    .as_ref()
                    .ok()
                    .map(|x| x.path.display().to_string()),
            })
            .collect(),
        results,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::{Machine, Toolchains};
    use crate::report::json::{json_lines, to_string};
    use crate::runner::Sample;
    use crate::workloads;

    fn meta() -> RunMeta {
        RunMeta {
            run_id: "1".into(),
            date: "2026-11-21T00:00:00Z".into(),
            timestamp_unix: 1,
            git_commit: "abc".into(),
            git_dirty: false,
            spindle_tree: None,
            machine: Machine {
                cores: 2,
                cpu_model: "cpu".into(),
                os: "linux".into(),
            },
            toolchains: Toolchains {
                rustc: "rustc".into(),
                go: "go".into(),
                crates: Default::default(),
            },
            loadavg_start: "0.1 0.2 0.3".into(),
            loadavg_end: "1.0 0.5 0.4".into(),
        }
    }

    fn row(w: &str, peer: &str, ns: &[u64], status: Status) -> Row {
        Row {
            workload: workloads::find(w).unwrap(),
            peer: peer.into(),
            size: 10,
            workers: 2,
            status,
            expected: "45".into(),
            result: Some("45".into()),
            ops: Some(10),
            samples: ns
                .iter()
                .map(|&ns| Sample {
                    ns,
                    wall_ns: ns * 2,
                    user_ns: 1,
                    sys_ns: 1,
                    peak_rss_bytes: 4096,
                    rss_floor_bytes: 1024,
                })
                .collect(),
            extra: BTreeMap::new(),
            command: format!("peer-{peer} run {w}"),
        }
    }

    fn run() -> LatestRun {
        let rows = vec![
            row("skynet", "go", &[100, 110, 105], Status::Ok),
            row("skynet", "tokio", &[200, 210, 190], Status::Ok),
            row("skynet", "spindle", &[50, 55, 52], Status::Ok),
            row(
                "fib",
                "spindle",
                &[],
                Status::Failed("wrong result: got 1, expected 55".into()),
            ),
            row("fib", "go", &[10, 10, 10], Status::Ok),
        ];
        let settings = RunSettings {
            profile: "quick".into(),
            workers: 2,
            warmup: 1,
            runs: 3,
        };
        analyse(meta(), settings, &[], &rows)
    }

    #[test]
    fn failed_rows_carry_no_time_and_ok_rows_carry_paired_ratios() {
        let r = run();
        assert!(r.any_failed());
        let fib = r.row("fib", "spindle").unwrap();
        assert!(
            !fib.ok
                && fib.samples_ns.is_empty()
                && fib.median_ns.is_none()
                && fib.ratios.is_empty()
        );
        let sky = r.row("skynet", "spindle").unwrap();
        assert_eq!(sky.median_ns, Some(52.0));
        assert_eq!(sky.ns_per_op, Some(5.2));
        let vs_go = sky.ratios["go"];
        assert!(
            vs_go.significant && vs_go.ratio < 0.55 && vs_go.ratio > 0.45,
            "{vs_go:?}"
        );
        assert!(sky.ratios["tokio"].ratio < 0.3);
        assert_eq!(r.row("skynet", "go").unwrap().ratios.len(), 1); // tokio only, not itself
        let g = &r.summary;
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].against.as_str(), g[0].rows, g[0].faster),
            ("go", 1, 1)
        );
    }

    #[test]
    fn compiler_rows_have_their_own_mean_and_blocking_pressure_none() {
        let rows = vec![
            row("skynet", "spindle", &[50, 50, 50], Status::Ok),
            row("skynet", "go", &[100, 100, 100], Status::Ok),
            row("pingpong", "spindle", &[10, 10, 10], Status::Ok),
            row("pingpong", "go", &[40, 40, 40], Status::Ok),
            row("pingpong", "kanal", &[5, 5, 5], Status::Ok),
            row("fib", "spindle", &[30, 30, 30], Status::Ok),
            row("fib", "go", &[10, 10, 10], Status::Ok),
            row("blocking_pressure", "spindle", &[1, 1, 1], Status::Ok),
            row("blocking_pressure", "go", &[1000, 1000, 1000], Status::Ok),
        ];
        let settings = RunSettings {
            profile: "quick".into(),
            workers: 2,
            warmup: 0,
            runs: 3,
        };
        let r = analyse(meta(), settings, &[], &rows);
        let find = |class: &str, against: &str| {
            r.summary
                .iter()
                .find(|g| g.class == class && g.against == against)
                .unwrap_or_else(|| panic!("no {class} mean against {against}: {:?}", r.summary))
        };
        let go = find("runtime", "go");
        assert_eq!(go.workloads, ["skynet", "pingpong"]);
        assert!((go.geomean - (0.5f64 * 0.25).sqrt()).abs() < 1e-9, "{go:?}");
        assert_eq!(coverage(go, &r.summary), "every runtime row of this run");
        let kanal = find("runtime", "kanal");
        assert!(
            kanal.rows == 1 && (kanal.geomean - 2.0).abs() < 1e-9,
            "{kanal:?}"
        );
        assert_eq!(coverage(kanal, &r.summary), "pingpong");
        let fib = find("compiler", "go");
        assert!(fib.rows == 1 && (fib.geomean - 3.0).abs() < 1e-9, "{fib:?}");
        assert_eq!(r.summary.len(), 3, "blocking_pressure is in no mean");
    }

    #[test]
    fn a_row_timing_little_of_its_process_is_flagged() {
        // `row` gives every run a wall time of twice its own time.
        const MS: u64 = 1_000_000;
        let rows = [
            row("skynet", "go", &[MS, MS, MS], Status::Ok),
            row("pingpong", "go", &[20 * MS, 20 * MS, 20 * MS], Status::Ok),
        ];
        let mut results: Vec<RowJson> = rows.iter().map(row_json).collect();
        add_timed_shares(&mut results);
        // Start-up: skynet's 1 ms outside its own time, too little to judge
        // skynet by. pingpong: 20 ms of 40 − 1.
        assert_eq!(results[0].timed_share, None);
        let share = results[1].timed_share.unwrap();
        assert!((share - 20.0 / 39.0).abs() < 1e-9, "{share}");
        assert!(!results[1].extras_display().contains("FLAG"));
        results[1].wall_ns = vec![100 * MS; 3];
        results[1].timed_share = None;
        add_timed_shares(&mut results);
        assert!(
            results[1].extras_display().contains("FLAG: self-timed 20%"),
            "{}",
            results[1].extras_display()
        );
    }

    #[test]
    fn live_1m_shows_peak_rss_per_live_task() {
        let mut row = run().row("skynet", "spindle").unwrap().clone();
        row.workload = "live_1m".into();
        row.size = 1000;
        row.peak_rss_bytes = Some(250_000);
        assert!(
            row.extras_display()
                .contains("(250 B peak RSS per live task)"),
            "{}",
            row.extras_display()
        );
    }

    #[test]
    fn the_saved_run_round_trips() {
        let r = run();
        let back: LatestRun = serde_json::from_str(&to_string(&r)).unwrap();
        assert_eq!(back, r);
        assert_eq!(json_lines(&r).lines().count(), 5);
    }

    #[test]
    fn html_has_an_svg_per_workload_and_benchstat_skips_failed_rows() {
        let r = run();
        let html = crate::report::html::render(&r, &[]);
        for w in ["skynet", "fib"] {
            let sec = html.split(&format!("<section id=\"{w}\">")).nth(1).unwrap();
            assert!(
                sec.split("</section>").next().unwrap().contains("<svg"),
                "{w}"
            );
        }
        assert!(html.contains("FAILED") && html.contains("wrong result: got 1"));
        let bs = crate::report::benchstat::render(&r);
        assert_eq!(
            bs.lines()
                .filter(|l| l.starts_with("BenchmarkFib/impl=spindle"))
                .count(),
            0
        );
        assert_eq!(
            bs.lines()
                .filter(|l| l.starts_with("BenchmarkSkynet/impl=spindle-2"))
                .count(),
            3
        );
    }
}
