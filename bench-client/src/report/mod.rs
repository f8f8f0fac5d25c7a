//! Presentation only: reads results and figures, returns text (Markdown
//! tables, `report.md`, terminal lines) or writes SVG charts. It never runs
//! anything and never decides how a command ends.
//!
//! Imports `results`, `measure` (figures), `calibrate` (the ceiling),
//! `model` and `analysis` below it.

pub mod charts;
pub mod ci;
mod counted;
mod deltas;
pub mod flames;
mod format;
mod front;
mod html;
mod http2;
mod latency;
mod markdown;
mod memory;
mod notes;
mod page;
mod paired;
mod rivals;
mod sections;
mod table;
mod terminal;

pub use self::counted::{count_table, counted_beside_timed};
pub use self::deltas::{aa_summary, ab_table, comparison_notes, comparison_table, delta_table};
pub use self::format::{change_with_ci, per_s};
pub use self::front::{changes_excerpt, floors_table, machine_line};
pub use self::html::html_page;
pub use self::http2::{http2_grant_text, http2_settings_table};
pub use self::latency::latency_table;
pub use self::markdown::{flamegraph_table, profiles_table, profiling_cost_table, proportion_table, sweep_table};
pub use self::memory::memory_table;
pub use self::page::{report, write_reports};
pub use self::paired::{counted_name, counted_table, scenario_table};
pub use self::rivals::{confirmed_table, rivals_table};
pub use self::sections::{Answer, Medium, Section, sections, terminal_answer};
pub use self::terminal::{ceiling_line, load_summary, run_line, shape_line, top_self_time, watch_summary};
