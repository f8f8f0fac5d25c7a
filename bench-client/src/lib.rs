//! A closed-loop HTTP/1.1 load generator and the benchmark suite of this
//! workspace.
//!
//! It exists because a general-purpose client in the load loop measures the
//! client, not the server: on this project's 2-core machines a `reqwest`
//! request loop reaches about 0.40× of wrk's rate against the same pinned
//! server. The engine ([`engine`]) is a lean loop of its own; `reqwest` is
//! used only for preflight checks, where correctness matters more than speed.
//!
//! Pipeline: command line ([`plan::Cli`]) → checked plan ([`plan`]) → engine
//! ([`engine`], one loop) → per-thread [`stats`] merged → [`results`] files
//! and tables; [`suite`] orchestrates servers ([`server`]) around it.

pub mod affinity;
pub mod analysis;
pub mod calibrate;
pub mod charts;
pub mod compare;
pub mod cpu;
pub mod engine;
pub mod http;
pub mod limits;
pub mod load;
pub mod plan;
pub mod preflight;
pub mod profiler;
pub mod progress;
pub mod report;
pub mod responder;
pub mod results;
pub mod server;
pub mod stats;
pub mod suite;
