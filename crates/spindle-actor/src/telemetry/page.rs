//! The live page served at `/`: one self-contained HTML file (inline CSS
//! and script, no network), which polls `/api/graph.json` once a second and
//! redraws the graph as SVG — actors as nodes with their busy share and
//! restarts, channels as edges with rate, fill percentile and totals — plus
//! tables of the same numbers. Every node carries `data-actor` and every
//! edge `data-channel`, which the browser test reads back.

pub(crate) const PAGE: &str = include_str!("page.html");
