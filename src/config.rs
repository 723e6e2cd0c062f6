//! Settings from the environment and flags (SPEC §7), passed explicitly; no globals.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Everything `graft serve` and the CLI need to know.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Directory holding the SQLite database (and later the secret key file).
    pub data_dir: PathBuf,
    /// `DATABASE_URL`; default `sqlite://<data_dir>/graft.db?mode=rwc`.
    pub database_url: String,
    /// `GRAFT_ADDR`; default `127.0.0.1:3000`.
    pub addr: SocketAddr,
    /// `GRAFT_PUBLIC_URL`: the URL people and agents use to reach Graft.
    pub public_url: Option<String>,
    /// `GRAFT_ALLOWED_HOSTS`: `Host` values accepted on `/mcp` besides loopback
    /// (comma-separated).
    pub allowed_hosts: Vec<String>,
    /// `GRAFT_ALLOWED_ORIGINS`: browser `Origin`s accepted on `/mcp` besides loopback
    /// pages (comma-separated); any other request carrying an `Origin` gets 403.
    pub allowed_origins: Vec<String>,
    /// `GRAFT_SESSION_IDLE`: a 2025-era MCP session with no traffic this long expires
    /// (then its id answers 404). Default 30 minutes.
    pub session_idle: Duration,
    /// `LEPTOS_SITE_ROOT`: where the console's static files are (`target/site`).
    pub site_root: PathBuf,
    /// `GRAFT_SWEEP_INTERVAL`: how often the sweep runs (default 5m).
    pub sweep_interval: Duration,
    /// `GRAFT_SECRET_KEY`: 64 hex digits sealing connection secrets; else the key file
    /// `GRAFT_SECRET_KEY_FILE`; else `secret.key` in the data directory.
    pub secret_key: Option<String>,
    /// `GRAFT_SECRET_KEY_FILE`: the key file, kept outside the data directory in
    /// production (security review 32.6).
    pub secret_key_file: Option<PathBuf>,
    /// `GRAFT_CONNECT_TIMEOUT` (default 5s) and `GRAFT_REQUEST_TIMEOUT` (default 30s)
    /// of vendor calls; `GRAFT_RESPONSE_CAP` bytes read from the vendor (default 1 MiB);
    /// `GRAFT_RESULT_BUDGET` bytes of one tool result (default 512 KiB);
    /// `GRAFT_RESULT_TOKEN_BUDGET` o200k_base tokens of one (default 25,000);
    /// `GRAFT_SCHEMA_BUDGET` bytes of a served input schema (default 16 KiB);
    /// `GRAFT_VENDOR_LOOPBACK=allow` lets vendors on loopback be called;
    /// `GRAFT_WEBHOOK_INTERNAL=allow` lets the webhook post to private addresses.
    pub limits: crate::proxy::ProxyLimits,
    /// `GRAFT_EMBEDDING_MODEL`: the directory of the sentence-embedding model for
    /// semantic search; default `<data_dir>/models/minilm-static-256` (where
    /// `scripts/get-model.sh` puts it). Without one, search is lexical-only.
    pub embedding_model: Option<PathBuf>,
    /// `GRAFT_MAX_CONNECTIONS` (1024), `GRAFT_MAX_CONNECTIONS_PER_ADDRESS` (256) and
    /// `GRAFT_HEADER_TIMEOUT` (10s): what the port accepts (security review 32.2).
    pub connection_limits: ConnectionLimits,
    /// `GRAFT_METRICS_TOKEN`: a bearer token that opens what an operator reads
    /// (`/metrics`, and `/healthz`'s toolbox size and stream count); without it
    /// `/metrics` answers loopback clients only and `/healthz` shows neither.
    pub metrics_token: Option<String>,
    /// `GRAFT_METRICS` (`on`, the default, or `off`): whether this server counts its
    /// Prometheus metrics and serves `/metrics` (issue 30.1).
    pub metrics: bool,
    /// What one agent may make Graft do (`GRAFT_AGENT_*`, `GRAFT_CALLS_RETENTION_DAYS`;
    /// security review 32.8).
    pub quotas: crate::service::quota::Quotas,
    /// MCP vendors (issue 27): `GRAFT_MCP_CALL_TIMEOUT` (120s), `GRAFT_MCP_MAX_INFLIGHT`
    /// calls per server (16), `GRAFT_MCP_REFRESH` of their tools/list (10m).
    pub mcp: crate::proxy::mcp::UpstreamLimits,
    /// `GRAFT_TRUSTED_PROXIES`: addresses of reverse proxies in front of Graft
    /// (comma-separated IPs); a request from one is throttled by the client address its
    /// `X-Forwarded-For` names.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// `GRAFT_OAUTH_ACCESS_TTL` (default 1h) and `GRAFT_OAUTH_REFRESH_TTL` (default 30d):
    /// the lifetimes of the OAuth tokens Graft issues to MCP clients;
    /// `GRAFT_OAUTH_ALLOWED_SCHEMES`: custom redirect URI schemes allowed beyond
    /// `cursor` (comma-separated; issue 26).
    pub oauth: crate::service::oauth::OAuthSettings,
}

/// `GRAFT_PUBLIC_URL` checked and written as URL parsers write it (WHATWG: the host
/// lower-cased and in punycode, a default port dropped), without a trailing `/`, so the
/// Host and Origin checks, links and the OAuth metadata all name it alike. Errors: not
/// an absolute `http`/`https` URL with a host, or one with a query, fragment or user.
pub fn normalize_public_url(v: &str) -> Result<String, String> {
    let u = url::Url::parse(v.trim())
        .map_err(|e| format!("GRAFT_PUBLIC_URL {v:?} is not an absolute URL ({e})"))?;
    if !matches!(u.scheme(), "http" | "https")
        || u.host_str().is_none()
        || u.query().is_some()
        || u.fragment().is_some()
        || !u.username().is_empty()
        || u.password().is_some()
    {
        return Err(format!(
            "GRAFT_PUBLIC_URL {v:?} must be an http or https URL with a host and nothing after its path (no query, fragment or user)"
        ));
    }
    Ok(u.as_str().trim_end_matches('/').to_string())
}

/// Where the secret key that seals connection secrets comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `GRAFT_SECRET_KEY`.
    Env,
    /// A key file (`GRAFT_SECRET_KEY_FILE`, or the data directory's `secret.key`).
    File(PathBuf),
}

/// Reads a comma-separated list variable.
fn list_var(name: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Environment variable `name` as `allow` (also `1`, `true`, `yes`) or `deny` (also
/// empty, `0`, `false`, `no`), any case; `None` when it is not set. Errors: another
/// value, in words naming the variable.
fn allow_or_deny(name: &str) -> Result<Option<bool>, String> {
    let Ok(v) = std::env::var(name) else {
        return Ok(None);
    };
    match v.trim().to_ascii_lowercase().as_str() {
        "allow" | "1" | "true" | "yes" => Ok(Some(true)),
        "" | "deny" | "0" | "false" | "no" => Ok(Some(false)),
        _ => Err(format!("{name} {v:?}: use allow or deny")),
    }
}

/// Parses a duration like `30s`, `5m`, `2h` or a plain number of seconds.
/// Errors: a sentence naming the bad value.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map_or((s, ""), |i| s.split_at(i));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid duration {s:?}: use e.g. 30s, 5m or 2h"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => return Err(format!("invalid duration {s:?}: use e.g. 30s, 5m or 2h")),
    };
    Ok(Duration::from_secs(secs))
}

impl Settings {
    /// Settings from the environment, with `data_dir` / `database_url` / `addr` flags
    /// taking precedence when given. Errors: an unparsable address or duration.
    pub fn from_env(
        data_dir: Option<PathBuf>,
        database_url: Option<String>,
        addr: Option<String>,
    ) -> Result<Self, String> {
        let data_dir = data_dir
            .or_else(|| std::env::var_os("GRAFT_DATA_DIR").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("data"));
        let database_url = database_url
            .or_else(|| std::env::var("DATABASE_URL").ok())
            .unwrap_or_else(|| {
                format!("sqlite://{}?mode=rwc", data_dir.join("graft.db").display())
            });
        let addr_text = addr
            .or_else(|| std::env::var("GRAFT_ADDR").ok())
            .unwrap_or_else(|| "127.0.0.1:3000".into());
        let addr: SocketAddr = addr_text.parse().map_err(|_| {
            format!("invalid address {addr_text:?}: use HOST:PORT, e.g. 127.0.0.1:3000")
        })?;
        let session_idle = match std::env::var("GRAFT_SESSION_IDLE") {
            Ok(v) => parse_duration(&v)?,
            Err(_) => Duration::from_secs(30 * 60),
        };
        let mut limits = crate::proxy::ProxyLimits::default();
        if let Ok(v) = std::env::var("GRAFT_CONNECT_TIMEOUT") {
            limits.connect_timeout = parse_duration(&v)?;
        }
        if let Ok(v) = std::env::var("GRAFT_REQUEST_TIMEOUT") {
            limits.total_timeout = parse_duration(&v)?;
        }
        if let Ok(v) = std::env::var("GRAFT_RESPONSE_CAP") {
            limits.response_cap = v
                .parse()
                .map_err(|_| format!("GRAFT_RESPONSE_CAP {v:?} is not a number of bytes"))?;
        }
        if let Ok(v) = std::env::var("GRAFT_RESULT_BUDGET") {
            limits.result_budget = v.parse().ok().filter(|n| *n >= 1024).ok_or_else(|| {
                format!("GRAFT_RESULT_BUDGET {v:?} is not a number of bytes (at least 1024)")
            })?;
        }
        if let Ok(v) = std::env::var("GRAFT_RESULT_TOKEN_BUDGET") {
            limits.result_token_budget =
                v.parse().ok().filter(|n| *n >= 1000).ok_or_else(|| {
                    format!(
                        "GRAFT_RESULT_TOKEN_BUDGET {v:?} is not a number of tokens (at least 1000)"
                    )
                })?;
        }
        if let Ok(v) = std::env::var("GRAFT_SCHEMA_BUDGET") {
            limits.schema_budget = v.parse().ok().filter(|n| *n >= 1024).ok_or_else(|| {
                format!("GRAFT_SCHEMA_BUDGET {v:?} is not a number of bytes (at least 1024)")
            })?;
        }
        if let Some(allow) = allow_or_deny("GRAFT_VENDOR_LOOPBACK")? {
            limits.vendor_loopback = allow;
        }
        if let Some(allow) = allow_or_deny("GRAFT_WEBHOOK_INTERNAL")? {
            limits.webhook_internal = allow;
        }
        let sweep_interval = match std::env::var("GRAFT_SWEEP_INTERVAL") {
            Ok(v) => parse_duration(&v)?,
            Err(_) => Duration::from_secs(300),
        };
        if sweep_interval.is_zero() {
            return Err("GRAFT_SWEEP_INTERVAL must be at least 1s".into());
        }
        let mut connection_limits = ConnectionLimits::default();
        let count = |name: &str, v: String| -> Result<usize, String> {
            v.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("{name} {v:?} is not a number of connections (at least 1)"))
        };
        if let Ok(v) = std::env::var("GRAFT_MAX_CONNECTIONS") {
            connection_limits.max_connections = count("GRAFT_MAX_CONNECTIONS", v)?;
        }
        if let Ok(v) = std::env::var("GRAFT_MAX_CONNECTIONS_PER_ADDRESS") {
            connection_limits.max_per_address = count("GRAFT_MAX_CONNECTIONS_PER_ADDRESS", v)?;
        }
        if let Ok(v) = std::env::var("GRAFT_BODY_TIMEOUT") {
            connection_limits.body_timeout = parse_duration(&v)?;
            if connection_limits.body_timeout.is_zero() {
                return Err("GRAFT_BODY_TIMEOUT must be at least 1s".into());
            }
        }
        if let Ok(v) = std::env::var("GRAFT_HEADER_TIMEOUT") {
            connection_limits.header_timeout = parse_duration(&v)?;
            if connection_limits.header_timeout.is_zero() {
                return Err("GRAFT_HEADER_TIMEOUT must be at least 1s".into());
            }
        }
        let embedding_model = std::env::var_os("GRAFT_EMBEDDING_MODEL")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let quotas = crate::service::quota::Quotas::from_env()?;
        let trusted_proxies = list_var("GRAFT_TRUSTED_PROXIES")
            .iter()
            .map(|a| {
                a.parse::<std::net::IpAddr>()
                    .map_err(|_| format!("GRAFT_TRUSTED_PROXIES: {a:?} is not an IP address"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut mcp = crate::proxy::mcp::UpstreamLimits::default();
        for (name, slot) in [
            ("GRAFT_MCP_CALL_TIMEOUT", &mut mcp.call_timeout),
            ("GRAFT_MCP_REFRESH", &mut mcp.refresh),
        ] {
            if let Ok(v) = std::env::var(name) {
                *slot = parse_duration(&v).map_err(|e| format!("{name}: {e}"))?;
                if slot.is_zero() {
                    return Err(format!("{name} must be at least 1s"));
                }
            }
        }
        if let Ok(v) = std::env::var("GRAFT_MCP_MAX_INFLIGHT") {
            mcp.max_inflight = count("GRAFT_MCP_MAX_INFLIGHT", v)?;
        }
        let mut oauth = crate::service::oauth::OAuthSettings::default();
        for (name, slot) in [
            ("GRAFT_OAUTH_ACCESS_TTL", &mut oauth.access_ttl),
            ("GRAFT_OAUTH_REFRESH_TTL", &mut oauth.refresh_ttl),
        ] {
            if let Ok(v) = std::env::var(name) {
                *slot = parse_duration(&v).map_err(|e| format!("{name}: {e}"))?;
                if slot.is_zero() {
                    return Err(format!("{name} must be at least 1s"));
                }
            }
        }
        oauth.allowed_schemes = list_var("GRAFT_OAUTH_ALLOWED_SCHEMES")
            .into_iter()
            .map(|s| s.trim_end_matches(':').to_ascii_lowercase())
            .collect();
        if let Some(bad) = oauth.allowed_schemes.iter().find(|s| {
            !s.starts_with(|c: char| c.is_ascii_lowercase())
                || !s
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
                || matches!(
                    s.as_str(),
                    "http" | "https" | "javascript" | "data" | "file"
                )
        }) {
            return Err(format!(
                "GRAFT_OAUTH_ALLOWED_SCHEMES: {bad:?} is not a custom URI scheme (letters, digits, + - .; not http, https, javascript, data or file)"
            ));
        }
        Ok(Self {
            mcp,
            oauth,
            trusted_proxies,
            quotas,
            metrics_token: std::env::var("GRAFT_METRICS_TOKEN")
                .ok()
                .filter(|t| !t.trim().is_empty()),
            metrics: match std::env::var("GRAFT_METRICS")
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
                .as_str()
            {
                "" | "on" | "true" | "yes" | "1" => true,
                "off" | "false" | "no" | "0" => false,
                other => return Err(format!("GRAFT_METRICS must be on or off (got {other:?})")),
            },
            connection_limits,
            embedding_model,
            sweep_interval,
            secret_key: std::env::var("GRAFT_SECRET_KEY").ok(),
            secret_key_file: std::env::var_os("GRAFT_SECRET_KEY_FILE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            limits,
            data_dir,
            database_url,
            addr,
            public_url: match std::env::var("GRAFT_PUBLIC_URL")
                .ok()
                .filter(|s| !s.trim().is_empty())
            {
                Some(v) => Some(normalize_public_url(&v)?),
                None => None,
            },
            allowed_hosts: list_var("GRAFT_ALLOWED_HOSTS"),
            allowed_origins: list_var("GRAFT_ALLOWED_ORIGINS"),
            session_idle,
            site_root: std::env::var_os("LEPTOS_SITE_ROOT")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("target/site")),
        })
    }

    /// The public URL: `GRAFT_PUBLIC_URL`, else `http://<addr>`, in the form URL parsers
    /// give back (WHATWG: the host lower-cased, a default port dropped), without a
    /// trailing `/`: OAuth clients compare the resource they were given with the one
    /// Graft names after normalising it so.
    pub fn public_url(&self) -> String {
        let raw = self
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.addr));
        normalize_public_url(&raw).unwrap_or_else(|_| raw.trim_end_matches('/').to_string())
    }

    /// The service configuration: public URL, secret key (loading or creating the key
    /// file) and proxy limits. Errors: a malformed key or an unreadable key file.
    pub fn service_config(&self) -> Result<crate::service::ServiceConfig, String> {
        let key = crate::service::secrets::SecretKey::load_or_create(
            self.secret_key.as_deref(),
            self.secret_key_file.as_deref(),
            &self.data_dir,
        )?;
        Ok(crate::service::ServiceConfig {
            public_url: self.public_url(),
            key,
            limits: self.limits,
            model: self.model()?,
            lookup: None,
            quotas: self.quotas,
            oauth: self.oauth.clone(),
            mcp: self.mcp,
        })
    }

    /// Where the secret key comes from, in words: `GRAFT_SECRET_KEY`, or the key file's
    /// path (`GRAFT_SECRET_KEY_FILE`, else `<data_dir>/secret.key`).
    pub fn key_source(&self) -> KeySource {
        if self
            .secret_key
            .as_deref()
            .is_some_and(|v| !v.trim().is_empty())
        {
            KeySource::Env
        } else {
            KeySource::File(
                self.secret_key_file
                    .clone()
                    .unwrap_or_else(|| self.data_dir.join("secret.key")),
            )
        }
    }

    /// The directory of the default embedding model in the data directory.
    pub fn default_model_dir(&self) -> PathBuf {
        self.data_dir
            .join("models")
            .join(crate::semantic::DEFAULT_MODEL)
    }

    /// The embedding model (SPEC §3.4): `GRAFT_EMBEDDING_MODEL`, which must be a model
    /// directory, else the default directory when it exists, else none (lexical-only
    /// search). The weights load on first use. Errors: `GRAFT_EMBEDDING_MODEL` names no
    /// usable model.
    pub fn model(&self) -> Result<Option<std::sync::Arc<crate::semantic::Model>>, String> {
        match &self.embedding_model {
            Some(dir) => crate::semantic::Model::open(dir)
                .map(|m| Some(std::sync::Arc::new(m)))
                .map_err(|e| format!("GRAFT_EMBEDDING_MODEL {}: {e}", dir.display())),
            None => {
                let dir = self.default_model_dir();
                if !dir.join("config.json").is_file() {
                    return Ok(None);
                }
                crate::semantic::Model::open(&dir)
                    .map(|m| Some(std::sync::Arc::new(m)))
                    .map_err(|e| format!("the embedding model in {}: {e}", dir.display()))
            }
        }
    }

    /// Creates the data directory (mode 0700 on Unix: it holds the database and the
    /// key file) when the database is a SQLite file in it; an existing directory that
    /// others may read or enter is narrowed to 0700, with a log line.
    /// Errors: the directory cannot be created or its mode set.
    pub fn ensure_data_dir(&self) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            if !self.data_dir.exists() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&self.data_dir)?;
            }
            let mode = std::fs::metadata(&self.data_dir)?.permissions().mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(&self.data_dir, std::fs::Permissions::from_mode(0o700))?;
                tracing::info!(dir = %self.data_dir.display(), "narrowed the data directory to mode 0700 (owner only)");
            }
            Ok(())
        }
        #[cfg(not(unix))]
        std::fs::create_dir_all(&self.data_dir)
    }
}

/// Console sessions over plain HTTP, where the cookie can be read on the way, end
/// after this many idle hours (over HTTPS, after 7 days).
pub const PLAIN_HTTP_IDLE_HOURS: i64 = 8;

/// Connection limits (README "Limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open connections at once (`GRAFT_MAX_CONNECTIONS`, default 1024).
    pub max_connections: usize,
    /// Open connections from one client address (`GRAFT_MAX_CONNECTIONS_PER_ADDRESS`,
    /// default 256: agents on one machine share its address).
    pub max_per_address: usize,
    /// Time to send a request's head, and the most a kept-alive connection may stay idle
    /// (`GRAFT_HEADER_TIMEOUT`, default 10 s).
    pub header_timeout: Duration,
    /// Time to receive a request's whole body (`GRAFT_BODY_TIMEOUT`, default 60 s; an
    /// OpenAPI upload of 32 MiB needs about 0.5 MB/s).
    pub body_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            max_per_address: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_url_is_normalised_as_clients_normalise_it() {
        let mut s = Settings::from_env(None, None, Some("127.0.0.1:3000".into())).unwrap();
        for (given, public) in [
            ("http://LocalHost:39558/", "http://localhost:39558"),
            ("https://graft.example:443", "https://graft.example"),
            ("https://Graft.Example/base/", "https://graft.example/base"),
            ("http://127.0.0.1:3000", "http://127.0.0.1:3000"),
            ("https://Bücher.Example", "https://xn--bcher-kva.example"),
        ] {
            s.public_url = Some(given.into());
            assert_eq!(s.public_url(), public, "{given}");
            assert_eq!(normalize_public_url(given).unwrap(), public);
        }
        for bad in [
            "http://h?x=1",
            "ftp://h",
            "https://u:p@h",
            "/relative",
            "https://h/#f",
        ] {
            assert!(normalize_public_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert!(parse_duration("5 minutes").is_err());
    }
}
