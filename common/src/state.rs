//! The application state in its two shapes.
//!
//! [`FatState`] is a plain struct of 35 fields, modelled on the state a real
//! web application carries (configuration, database pools, mailer, job queue,
//! cache, route table, translator, …). Cloning it touches every field: 33
//! reference-count increments, one `String` and one `Vec` allocation.
//! [`AppState`] is one `Arc` around the very same fields, so a clone is one
//! reference-count increment. Frameworks that hand a handler its state by
//! value clone it per use; the `/state/*` routes measure that difference.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::ops::Deref;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use crate::routes::{APP_NAME, ROUTES};

/// Application configuration as loaded at start-up.
#[derive(Debug)]
pub struct Config {
    /// Environment name, e.g. `production`.
    pub environment: String,
    /// Maximum request body accepted, bytes.
    pub max_body_bytes: usize,
    /// Default page size of list endpoints, items.
    pub page_size: u32,
}

/// A stand-in for a connection pool: a bounded set of idle connections.
#[derive(Debug)]
pub struct Pool {
    /// Connection string, without credentials.
    pub url: String,
    /// Idle connection ids.
    pub idle: Mutex<Vec<u32>>,
}

/// A stand-in for any long-lived client or subsystem (mailer, queue, …).
#[derive(Debug)]
pub struct Service {
    /// What the subsystem is, e.g. `smtp`.
    pub kind: &'static str,
    /// Where it talks to.
    pub endpoint: String,
}

/// An in-memory key/value cache.
pub type Cache = RwLock<HashMap<String, Vec<u8>>>;

/// Request counters a metrics exporter would read.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Requests seen.
    pub requests: AtomicU64,
    /// Errors seen.
    pub errors: AtomicU64,
}

/// The application state as a plain struct of 35 fields, cloned per use.
///
/// Built only through [`FatState::new`], which [`AppState::new`] shares.
#[derive(Debug, Clone)]
pub struct FatState {
    /// Application name; the body of the `/state/*` routes.
    pub app_name: String,
    /// Start-up configuration.
    pub config: Arc<Config>,
    /// Primary database pool.
    pub db_pool: Arc<Pool>,
    /// Read-replica database pool.
    pub read_replica_pool: Arc<Pool>,
    /// Response cache.
    pub cache: Arc<Cache>,
    /// Session store.
    pub session_store: Arc<Cache>,
    /// Outgoing e-mail.
    pub mailer: Arc<Service>,
    /// Outgoing SMS.
    pub sms_gateway: Arc<Service>,
    /// Mobile push notifications.
    pub push_notifier: Arc<Service>,
    /// Background job queue.
    pub job_queue: Arc<Service>,
    /// Periodic task scheduler.
    pub scheduler: Arc<Service>,
    /// In-process event bus.
    pub event_bus: Arc<Service>,
    /// The application's route table (paths).
    pub route_table: Arc<Vec<&'static str>>,
    /// Translations: locale → key → text.
    pub translator: Arc<HashMap<String, HashMap<String, String>>>,
    /// Template engine.
    pub template_engine: Arc<Service>,
    /// Request counters.
    pub metrics: Arc<Metrics>,
    /// Distributed tracing exporter.
    pub tracer: Arc<Service>,
    /// Rate limiter.
    pub rate_limiter: Arc<Service>,
    /// Feature flags by name.
    pub feature_flags: Arc<HashMap<String, bool>>,
    /// Identity provider client.
    pub auth_provider: Arc<Service>,
    /// Signing keys for tokens.
    pub jwt_keys: Arc<Vec<Vec<u8>>>,
    /// Password hashing parameters.
    pub password_hasher: Arc<Service>,
    /// CSRF secret, 32 bytes.
    pub csrf_secret: Arc<[u8]>,
    /// Object storage client.
    pub object_storage: Arc<Service>,
    /// Full-text search client.
    pub search_index: Arc<Service>,
    /// IP geolocation database.
    pub geoip: Arc<Service>,
    /// Payment provider client.
    pub payment_gateway: Arc<Service>,
    /// Outgoing webhooks.
    pub webhook_dispatcher: Arc<Service>,
    /// Audit log sink.
    pub audit_log: Arc<Service>,
    /// Shared outgoing HTTP client.
    pub http_client: Arc<Service>,
    /// Registered health checks.
    pub health_checks: Arc<Vec<&'static str>>,
    /// CORS origins; a plain `Vec`, so every clone allocates.
    pub allowed_origins: Vec<String>,
    /// Proxies whose forwarding headers are trusted.
    pub trusted_proxies: Arc<Vec<IpAddr>>,
    /// When the process started.
    pub started_at: SystemTime,
    /// Identifier of this instance.
    pub instance_id: u64,
    /// Counts this state's clones (feature `layer-counts`, test builds only).
    #[cfg(feature = "layer-counts")]
    pub counted: counts::Counted,
}

fn service(kind: &'static str, endpoint: &str) -> Arc<Service> {
    Arc::new(Service { kind, endpoint: endpoint.to_owned() })
}

fn pool(url: &str) -> Arc<Pool> {
    Arc::new(Pool { url: url.to_owned(), idle: Mutex::new((0..16).collect()) })
}

impl FatState {
    /// Builds the state with [`APP_NAME`]; the one constructor of both shapes.
    pub fn new() -> Self {
        let translator = ["en", "de", "fr"]
            .into_iter()
            .map(|locale| {
                let texts = [("greeting", "Hello"), ("farewell", "Goodbye")]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), format!("{v} ({locale})")))
                    .collect();
                (locale.to_owned(), texts)
            })
            .collect();
        Self {
            app_name: APP_NAME.to_owned(),
            config: Arc::new(Config { environment: "production".to_owned(), max_body_bytes: 64 * 1024, page_size: 50 }),
            db_pool: pool("postgres://db.internal/fleet"),
            read_replica_pool: pool("postgres://replica.internal/fleet"),
            cache: Arc::default(),
            session_store: Arc::default(),
            mailer: service("smtp", "smtp.internal:587"),
            sms_gateway: service("sms", "sms.internal"),
            push_notifier: service("push", "push.internal"),
            job_queue: service("queue", "redis://queue.internal"),
            scheduler: service("scheduler", "local"),
            event_bus: service("events", "local"),
            route_table: Arc::new(ROUTES.iter().map(|r| r.path).collect()),
            translator: Arc::new(translator),
            template_engine: service("templates", "templates/"),
            metrics: Arc::default(),
            tracer: service("otlp", "otel.internal:4317"),
            rate_limiter: service("rate-limit", "local"),
            feature_flags: Arc::new(
                [("new_dashboard", true), ("beta_api", false)].into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            ),
            auth_provider: service("oidc", "auth.internal"),
            jwt_keys: Arc::new(vec![vec![7; 32], vec![9; 32]]),
            password_hasher: service("argon2", "local"),
            csrf_secret: Arc::from(&[42u8; 32][..]),
            object_storage: service("s3", "s3.internal"),
            search_index: service("search", "search.internal"),
            geoip: service("geoip", "GeoLite2-City.mmdb"),
            payment_gateway: service("payments", "payments.internal"),
            webhook_dispatcher: service("webhooks", "local"),
            audit_log: service("audit", "audit.internal"),
            http_client: service("http", "pool"),
            health_checks: Arc::new(vec!["db", "queue", "cache"]),
            allowed_origins: vec!["https://fleet.example".to_owned(), "https://admin.fleet.example".to_owned()],
            trusted_proxies: Arc::new(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]),
            started_at: SystemTime::now(),
            instance_id: 1,
            #[cfg(feature = "layer-counts")]
            counted: counts::Counted,
        }
    }
}

impl Default for FatState {
    fn default() -> Self {
        Self::new()
    }
}

/// The same 35 fields behind one `Arc`: a clone is one reference-count
/// increment. Dereferences to the [`FatState`] it holds.
#[derive(Debug, Clone, Default)]
pub struct AppState(pub Arc<FatState>);

impl AppState {
    /// Builds the state with the same constructor as [`FatState::new`].
    pub fn new() -> Self {
        Self(Arc::new(FatState::new()))
    }
}

impl Deref for AppState {
    type Target = FatState;

    fn deref(&self) -> &FatState {
        &self.0
    }
}

/// Both shapes give their 35 fields as `AsRef<FatState>`: a state layer or
/// handler generic over `S: AsRef<FatState>` serves either shape.
impl AsRef<FatState> for FatState {
    fn as_ref(&self) -> &FatState {
        self
    }
}

impl AsRef<FatState> for AppState {
    fn as_ref(&self) -> &FatState {
        &self.0
    }
}

/// What a state layer does with the state it obtained: read one field.
///
/// Kept opaque to the optimizer so the read (and so obtaining the state) is
/// not elided.
pub fn touch<S: AsRef<FatState>>(state: &S) {
    std::hint::black_box(state.as_ref().config.page_size);
    #[cfg(feature = "layer-counts")]
    counts::TOUCHES.with(|t| t.set(t.get() + 1));
}

/// What the state layers did on this thread, for the servers' tests: how
/// many times a layer touched a state, and how many times a [`FatState`]
/// was cloned. Only with the feature `layer-counts`, which the servers turn
/// on in their dev-dependencies: the binaries `make bench` builds count
/// nothing.
#[cfg(feature = "layer-counts")]
pub mod counts {
    use std::cell::Cell;

    thread_local! {
        /// Calls of [`super::touch`] on this thread.
        pub static TOUCHES: Cell<u64> = const { Cell::new(0) };
        /// Clones of a `FatState` on this thread.
        pub static FAT_CLONES: Cell<u64> = const { Cell::new(0) };
    }

    /// A field of `FatState` whose clone is counted.
    #[derive(Debug)]
    pub struct Counted;

    impl Clone for Counted {
        fn clone(&self) -> Self {
            FAT_CLONES.with(|c| c.set(c.get() + 1));
            Self
        }
    }

    /// This thread's (touches, `FatState` clones) since the last call, and resets both.
    pub fn take() -> (u64, u64) {
        (TOUCHES.with(|t| t.replace(0)), FAT_CLONES.with(|c| c.replace(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_shapes_hold_the_same_name() {
        assert_eq!(FatState::new().app_name, APP_NAME);
        assert_eq!(AppState::new().app_name, APP_NAME);
    }

    #[test]
    fn fat_clone_shares_arcs_but_copies_vec_and_string() {
        let a = FatState::new();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.db_pool, &b.db_pool));
        assert_eq!(Arc::strong_count(&a.mailer), 2);
        assert_ne!(a.allowed_origins.as_ptr(), b.allowed_origins.as_ptr());
        assert_ne!(a.app_name.as_ptr(), b.app_name.as_ptr());
    }

    #[test]
    fn arc_clone_is_one_reference_count() {
        let a = AppState::new();
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(Arc::strong_count(&a.0), 2);
        // The fields behind it are not cloned.
        assert_eq!(Arc::strong_count(&a.mailer), 1);
    }

    #[test]
    fn route_table_field_lists_every_route() {
        assert_eq!(FatState::new().route_table.len(), ROUTES.len());
    }
}
