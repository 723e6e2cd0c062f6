//! The vendor proxy (SPEC §4.6): sends a [`request::PlannedRequest`] with reqwest, with
//! connect and total timeouts, redirects followed only on the vendor's own origin, and
//! the response cut at a cap.

pub mod request;

use futures::StreamExt;
use request::PlannedRequest;
use std::time::Duration;

/// Proxy limits (SPEC §4.6).
#[derive(Debug, Clone, Copy)]
pub struct ProxyLimits {
    /// Connect timeout (default 5 s).
    pub connect_timeout: Duration,
    /// Total timeout of one call (default 30 s).
    pub total_timeout: Duration,
    /// Most response bytes read from the vendor, after decompression (default 1 MiB).
    pub response_cap: usize,
    /// Most bytes of one tool result as sent (text + structuredContent + base64 data,
    /// JSON-escaped; default 512 KiB): below the 1 MiB per-message limit of the Python
    /// SDK (issue 12.6).
    pub result_budget: usize,
    /// Most bytes of one input schema as served in tools/list (default 16 KiB; issue
    /// 12.13): larger schemas are served folded (`domain::schema::fit`), calls are
    /// validated against the full one.
    pub schema_budget: usize,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_secs(30),
            response_cap: 1 << 20,
            result_budget: 512 << 10,
            schema_budget: 16 << 10,
        }
    }
}

/// What the vendor answered.
#[derive(Debug, Clone)]
pub struct VendorResponse {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`, when given.
    pub content_type: Option<String>,
    /// Body, at most the cap.
    pub body: Vec<u8>,
    /// Whether the body was cut at the cap.
    pub truncated: bool,
}

/// Sends planned requests.
#[derive(Debug, Clone)]
pub struct Proxy {
    client: reqwest::Client,
    limits: ProxyLimits,
}

impl Proxy {
    /// A proxy with `limits`. Errors: the HTTP client cannot be built (TLS setup).
    pub fn new(limits: ProxyLimits) -> Result<Self, String> {
        // rustls with the ring provider (no C toolchain needed); ignore "already installed"
        let _ = rustls::crypto::ring::default_provider().install_default();
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let first = attempt.previous().first().cloned();
            let same_origin = first.is_some_and(|f| f.origin() == attempt.url().origin());
            if same_origin && attempt.previous().len() < 5 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = reqwest::Client::builder()
            .connect_timeout(limits.connect_timeout)
            .timeout(limits.total_timeout)
            .redirect(policy)
            .no_proxy()
            .user_agent(concat!("graft/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Self { client, limits })
    }

    /// The limits in force.
    pub fn limits(&self) -> ProxyLimits {
        self.limits
    }

    /// Sends the request. Errors: a sentence for `vendor_unreachable` (connect failure,
    /// timeout, broken response), without the URL's query (which may hold a credential).
    pub async fn send(&self, req: &PlannedRequest) -> Result<VendorResponse, String> {
        let method = reqwest::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| format!("invalid method {}", req.method))?;
        let mut builder = self.client.request(method, req.url.clone());
        for (k, v) in &req.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        if let Some(b) = &req.body {
            builder = builder.body(b.clone());
        }
        if let Some(parts) = &req.multipart {
            let mut form = reqwest::multipart::Form::new();
            for p in parts {
                let part = match &p.filename {
                    Some(f) => reqwest::multipart::Part::bytes(p.data.clone())
                        .file_name(f.clone())
                        .mime_str("application/octet-stream")
                        .map_err(|e| format!("cannot build the multipart body: {e}"))?,
                    None => reqwest::multipart::Part::text(
                        String::from_utf8_lossy(&p.data).into_owned(),
                    ),
                };
                form = form.part(p.name.clone(), part);
            }
            builder = builder.multipart(form);
        }
        let where_ = format!(
            "{}://{}{}",
            req.url.scheme(),
            req.url.host_str().unwrap_or(""),
            req.url.port().map(|p| format!(":{p}")).unwrap_or_default()
        );
        let resp = builder.send().await.map_err(|e| describe(&e, &where_))?;
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body = Vec::new();
        let mut truncated = false;
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| describe(&e, &where_))?;
            let room = self.limits.response_cap.saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(VendorResponse {
            status,
            content_type,
            body,
            truncated,
        })
    }
}

fn describe(e: &reqwest::Error, where_: &str) -> String {
    if e.is_timeout() {
        format!("the vendor at {where_} did not answer in time")
    } else if e.is_connect() {
        format!("cannot connect to the vendor at {where_}")
    } else if e.is_decode() {
        format!("the answer of the vendor at {where_} could not be decoded (a broken Content-Encoding: gzip, br or deflate)")
    } else {
        format!("the request to the vendor at {where_} failed")
    }
}
