//! The catalogue's synchronisation rows: async locks, a semaphore, a
//! notification hand-off and a `JoinSet`, each timed on spindle, Tokio,
//! Go and, where the crate has the primitive, smol's `async-lock`.

use super::expected::{e_times_100, e_tri};
use super::{NONE, NO_KEYS};
use crate::workloads::Workload;

/// The rows in catalogue order (after the pipeline rows).
pub(super) const ROWS: [Workload; 7] = [
    w!(
        "mutex_uncontended",
        "sync",
        "one task locks an async mutex, adds i to the value, unlocks; n times",
        10_000_000,
        1_000_000,
        1_000,
        e_tri,
        "lock + unlock",
        NO_KEYS,
        NONE
    ),
    w!(
        "mutex_contended",
        "sync",
        "4·W tasks share one async mutex: lock, add i, unlock, yield",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "lock + unlock",
        NO_KEYS,
        NONE
    ),
    w!(
        "rwlock_read_heavy",
        "sync",
        "4·W tasks share one async RwLock, 95 % reads (checked) and 5 % writes, yielding",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "lock + unlock",
        NO_KEYS,
        NONE
    ),
    w!(
        "semaphore_limit",
        "sync",
        "1000 tasks through 8 permits, each held across one yield",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "acquisitions",
        &["peak_holders"],
        NONE
    ),
    w!(
        "notify_pingpong",
        "sync",
        "two tasks wake each other in turn through two Notify",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "round trips",
        NO_KEYS,
        NONE
    ),
    w!(
        "watch_fanout",
        "sync",
        "1 sender publishes 1..=n on a watch channel, yielding after each; 100 watchers follow until they see n",
        100_000,
        10_000,
        200,
        e_times_100,
        "values sent",
        NO_KEYS,
        NONE
    ),
    w!(
        "joinset_drain",
        "sync",
        "spawn n tasks (task i returns i) into a JoinSet, drain it with join_next",
        1_000_000,
        100_000,
        1_000,
        e_tri,
        "tasks",
        NO_KEYS,
        NONE
    ),
];
