//! The figures the seed documents publish for the catalogue's rows, one
//! constructor per source, each with the hardware the source names.

use crate::workloads::{Published, SeedFigure};

const SEQ_HW: &str = "MacBook Pro M-series";
const CC_HW: &str = "M1/M2 Mac, Linux x64";
const WYN_HW: &str = "their machine, unspecified";
const SS_HW: &str = "modern i5";
const COFLUX_HW: &str = "AMD Ryzen 9 7940H, Windows, MSVC";

pub(super) const fn seq(
    system: &'static str,
    ms: f64,
    ops: u64,
    quote: &'static str,
) -> SeedFigure {
    SeedFigure {
        source: "Seq",
        system,
        hardware: SEQ_HW,
        value: Published::TotalMs { ms, ops },
        quote,
    }
}
pub(super) const fn cc(system: &'static str, rate: f64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "Concurrent-C",
        system,
        hardware: CC_HW,
        value: Published::OpsPerSec(rate),
        quote,
    }
}
pub(super) const fn wyn(
    system: &'static str,
    ms: f64,
    ops: u64,
    quote: &'static str,
) -> SeedFigure {
    SeedFigure {
        source: "Wyn",
        system,
        hardware: WYN_HW,
        value: Published::TotalMs { ms, ops },
        quote,
    }
}
pub(super) const fn ss(system: &'static str, rate: f64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "steady_state",
        system,
        hardware: SS_HW,
        value: Published::OpsPerSec(rate),
        quote,
    }
}
pub(super) const fn coflux(ns: f64, quote: &'static str) -> SeedFigure {
    SeedFigure {
        source: "Coflux",
        system: "Coflux",
        hardware: COFLUX_HW,
        value: Published::NsPerOp(ns),
        quote,
    }
}
