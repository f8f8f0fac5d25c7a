//! The client's vocabulary: which framework, which build profile, which
//! scenario and variant a run belongs to. Every layer names runs with these
//! types; they carry names and routes, no logic. Their serde names are the
//! strings of `results.json` (`docs/RESULTS.md`).

use std::cmp::Ordering;
use std::fmt;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

mod variant;

pub use variant::Variant;

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
    /// HTTP/1.1 → HTTP/2 on the same server process, `/plaintext` and
    /// `/api/devices`, with prior knowledge (h2c) on the plain listener and by
    /// ALPN over TLS: four pairs, each protocol on connections of its own,
    /// one request in flight per connection (one stream) on both sides.
    Http2,
    /// The frameworks head to head: every round starts each framework's
    /// server anew, all pinned to the same server CPUs, and the client
    /// alternates between them in slices on each route of
    /// [`Scenario::variants`] (only one server loaded at a time); each pair of
    /// frameworks gets paired ratios with their intervals, not deltas.
    Frameworks,
    /// `/api/devices/preserialized` on a server started with `--middleware
    /// none` → on one with each layer the framework offers, then with all
    /// of them (a server per variant, started anew every round, all pinned
    /// to the same CPUs; the client alternates between them in slices).
    Middleware,
    /// Each framework's typed extractors against reading the same request
    /// raw, on one server: `POST` of a JSON body of 102 bytes and of 10 KiB
    /// (`Json<T>` against `serde_json::from_slice` by hand), and a device
    /// and a reading in the path, the query and an urlencoded form (`Path`,
    /// `Query`, `Form` against splitting the raw bytes by hand); each raw
    /// route paired with its typed one.
    Extractors,
    /// The same request to the last of many routes: `/scale/target` (static)
    /// and `/scale/target/42` (a path parameter) on the framework's own
    /// server against servers with 10, 100 and 1,000 filler routes of each
    /// kind registered ahead of them (`--filler-routes`; a server per count,
    /// started anew every round, all pinned to the same CPUs).
    Routes,
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
            Self::Http2 => "http2",
            Self::Frameworks => "frameworks",
            Self::Middleware => "middleware",
            Self::Extractors => "extractors",
            Self::Routes => "routes",
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
            Self::Http2 => &[
                Variant::Http,
                Variant::H2c,
                Variant::Https,
                Variant::H2,
                Variant::DevicesHttp,
                Variant::DevicesH2c,
                Variant::DevicesHttps,
                Variant::DevicesH2,
            ],
            Self::Frameworks => &[Variant::Plaintext, Variant::PerRequest, Variant::Preserialized, Variant::Arc],
            Self::Middleware => &Variant::MIDDLEWARE,
            Self::Extractors => &Variant::EXTRACTORS,
            Self::Routes => &Variant::SCALE,
            Self::Floor => &[Variant::Plaintext],
            Self::Before | Self::After => &Variant::ALL,
        }
    }

    /// Its deltas, as (baseline, changed) pairs: the first variant against
    /// each other one, except `http2`, whose every HTTP/2 variant is
    /// compared with HTTP/1.1 on the same listener and route, `extractors`,
    /// whose every typed route is compared with its raw one, `routes`,
    /// whose every count of filler routes is compared with none on the same
    /// target, and `frameworks`, which pairs frameworks, not variants (none).
    pub fn pairs(self) -> Vec<(Variant, Variant)> {
        let variants = self.variants();
        match self {
            Self::Http2 | Self::Extractors => variants.chunks(2).map(|pair| (pair[0], pair[1])).collect(),
            Self::Routes => variants
                .iter()
                .filter(|to| to.filler_routes() > Some(0))
                .filter_map(|&to| {
                    let none = variants.iter().find(|v| v.filler_routes() == Some(0) && v.route() == to.route())?;
                    Some((*none, to))
                })
                .collect(),
            Self::Frameworks => Vec::new(),
            _ => variants[1..].iter().map(|&to| (variants[0], to)).collect(),
        }
    }
}

impl fmt::Display for Scenario {
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
        for v in Scenario::value_variants().iter().chain([&Scenario::Floor]).flat_map(|s| s.variants()) {
            assert_eq!(serde_json::to_string(v).unwrap(), format!("\"{}\"", v.name()));
        }
        assert_eq!(serde_json::to_string(&Scenario::Fortunes).unwrap(), "\"fortunes\"");
        assert_eq!(serde_json::to_string(&Scenario::Floor).unwrap(), "\"floor\"");
        assert_eq!(serde_json::to_string(&Variant::Offloaded).unwrap(), "\"offloaded\"");
        assert_eq!(
            Scenario::value_variants(),
            [
                Scenario::Payload,
                Scenario::State,
                Scenario::Fortunes,
                Scenario::Blocking,
                Scenario::Tls,
                Scenario::Http2,
                Scenario::Frameworks,
                Scenario::Middleware,
                Scenario::Extractors,
                Scenario::Routes
            ],
            "floor is not a --scenarios value"
        );
        assert_eq!(Profile::Dev.target_dir(), "debug");
        assert_eq!(serde_json::to_string(&Scenario::Tls.variants()).unwrap(), r#"["http","https"]"#);
        assert_eq!(Scenario::Tls.variants().iter().map(|v| v.tls()).collect::<Vec<_>>(), [false, true]);
        assert!(Scenario::Tls.variants().iter().all(|v| v.path() == "/plaintext"));
        assert_eq!(Variant::MEASURED[..20], Variant::ALL);
        let http2: Vec<(&str, &str, bool, bool)> = Scenario::Http2
            .pairs()
            .into_iter()
            .map(|(from, to)| (from.label(), to.label(), from.tls() == to.tls(), !from.http2() && to.http2()))
            .collect();
        assert_eq!(
            http2,
            [
                ("http /plaintext", "h2c /plaintext", true, true),
                ("https /plaintext", "h2 /plaintext", true, true),
                ("http /api/devices", "h2c /api/devices", true, true),
                ("https /api/devices", "h2 /api/devices", true, true),
            ],
            "each HTTP/2 variant against HTTP/1.1 on its listener"
        );
        assert_eq!(Scenario::State.pairs(), [(Variant::Fat, Variant::Arc)]);
        // Each middleware variant against the bare server, every label its own.
        let middleware = Scenario::Middleware.pairs();
        assert_eq!(middleware.len(), 7);
        assert!(middleware.iter().all(|(from, _)| *from == Variant::Bare));
        for v in Variant::MIDDLEWARE {
            assert_eq!(Variant::of_label(v.label()), Some(v), "{v}");
            assert_eq!(v.path(), "/api/devices/preserialized");
        }
        assert_eq!(Variant::Stacked.middleware(Framework::Rocket).map(<[_]>::len), Some(4));
        assert_eq!(Variant::RequestId.middleware(Framework::Actix), None);
        assert_eq!(Variant::Bare.middleware(Framework::Axum), Some(&[][..]));
        assert_eq!(Variant::Plaintext.middleware(Framework::Axum), None);
        assert_eq!(Scenario::Payload.pairs().len(), 2);
        // Each typed extractor against its raw route, on the same request.
        for (raw, typed) in Scenario::Extractors.pairs() {
            let (raw, typed) = (raw.route().unwrap(), typed.route().unwrap());
            assert_eq!(raw.request(), typed.request(), "{raw:?} {typed:?}");
            assert!(raw.path().contains("-raw") && !typed.path().contains("-raw"), "{raw:?} {typed:?}");
        }
        assert_eq!(Scenario::Extractors.pairs().len(), 5);
        // Each count of filler routes against none, on the same target.
        for (none, many) in Scenario::Routes.pairs() {
            assert_eq!((none.filler_routes(), none.route()), (Some(0), many.route()), "{none} {many}");
            assert!(many.filler_routes() > Some(0) && many.label().ends_with(none.path()), "{many}");
        }
        assert_eq!(Scenario::Routes.pairs().len(), 6);
        for v in Variant::MEASURED {
            assert!(Variant::MEASURED.iter().filter(|w| w.name() == v.name()).count() == 1, "{v}: one name");
        }
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
