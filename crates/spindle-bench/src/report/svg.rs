//! Hand-written inline SVG charts for the HTML report: horizontal bar
//! charts and line charts, no script.
//!
//! Bar charts scale to the measured bars; a published bar beyond the axis
//! is clipped and its value marked `»`. Every interpolated string goes
//! through [`esc`].

use std::fmt::Write as _;

use super::html::esc;

/// The colour of a peer's bars and lines.
pub(super) fn color(peer: &str) -> &'static str {
    match peer {
        "spindle" => "#d62728",
        "spindle-aeron" => "#ff9896",
        "go" => "#1f77b4",
        "tokio" => "#9467bd",
        "std" => "#8c564b",
        "rayon" => "#2ca02c",
        "crossbeam" => "#ff7f0e",
        "flume" => "#17becf",
        "kanal" => "#bcbd22",
        "smol" => "#e377c2",
        "may" => "#393b79",
        "monoio" => "#637939",
        _ => "#7f7f7f",
    }
}

/// One bar: its value and, for a measured bar, a min–max whisker; a
/// published figure is drawn grey and dashed, with no whisker.
pub(super) struct Bar {
    pub(super) label: String,
    pub(super) value: f64,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) color: String,
    pub(super) published: bool,
    pub(super) tooltip: String,
}

/// Width of every chart.
pub(super) const W: f64 = 820.0;
const LABEL_W: f64 = 340.0;
const BAR_H: f64 = 18.0;
const GAP: f64 = 6.0;

/// A horizontal bar chart.
pub(super) fn bar_chart(title: &str, bars: &[Bar], fmt: &dyn Fn(f64) -> String) -> String {
    bar_chart_ref(title, bars, fmt, None)
}

/// A horizontal bar chart; `reference` draws a dashed vertical line at that value.
pub(super) fn bar_chart_ref(
    title: &str,
    bars: &[Bar],
    fmt: &dyn Fn(f64) -> String,
    reference: Option<f64>,
) -> String {
    let scale = Scale {
        axis: axis_end(bars, reference),
        plot_w: W - LABEL_W - 110.0,
    };
    let h = 24.0 + bars.len() as f64 * (BAR_H + GAP) + 8.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" role="img" aria-label="{t}"><text x="0" y="14" class="ct">{t}</text>"#,
        t = esc(title)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = 24.0 + i as f64 * (BAR_H + GAP);
        draw_bar(&mut s, b, y, &scale, fmt);
    }
    if let Some(r) = reference {
        let x = LABEL_W + r / scale.axis * scale.plot_w;
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="20" x2="{x:.1}" y2="{y2}" stroke="#000" stroke-dasharray="4 3"/><text x="{x:.1}" y="{ty}" text-anchor="middle" class="bv">{l}</text>"##,
            y2 = h - 4.0,
            ty = h,
            l = esc(&fmt(r))
        );
    }
    s.push_str("</svg>");
    s
}

/// A bar chart's value axis: the value at its right end, and its width.
struct Scale {
    axis: f64,
    plot_w: f64,
}

/// The value at the right end of the axis: past the measured bars (and the
/// reference line), published bars beyond it being clipped and marked.
fn axis_end(bars: &[Bar], reference: Option<f64>) -> f64 {
    let ours = bars
        .iter()
        .filter(|b| !b.published)
        .map(|b| b.hi.max(b.value))
        .fold(0.0, f64::max);
    let all = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    // Scale to our own bars; published bars beyond the axis are clipped and marked.
    let axis = if ours > 0.0 { ours * 1.15 } else { all * 1.15 };
    let axis = if axis > 0.0 { axis } else { 1.0 };
    reference.map_or(axis, |r| axis.max(r * 1.15))
}

/// One bar at height `y`: its label, the bar, a measured bar's min–max
/// whisker, and its value.
fn draw_bar(s: &mut String, b: &Bar, y: f64, scale: &Scale, fmt: &dyn Fn(f64) -> String) {
    let Scale { axis, plot_w } = *scale;
    let clipped = b.value > axis;
    let bw = (b.value.min(axis) / axis * plot_w).max(1.0);
    let fill = if b.published {
        "#bbbbbb"
    } else {
        b.color.as_str()
    };
    let _ = write!(
        s,
        r#"<text x="{lx}" y="{ty}" text-anchor="end" class="bl">{label}</text><rect x="{LABEL_W}" y="{y}" width="{bw:.1}" height="{BAR_H}" fill="{fill}"{stroke}><title>{tip}</title></rect>"#,
        lx = LABEL_W - 6.0,
        ty = y + BAR_H - 5.0,
        label = esc(&b.label),
        stroke = if b.published {
            r##" stroke="#666" stroke-dasharray="3 2""##
        } else {
            ""
        },
        tip = esc(&b.tooltip),
    );
    if !b.published && b.hi > b.lo {
        let x0 = LABEL_W + b.lo.min(axis) / axis * plot_w;
        let x1 = LABEL_W + b.hi.min(axis) / axis * plot_w;
        let ym = y + BAR_H / 2.0;
        let _ = write!(
            s,
            r##"<line x1="{x0:.1}" y1="{ym}" x2="{x1:.1}" y2="{ym}" stroke="#222"/><line x1="{x0:.1}" y1="{a}" x2="{x0:.1}" y2="{b}" stroke="#222"/><line x1="{x1:.1}" y1="{a}" x2="{x1:.1}" y2="{b}" stroke="#222"/>"##,
            a = y + 4.0,
            b = y + BAR_H - 4.0
        );
    }
    let _ = write!(
        s,
        r#"<text x="{x:.1}" y="{ty}" class="bv">{mark}{v}</text>"#,
        x = LABEL_W + bw + 4.0,
        ty = y + BAR_H - 5.0,
        mark = if clipped { "» " } else { "" },
        v = esc(&fmt(b.value))
    );
}

/// One line of a line chart: a peer's values, each at the index of its
/// x label.
pub(super) struct Series {
    pub(super) peer: String,
    /// `(x index, y)`, in x order.
    pub(super) points: Vec<(usize, f64)>,
}

/// A line chart's frame: its size, margins, the number of x positions
/// and the value at the top of the y axis.
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    bottom: f64,
    top: f64,
    n: usize,
    ymax: f64,
}

impl Frame {
    fn px(&self, i: usize) -> f64 {
        self.left + (self.w - self.left - 20.0) * i as f64 / (self.n - 1) as f64
    }
    fn py(&self, y: f64) -> f64 {
        self.top + (self.h - self.top - self.bottom) * (1.0 - y / self.ymax)
    }
}

/// A line chart of each series' points over `x_labels`.
pub(super) fn line_chart(title: &str, x_labels: &[String], series: &[Series]) -> String {
    let ymax = series
        .iter()
        .flat_map(|line| line.points.iter().map(|(_, y)| *y))
        .fold(0.0, f64::max)
        * 1.1;
    let f = Frame {
        w: W,
        h: 220.0,
        left: 70.0,
        bottom: 40.0,
        top: 24.0,
        n: x_labels.len().max(2),
        ymax: if ymax > 0.0 { ymax } else { 1.0 },
    };
    let Frame {
        w,
        h,
        left,
        bottom,
        top,
        ..
    } = f;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}"><text x="0" y="14" class="ct">{t}</text><line x1="{left}" y1="{b}" x2="{r}" y2="{b}" stroke="#888"/><line x1="{left}" y1="{top}" x2="{left}" y2="{b}" stroke="#888"/><text x="{lx}" y="{ty}" text-anchor="end" class="bv">{ym}</text><text x="{lx}" y="{b}" text-anchor="end" class="bv">0</text>"##,
        t = esc(title),
        b = h - bottom,
        r = w - 20.0,
        lx = left - 4.0,
        ty = top + 4.0,
        ym = esc(&format!("{:.1} ns/op", f.ymax))
    );
    for (i, l) in x_labels.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{x:.1}" y="{y}" text-anchor="middle" class="bv">{l}</text>"#,
            x = f.px(i),
            y = h - bottom + 14.0,
            l = esc(l)
        );
    }
    for (k, line) in series.iter().enumerate() {
        draw_series(&mut s, &f, k, line, x_labels);
    }
    s.push_str("</svg>");
    s
}

/// The `k`th series: its line, a point per run (titled with the run's
/// label and value), and its key under the chart.
fn draw_series(s: &mut String, f: &Frame, k: usize, line: &Series, x_labels: &[String]) {
    let (peer, pts) = (line.peer.as_str(), &line.points);
    let c = color(peer);
    let path: Vec<String> = pts
        .iter()
        .map(|&(i, y)| format!("{:.1},{:.1}", f.px(i), f.py(y)))
        .collect();
    let _ = write!(
        s,
        r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
        path.join(" ")
    );
    for &(i, y) in pts {
        let _ = write!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{}</title></circle>"#,
            f.px(i),
            f.py(y),
            esc(&format!(
                "{peer} @ {}: {y:.2} ns/op",
                x_labels.get(i).map(String::as_str).unwrap_or("?")
            ))
        );
    }
    let _ = write!(
        s,
        r#"<rect x="{x}" y="{y}" width="10" height="10" fill="{c}"/><text x="{tx}" y="{ty}" class="bv">{p}</text>"#,
        x = f.left + k as f64 * 90.0,
        y = f.h - 16.0,
        tx = f.left + k as f64 * 90.0 + 14.0,
        ty = f.h - 7.0,
        p = esc(peer)
    );
}
