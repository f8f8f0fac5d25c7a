//! Everything the three servers and the bench client share, with no web
//! framework as a dependency.
//!
//! The servers (`server-actix`, `server-axum`, `server-rocket`) are thin glue
//! around this crate so that a difference in their figures comes from the
//! framework, not from a different payload or route. The bench client reads
//! the same [`ROUTES`] table to know what every response must be, and
//! [`process`] for the contract a server process keeps (listening line, exit
//! codes, start-up errors).
//!
//! One import path per item: the types and constants re-exported below are
//! imported from the crate root (`common::Route`); everything else by its
//! module (`common::process::listening_line`, `common::routes::HEALTHZ_BODY`).

pub mod address;
pub mod catalog;
pub mod config;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod devices;
pub mod extract;
pub mod fortunes;
pub mod middleware;
pub mod process;
pub mod routes;
pub mod scale;
pub mod signals;
pub mod state;
pub mod tls;

pub use catalog::{
    CatalogError, DeviceCatalog, MAX_BODY_BYTES, REFUSED_BODY_LINGER, Unread, check_content_length,
    declared_length_over,
};
pub use config::{Listener, ServerArgs, ServerConfig, parse_args};
pub use devices::{Device, devices, devices_json, preserialized_devices};
pub use fortunes::{DatabaseError, FortuneDb, FortuneError, Fortunes, MAX_FORTUNE_BYTES};
pub use routes::{ContentType, ROUTES, Route, RouteId, RouteRequest, UNKNOWN_PATH};
pub use signals::{ShutdownSignals, Stop};
pub use state::{AppState, FatState, touch};
