//! Stealing, for a worker that found nothing in its own queues or the
//! injector: as one of at most half the workers searching (`idle.rs`), it
//! takes half of another worker's ring, trying every victim from a random
//! one, then a share of the injector, for a few rounds (`spin.rs`); then
//! the fresh tasks of a worker the monitor named (`steal_hidden`). Its
//! caller parks when this finds nothing.

use super::{Core, WorkerCtx};
use crate::loom::{lock, spin_loop, Ordering::Relaxed};
use crate::rand::xorshift32;
use crate::sched::metrics::bump;
use crate::sched::queue::Steal;
use crate::task::Notified;

impl WorkerCtx {
    /// Looks for a task in other workers' queues and the injector, as one
    /// of the searching workers (`idle.rs`); `None` if half the workers
    /// search already or nothing was found (the caller then parks).
    pub(super) fn steal_work(&self, core: &mut Core) -> Option<Notified> {
        let shared = self.shared();
        if !core.is_searching {
            if !shared.idle.worker_to_searching() {
                return None;
            }
            core.is_searching = true;
        }
        let n = shared.remotes.len();
        let rounds = core.spin.rounds();
        for round in 0..rounds {
            let start = core.next_rand() as usize % n;
            for i in 0..n {
                let victim = (start + i) % n;
                if victim == self.index {
                    continue;
                }
                match shared.remotes[victim].stealer.steal_into(&mut core.queue) {
                    Ok((task, stolen)) => {
                        bump(&self.counters().steals, stolen as u64);
                        bump(&self.counters().steal_ops, 1);
                        core.spin.found(round);
                        return Some(task);
                    }
                    Err(Steal::Retry | Steal::Empty) => {}
                }
            }
            if let Some(t) = self.take_from_inject(core) {
                core.spin.found(round);
                return Some(t);
            }
            if shared.is_shutdown() {
                return None;
            }
            if round + 1 < rounds {
                for _ in 0..32 {
                    spin_loop();
                }
            }
        }
        if let Some(t) = self.steal_hidden(core) {
            return Some(t);
        }
        core.spin.missed();
        None
    }

    /// Takes the fresh tasks (the LIFO slot's included) of a worker whose
    /// poll has hidden them across two of the monitor's looks
    /// (`Remote::want_visit`, `hidden_watch.rs`),
    /// visiting its lent core (`core_slot.rs`): the top one to run, the
    /// rest into this worker's ring. Only on the monitor's word: a visit costs a
    /// membarrier that interrupts every CPU running a worker, and taken
    /// from a poll about to end, a message-passing pair would be split
    /// across cores.
    pub(super) fn steal_hidden(&self, core: &mut Core) -> Option<Notified> {
        let shared = self.shared();
        for (victim, remote) in shared.remotes.iter().enumerate() {
            if victim == self.index || !remote.visit_wanted() {
                continue;
            }
            let lent = lock(&remote.active).clone();
            let queue = &mut core.queue;
            let taken = lent.visit(|theirs| {
                // Every fresh task is taken, so none stays hidden; a stale
                // flag (the fresh tasks run inline since) is cleared too.
                remote.counters.hides_fresh.store(false, Relaxed);
                let top = theirs.fresh.pop()?;
                let mut rest = 0;
                while let Some(t) = theirs.fresh.pop_oldest() {
                    queue.push_back(t, &shared.inject);
                    rest += 1;
                }
                Some((top, rest))
            });
            if let Some(Some((top, rest))) = taken {
                bump(&self.counters().visits, 1);
                bump(&self.counters().steals, 1 + rest as u64);
                if rest > 0 {
                    shared.notify_parked();
                }
                return Some(top);
            }
        }
        None
    }
}

impl Core {
    /// Only spreads steal attempts across victims.
    pub(super) fn next_rand(&mut self) -> u32 {
        self.rng = xorshift32(self.rng);
        self.rng
    }
}
