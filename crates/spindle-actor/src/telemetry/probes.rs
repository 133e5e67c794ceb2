//! The probes' part of a snapshot and its renderings: `/api/graph.json`'s
//! `probes` array and the probes' metric families on `/metrics`.

use super::render::{json_str, Exposition};
use crate::probe::{Probe, Reading};
use std::fmt::Write;
use std::sync::Arc;

/// One probe, read.
#[derive(Debug, Clone)]
pub(crate) struct ProbeSnap {
    pub(crate) name: String,
    pub(crate) labels: Vec<(&'static str, String)>,
    pub(crate) readings: Vec<Reading>,
}

pub(crate) fn read(probes: &[Arc<dyn Probe>]) -> Vec<ProbeSnap> {
    probes
        .iter()
        .map(|p| ProbeSnap {
            name: p.name(),
            labels: p.labels(),
            readings: p.read(),
        })
        .collect()
}

/// `,"probes":[...]` for `/api/graph.json`.
pub(crate) fn json(o: &mut String, probes: &[ProbeSnap]) {
    o.push_str(",\"probes\":[");
    for (i, p) in probes.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        let _ = write!(o, "{{\"name\":{},\"labels\":{{", json_str(&p.name));
        for (j, (k, v)) in p.labels.iter().enumerate() {
            let _ = write!(
                o,
                "{}{}:{}",
                if j > 0 { "," } else { "" },
                json_str(k),
                json_str(v)
            );
        }
        o.push_str("},\"readings\":{");
        for (j, r) in p.readings.iter().enumerate() {
            let value = if r.value.is_finite() { r.value } else { 0.0 };
            let _ = write!(
                o,
                "{}{}:{value}",
                if j > 0 { "," } else { "" },
                json_str(r.short)
            );
        }
        o.push_str("}}");
    }
    o.push(']');
}

/// Every probe metric as one family, its samples labelled by probe.
pub(crate) fn families(e: &mut Exposition<'_>, graph: &str, probes: &[ProbeSnap]) {
    let mut done: Vec<&str> = Vec::new();
    for r in probes.iter().flat_map(|p| &p.readings) {
        if done.contains(&r.metric) {
            continue;
        }
        done.push(r.metric);
        e.head(
            r.metric,
            if r.counter { "counter" } else { "gauge" },
            r.help,
        );
        for p in probes {
            for same in p.readings.iter().filter(|x| x.metric == r.metric) {
                let mut labels: Vec<(&str, &str)> = vec![("graph", graph)];
                labels.extend(p.labels.iter().map(|(k, v)| (*k, v.as_str())));
                e.sample(r.metric, &labels, same.value);
            }
        }
    }
}
