//! `/api/graph.json`: the snapshot the live page draws.

use std::fmt::Write;

use crate::telemetry::sampler::{ActorSnap, ChannelSnap, Snapshot};

pub(super) fn num(x: f64) -> String {
    if x.is_finite() {
        let r = (x * 1000.0).round() / 1000.0;
        format!("{r}")
    } else {
        "0".to_string()
    }
}

/// A JSON string literal.
pub(crate) fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            // Keep the payload inert if someone pastes it into HTML.
            '<' => o.push_str("\\u003c"),
            '>' => o.push_str("\\u003e"),
            '&' => o.push_str("\\u0026"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn opt_str(s: &Option<String>) -> String {
    s.as_deref().map_or("null".to_string(), json_str)
}

/// `/api/graph.json`.
pub(crate) fn json(s: &Snapshot) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "{{\"graph\":{},\"uptime_s\":{},\"window_s\":{},\"stopping\":{},\"live_actors\":{},\"actors\":[",
        json_str(&s.graph),
        num(s.uptime.as_secs_f64()),
        num(s.window.as_secs_f64()),
        s.stopping,
        s.live
    );
    for (i, a) in s.actors.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        json_actor(&mut o, a);
    }
    o.push_str("],\"channels\":[");
    for (i, c) in s.channels.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        json_channel(&mut o, c);
    }
    o.push(']');
    crate::telemetry::probes::json(&mut o, &s.probes);
    o.push_str(",\"runtime\":");
    json_runtime(&mut o, &s.runtime);
    o.push('}');
    o
}

/// One actor's object in `/api/graph.json`.
fn json_actor(o: &mut String, a: &ActorSnap) {
    let _ = write!(
        o,
        "{{\"name\":{},\"mode\":{},\"status\":{},\"restarts\":{},\"polls\":{},\"busy_pct\":{},\"busy_s\":{},\"last_failure\":{}}}",
        json_str(&a.name),
        json_str(&a.mode),
        json_str(a.status),
        a.restarts,
        a.polls,
        num(a.busy_pct),
        num(a.busy_seconds),
        opt_str(&a.last_failure)
    );
}

/// One channel's object in `/api/graph.json`.
fn json_channel(o: &mut String, c: &ChannelSnap) {
    let _ = write!(
        o,
        "{{\"name\":{},\"from\":{},\"to\":{},\"capacity\":{},\"batch\":{},\"sent\":{},\"taken\":{},\"dead_letters\":{},\"closed\":{},\"rate\":{},\"rate_window\":{},\"fill_pct\":{{\"p50\":{},\"p80\":{},\"p99\":{}}}}}",
        json_str(&c.name),
        json_str(&c.from),
        json_str(&c.to),
        c.capacity,
        c.batch,
        c.sent,
        c.taken,
        c.dead_letters,
        c.closed,
        num(c.rate),
        num(c.rate_window),
        num(c.fill_pct[0]),
        num(c.fill_pct[1]),
        num(c.fill_pct[2])
    );
}

/// The runtime's object in `/api/graph.json`: totals over the workers,
/// and the runtime's named tasks.
fn json_runtime(o: &mut String, rt: &spindle::RuntimeMetrics) {
    let _ = write!(
        o,
        "{{\"flavor\":{},\"workers\":{},\"polls\":{},\"spawns\":{},\"steals\":{},\"parks\":{},\"injector_depth\":{},\"registered_tasks\":{},\"sleeping_workers\":{},\"named_tasks\":[",
        json_str(rt.flavor),
        rt.workers.len(),
        rt.total(|w| w.polls),
        rt.total(|w| w.spawns),
        rt.total(|w| w.steals),
        rt.total(|w| w.parks),
        rt.injector_depth,
        rt.registered_tasks,
        rt.sleeping_workers
    );
    for (i, t) in rt.named_tasks.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        let id = json_str(&t.id.to_string());
        let _ = write!(o, "{{\"id\":{id},\"name\":{}}}", json_str(&t.name));
    }
    o.push_str("]}");
}
