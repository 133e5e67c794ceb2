//! The catalogue's pipeline rows: C chains of D stage tasks, each stage
//! spawned with the previous stage's handle, awaiting it and adding one.

use super::expected::{e_times_10, e_times_20, e_times_5};
use super::published::coflux;
use super::row::skip_std;
use super::{NONE, NO_KEYS};
use crate::workloads::Workload;

/// The rows in catalogue order (after the fork–join rows).
pub(super) const ROWS: [Workload; 6] = [
    skip_std(w!(
        "pipeline_1x5",
        "pipeline",
        "1 chain of 5 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_5,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_4x10",
        "pipeline",
        "4 concurrent chains of 10 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_10,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_8x5",
        "pipeline",
        "8 concurrent chains of 5 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_5,
        "pipelines",
        NO_KEYS,
        &[coflux(4670.0, "~214 K/s, ~4.67 µs/pipeline (C=8, D=5)")]
    )),
    skip_std(w!(
        "pipeline_8x10",
        "pipeline",
        "8 concurrent chains of 10 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_10,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_16x10",
        "pipeline",
        "16 concurrent chains of 10 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_10,
        "pipelines",
        NO_KEYS,
        NONE
    )),
    skip_std(w!(
        "pipeline_8x20",
        "pipeline",
        "8 concurrent chains of 20 sequential stage tasks",
        100_000,
        10_000,
        160,
        e_times_20,
        "pipelines",
        NO_KEYS,
        NONE
    )),
];
