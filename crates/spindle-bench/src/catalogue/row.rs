//! How the catalogue's rows are written: `w!`, a [`Workload`] from its
//! fields in table order with no quick-profile skips; the skips some rows
//! add; and [`concat`], which joins the row lists into one table.

use crate::workloads::Workload;

macro_rules! w {
    ($name:expr, $group:expr, $desc:expr, $full:expr, $quick:expr, $tiny:expr, $exp:expr, $unit:expr, $keys:expr, $seeds:expr) => {
        Workload {
            name: $name,
            description: $desc,
            group: $group,
            full: $full,
            quick: $quick,
            tiny: $tiny,
            expected: $exp,
            ops_unit: $unit,
            extra_keys: $keys,
            seeds: $seeds,
            quick_skip: &[],
            quick_skip_why: "",
        }
    };
}

/// `std` creates an OS thread per task on these rows: seconds per run at
/// the quick size, most of the quick budget for a reference point.
const STD_THREAD_PER_TASK: &str =
    "std spawns an OS thread per task here: tens of seconds at this size";

pub(super) const fn skip_std(w: Workload) -> Workload {
    Workload {
        quick_skip: &["std"],
        quick_skip_why: STD_THREAD_PER_TASK,
        ..w
    }
}

/// On these rows every message is a hand-off between two OS threads that
/// park in between: a futex wake-up each way, seconds per run at the quick
/// size (most of the quick budget) for a reference point.
const THREADS_PARK_PER_MESSAGE: &str =
    "OS threads park and wake each other for every message here: seconds per run at this size";

pub(super) const fn skip_parking_threads(w: Workload) -> Workload {
    Workload {
        quick_skip: &["std", "crossbeam", "flume"],
        quick_skip_why: THREADS_PARK_PER_MESSAGE,
        ..w
    }
}

/// Two lists of rows as one, in order (`N` must be `A + B`).
pub(super) const fn concat<const A: usize, const B: usize, const N: usize>(
    a: [Workload; A],
    b: [Workload; B],
) -> [Workload; N] {
    assert!(A + B == N && A > 0);
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}
