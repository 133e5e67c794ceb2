//! A worker's side of `join` (`join/`): its job deque, stealing jobs when
//! it has no task to run, and waking an idle worker for a job pushed.
//!
//! A job runs on the thread that takes it, outside any task: a worker
//! with nothing else to run executes a stolen job in its run loop, holding
//! its core (it leaves the search first, as for a task found). Nobody
//! counts on a job being stolen: a join takes back and runs its own job
//! when no thief came, so a wake-up skipped here costs parallelism, never
//! progress. That is why a join's push looks at the unordered `any_idle`
//! hint first and, while no worker idles, costs no fence. When one does,
//! `notify_parked` fences (SeqCst) before reading the sleepers, and a
//! worker about to sleep re-checks the deques after its own fence
//! (`Shared::notify_if_work_pending`): the push is seen by one side or the
//! other, as for a task (`docs/sleep-wake.md`).

use super::{Core, WorkerCtx};
use crate::join::join_on;

impl WorkerCtx {
    /// `join(a, b)` on this worker thread.
    pub(crate) fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA,
        B: FnOnce(bool) -> RB + Send,
        RB: Send,
    {
        let shared = self.shared();
        let wake_thief = || {
            if shared.idle.any_idle() {
                shared.notify_parked();
            }
        };
        join_on(&self.jobs, &shared.jobs, wake_thief, a, b)
    }

    /// Runs a job stolen from another worker's deque, if there is one;
    /// `false` if none.
    pub(super) fn run_stolen_job(&self, core: &mut Core) -> bool {
        let shared = self.shared();
        let start = core.next_rand() as usize;
        let Some(job) = shared.jobs.steal(self.jobs.id(), start) else {
            return false;
        };
        self.found_work(core);
        // SAFETY: taken from a deque, so this thread alone runs it, and
        // its owner waits in `join` until it has run.
        unsafe { job.execute() };
        true
    }
}

impl Drop for WorkerCtx {
    fn drop(&mut self) {
        self.shared().jobs.unregister(self.jobs.id());
    }
}
