//! A closed-loop and open-loop HTTP/1.1 load generator, and the benchmark
//! suite of this workspace.
//!
//! It exists because a general-purpose client in the load loop measures the
//! client, not the server (`README.md` quotes the figures): the engine is a
//! lean loop of its own; `reqwest` is used only for preflight checks, where
//! correctness matters more than speed.
//!
//! # Layers
//!
//! Each module imports only modules listed below it (and `common`); a test
//! (`tests/integration/layers.rs`) reads the `use crate::…` lines and fails
//! on an upward import. `docs/ARCHITECTURE.md` draws the map and the path of
//! one measured run.
//!
//! | layer | what it holds |
//! |---|---|
//! | [`cli`] | clap types, checked plans, one dispatch, exit codes |
//! | [`suite`], [`runner`], [`k8s`] | orchestration: build, servers, rounds, metadata, the results folder, flame graphs; the `load` and `watch` use cases; Kubernetes manifests of a run over several client pods |
//! | [`report`] | presentation: Markdown tables, `report.md`, terminal lines, SVG charts |
//! | [`results`] | the results contract, paired deltas, layer sweep, comparison |
//! | [`calibrate`] | the client's own ceiling against a built-in canned responder |
//! | [`measure`], [`preflight`], [`telemetry`] | one run with its observers (CPU sampler, perf), turned into figures; checks before timing, with the engine's own request and framing; live Prometheus metrics of a run |
//! | [`engine`] | the load loop and its HTTP/1.1 framing |
//! | [`sys`], [`model`], [`analysis`] | Linux plumbing; the vocabulary; pure statistics |

pub mod cli;
pub mod k8s;
pub mod runner;
pub mod suite;

pub mod report;

pub mod results;

pub mod calibrate;

pub mod measure;
pub mod preflight;
pub mod telemetry;

pub mod engine;

pub mod analysis;
pub mod model;
pub mod sys;
