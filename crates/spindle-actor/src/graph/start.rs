//! Starting a graph: [`Graph::start`] checks the wiring (each channel has
//! one writer and one reader, names are unique, no mistake was kept from
//! building), binds the telemetry server if asked, places every actor as a
//! task, a team member or a thread of its own, and starts them. If anything
//! fails, nothing runs: actors already started are stopped and waited for.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use super::{Graph, GraphShared};
use crate::actor::RunMode;
use crate::error::GraphError;
use crate::running::RunningGraph;
use crate::supervisor::Supervised;
use crate::team::Team;
use crate::telemetry;

impl Graph {
    fn check(&mut self) -> Result<(), GraphError> {
        if let Some(e) = self.errors.drain(..).next() {
            return Err(e);
        }
        if self.actors.is_empty() {
            return Err(GraphError::Empty);
        }
        let mut seen = HashSet::new();
        for a in &self.actors {
            if !seen.insert(a.cell.name.as_str()) {
                return Err(GraphError::DuplicateName {
                    kind: "actor",
                    name: a.cell.name.clone(),
                });
            }
        }
        let mut seen = HashSet::new();
        for c in &self.channels {
            if !seen.insert(c.name()) {
                return Err(GraphError::DuplicateName {
                    kind: "channel",
                    name: c.name().to_string(),
                });
            }
            match (c.writer(), c.reader()) {
                (Some(_), Some(_)) => {}
                (Some(w), None) => {
                    return Err(GraphError::NoReader {
                        channel: c.name().to_string(),
                        writer: w.name.clone(),
                    })
                }
                (None, Some(r)) => {
                    return Err(GraphError::NoWriter {
                        channel: c.name().to_string(),
                        reader: r.name.clone(),
                    })
                }
                (None, None) => {
                    return Err(GraphError::Unwired {
                        channel: c.name().to_string(),
                    })
                }
            }
        }
        Ok(())
    }

    /// Checks the wiring, binds the telemetry server if asked, and starts
    /// every actor: tasks and teams on `rt`, own-thread actors on their
    /// threads. Nothing runs if this returns an error.
    pub fn start(self, rt: &spindle::Handle) -> Result<RunningGraph, GraphError> {
        self.start_with(rt, |name, run| {
            std::thread::Builder::new().name(name).spawn(run)
        })
    }

    /// [`Graph::start`], with own-thread actors' threads made by `spawn`
    /// (the tests' way to refuse one).
    fn start_with(
        mut self,
        rt: &spindle::Handle,
        mut spawn: impl FnMut(String, ThreadMain) -> std::io::Result<JoinHandle<()>>,
    ) -> Result<RunningGraph, GraphError> {
        self.check()?;
        let server = match &self.telemetry {
            Some(cfg) => Some(telemetry::bind(cfg)?),
            None => None,
        };
        let shared = self.shared_state(rt);
        let Placed {
            tasks,
            teams,
            threads,
        } = self.place(&shared);
        let telemetry = match server {
            Some(s) => Some(telemetry::serve(s, shared.clone())?),
            None => None,
        };
        let mut joins = Vec::new();
        let mut threads = threads.into_iter();
        while let Some(s) = threads.next() {
            match start_own_thread(s, &mut spawn) {
                Ok(j) => joins.push(j),
                Err(e) => {
                    // Keep the promise that nothing runs: ask the started
                    // actors to stop, drop the rest unstarted (which retires
                    // their ends, so no started actor waits on them), and
                    // wait for the started threads and the server to end.
                    shared.request_shutdown("an actor thread could not start");
                    drop((threads, teams, tasks));
                    for j in joins {
                        let _ = j.join();
                    }
                    if let Some(server) = telemetry {
                        server.stop();
                    }
                    return Err(e);
                }
            }
        }
        for team in teams {
            drop(rt.spawn(Team::new(team.members)));
        }
        for s in tasks {
            drop(rt.spawn(s));
        }
        Ok(RunningGraph::new(shared, telemetry, joins))
    }

    /// The running graph's shared state, every actor live.
    fn shared_state(&self, rt: &spindle::Handle) -> Arc<GraphShared> {
        Arc::new(GraphShared {
            name: self.name.clone(),
            actors: self.actors.iter().map(|a| a.cell.clone()).collect(),
            channels: self.channels.clone(),
            probes: self.probes.clone(),
            stopping: AtomicBool::new(false),
            stop_request: Mutex::new(None),
            live: AtomicUsize::new(self.actors.len()),
            done_lock: Mutex::new(()),
            done_cv: Condvar::new(),
            done_wakers: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            started: Instant::now(),
            rt: rt.clone(),
        })
    }

    /// Takes every actor out of the builder, supervised, sorted by where it
    /// runs; teams keep the order in which they were first named.
    fn place(&mut self, shared: &Arc<GraphShared>) -> Placed {
        let mut placed = Placed {
            tasks: Vec::new(),
            teams: Vec::new(),
            threads: Vec::new(),
        };
        for spec in self.actors.drain(..) {
            let mode = spec.cell.mode.clone();
            let s = Supervised::new(
                spec.cell,
                shared.clone(),
                spec.inputs,
                spec.outputs,
                spec.factory,
                spec.policy,
            );
            match mode {
                RunMode::Task => placed.tasks.push(s),
                RunMode::Team(t) => match placed.teams.iter_mut().find(|team| team.name == t) {
                    Some(team) => team.members.push(s),
                    None => placed.teams.push(PlacedTeam {
                        name: t,
                        members: vec![s],
                    }),
                },
                RunMode::OwnThread => placed.threads.push(s),
            }
        }
        placed
    }
}

/// What an own-thread actor's thread runs.
type ThreadMain = Box<dyn FnOnce() + Send>;

/// The supervised actors of a starting graph, by where they run.
struct Placed {
    /// One task each on the graph's runtime.
    tasks: Vec<Supervised>,
    /// One task per team.
    teams: Vec<PlacedTeam>,
    /// A thread each, with a current-thread runtime of its own.
    threads: Vec<Supervised>,
}

/// A team of a starting graph: its name and its members, in the order
/// they were declared.
struct PlacedTeam {
    name: String,
    members: Vec<Supervised>,
}

/// Starts an own-thread actor on a thread made by `spawn`, running it on
/// a current-thread runtime of its own.
fn start_own_thread(
    s: Supervised,
    spawn: &mut impl FnMut(String, ThreadMain) -> std::io::Result<JoinHandle<()>>,
) -> Result<JoinHandle<()>, GraphError> {
    let name = format!("actor-{}", s.actor_name());
    let actor = s.actor_name().to_string();
    let main: ThreadMain = Box::new(move || {
        let rt = spindle::Builder::new_current_thread()
            .build()
            .expect("current-thread runtime");
        rt.block_on(s);
    });
    spawn(name, main).map_err(|e| GraphError::Thread {
        actor,
        reason: e.to_string(),
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::PortError;
    use std::sync::atomic::Ordering;

    /// An own-thread actor whose thread cannot start fails `start`, and
    /// the own-thread actor started before it has ended by the time
    /// `start` returns, though its writer never ran.
    #[test]
    fn a_refused_thread_fails_start_and_leaves_nothing_running() {
        let rt = spindle::Builder::new_multi_thread()
            .workers(1)
            .build()
            .unwrap();
        let mut g = Graph::new("refused");
        let (tx, rx) = g.channel::<u64>("c").capacity(4).build();
        let ended = Arc::new(AtomicBool::new(false));
        let e = ended.clone();
        g.actor("reader").reads(&rx).own_thread().run(move |_| {
            let (rx, e) = (rx.clone(), e.clone());
            async move {
                let mut r = rx.lock()?;
                while r.take().await.is_some() {}
                e.store(true, Ordering::SeqCst);
                Ok::<(), PortError>(())
            }
        });
        g.actor("writer").writes(&tx).own_thread().run(move |_| {
            let tx = tx.clone();
            async move {
                tx.lock()?.send(1).await.unwrap();
                Ok::<(), PortError>(())
            }
        });
        let mut threads = 0;
        let started = g.start_with(rt.handle(), |name, run| {
            threads += 1;
            if threads == 1 {
                std::thread::Builder::new().name(name).spawn(run)
            } else {
                Err(std::io::Error::other("refused by the test"))
            }
        });
        match started {
            Err(GraphError::Thread { actor, reason }) => {
                assert_eq!(
                    (actor.as_str(), reason.as_str()),
                    ("writer", "refused by the test")
                );
            }
            other => panic!("expected a thread error, got {other:?}"),
        }
        assert!(
            ended.load(Ordering::SeqCst),
            "the started reader still ran after start returned"
        );
    }
}
