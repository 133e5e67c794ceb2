//! `http.html`: the HTTP run as a page — the table, and per test a bar per
//! server (requests/s, with its p99), so the ratios can be seen.

use super::{HttpRun, TESTS};
use crate::report::html::esc;

const BAR_WIDTH: f64 = 420.0;

pub fn render(run: &HttpRun) -> String {
    let mut page = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>spindle-bench http</title>\
         <style>body{font-family:sans-serif;max-width:60em;margin:2em auto}\
         td,th{padding:.2em .6em;text-align:right}td:first-child,td:nth-child(2){text-align:left}\
         .fail{color:#b00}</style></head><body><h1>HTTP servers under wrk</h1>",
    );
    page.push_str(&format!(
        "<p>{} connections, {} wrk thread, {:.0} s measured per run after {:.0} s of warm-up, \
         {} runs per server alternating (medians); {} server workers. Machine: {} cores, {}; {}.</p>\
         <p><b>Note:</b> {}.</p>",
        run.connections,
        run.wrk_threads,
        run.duration_s,
        run.warmup_s,
        run.runs_per_peer,
        run.workers,
        run.meta.machine.cores,
        esc(&run.meta.machine.cpu_model),
        esc(&run.meta.date),
        esc(&run.note)
    ));
    for (test, _) in TESTS {
        page.push_str(&format!("<h2>{test}</h2>"));
        page.push_str(&bars(run, test));
    }
    page.push_str("<h2>All figures</h2><pre>");
    page.push_str(&esc(&super::render(run)));
    page.push_str("</pre></body></html>\n");
    page
}

/// An SVG bar per measured server on `test`.
fn bars(run: &HttpRun, test: &str) -> String {
    let rows: Vec<_> = run.results.iter().filter(|r| r.test == test).collect();
    let top = rows
        .iter()
        .filter(|r| r.error.is_none())
        .map(|r| r.requests_per_s)
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let mut svg = format!(
        "<svg width=\"760\" height=\"{}\" role=\"img\">",
        rows.len() * 26 + 4
    );
    for (i, r) in rows.iter().enumerate() {
        let y = i * 26;
        svg.push_str(&format!(
            "<text x=\"0\" y=\"{}\" font-size=\"13\">{}</text>",
            y + 17,
            esc(&r.peer)
        ));
        match &r.error {
            Some(e) => svg.push_str(&format!(
                "<text class=\"fail\" x=\"90\" y=\"{}\" font-size=\"13\">failed: {}</text>",
                y + 17,
                esc(e)
            )),
            None => {
                let w = if top > 0.0 {
                    r.requests_per_s / top * BAR_WIDTH
                } else {
                    0.0
                };
                svg.push_str(&format!(
                    "<rect x=\"90\" y=\"{}\" width=\"{w:.1}\" height=\"20\" fill=\"#4a7ab5\"/>\
                     <text x=\"{:.1}\" y=\"{}\" font-size=\"13\">{:.0} req/s, p99 {:.0} µs</text>",
                    y + 2,
                    96.0 + w,
                    y + 17,
                    r.requests_per_s,
                    r.p99_us
                ));
            }
        }
    }
    svg.push_str("</svg>");
    svg
}
