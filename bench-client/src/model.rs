//! The client's vocabulary: which framework, which build profile, which
//! scenario and variant a run belongs to. Every layer names runs with these
//! types; they carry names and routes, no logic. Their serde names are the
//! strings of `results.json` (`docs/RESULTS.md`).

use std::cmp::Ordering;
use std::fmt;

use clap::ValueEnum;
use common::RouteId;
use serde::{Deserialize, Serialize};

/// A web framework with a server crate in this workspace, or the user's
/// own server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    /// actix-web (`server-actix`).
    Actix,
    /// axum (`server-axum`).
    Axum,
    /// Rocket (`server-rocket`).
    Rocket,
    /// Whatever `ab --before-cmd`/`--after-cmd` start: not a flag value.
    #[value(skip)]
    Own,
}

impl Framework {
    /// Every framework, in the order of their names.
    pub const ALL: [Self; 3] = [Self::Actix, Self::Axum, Self::Rocket];

    /// Lower-case name, e.g. `axum`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Actix => "actix",
            Self::Axum => "axum",
            Self::Rocket => "rocket",
            Self::Own => "own",
        }
    }

    /// Its package and binary name, e.g. `server-axum` (`own-server` for
    /// the user's own).
    pub fn binary(self) -> String {
        match self {
            Self::Own => "own-server".to_owned(),
            workspace => format!("server-{}", workspace.name()),
        }
    }
}

/// A Cargo profile the servers are built and measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Optimized, as shipped.
    Release,
    /// Release with `debug = true`: the "debug" build of performance write-ups.
    Profiling,
    /// Cargo's unoptimized default; not representative of production.
    Dev,
}

impl Profile {
    /// The name Cargo knows it by (`--profile NAME`).
    pub fn cargo_name(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Profiling => "profiling",
            Self::Dev => "dev",
        }
    }

    /// The folder of `target/` its binaries land in.
    pub fn target_dir(self) -> &'static str {
        match self {
            Self::Dev => "debug",
            other => other.cargo_name(),
        }
    }
}

/// How the variants of a scenario are paired for their deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    /// Variants alternate in short slices on the same connections, within
    /// one run per scenario and round; every block of slices is a pair.
    #[default]
    Slices,
    /// Each variant is its own run; the variants of a round are a pair.
    Rounds,
}

/// What one scenario compares; [`Scenario::Floor`] is the `/plaintext` run
/// measured once per round as the framework's floor (not a `--scenarios` value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    /// `/api/devices` (serialized per request) → `/api/devices/preserialized`
    /// (serialized once at start-up) and → `/api/devices/cached` (serialized
    /// once per change of the list).
    Payload,
    /// `/state/fat` (35-field state cloned per use) → `/state/arc` (one `Arc`).
    State,
    /// `/fortunes` (SQLite read, sort and HTML rendering per request) →
    /// `/fortunes/cached` (rendered once per change of the table).
    Fortunes,
    /// `/blocking/inline` (a short blocking call on the async worker) →
    /// `/blocking/offloaded` (the same call as the framework documents).
    Blocking,
    /// `/plaintext` over HTTP → over TLS, on the same server process (a
    /// second listener), each on connections of its own.
    Tls,
    /// `/plaintext`, the framework's floor.
    #[value(skip)]
    Floor,
    /// `ab`: the BEFORE server on a route.
    #[value(skip)]
    Before,
    /// `ab`: the AFTER server on the same route.
    #[value(skip)]
    After,
}

impl Scenario {
    /// Lower-case name, as in `results.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Payload => "payload",
            Self::State => "state",
            Self::Fortunes => "fortunes",
            Self::Blocking => "blocking",
            Self::Tls => "tls",
            Self::Floor => "floor",
            Self::Before => "before",
            Self::After => "after",
        }
    }

    /// The baseline variant first, then each changed one (for `ab`'s
    /// sides: every route it can compare).
    pub fn variants(self) -> &'static [Variant] {
        match self {
            Self::Payload => &[Variant::PerRequest, Variant::Preserialized, Variant::Cached],
            Self::State => &[Variant::Fat, Variant::Arc],
            Self::Fortunes => &[Variant::Fortunes, Variant::FortunesCached],
            Self::Blocking => &[Variant::Inline, Variant::Offloaded],
            Self::Tls => &[Variant::Http, Variant::Https],
            Self::Floor => &[Variant::Plaintext],
            Self::Before | Self::After => &Variant::ALL,
        }
    }
}

/// One route measured within a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// `GET /api/devices`: serialized on every request.
    PerRequest,
    /// `GET /api/devices/preserialized`: serialized once at start-up.
    Preserialized,
    /// `GET /api/devices/cached`: serialized once per change of the list.
    Cached,
    /// `GET /state/fat`: the 35-field state cloned per use.
    Fat,
    /// `GET /state/arc`: the same fields behind one `Arc`.
    Arc,
    /// `GET /plaintext`: the floor.
    Plaintext,
    /// `GET /fortunes`: the table read, sorted and rendered on every request.
    Fortunes,
    /// `GET /fortunes/cached`: the page rendered once per change of the table.
    FortunesCached,
    /// `GET /blocking/inline`: a blocking call on the async worker.
    Inline,
    /// `GET /blocking/offloaded`: the same call offloaded as documented.
    Offloaded,
    /// `GET /plaintext` over HTTP, in the `tls` scenario.
    Http,
    /// `GET /plaintext` over TLS, on the same server's HTTPS listener.
    Https,
    /// A path of the user's own server (`ab --before-cmd`/`--after-cmd`),
    /// named by the run's `route`.
    Own,
}

impl Variant {
    /// Every variant of its own route, in the order of the route table
    /// (not [`Variant::Http`] and [`Variant::Https`]: `/plaintext` again).
    pub const ALL: [Self; 10] = [
        Self::Plaintext,
        Self::PerRequest,
        Self::Preserialized,
        Self::Cached,
        Self::Fat,
        Self::Arc,
        Self::Fortunes,
        Self::FortunesCached,
        Self::Inline,
        Self::Offloaded,
    ];

    /// Every variant the suite measures: [`Variant::ALL`], then the `tls`
    /// scenario's two.
    pub const MEASURED: [Self; 12] = {
        let mut measured = [Self::Https; 12];
        let mut i = 0;
        while i < Self::ALL.len() {
            measured[i] = Self::ALL[i];
            i += 1;
        }
        measured[10] = Self::Http;
        measured
    };

    /// The variant of the route at `path`, if it is one.
    pub fn of_path(path: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.path() == path)
    }

    /// Its name in `results.json`, e.g. `per_request`.
    pub fn name(self) -> &'static str {
        match self {
            Self::PerRequest => "per_request",
            Self::Preserialized => "preserialized",
            Self::Cached => "cached",
            Self::Fat => "fat",
            Self::Arc => "arc",
            Self::Plaintext => "plaintext",
            Self::Fortunes => "fortunes",
            Self::FortunesCached => "fortunes_cached",
            Self::Inline => "inline",
            Self::Offloaded => "offloaded",
            Self::Http => "http",
            Self::Https => "https",
            Self::Own => "own",
        }
    }

    /// The route of the table it loads; `None` for [`Variant::Own`].
    pub fn route(self) -> Option<RouteId> {
        Some(match self {
            Self::PerRequest => RouteId::Devices,
            Self::Preserialized => RouteId::DevicesPreserialized,
            Self::Cached => RouteId::DevicesCached,
            Self::Fat => RouteId::StateFat,
            Self::Arc => RouteId::StateArc,
            Self::Plaintext => RouteId::Plaintext,
            Self::Fortunes => RouteId::Fortunes,
            Self::FortunesCached => RouteId::FortunesCached,
            Self::Inline => RouteId::BlockingInline,
            Self::Offloaded => RouteId::BlockingOffloaded,
            Self::Http | Self::Https => RouteId::Plaintext,
            Self::Own => return None,
        })
    }

    /// How runs, deltas and tables name it: its path, with the scheme for
    /// the `tls` scenario's two (`https /plaintext`), whose path is the same.
    pub fn label(self) -> &'static str {
        match self {
            Self::Http => "http /plaintext",
            Self::Https => "https /plaintext",
            _ => self.path(),
        }
    }

    /// The variant a [`Variant::label`] names.
    pub fn of_label(label: &str) -> Option<Self> {
        Self::MEASURED.into_iter().find(|v| v.label() == label)
    }

    /// Whether it is loaded over TLS (on the server's HTTPS listener).
    pub fn tls(self) -> bool {
        self == Self::Https
    }

    /// The path of its route, e.g. `/api/devices`; for [`Variant::Own`],
    /// `(own)`: its runs name their path in `route`.
    pub fn path(self) -> &'static str {
        self.route().map_or("(own)", RouteId::path)
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What makes runs comparable across rounds and files: the same framework,
/// layer count, scenario and variant. Ordered by framework, layers, then the
/// scenario's and the variant's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunKey {
    /// Framework measured.
    pub framework: Framework,
    /// State layers the server ran with.
    pub layers: u16,
    /// Scenario.
    pub scenario: Scenario,
    /// Variant within the scenario.
    pub variant: Variant,
}

impl RunKey {
    fn sort_key(&self) -> (Framework, u16, &'static str, &'static str) {
        (self.framework, self.layers, self.scenario.name(), self.variant.name())
    }
}

impl Ord for RunKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl PartialOrd for RunKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_json_strings() {
        for v in
            [Scenario::Payload, Scenario::State, Scenario::Fortunes, Scenario::Blocking, Scenario::Tls, Scenario::Floor]
                .iter()
                .flat_map(|s| s.variants())
        {
            assert_eq!(serde_json::to_string(v).unwrap(), format!("\"{}\"", v.name()));
        }
        assert_eq!(serde_json::to_string(&Scenario::Fortunes).unwrap(), "\"fortunes\"");
        assert_eq!(serde_json::to_string(&Scenario::Floor).unwrap(), "\"floor\"");
        assert_eq!(serde_json::to_string(&Variant::Offloaded).unwrap(), "\"offloaded\"");
        assert_eq!(
            Scenario::value_variants(),
            [Scenario::Payload, Scenario::State, Scenario::Fortunes, Scenario::Blocking, Scenario::Tls],
            "floor is not a --scenarios value"
        );
        assert_eq!(Profile::Dev.target_dir(), "debug");
        assert_eq!(serde_json::to_string(&Scenario::Tls.variants()).unwrap(), r#"["http","https"]"#);
        assert_eq!(Scenario::Tls.variants().iter().map(|v| v.tls()).collect::<Vec<_>>(), [false, true]);
        assert!(Scenario::Tls.variants().iter().all(|v| v.path() == "/plaintext"));
        assert_eq!(Variant::MEASURED[..10], Variant::ALL);
        for v in Variant::MEASURED {
            assert_eq!(Variant::of_label(v.label()), Some(v), "labels name one variant each");
        }
    }

    #[test]
    fn every_variant_loads_its_own_route_of_the_table() {
        for v in Variant::ALL {
            assert_eq!(Variant::of_path(v.path()), Some(v));
            assert!(common::Route::by_path(v.path()).is_some(), "{v}: {} in the route table", v.path());
        }
        let fortunes: Vec<&str> = Scenario::Fortunes.variants().iter().map(|v| v.path()).collect();
        assert_eq!(fortunes, ["/fortunes", "/fortunes/cached"], "baseline first");
    }
}
