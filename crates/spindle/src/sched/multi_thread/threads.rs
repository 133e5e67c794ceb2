//! The runtime's threads: a worker thread per core at build, a new thread
//! for a core taken from one stuck in a poll (the monitor's retake,
//! `block_in_place`), and the handles of all of them (the monitor's
//! included) to join at shutdown.
//!
//! A hand-off gets its thread first and takes the core second: a refused
//! thread leaves the core untouched with its owner (`Shared::hand_off`).

use super::worker::run_worker;
use super::{external_spawner, Core, Shared, WorkerCtx};
use crate::loom::{lock, Arc, Ordering::Relaxed};
use crate::sched::core_slot::CoreSlot;

impl Shared {
    /// Starts a thread running core `index` (at build).
    pub(crate) fn start_worker(
        this: &Arc<Self>,
        index: usize,
        core: Box<Core>,
    ) -> std::io::Result<()> {
        let give = Shared::worker_thread(this, index)?;
        give.send(core)
            .expect("a new worker thread waits for its core");
        Ok(())
    }

    /// Starts a thread for core `index`, waiting for the core to be sent;
    /// a thread whose sender is dropped instead ends at once.
    fn worker_thread(
        this: &Arc<Self>,
        index: usize,
    ) -> std::io::Result<std::sync::mpsc::SyncSender<Box<Core>>> {
        #[cfg(all(test, not(loom)))]
        if super::tests::REFUSE_THREADS.with(|r| r.get()) {
            return Err(std::io::Error::other("refused by the test"));
        }
        let mut b =
            std::thread::Builder::new().name(format!("{}-{index}", this.config.thread_name));
        if let Some(s) = this.config.stack_size {
            b = b.stack_size(s);
        }
        let external = external_spawner(this);
        let (give, core) = std::sync::mpsc::sync_channel::<Box<Core>>(1);
        let t = b.spawn(move || {
            if let Ok(core) = core.recv() {
                run_worker(external, index, core);
            }
        })?;
        this.keep_thread(t);
        Ok(give)
    }

    /// Keeps `t` to join at shutdown, and lets go of the threads that have
    /// ended (a hand-off's old thread retires after its poll): an ended
    /// thread's handle, dropped, frees its stack, which a runtime handing
    /// off once a second would otherwise pile up until shutdown.
    fn keep_thread(&self, t: std::thread::JoinHandle<()>) {
        let mut threads = lock(&self.threads);
        threads.retain(|t| !t.is_finished());
        threads.push(t);
    }

    /// Threads kept to join at shutdown (for tests).
    #[cfg(all(test, not(loom)))]
    pub(super) fn kept_threads(&self) -> usize {
        lock(&self.threads).len()
    }

    /// Gives core `index`, taken from a thread stuck in a poll, to a new
    /// thread (the monitor). `false` if no core was lent there.
    pub(crate) fn retake(this: &Arc<Self>, index: usize) -> bool {
        let lent = lock(&this.remotes[index].active).clone();
        Shared::hand_off(this, index, &lent)
    }

    /// Takes the core lent in `lent` (core `index`) and starts a new thread
    /// on it: the monitor's retake and `block_in_place`. `false` if no core
    /// was there, or no thread could be had.
    ///
    /// The thread comes first and the core second, so that a refused
    /// thread leaves the core untouched with its owner. (Taken first and
    /// lent back after a refusal, the core could land in the slot of an
    /// owner that had meanwhile found it gone and retired.) When the core
    /// turns out to be gone already, the new thread ends unused.
    pub(super) fn hand_off(this: &Arc<Self>, index: usize, lent: &CoreSlot) -> bool {
        let Ok(give) = Shared::worker_thread(this, index) else {
            return false;
        };
        let Some(core) = lent.take_away() else {
            return false;
        };
        give.send(core)
            .expect("a new worker thread waits for its core");
        this.handoffs.fetch_add(1, Relaxed);
        crate::report::emit(
            crate::report::Kind::Handoff,
            crate::report::Level::Debug,
            format_args!("spindle: worker {index} is blocked; its queue went to a new thread"),
        );
        true
    }

    /// Starts a thread (the monitor) that is joined at shutdown.
    pub(crate) fn start_thread(
        &self,
        name: &str,
        f: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<()> {
        let t = std::thread::Builder::new().name(name.into()).spawn(f)?;
        self.keep_thread(t);
        Ok(())
    }

    /// The threads to join at shutdown (called until it returns none).
    pub(crate) fn take_threads(&self) -> Vec<std::thread::JoinHandle<()>> {
        std::mem::take(&mut *lock(&self.threads))
    }
}

impl WorkerCtx {
    /// Gives this thread's core to a new thread (`block_in_place`): the
    /// current poll goes on here without it (or with it, if no thread
    /// could be had: the blocking code then runs in place).
    pub(crate) fn hand_off_core(&self) {
        // A thread that lost its core already (a retake, an earlier
        // `block_in_place` in this poll) has nothing to hand off: no new
        // thread for it. The core can only leave, not come back, meanwhile.
        if self.lent.is_lent() {
            Shared::hand_off(self.refs.owner(), self.index, &self.lent);
        }
    }

    /// Whether this thread drives the runtime's tasks: `false` once its
    /// core was taken away in a poll (`block_in_place`'s hand-off, or the
    /// monitor's retake), where blocking stalls only itself.
    pub(crate) fn drives_tasks(&self) -> bool {
        !self.lending.get() || self.lent.is_lent()
    }
}
