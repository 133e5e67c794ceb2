//! The graph of the example, and the end-of-run check: shared by `main.rs`
//! and the browser / Prometheus tests (which include this file), so those
//! tests run the example itself.

use spindle_actor::{ActorBuilder, ActorState, Graph, StopReport};

use crate::args::{Args, Placement};
use crate::messages::{Counts, Verdict};
use crate::worker::WorkerState;
use crate::{generator, heartbeat, logger, worker};

/// The states the actors keep across restarts, read at the end.
pub struct Totals {
    pub generated: ActorState<u64>,
    pub work: ActorState<WorkerState>,
    pub counts: ActorState<Counts>,
}

fn place(b: ActorBuilder<'_>, placement: Placement, team: bool) -> ActorBuilder<'_> {
    match placement {
        Placement::Tasks => b,
        Placement::Team if team => b.team("pipeline"),
        Placement::Team => b,
        Placement::Threads => b.own_thread(),
    }
}

/// heartbeat → worker ← generator; worker → logger.
pub fn build(args: &Args) -> (Graph, Totals) {
    let mut g = Graph::new("fizzbuzz");
    let cap = args.capacity;
    let (hb_tx, hb_rx) = g.channel::<u64>("heartbeat").capacity(1024).build();
    let (v_tx, v_rx) = g
        .channel::<u64>("values")
        .capacity(cap)
        .batch(cap / 2)
        .build();
    let (f_tx, f_rx) = g
        .channel::<Verdict>("fizzbuzz")
        .capacity(cap)
        .batch(cap / 2)
        .build();
    let beats = ActorState::new(0u64);
    let t = Totals {
        generated: ActorState::new(0u64),
        work: ActorState::new(WorkerState::default()),
        counts: ActorState::new(Counts::default()),
    };
    let zc = args.zero_copy;

    let (rate, n_beats) = (args.rate, args.beats);
    g.actor("heartbeat")
        .writes(&hb_tx)
        .run(move |ctx| heartbeat::run(ctx, hb_tx.clone(), rate, n_beats, beats.clone()));
    let s = t.generated.clone();
    place(g.actor("generator").writes(&v_tx), args.placement, false)
        .run(move |ctx| generator::run(ctx, v_tx.clone(), zc, s.clone()));
    let s = t.work.clone();
    place(
        g.actor("worker").reads(&hb_rx).reads(&v_rx).writes(&f_tx),
        args.placement,
        true,
    )
    .run(move |ctx| {
        worker::run(
            ctx,
            hb_rx.clone(),
            v_rx.clone(),
            f_tx.clone(),
            zc,
            s.clone(),
        )
    });
    let s = t.counts.clone();
    place(g.actor("logger").reads(&f_rx), args.placement, true)
        .run(move |ctx| logger::run(ctx, f_rx.clone(), zc, s.clone()));
    if let Some(addr) = &args.telemetry {
        g.telemetry(addr.clone());
    }
    (g, t)
}

/// What the run produced.
pub struct Outcome {
    pub generated: u64,
    pub work: WorkerState,
    pub counts: Counts,
}

impl Totals {
    /// Takes the final totals (after the graph stopped).
    pub fn take(&self) -> Outcome {
        Outcome {
            generated: self.generated.take().unwrap_or_default(),
            work: self.work.take().unwrap_or_default(),
            counts: self.counts.take().unwrap_or_default(),
        }
    }
}

impl Outcome {
    /// Every problem found: an unclean stop, totals that differ between
    /// actors, counts that differ from the closed form. Empty when all is
    /// well.
    pub fn problems(&self, report: &StopReport) -> Vec<String> {
        let mut p = Vec::new();
        if !report.is_clean() {
            p.push(format!("the graph did not stop cleanly:\n{report}"));
        }
        let g = self.generated;
        if self.work.values != g || self.work.messages != g || self.counts.total() != g {
            p.push(format!(
                "totals differ between actors (generated {g}, worker {} / {}, logger {})",
                self.work.values,
                self.work.messages,
                self.counts.total()
            ));
        }
        let expected = Counts::expected(g);
        if self.counts != expected {
            p.push(format!(
                "counts {} differ from the expected {expected} for 1..={g}",
                self.counts
            ));
        }
        p
    }
}
