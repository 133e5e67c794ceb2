//! The terminal table printed at the end of a run.
//!
//! One line per (workload, peer) that ran: median time, spread, ns per op,
//! peak RSS, ratio to Go and to Tokio (`~` when not significant), and
//! outlier count. Failed rows say FAILED with the reason and show no time.
//! Unsupported rows are counted and skipped rows named, not tabulated (`list` shows why). Then the
//! unavailable peers with their reasons and spindle's geometric means.

use std::fmt::Write as _;

use super::json::{coverage, LatestRun, RowJson, REFERENCES};

/// `1.23 ms`, `456 µs`, `7.8 s`: three significant figures, no exponent.
pub fn fmt_ns(ns: f64) -> String {
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

fn ratio_cell(r: &RowJson, reference: &str) -> String {
    if r.peer == reference {
        return "1".into();
    }
    r.ratios
        .get(reference)
        .map(|x| x.display())
        .unwrap_or_else(|| "-".into())
}

/// The table's columns; the first two and the last are names, left-aligned.
const HEADER: [&str; 9] = [
    "workload", "peer", "median", "±sd", "ns/op", "peak RSS", "vs go", "vs tokio", "note",
];

/// One line of the table, a cell per column of [`HEADER`].
type Cells = [String; 9];

/// Renders the whole table as text.
pub fn render(run: &LatestRun) -> String {
    let mut out = String::new();
    let mut lines: Vec<Cells> = Vec::new();
    let mut unsupported = 0;
    let mut skipped: Vec<String> = Vec::new();
    for r in &run.results {
        match r.status.as_str() {
            "unsupported" => unsupported += 1,
            "skipped" => skipped.push(format!("{} on {}", r.workload, r.peer)),
            _ => lines.push(cells(r)),
        }
    }
    heading(&mut out, run);
    grid(&mut out, &lines);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "ratios: this peer's time / the reference's, paired run by run, 95% bootstrap CI; <1 is faster; ~ = not significant"
    );
    if unsupported > 0 {
        let _ = writeln!(out, "{unsupported} (workload, peer) rows unsupported by their peer (see `spindle-bench list`)");
    }
    if !skipped.is_empty() {
        let _ = writeln!(
            out,
            "not run on the quick profile (OS-thread references that take seconds a run there; --profile full runs them): {}",
            skipped.join(", ")
        );
    }
    for p in run.peers.iter().filter(|p| !p.available) {
        let _ = writeln!(
            out,
            "peer {} unavailable: {}",
            p.name,
            p.reason.clone().unwrap_or_default()
        );
    }
    summary(&mut out, run);
    let failed = run.results.iter().filter(|r| r.status == "failed").count();
    if failed > 0 {
        let _ = writeln!(out, "{failed} row(s) FAILED");
    }
    out
}

/// A row that ran (or failed) as the table's cells; a failed row shows its
/// reason and no time.
fn cells(r: &RowJson) -> Cells {
    if r.status == "failed" {
        return [
            r.workload.clone(),
            r.peer.clone(),
            "FAILED".into(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            r.error.clone().unwrap_or_default(),
        ];
    }
    let med = r.median_ns.unwrap_or(0.0);
    let sd = r.stddev_ns.unwrap_or(0.0);
    let mut note = r.extras_display();
    if !r.outliers.is_empty() {
        note = format!("{} outlier(s) {note}", r.outliers.len());
    }
    [
        r.workload.clone(),
        r.peer.clone(),
        fmt_ns(med),
        if med > 0.0 {
            format!("{:.1}%", 100.0 * sd / med)
        } else {
            "-".into()
        },
        r.ns_per_op.map(|x| format!("{x:.1}")).unwrap_or_default(),
        r.rss_display(fmt_bytes),
        ratio_cell(r, REFERENCES[0]),
        ratio_cell(r, REFERENCES[1]),
        note,
    ]
}

/// The run's settings, machine, versions and load average.
fn heading(out: &mut String, run: &LatestRun) {
    let _ = writeln!(
        out,
        "spindle-bench {} profile, {} workers, {} warm-up + {} runs; {} on {} ({} cores); commit {}",
        run.profile,
        run.workers,
        run.warmup,
        run.runs,
        run.meta.date,
        run.meta.machine.cpu_model,
        run.meta.machine.cores,
        &run.meta.git_commit[..run.meta.git_commit.len().min(12)]
    );
    let _ = writeln!(out, "versions: {}", run.meta.toolchains.display());
    if !run.meta.loadavg_start.is_empty() {
        let _ = writeln!(
            out,
            "load average (1/5/15 min) at start {}, at end {}",
            run.meta.loadavg_start, run.meta.loadavg_end
        );
    }
}

/// The header and the lines in aligned columns (the note unpadded), a
/// blank line between workloads.
fn grid(out: &mut String, lines: &[Cells]) {
    let mut widths = HEADER.map(str::len);
    for l in lines {
        for (i, c) in l.iter().enumerate().take(8) {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let row = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = if i < 8 {
                widths[i].saturating_sub(c.chars().count())
            } else {
                0
            };
            // Names left-aligned, numbers right-aligned.
            if i < 2 || i == 8 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
            s.push_str("  ");
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", row(&HEADER.map(String::from)));
    let mut last = String::new();
    for l in lines {
        if l[0] != last && !last.is_empty() {
            out.push('\n');
        }
        last = l[0].clone();
        let _ = writeln!(out, "{}", row(l));
    }
}

/// The geometric means, runtime rows first, compiler rows apart, each line
/// naming the rows it covers.
fn summary(out: &mut String, run: &LatestRun) {
    let mut class = "";
    for g in &run.summary {
        if g.class != class {
            class = &g.class;
            let _ = writeln!(
                out,
                "{} time over the other peer's, geometric mean over the {class} rows both ran:",
                g.peer
            );
        }
        let _ = writeln!(
            out,
            "  vs {:<12} {:.2}× over {} rows ({} faster, {} slower, {} ~): {}",
            g.against,
            g.geomean,
            g.rows,
            g.faster,
            g.slower,
            g.not_significant,
            coverage(g, &run.summary)
        );
    }
    if run
        .results
        .iter()
        .any(|r| r.workload == "blocking_pressure")
    {
        let _ = writeln!(
            out,
            "blocking_pressure counts in no mean: its time is its blocking calls'; it is judged by its heartbeats (note)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times_and_sizes() {
        assert_eq!(fmt_ns(1_234_567.0), "1.23 ms");
        assert_eq!(fmt_ns(456_000.0), "456 µs");
        assert_eq!(fmt_ns(12.0), "12.0 ns");
        assert_eq!(fmt_ns(7.8e9), "7.80 s");
        assert_eq!(fmt_bytes(3 * 1024 * 1024), "3.0 MiB");
    }
}
