//! `/metrics`: Prometheus text exposition format 0.0.4.

use std::fmt::Write;

use crate::telemetry::sampler::{ActorSnap, ChannelSnap, Snapshot};

pub(super) fn label(v: &str) -> String {
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
    crate::telemetry::probes::families(&mut e, &s.graph, &s.probes);
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
