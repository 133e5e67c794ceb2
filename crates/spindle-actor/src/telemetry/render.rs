//! The three machine-readable views of a [`Snapshot`]: JSON for the live
//! page (`/api/graph.json`), Graphviz DOT (`/graph.dot`) and Prometheus
//! text format 0.0.4 (`/metrics`).
//!
//! # Invariants
//! - Every string from the graph (names, failure messages) is escaped for
//!   its format: JSON string escapes, DOT quoted-string escapes, Prometheus
//!   label-value escapes (`\\`, `\"`, `\n`). Names are user input.
//! - Non-finite numbers never reach the output (JSON has no NaN).
//! - Each Prometheus metric family has one `# HELP` and one `# TYPE` line,
//!   followed by all its samples; counters end in `_total`.

use std::fmt::Write;

use super::sampler::{ActorSnap, ChannelSnap, Snapshot};

fn num(x: f64) -> String {
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
    super::probes::json(&mut o, &s.probes);
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

/// The runtime's object in `/api/graph.json`: totals over the workers.
fn json_runtime(o: &mut String, rt: &spindle::RuntimeMetrics) {
    let _ = write!(
        o,
        "{{\"flavor\":{},\"workers\":{},\"polls\":{},\"spawns\":{},\"steals\":{},\"parks\":{},\"injector_depth\":{},\"registered_tasks\":{},\"sleeping_workers\":{}}}",
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
}

fn dot_str(s: &str) -> String {
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
pub(crate) fn si(x: f64) -> String {
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

fn label(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

/// The `/metrics` text being written, one family at a time.
pub(crate) struct Exposition<'a> {
    out: &'a mut String,
}

impl Exposition<'_> {
    pub(crate) fn head(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }
    pub(crate) fn sample(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, val)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"{}\"", label(val));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", if v.is_finite() { v } else { 0.0 });
    }
}

/// One metric family whose value is read from a `T`: the snapshot, an
/// actor, a channel, a worker or the whole runtime.
struct Metric<T> {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    value: fn(&T) -> f64,
}

const fn gauge<T>(name: &'static str, help: &'static str, value: fn(&T) -> f64) -> Metric<T> {
    Metric {
        name,
        kind: "gauge",
        help,
        value,
    }
}

const fn counter<T>(name: &'static str, help: &'static str, value: fn(&T) -> f64) -> Metric<T> {
    Metric {
        name,
        kind: "counter",
        help,
        value,
    }
}

fn flag(b: bool) -> f64 {
    f64::from(u8::from(b))
}

/// Labelled by the graph's name.
const GRAPH_METRICS: &[Metric<Snapshot>] = &[
    gauge(
        "spindle_graph_uptime_seconds",
        "Seconds since the graph started.",
        |s| s.uptime.as_secs_f64(),
    ),
    gauge(
        "spindle_graph_live_actors",
        "Actors not stopped yet.",
        |s| s.live as f64,
    ),
    gauge(
        "spindle_graph_stopping",
        "1 once a stop was requested.",
        |s| flag(s.stopping),
    ),
];

/// One sample per actor, labelled by graph and actor.
const ACTOR_METRICS: &[Metric<ActorSnap>] = &[
    gauge(
        "spindle_actor_up",
        "1 while the actor runs (or restarts), 0 once stopped or failed.",
        |a| flag(matches!(a.status, "running" | "restarting")),
    ),
    counter(
        "spindle_actor_restarts_total",
        "Restarts after a panic or an error.",
        |a| a.restarts as f64,
    ),
    counter(
        "spindle_actor_polls_total",
        "Polls of the actor's future.",
        |a| a.polls as f64,
    ),
    counter(
        "spindle_actor_busy_seconds_total",
        "Seconds spent inside the actor's polls.",
        |a| a.busy_seconds,
    ),
    gauge(
        "spindle_actor_busy_ratio",
        "Share of the last second spent inside the actor's polls (0..1).",
        |a| a.busy_pct / 100.0,
    ),
];

/// One sample per channel, labelled by graph, channel, writer and reader.
const CHANNEL_METRICS: &[Metric<ChannelSnap>] = &[
    counter(
        "spindle_channel_sent_total",
        "Messages sent on the channel.",
        |c| c.sent as f64,
    ),
    counter(
        "spindle_channel_taken_total",
        "Messages taken from the channel.",
        |c| c.taken as f64,
    ),
    counter(
        "spindle_channel_dead_letters_total",
        "Messages moved to dead letters by the poison policy.",
        |c| c.dead_letters as f64,
    ),
    gauge(
        "spindle_channel_capacity",
        "Slots in the channel's ring.",
        |c| c.capacity as f64,
    ),
    gauge(
        "spindle_channel_messages_per_second",
        "Send rate over the last second.",
        |c| c.rate,
    ),
    gauge(
        "spindle_channel_closed",
        "1 once the writer closed the channel.",
        |c| flag(c.closed),
    ),
];

/// One sample per worker, labelled by its index.
const WORKER_METRICS: &[Metric<spindle::WorkerMetrics>] = &[
    counter("spindle_runtime_polls_total", "Task polls.", |w| {
        w.polls as f64
    }),
    counter(
        "spindle_runtime_spawns_total",
        "Tasks spawned from workers.",
        |w| w.spawns as f64,
    ),
    counter(
        "spindle_runtime_steals_total",
        "Tasks stolen between workers.",
        |w| w.steals as f64,
    ),
    counter(
        "spindle_runtime_parks_total",
        "Times a worker went to sleep.",
        |w| w.parks as f64,
    ),
    counter(
        "spindle_runtime_lifo_hits_total",
        "Tasks run from a worker's LIFO slot or inline by an await.",
        |w| w.lifo_hits as f64,
    ),
    counter(
        "spindle_runtime_injector_pops_total",
        "Tasks taken from the global injector.",
        |w| w.injector_pops as f64,
    ),
];

/// Unlabelled, one sample for the whole runtime.
const RUNTIME_METRICS: &[Metric<spindle::RuntimeMetrics>] = &[
    counter(
        "spindle_runtime_remote_schedules_total",
        "Tasks scheduled from outside any worker.",
        |rt| rt.remote_schedules as f64,
    ),
    gauge(
        "spindle_runtime_injector_depth",
        "Tasks waiting in the global injector.",
        |rt| rt.injector_depth as f64,
    ),
    gauge(
        "spindle_runtime_registered_tasks",
        "Tasks alive and idle at least once.",
        |rt| rt.registered_tasks as f64,
    ),
    gauge(
        "spindle_runtime_sleeping_workers",
        "Workers asleep now.",
        |rt| rt.sleeping_workers as f64,
    ),
];

/// `/metrics`: Prometheus text exposition format 0.0.4.
pub(crate) fn prometheus(s: &Snapshot) -> String {
    let mut out = String::new();
    let mut e = Exposition { out: &mut out };
    graph_families(&mut e, s);
    actor_families(&mut e, s);
    channel_families(&mut e, s);
    super::probes::families(&mut e, &s.graph, &s.probes);
    runtime_families(&mut e, &s.runtime);
    out
}

fn graph_families(e: &mut Exposition<'_>, s: &Snapshot) {
    for m in GRAPH_METRICS {
        e.head(m.name, m.kind, m.help);
        e.sample(m.name, &[("graph", &s.graph)], (m.value)(s));
    }
}

fn actor_families(e: &mut Exposition<'_>, s: &Snapshot) {
    for m in ACTOR_METRICS {
        e.head(m.name, m.kind, m.help);
        for a in &s.actors {
            let labels = [("graph", s.graph.as_str()), ("actor", &a.name)];
            e.sample(m.name, &labels, (m.value)(a));
        }
    }
}

/// A channel's labels: graph, channel, writer and reader.
fn channel_labels<'a>(graph: &'a str, c: &'a ChannelSnap) -> [(&'static str, &'a str); 4] {
    [
        ("graph", graph),
        ("channel", &c.name),
        ("from", &c.from),
        ("to", &c.to),
    ]
}

/// The per-channel families, then the fill percentiles (a sample per
/// channel and quantile).
fn channel_families(e: &mut Exposition<'_>, s: &Snapshot) {
    for m in CHANNEL_METRICS {
        e.head(m.name, m.kind, m.help);
        for c in &s.channels {
            e.sample(m.name, &channel_labels(&s.graph, c), (m.value)(c));
        }
    }
    let fill = "spindle_channel_fill_ratio";
    e.head(
        fill,
        "gauge",
        "Fill (share of capacity) percentiles over the telemetry window.",
    );
    for c in &s.channels {
        for (q, v) in ["0.5", "0.8", "0.99"].iter().zip(c.fill_pct) {
            let [graph, channel, from, to] = channel_labels(&s.graph, c);
            let labels = [graph, channel, from, to, ("quantile", q)];
            e.sample(fill, &labels, v / 100.0);
        }
    }
}

/// The worker count (labelled by flavor), the per-worker counters, then
/// the runtime-wide families.
fn runtime_families(e: &mut Exposition<'_>, rt: &spindle::RuntimeMetrics) {
    let workers = "spindle_runtime_workers";
    e.head(workers, "gauge", "Worker threads of the runtime.");
    e.sample(workers, &[("flavor", rt.flavor)], rt.workers.len() as f64);
    for m in WORKER_METRICS {
        e.head(m.name, m.kind, m.help);
        for w in &rt.workers {
            let idx = w.index.to_string();
            e.sample(m.name, &[("worker", &idx)], (m.value)(w));
        }
    }
    for m in RUNTIME_METRICS {
        e.head(m.name, m.kind, m.help);
        e.sample(m.name, &[], (m.value)(rt));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(json_str("a\"b\\c\n<x>"), r#""a\"b\\c\n\u003cx\u003e""#);
        assert_eq!(dot_str("a\"b"), r#""a\"b""#);
        assert_eq!(label("q\"\\\n"), r#"q\"\\\n"#);
        assert_eq!(si(64_200_000.0), "64.2M");
        assert_eq!(num(f64::NAN), "0");
    }

    /// A snapshot with two actors, two channels and two workers, its names
    /// and failure message holding characters that need escaping.
    fn fixed_snapshot() -> Snapshot {
        let actor = |name: &str, status, n: u64, busy_pct| ActorSnap {
            name: name.to_string(),
            mode: "task".to_string(),
            status,
            restarts: n,
            polls: 1234 + n,
            busy_seconds: 1.5 + n as f64,
            busy_pct,
            last_failure: (n > 0).then(|| "boom <\"here\">".to_string()),
        };
        let channel = |name: &str, from: &str, to: &str, n: u64| ChannelSnap {
            name: name.to_string(),
            from: from.to_string(),
            to: to.to_string(),
            capacity: 1024 << n,
            batch: 32,
            sent: 5000 + n,
            taken: 4990 + n,
            dead_letters: 2 + n,
            closed: n > 0,
            rate: 2500.5 + n as f64,
            rate_window: 2400.25 + n as f64,
            fill_pct: [12.5 + n as f64, 50.0, 99.0],
        };
        let mut runtime = spindle::RuntimeMetrics::default();
        runtime.flavor = "multi_thread";
        runtime.remote_schedules = 7;
        runtime.injector_depth = 3;
        runtime.registered_tasks = 11;
        runtime.sleeping_workers = 1;
        for n in 0..2u64 {
            let mut w = spindle::WorkerMetrics::default();
            w.index = n as usize;
            w.polls = 100 + n;
            w.spawns = 20 + n;
            w.steals = 5 + n;
            w.parks = 9 + n;
            w.lifo_hits = 40 + n;
            w.injector_pops = 3 + n;
            runtime.workers.push(w);
        }
        Snapshot {
            graph: "pipe\"line".to_string(),
            uptime: std::time::Duration::from_millis(12_345),
            window: std::time::Duration::from_secs(60),
            stopping: false,
            live: 2,
            actors: vec![
                actor("source", "running", 0, 37.5),
                actor("sink\nb", "failed", 3, f64::NAN),
            ],
            channels: vec![
                channel("numbers", "source", "sink\nb", 0),
                channel("back\\", "sink\nb", "source", 1),
            ],
            probes: ["in", "out"]
                .iter()
                .enumerate()
                .map(|(n, dir)| super::super::probes::ProbeSnap {
                    name: format!("{dir} \"q\""),
                    labels: vec![("direction", dir.to_string())],
                    readings: vec![crate::Reading {
                        metric: "test_items_total",
                        help: "Items through the probe.",
                        counter: true,
                        short: "items",
                        value: 10.0 + n as f64,
                    }],
                })
                .collect(),
            runtime,
        }
    }

    #[test]
    fn prometheus_renders_a_fixed_snapshot() {
        let want = include_str!("testdata/metrics.prom");
        assert_eq!(prometheus(&fixed_snapshot()), want);
    }

    #[test]
    fn json_renders_a_fixed_snapshot() {
        let want = include_str!("testdata/graph.json");
        assert_eq!(json(&fixed_snapshot()), want);
    }
}
