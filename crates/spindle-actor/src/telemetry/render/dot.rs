//! `/graph.dot`: the graph for Graphviz.

use std::fmt::Write;

use crate::telemetry::sampler::Snapshot;

pub(super) fn dot_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if c.is_control() => o.push(' '),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A rate with an SI suffix: `64.2M`.
pub(super) fn si(x: f64) -> String {
    let (v, u) = if x >= 1e9 {
        (x / 1e9, "G")
    } else if x >= 1e6 {
        (x / 1e6, "M")
    } else if x >= 1e3 {
        (x / 1e3, "K")
    } else {
        (x, "")
    };
    format!("{v:.1}{u}")
}

/// `/graph.dot`: nodes with busy share and restarts, edges with rate, fill
/// percentile and totals (the seed's telemetry picture).
pub(crate) fn dot(s: &Snapshot) -> String {
    let mut o = String::from("digraph G {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n");
    for a in &s.actors {
        let label = format!(
            "{}\nbusy {:.0}%  restarts {}\n{}",
            a.name, a.busy_pct, a.restarts, a.status
        );
        let color = if a.status == "failed" {
            "red"
        } else if a.busy_pct >= 80.0 {
            "orange"
        } else {
            "black"
        };
        let _ = writeln!(
            o,
            "  {} [label={}, color={color}];",
            dot_str(&a.name),
            dot_str(&label)
        );
    }
    for c in &s.channels {
        let label = format!(
            "{}\nWindow {:.1} secs\nAvg rate: {} per/sec\nfilled 80%ile {:.0} %\nCapacity: {} Total: {}",
            c.name,
            s.window.as_secs_f64(),
            si(c.rate_window),
            c.fill_pct[1],
            c.capacity,
            c.sent
        );
        let color = if c.fill_pct[1] >= 90.0 {
            "red"
        } else if c.fill_pct[1] >= 50.0 {
            "orange"
        } else {
            "grey"
        };
        let _ = writeln!(
            o,
            "  {} -> {} [label={}, color={color}, penwidth=1];",
            dot_str(&c.from),
            dot_str(&c.to),
            dot_str(&label)
        );
    }
    o.push_str("}\n");
    o
}
