//! The vendor proxy (SPEC §4.6): sends a [`request::PlannedRequest`] with reqwest, with
//! connect and total timeouts, redirects followed only on the vendor's own origin, and
//! the response cut at a cap.

pub mod destination;
pub mod mcp;
pub mod redact;
pub mod request;

use futures::StreamExt;
use request::PlannedRequest;
use std::time::Duration;

/// Redirects one vendor call follows at most.
pub const MAX_REDIRECTS: usize = 5;

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
    /// Most tokens of one tool result's text and structuredContent (o200k_base; default
    /// 25,000, the most Claude Code accepts; issue 29.4): longer answers are cut with a
    /// note, beside the byte budget.
    pub result_token_budget: usize,
    /// Most bytes of one input schema as served in tools/list (default 16 KiB; issue
    /// 12.13): larger schemas are served folded (`domain::schema::fit`), calls are
    /// validated against the full one.
    pub schema_budget: usize,
    /// `GRAFT_VENDOR_LOOPBACK=allow`: vendors on this machine's loopback addresses may
    /// be called (local development and tests; security review 32.7). Off by default.
    pub vendor_loopback: bool,
    /// `GRAFT_WEBHOOK_INTERNAL=allow`: the team's webhook may post to private and
    /// link-local addresses (a receiver on the internal network: a self-hosted chat, a
    /// relay). Metadata addresses stay refused. Off by default.
    pub webhook_internal: bool,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_secs(30),
            response_cap: 1 << 20,
            result_budget: 512 << 10,
            result_token_budget: 25_000,
            schema_budget: 16 << 10,
            vendor_loopback: false,
            webhook_internal: false,
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
    /// The response headers an agent can act on ([`is_meaningful_header`]), names in
    /// lower case, in the order received; values not yet redacted.
    pub headers: Vec<(String, String)>,
    /// A redirect that was not followed (to another origin, out of the base path, or
    /// past [`MAX_REDIRECTS`]): where it pointed, resolved against the URL it came from
    /// (RFC 9110 §10.2.2); not yet redacted.
    pub redirect: Option<url::Url>,
}

/// Response headers that carry what an agent may need beyond the body (issue 25.5):
/// pagination (`Link`, RFC 8288; `X-Total-Count` and its kin), when to retry
/// (`Retry-After`, RFC 9110 §10.2.3) and rate limits (`X-RateLimit-*`, `RateLimit-*` and
/// `RateLimit`/`RateLimit-Policy` of the IETF draft), where a created or moved thing is
/// (`Location`), its version (`ETag`) and a download's file name
/// (`Content-Disposition`). Case-insensitive.
pub fn is_meaningful_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "link"
            | "location"
            | "etag"
            | "content-disposition"
            | "retry-after"
            | "ratelimit"
            | "ratelimit-policy"
            | "x-total-count"
            | "x-total"
            | "x-total-pages"
            | "x-page"
            | "x-per-page"
            | "x-next-page"
            | "x-prev-page"
            | "x-next-cursor"
    ) || n.starts_with("x-ratelimit-")
        || n.starts_with("ratelimit-")
        || n.starts_with("x-rate-limit-")
        || n.starts_with("x-pagination-")
}

/// Most bytes of one kept header value (a `Link` with many relations stays whole).
const HEADER_VALUE_CAP: usize = 2048;

/// Sends planned requests: one HTTP client for ordinary vendors and one for vendors a
/// person marked internal, each resolving names only to the addresses it may reach
/// ([`destination`]).
#[derive(Debug, Clone)]
pub struct Proxy {
    public: reqwest::Client,
    internal: reqwest::Client,
    /// The same for MCP vendors' remote servers (issue 27): no total timeout (answers
    /// stream; each call has its own), redirects not followed.
    mcp_public: reqwest::Client,
    mcp_internal: reqwest::Client,
    limits: ProxyLimits,
}

impl Proxy {
    /// A proxy with `limits`, resolving names with `lookup`. Errors: the HTTP client
    /// cannot be built (TLS setup).
    pub fn new(
        limits: ProxyLimits,
        lookup: std::sync::Arc<dyn destination::Lookup>,
    ) -> Result<Self, String> {
        // rustls with the ring provider (no C toolchain needed); ignore "already installed"
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = |internal: bool, streams: bool| {
            let builder = reqwest::Client::builder().connect_timeout(limits.connect_timeout);
            let builder = if streams {
                builder
            } else {
                builder.timeout(limits.total_timeout)
            };
            builder
                // redirects are followed by `send`, which checks each hop against the base
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .dns_resolver(destination::CheckedResolver {
                    lookup: lookup.clone(),
                    reach: destination::Reach {
                        internal,
                        loopback: limits.vendor_loopback,
                    },
                })
                .user_agent(concat!("graft/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| format!("cannot build the HTTP client: {e}"))
        };
        Ok(Self {
            public: client(false, false)?,
            internal: client(true, false)?,
            mcp_public: client(false, true)?,
            mcp_internal: client(true, true)?,
            limits,
        })
    }

    /// The limits in force.
    pub fn limits(&self) -> ProxyLimits {
        self.limits
    }

    /// The HTTP clients for MCP vendors' remote servers, `(public, internal)`: names
    /// resolve only to the addresses a vendor may be at, as for any vendor call.
    pub fn mcp_clients(&self) -> (reqwest::Client, reqwest::Client) {
        (self.mcp_public.clone(), self.mcp_internal.clone())
    }

    /// GETs a small JSON document from a stranger's URL (an OAuth client ID metadata
    /// document, issue 26) under the rules vendor requests follow: names resolve only to
    /// public addresses (loopback only with `GRAFT_VENDOR_LOOPBACK=allow`), an address
    /// spelled in the URL is checked too, no redirect is followed, and at most
    /// `max_bytes` are read within `timeout`. Errors: a sentence saying what failed.
    pub async fn fetch_small(
        &self,
        url: &url::Url,
        max_bytes: usize,
        timeout: std::time::Duration,
    ) -> Result<Vec<u8>, String> {
        let reach = destination::Reach {
            internal: false,
            loopback: self.limits.vendor_loopback,
        };
        if let Some(ip) = destination::literal_ip(url) {
            destination::check(ip, reach).map_err(|r| r.to_string())?;
        }
        let fetch = async {
            let mut resp = self
                .public
                .get(url.clone())
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| format!("cannot reach it ({})", e.without_url()))?;
            if !resp.status().is_success() {
                return Err(format!("it answered HTTP {}", resp.status().as_u16()));
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp
                .chunk()
                .await
                .map_err(|e| format!("its answer broke off ({})", e.without_url()))?
            {
                if body.len() + chunk.len() > max_bytes {
                    return Err(format!("it is over {max_bytes} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(body)
        };
        tokio::time::timeout(timeout, fetch)
            .await
            .map_err(|_| format!("it did not answer within {} s", timeout.as_secs()))?
    }

    /// Sends the request, following at most [`MAX_REDIRECTS`] redirects while each one
    /// stays on the vendor's origin and under its base path
    /// ([`request::under_base_path`]); a redirect anywhere else is not followed and is
    /// the answer. 301/302 of a method other than GET/HEAD, and 303, continue as a GET
    /// without body (RFC 9110 §15.4, as browsers and reqwest do); 307/308 repeat the
    /// request. Errors: a sentence for `vendor_unreachable` (connect failure, timeout,
    /// broken response), without the URL's query (which may hold a credential).
    ///
    /// `internal`: the vendor is marked internal, so private and link-local addresses
    /// may be reached; an address the URL spells is checked here, a name's addresses by
    /// the client's resolver (errors say which address and what a person can do).
    pub async fn send(
        &self,
        req: &PlannedRequest,
        internal: bool,
    ) -> Result<VendorResponse, String> {
        let reach = destination::Reach {
            internal,
            loopback: self.limits.vendor_loopback,
        };
        if let Some(ip) = destination::literal_ip(&req.url) {
            destination::check(ip, reach).map_err(|r| r.to_string())?;
        }
        let client = if internal {
            &self.internal
        } else {
            &self.public
        };
        let mut method = reqwest::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| format!("invalid method {}", req.method))?;
        let mut url = req.url.clone();
        let mut with_body = true;
        let where_ = format!(
            "{}://{}{}",
            req.url.scheme(),
            req.url.host_str().unwrap_or(""),
            req.url.port().map(|p| format!(":{p}")).unwrap_or_default()
        );
        let mut hops = 0;
        let mut redirect = None;
        let resp = loop {
            // the W3C trace context of the vendor request's span (issue 30.2), only to
            // the vendor's own origin; it takes the place of a tool's own
            let trace = if request::same_origin(&url, &req.base) {
                crate::telemetry::headers_of(&tracing::Span::current())
            } else {
                Vec::new()
            };
            let builder =
                self.build(client, req, method.clone(), url.clone(), with_body, &trace)?;
            let resp = builder.send().await.map_err(|e| describe(&e, &where_))?;
            let status = resp.status().as_u16();
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                break resp;
            }
            let Some(next) = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok())
            else {
                break resp;
            };
            if hops == MAX_REDIRECTS {
                redirect = Some(next);
                break resp;
            }
            if !request::same_origin(&next, &req.base)
                || !request::under_base_path(&next, &req.base)
            {
                tracing::info!(
                    status,
                    "a vendor redirect leaves the vendor's base URL: not followed"
                );
                redirect = Some(next);
                break resp;
            }
            if status == 303
                || (matches!(status, 301 | 302)
                    && method != reqwest::Method::GET
                    && method != reqwest::Method::HEAD)
            {
                if method != reqwest::Method::HEAD {
                    method = reqwest::Method::GET;
                }
                with_body = false;
            }
            url = next;
            hops += 1;
        };
        let status = resp.status().as_u16();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .filter(|(k, _)| is_meaningful_header(k.as_str()))
            .map(|(k, v)| {
                let v = String::from_utf8_lossy(v.as_bytes());
                let v: String = v.chars().take(HEADER_VALUE_CAP).collect();
                (k.as_str().to_string(), v)
            })
            .collect();
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
            headers,
            redirect,
        })
    }
}

impl Proxy {
    /// One hop of `req`: its headers (without body headers when `with_body` is false),
    /// and its body or multipart parts when `with_body`. `trace`: W3C trace-context
    /// headers that replace any of the same name the tool sends.
    fn build(
        &self,
        client: &reqwest::Client,
        req: &PlannedRequest,
        method: reqwest::Method,
        url: url::Url,
        with_body: bool,
        trace: &[(String, String)],
    ) -> Result<reqwest::RequestBuilder, String> {
        let mut builder = client.request(method, url);
        for (k, v) in &req.headers {
            if !with_body
                && (k.eq_ignore_ascii_case("content-type")
                    || k.eq_ignore_ascii_case("content-length"))
            {
                continue;
            }
            let traced = !trace.is_empty()
                && (k.eq_ignore_ascii_case("traceparent") || k.eq_ignore_ascii_case("tracestate"));
            if !traced {
                builder = builder.header(k.as_str(), v.as_str());
            }
        }
        for (k, v) in trace {
            builder = builder.header(k.as_str(), v.as_str());
        }
        if !with_body {
            return Ok(builder);
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
        Ok(builder)
    }
}

fn describe(e: &reqwest::Error, where_: &str) -> String {
    // an address the resolver refused says so (security review 32.7)
    if let Some(r) = destination::refused_in(e) {
        return format!("{r} (for {where_})");
    }
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
