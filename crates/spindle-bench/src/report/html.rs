//! The static HTML report, `bench/report.html`: one self-contained file with
//! hand-written inline SVG (drawn by `svg.rs`), no script, no network.
//!
//! Per workload: a bar chart of ns per op across the peers (median, with a
//! min–max whisker) with the seeds' published figures as grey bars labelled
//! with their source and hardware; a table with ratios to Go and Tokio; a
//! peak-RSS bar chart; and, when the history holds more than one run of the
//! same workload at the same size, a line chart of each peer's median over
//! commits. Failed rows appear as text, never as a bar.
//!
//! Invariants: every interpolated string goes through [`esc`]; every
//! workload of the run gets at least one `<svg>`; the output depends only
//! on the run and the history passed in.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::history::HistoryLine;
use super::json::{coverage, LatestRun, RowJson, REFERENCES};
use super::svg::{bar_chart, bar_chart_ref, color, line_chart, Bar, Series, W};
use super::table::{fmt_bytes, fmt_ns};
use crate::workloads::{self, Workload};

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Runs shown in a history chart, the most recent.
const MAX_HISTORY: usize = 30;

fn ratio_cell(r: &RowJson, reference: &str) -> String {
    match r.ratios.get(reference) {
        Some(x) => format!(
            r#"<span title="95% CI {:.2}–{:.2} over {} paired runs">{}</span>"#,
            x.lo,
            x.hi,
            x.n,
            esc(&x.display())
        ),
        None if r.peer == reference => "1".into(),
        None => "–".into(),
    }
}

/// A workload's section: what it runs, the ns/op chart, the table of
/// rows, the published figures, the peak-RSS chart and the history chart.
fn workload_section(run: &LatestRun, name: &str, history: &[HistoryLine]) -> String {
    let rows: Vec<&RowJson> = run.results.iter().filter(|r| r.workload == name).collect();
    let w = workloads::find(name);
    let mut s = String::new();
    let _ = write!(s, r#"<section id="{n}"><h2>{n}</h2>"#, n = esc(name));
    if let (Some(w), Some(r0)) = (w, rows.first()) {
        let _ = write!(
            s,
            "<p>{} — size {}, {} workers; ops = {}; expected result <code>{}</code></p>",
            esc(w.description),
            r0.size,
            r0.workers,
            esc(w.ops_unit),
            esc(&r0.expected)
        );
    }
    s.push_str(&ns_per_op_chart(name, w, &rows));
    s.push_str(&rows_table(&rows));
    if let Some(w) = w {
        s.push_str(&published_note(w));
    }
    s.push_str(&rss_chart(name, &rows));
    if let Some(r0) = rows.first() {
        s.push_str(&history_chart(run, name, r0, history));
    }
    s.push_str("</section>");
    s
}

/// ns/op bars: ours, then the published figures.
fn ns_per_op_chart(name: &str, w: Option<&Workload>, rows: &[&RowJson]) -> String {
    let mut bars: Vec<Bar> = rows
        .iter()
        .filter(|r| r.ok)
        .filter_map(|r| {
            let ops = r.ops.unwrap_or(1).max(1) as f64;
            Some(Bar {
                label: r.peer.clone(),
                value: r.ns_per_op?,
                lo: r.min_ns? / ops,
                hi: r.max_ns? / ops,
                color: color(&r.peer).into(),
                published: false,
                tooltip: format!(
                    "{}: median {} ({} runs), min {} max {}",
                    r.peer,
                    fmt_ns(r.median_ns.unwrap_or(0.0)),
                    r.samples_ns.len(),
                    fmt_ns(r.min_ns.unwrap_or(0.0)),
                    fmt_ns(r.max_ns.unwrap_or(0.0))
                ),
            })
        })
        .collect();
    if let Some(w) = w {
        for f in w.seeds {
            bars.push(Bar {
                label: format!("{} ({}, {})", f.system, f.source, f.hardware),
                value: f.value.ns_per_op(),
                lo: 0.0,
                hi: 0.0,
                color: String::new(),
                published: true,
                tooltip: format!("published by {}: {} — {}", f.source, f.quote, f.hardware),
            });
        }
    }
    if bars.is_empty() {
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="24"><text x="0" y="16" class="ct">no successful row to chart</text></svg>"#
        )
    } else {
        bar_chart(
            &format!("{name}: ns per op (median, min–max whisker; grey = published)"),
            &bars,
            &|v| format!("{v:.1} ns/op"),
        )
    }
}

/// The table of a workload's rows; rows that did not run or failed say why.
fn rows_table(rows: &[&RowJson]) -> String {
    let mut s = String::from("<table><tr><th>peer</th><th>status</th><th>median</th><th>±sd</th><th>ns/op</th><th>peak RSS</th><th>user+sys</th><th>vs go</th><th>vs tokio</th><th>extra</th></tr>");
    for r in rows {
        if r.status == "unsupported" || r.status == "skipped" {
            let _ = write!(
                s,
                r#"<tr class="na"><td>{}</td><td colspan="9">{}: {}</td></tr>"#,
                esc(&r.peer),
                esc(&r.status),
                esc(r.error.as_deref().unwrap_or(""))
            );
        } else if !r.ok {
            let _ = write!(
                s,
                r#"<tr class="fail"><td>{}</td><td colspan="9"><b>FAILED</b>: {}</td></tr>"#,
                esc(&r.peer),
                esc(r.error.as_deref().unwrap_or(""))
            );
        } else {
            ok_row(&mut s, r);
        }
    }
    s.push_str("</table>");
    s
}

/// A row that ran: its times, peak RSS, CPU time, ratios and extras.
fn ok_row(s: &mut String, r: &RowJson) {
    let med = r.median_ns.unwrap_or(0.0);
    let cpu: f64 = match (r.user, r.system) {
        (Some(u), Some(sy)) => (u + sy) * 1e9,
        _ => 0.0,
    };
    let extra: Vec<String> = r.extra.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = write!(
        s,
        "<tr><td>{}</td><td>ok{}</td><td>{}</td><td>{:.1}%</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(&r.peer),
        if r.outliers.is_empty() { String::new() } else { format!(", {} outlier(s)", r.outliers.len()) },
        fmt_ns(med),
        if med > 0.0 { 100.0 * r.stddev_ns.unwrap_or(0.0) / med } else { 0.0 },
        r.ns_per_op.unwrap_or(0.0),
        r.rss_display(fmt_bytes),
        fmt_ns(cpu),
        ratio_cell(r, REFERENCES[0]),
        ratio_cell(r, REFERENCES[1]),
        esc(&extra.join(" "))
    );
}

/// The published figures of the workload, if it has any.
fn published_note(w: &Workload) -> String {
    if w.seeds.is_empty() {
        return String::new();
    }
    let items: Vec<String> = w
        .seeds
        .iter()
        .map(|f| {
            format!(
                "{} — {} ({}; {})",
                esc(f.system),
                esc(f.quote),
                esc(f.source),
                esc(f.hardware)
            )
        })
        .collect();
    format!(
        "<p class=\"pub\">Published: {}. Other hardware, other sizes: read as orders of magnitude, not ratios.</p>",
        items.join("; ")
    )
}

/// Peak-RSS bars of the rows that ran (none if no row has a peak).
fn rss_chart(name: &str, rows: &[&RowJson]) -> String {
    let rss: Vec<Bar> = rows
        .iter()
        .filter(|r| r.ok)
        .filter_map(|r| {
            let b = r.peak_rss_bytes? as f64;
            Some(Bar {
                label: r.peer.clone(),
                value: b,
                lo: 0.0,
                hi: 0.0,
                color: color(&r.peer).into(),
                published: false,
                tooltip: format!(
                    "{}: peak RSS {}{}",
                    r.peer,
                    fmt_bytes(b as u64),
                    if r.rss_floor_bytes.is_some_and(|f| b as u64 <= f) {
                        " (at the harness's own RSS: the peer used at most this)"
                    } else {
                        ""
                    }
                ),
            })
        })
        .collect();
    if rss.is_empty() {
        return String::new();
    }
    bar_chart(
        &format!("{name}: peak RSS of the whole process"),
        &rss,
        &|v| fmt_bytes(v as u64),
    )
}

/// One suite run in the history; runs sort by time, then id.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct HistoryRun {
    timestamp_unix: u64,
    run_id: String,
    git_commit: String,
}

/// History over commits: same workload, profile, size and worker count,
/// measured on this run's machine (others' times are not a trend).
fn history_chart(run: &LatestRun, name: &str, r0: &RowJson, history: &[HistoryLine]) -> String {
    let hist: Vec<&HistoryLine> = history
        .iter()
        .filter(|h| {
            h.workload == name
                && h.size == r0.size
                && h.profile == run.profile
                && h.workers == r0.workers
                && h.machine.cpu_model == run.meta.machine.cpu_model
                && h.machine.cores == run.meta.machine.cores
                && h.ok
        })
        .collect();
    // Distinct suite runs in time order, the last MAX_HISTORY of them.
    let mut runs: Vec<HistoryRun> = hist
        .iter()
        .map(|h| HistoryRun {
            timestamp_unix: h.timestamp_unix,
            run_id: h.run_id.clone(),
            git_commit: h.git_commit.clone(),
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    runs.sort();
    let runs = runs.split_off(runs.len().saturating_sub(MAX_HISTORY));
    if runs.len() <= 1 {
        return "<p class=\"pub\">History: one run so far at this size and worker count on this machine.</p>".into();
    }
    let labels: Vec<String> = runs
        .iter()
        .map(|r| r.git_commit.chars().take(7).collect())
        .collect();
    line_chart(
        &format!(
            "{name}: median ns/op over runs (by commit; {} workers, this machine)",
            r0.workers
        ),
        &labels,
        &history_series(&hist, &runs),
    )
}

/// Each peer's median ns/op per run, by the run's index in `runs`.
fn history_series(hist: &[&HistoryLine], runs: &[HistoryRun]) -> Vec<Series> {
    let mut series: BTreeMap<String, Vec<(usize, f64)>> = BTreeMap::new();
    for h in hist {
        let Some(i) = runs
            .iter()
            .position(|r| r.timestamp_unix == h.timestamp_unix && r.run_id == h.run_id)
        else {
            continue;
        };
        if let (Some(m), Some(o)) = (h.median_ns, h.ops) {
            series
                .entry(h.peer.clone())
                .or_default()
                .push((i, m / o.max(1) as f64));
        }
    }
    let mut series: Vec<Series> = series
        .into_iter()
        .map(|(peer, points)| Series { peer, points })
        .collect();
    for line in series.iter_mut() {
        line.points.sort_by_key(|x| x.0);
    }
    series
}

/// ` (spawn_10k: 10, …)`: the workloads whose rows ran another number of
/// counted runs than the run's default (their own passes, full profile).
fn other_run_counts(run: &LatestRun) -> String {
    let mut other: BTreeMap<&str, usize> = BTreeMap::new();
    for r in run.results.iter().filter(|r| r.ok) {
        if r.samples_ns.len() != run.runs as usize {
            other.insert(&r.workload, r.samples_ns.len());
        }
    }
    if other.is_empty() {
        return String::new();
    }
    let list: Vec<String> = other
        .iter()
        .map(|(w, n)| format!("{}: {n}", esc(w)))
        .collect();
    format!(" ({})", list.join(", "))
}

/// The matrix of every workload × peer (ns/op and ratio to Go), and
/// spindle's ratio to Go per workload as bars around the 1× line.
fn overview(run: &LatestRun, names: &[&str]) -> String {
    let peers: Vec<&str> = run
        .peers
        .iter()
        .filter(|p| p.available)
        .map(|p| p.name.as_str())
        .collect();
    let mut s =
        String::from("<h2>Overview: ns per op (ratio to go)</h2><table><tr><th>workload</th>");
    for p in &peers {
        let _ = write!(s, "<th>{}</th>", esc(p));
    }
    s.push_str("</tr>");
    for n in names {
        let _ = write!(s, "<tr><td><a href=\"#{0}\">{0}</a></td>", esc(n));
        for p in &peers {
            let _ = write!(s, "<td>{}</td>", overview_cell(run.row(n, p)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    s.push_str(&ratio_to_go_chart(run, names));
    s
}

/// A workload × peer cell of the overview: ns/op and ratio to Go, or why not.
fn overview_cell(row: Option<&RowJson>) -> String {
    match row {
        Some(r) if r.ok => {
            let ratio = r
                .ratios
                .get("go")
                .map(|x| format!(" ({})", x.display()))
                .unwrap_or_default();
            format!("{:.1}{}", r.ns_per_op.unwrap_or(0.0), esc(&ratio))
        }
        Some(r) if r.status == "failed" => "<b style=\"color:#b00\">FAILED</b>".into(),
        Some(r) if r.status == "skipped" => "skipped".into(),
        _ => "–".into(),
    }
}

/// spindle's ratio to Go per workload, bars around the 1× line (none if
/// no workload has that ratio).
fn ratio_to_go_chart(run: &LatestRun, names: &[&str]) -> String {
    let bars: Vec<Bar> = names
        .iter()
        .filter_map(|n| {
            let r = run.row(n, "spindle")?;
            let x = r.ratios.get("go")?;
            Some(Bar {
                label: n.to_string(),
                value: x.ratio,
                lo: x.lo,
                hi: x.hi,
                color: color("spindle").into(),
                published: false,
                tooltip: format!(
                    "spindle / go on {n}: {} (95% CI {:.2}–{:.2})",
                    x.display(),
                    x.lo,
                    x.hi
                ),
            })
        })
        .collect();
    if bars.is_empty() {
        return String::new();
    }
    bar_chart_ref(
        "spindle's time / Go's, per workload (left of the dashed line: spindle is faster)",
        &bars,
        &|v| format!("{v:.2}×"),
        Some(1.0),
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:60em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;font-size:90%}\
td:first-child,th:first-child{text-align:left}tr.fail td{background:#fdd;text-align:left}tr.na td{color:#888;text-align:left}\
.ct{font:bold 13px sans-serif}.bl{font:12px sans-serif}.bv{font:11px sans-serif;fill:#333}.pub{font-size:85%;color:#555}\
section{border-top:1px solid #ddd;margin-top:1.5em}code{background:#f4f4f4}";

/// Renders the whole report.
pub fn render(run: &LatestRun, history: &[HistoryLine]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>spindle-bench report</title><style>{STYLE}</style></head><body>"
    );
    s.push_str(&run_header(run));
    s.push_str(&summary(run));
    let mut names: Vec<&str> = Vec::new();
    for r in &run.results {
        if !names.contains(&r.workload.as_str()) {
            names.push(&r.workload);
        }
    }
    s.push_str(&overview(run, &names));
    s.push_str("<nav><p>");
    let links: Vec<String> = names
        .iter()
        .map(|n| format!("<a href=\"#{0}\">{0}</a>", esc(n)))
        .collect();
    s.push_str(&links.join(" · "));
    s.push_str("</p></nav>");
    for n in names {
        s.push_str(&workload_section(run, n, history));
    }
    s.push_str("</body></html>\n");
    s
}

/// The run's settings, machine and versions, how to read the figures,
/// and the peers.
fn run_header(run: &LatestRun) -> String {
    let m = &run.meta;
    let mut s = format!(
        "<h1>spindle-bench</h1><p>{} profile · {} workers · {} warm-up + {} counted runs per row{} · {} · commit <code>{}</code>{}</p>\
         <p>Machine: {} ({} cores, {}) · load average {} at start, {} at end</p><p>Versions: {}</p>",
        esc(&run.profile),
        run.workers,
        run.warmup,
        run.runs,
        other_run_counts(run),
        esc(&m.date),
        esc(&m.git_commit),
        if m.git_dirty { " (uncommitted changes)" } else { "" },
        esc(&m.machine.cpu_model),
        m.machine.cores,
        esc(&m.machine.os),
        esc(&m.loadavg_start),
        esc(&m.loadavg_end),
        esc(&m.toolchains.display())
    );
    s.push_str("<p>Times are taken inside each peer process around the workload; each run is its own process; peers alternate run by run, each round starting one peer further on. A ratio is this peer's time over the reference's from paired runs (geometric mean, 95% bootstrap interval); below 1 is faster; <b>~</b> means the interval contains 1.</p>");
    s.push_str("<ul>");
    for p in &run.peers {
        let _ = write!(
            s,
            "<li><span style=\"color:{}\">■</span> {}: {}</li>",
            color(&p.name),
            esc(&p.name),
            if p.available {
                "available".to_string()
            } else {
                format!("unavailable — {}", esc(p.reason.as_deref().unwrap_or("")))
            }
        );
    }
    s.push_str("</ul>");
    s
}

/// The geometric means, and how many rows failed.
fn summary(run: &LatestRun) -> String {
    let mut s = String::new();
    for g in &run.summary {
        let _ = write!(
            s,
            "<p><b>{} vs {}, {} rows: geometric mean {:.2}×</b> over {} rows ({} faster, {} slower, {} not significant): {}</p>",
            esc(&g.peer),
            esc(&g.against),
            esc(&g.class),
            g.geomean,
            g.rows,
            g.faster,
            g.slower,
            g.not_significant,
            esc(&coverage(g, &run.summary))
        );
    }
    let failed = run.results.iter().filter(|r| r.status == "failed").count();
    if failed > 0 {
        let _ = write!(
            s,
            "<p style=\"color:#b00\"><b>{failed} row(s) FAILED</b> (no time shown for them).</p>"
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
