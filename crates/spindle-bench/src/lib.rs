//! spindle-bench: the cross-runtime benchmark suite of
//! `docs/bench-catalogue.md`.
//!
//! Roles, one module each: [`cli`] parses and dispatches; [`workloads`] holds
//! the catalogue's types and rules, [`catalogue`] its rows; [`peers`]
//! builds and interrogates the peer binaries;
//! [`runner`] runs one process per measured run and checks every result
//! (its value, and the [`witness`] fields that say how it was reached);
//! [`stats`] summarises and compares samples; [`report`] writes the table,
//! JSON, JSONL history, benchstat text and HTML; [`compare`] and [`fresh`]
//! are the regression and freshness checks; [`meta`] records the machine;
//! [`echo`] is the loopback echo benchmark (`spindle-bench echo`).
//! See `README.md` for the method and how to read a ratio.

pub mod catalogue;
pub mod cli;
pub mod compare;
pub mod echo;
pub mod fresh;
pub mod http;
pub mod meta;
pub mod peers;
pub mod report;
pub mod runner;
pub mod server;
pub mod stats;
pub mod telemetry;
pub mod witness;
pub mod workloads;
