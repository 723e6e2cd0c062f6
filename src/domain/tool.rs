//! A tool's definition (one version, SPEC §2 `tool_versions`): description, input
//! schema, the HTTP binding the proxy follows (SPEC §4.2) and the MCP annotations.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// HTTP methods a tool may use.
pub const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The MCP tool annotations (MCP 2025-06-18 "Tool annotations"), SPEC §2 hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hints {
    /// The tool does not change its environment.
    pub read_only_hint: bool,
    /// The tool may destroy data (meaningful when not read-only).
    pub destructive_hint: bool,
    /// Calling twice with the same input has no further effect.
    pub idempotent_hint: bool,
    /// The tool talks to an open world (an external vendor): always true for vendor tools.
    pub open_world_hint: bool,
}

impl Hints {
    /// Hints that follow from the HTTP method: GET/HEAD/OPTIONS read-only, DELETE
    /// destructive, GET/HEAD/OPTIONS/PUT/DELETE idempotent.
    pub fn from_method(method: &str) -> Self {
        let m = method.to_ascii_uppercase();
        let read = matches!(m.as_str(), "GET" | "HEAD" | "OPTIONS");
        Self {
            read_only_hint: read,
            destructive_hint: m == "DELETE",
            idempotent_hint: read || m == "PUT" || m == "DELETE",
            open_world_hint: true,
        }
    }

    /// [`Hints::from_method`], except that a read method (GET, HEAD, OPTIONS) whose
    /// operation [`says_it_changes_state`] is not read-only (nor idempotent): its calls
    /// are writes and ask a person first (SPEC §4.4, issue 28.7) until a person marks it
    /// read-only.
    pub fn for_operation(
        method: &str,
        operation_id: Option<&str>,
        path: &str,
        summary: Option<&str>,
    ) -> Self {
        let mut h = Self::from_method(method);
        if h.read_only_hint && says_it_changes_state(operation_id, path, summary) {
            h.read_only_hint = false;
            h.idempotent_hint = false;
        }
        h
    }
}

/// Verbs that name a change of state (issue 28.7): an operation whose name or summary
/// starts with one is a write whatever its HTTP method (Slack's `GET /views.open`,
/// `GET /dialog.open`).
pub const STATE_CHANGING_VERBS: &[&str] = &[
    "accept",
    "add",
    "approve",
    "archive",
    "assign",
    "ban",
    "block",
    "cancel",
    "clear",
    "close",
    "confirm",
    "create",
    "decline",
    "delete",
    "destroy",
    "disable",
    "dismiss",
    "edit",
    "enable",
    "exchange",
    "execute",
    "forward",
    "import",
    "insert",
    "install",
    "invite",
    "join",
    "kick",
    "kill",
    "leave",
    "lock",
    "login",
    "logout",
    "mark",
    "merge",
    "modify",
    "move",
    "mute",
    "open",
    "patch",
    "pin",
    "post",
    "publish",
    "purge",
    "push",
    "put",
    "register",
    "reject",
    "remove",
    "rename",
    "reopen",
    "replace",
    "request",
    "reset",
    "restore",
    "revoke",
    "rotate",
    "run",
    "save",
    "send",
    "set",
    "share",
    "star",
    "start",
    "stop",
    "submit",
    "subscribe",
    "transfer",
    "trigger",
    "unarchive",
    "unban",
    "unblock",
    "uninstall",
    "unlock",
    "unmute",
    "unpin",
    "unregister",
    "unstar",
    "unsubscribe",
    "update",
    "upload",
    "upsert",
    "write",
];

/// Verbs that name a read: an operation whose operationId (or, without one, whose path's
/// last segment) starts with one is not taken for a write by its other words
/// (`get_guild_ban`, `getOpenIssues`, `listOpenPulls`).
pub const READING_VERBS: &[&str] = &[
    "check", "count", "describe", "download", "fetch", "find", "get", "list", "lookup", "query",
    "read", "resolve", "retrieve", "search", "show",
];

/// The first word of `s`, lower case, as search splits identifiers
/// ([`crate::domain::search::text::words`]: `setPresence` → `set`, `GETAccountDelete` →
/// `get`, `views_open` → `views`).
fn first_word(s: &str) -> String {
    crate::domain::search::text::words(s)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// Whether an operation's own words say it changes state (issue 28.7). Its name is its
/// operationId, or without one the path's last segment. It reads when the name's first
/// word is one of [`READING_VERBS`] (`get_guild_ban`, `getOpenIssues`). Else it changes
/// state when one of these words is one of [`STATE_CHANGING_VERBS`]: the name's first
/// word; the first word of the name's last segment (after `.` or `/`: GitHub's
/// `repos/delete-cache`) and of its last part (after `.`, `/`, `_` or `-`: Slack's
/// `views_open`, `user_info_update`); the first word after the path's last `.`
/// (`/views.open`, `/users.setPresence`); the first word of its summary, also without a
/// third person's `s` ("Deletes cookies"). A wrong guess costs a person's approval, or a
/// person's "only reads" on the tool page: a write is the safe side. Of the 811 GET
/// operations of the documents in `shared/specs`, 19 are taken for writes (the import
/// test lists them): 16 change state (Slack's `views.open`, `views.push`, `dialog.open`,
/// `auth.revoke`, `apps.uninstall`, `apps.permissions.request`, …; petstore's login and
/// logout; httpbin's cookie setters) and 3 read (httpbin's `/cache/{value}` "Sets a
/// Cache-Control header", Discord's `invite_resolve`, Slack's `migration.exchange`).
pub fn says_it_changes_state(
    operation_id: Option<&str>,
    path: &str,
    summary: Option<&str>,
) -> bool {
    let last_path = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_string();
    let name = operation_id.unwrap_or(&last_path);
    let first = first_word(name);
    if READING_VERBS.contains(&first.as_str()) {
        return false;
    }
    let mut words = vec![first];
    for at in [&['.', '/'][..], &['.', '/', '_', '-'][..]] {
        if let Some(last) = name.rsplit(at).find(|p| !p.is_empty()) {
            words.push(first_word(last));
        }
    }
    if let Some((_, after)) = last_path.rsplit_once('.') {
        words.push(first_word(after));
    }
    if let Some(s) = summary {
        let w = first_word(s);
        for stem in [w.strip_suffix("es"), w.strip_suffix('s')]
            .into_iter()
            .flatten()
        {
            words.push(stem.to_string());
        }
        words.push(w);
    }
    words
        .iter()
        .any(|w| STATE_CHANGING_VERBS.contains(&w.as_str()))
}

/// How the remaining input properties are sent as a request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BodyEncoding {
    /// `application/json`.
    #[default]
    Json,
    /// `application/x-www-form-urlencoded`, nested objects as `a[b]=c` (Stripe, Twilio, Slack).
    Form,
    /// `multipart/form-data` (RFC 7578): file parts (`Binding::file_parts`) from base64
    /// inputs, other inputs as text fields (issue 12.7).
    Multipart,
}

/// Where a tool's inputs go in the HTTP request (SPEC §4.2). Maps are
/// `input property -> wire name` (OpenAPI parameter names may not be valid property
/// names for every client).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Binding {
    /// `{placeholder}` of the path template → input property.
    #[serde(default)]
    pub path: BTreeMap<String, String>,
    /// Input property → query parameter name.
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Input property → header name.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body's encoding, when the operation takes a body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<BodyEncoding>,
    /// When the whole body is the one input property named here (a body that is not a
    /// plain object); otherwise the remaining properties form the body object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_property: Option<String>,
    /// Fixed headers Graft sets (`Accept`, `Content-Type` the document declares).
    #[serde(default)]
    pub fixed_headers: BTreeMap<String, String>,
    /// Parameters the document declares for the credential (Slack's `token` header):
    /// filled from the connection, never asked of the agent. Pairs of (`in`, name).
    #[serde(default)]
    pub credential_params: Vec<(String, String)>,
    /// Input property → the value sent when the agent leaves it out: parameters and
    /// body properties the document marks required *and* gives a `default` (served as
    /// optional, OpenAPI 3.1 §4.8.12.1 "default … the value the server will use").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defaults: BTreeMap<String, Value>,
    /// Input property → cookie name (OpenAPI `in: cookie`), sent in one `Cookie` header
    /// (RFC 6265 §4.2).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cookies: BTreeMap<String, String>,
    /// Parameters the document declares that are not offered to the agent, as (`in`,
    /// name): headers Graft or the connection owns ([`is_owned_header`]). An input of the
    /// same name is refused, never sent elsewhere (issue 12.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<(String, String)>,
    /// Multipart bodies: the parts that are files. Each is a base64 input of that name
    /// (`contentEncoding: base64`), with an optional `<name>_filename` input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_parts: Vec<String>,
    /// The operation declares that it needs no credential: its effective security
    /// requirement is the empty list (`security: []`, OpenAPI 3.1 §4.8.10 "To remove a
    /// top-level security declaration, an empty array can be used"; Swagger 2.0 the
    /// same). No connection's credential is sent with its calls (issue 25.1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub public: bool,
    /// Input property → how its value is written on the wire, as the document declares
    /// it (OpenAPI 3 `style`/`explode`, Swagger 2.0 `collectionFormat`; issue 25.8), for
    /// the path, query, header and cookie parameters an import saw. A parameter without
    /// an entry (authored tools, versions imported before) keeps the earlier rule: arrays
    /// repeat the name in the query and join with `,` elsewhere, objects nest as
    /// `name[key]=value`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub styles: BTreeMap<String, ParamStyle>,
    /// Form-body property → how its array or object value is written in an
    /// `application/x-www-form-urlencoded` body, as the document declares it (OpenAPI 3
    /// `encoding` of the media type, `form` + explode by default: arrays repeat the
    /// name; Swagger 2.0 `collectionFormat` of `formData`). A property without an entry
    /// nests as `a[b]=c` / `a[0]=c`, as Stripe's `deepObject` does.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub body_styles: BTreeMap<String, ParamStyle>,
    /// An MCP vendor's tool (SPEC §10.2): its calls go to the server's `tools/call` with
    /// the tool's path template as the name and the input as the arguments, unchanged;
    /// none of the HTTP fields above apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
}

/// What an MCP vendor's server said of a tool beyond its definition, served to agents
/// as given (issue 27.2): `_meta` and `icons` (MCP 2025-11-25 "Tool"), each at most
/// [`crate::domain::mcp_vendor::MAX_META_BYTES`] of JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Upstream {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
}

/// OpenAPI's parameter serialization styles (OpenAPI 3.1 §4.8.12.4 "Style Values"),
/// plus Swagger 2.0's `collectionFormat: tsv`, which OpenAPI 3 dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Style {
    /// `name=value`; arrays `name=a,b` or repeated; objects `name=k,v` or `k=v&…`
    /// (query, cookie).
    Form,
    /// `a,b` (path, header).
    Simple,
    /// `.a.b` / `.a,b` (path).
    Label,
    /// `;name=a;name=b` / `;name=a,b` (path).
    Matrix,
    /// Arrays joined by `%20` (query; Swagger 2.0 `ssv`).
    SpaceDelimited,
    /// Arrays joined by `|` (query; Swagger 2.0 `pipes`).
    PipeDelimited,
    /// Arrays joined by a tab (Swagger 2.0 `tsv`).
    TabDelimited,
    /// Objects as `name[key]=value` (query).
    DeepObject,
    /// The value as JSON text: a parameter declared with `content` of a JSON media type
    /// instead of a `schema` (OpenAPI 3.1 §4.8.12.1, "content").
    Json,
}

/// How one parameter is serialized: its [`Style`] and `explode` (OpenAPI 3.1 §4.8.12.2
/// "Fixed Fields": for arrays and objects, a separate parameter per item or property).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamStyle {
    pub style: Style,
    pub explode: bool,
}

impl ParamStyle {
    /// The style a parameter in `location` (`path`, `query`, `header`, `cookie`)
    /// declares with `style` and `explode` (OpenAPI 3.x; defaults: `simple` in path and
    /// header, `form` in query and cookie, explode true for `form` only), or with Swagger
    /// 2.0's `collectionFormat` (`csv` by default, `ssv`, `tsv`, `pipes`, `multi`).
    /// Unknown or misplaced style names fall back to the location's default.
    pub fn declared(
        location: &str,
        style: Option<&str>,
        explode: Option<bool>,
        collection_format: Option<&str>,
        swagger2: bool,
    ) -> Self {
        let default = match location {
            "query" | "cookie" | "formData" => Style::Form,
            _ => Style::Simple,
        };
        if swagger2 {
            let (style, explode) = match collection_format.unwrap_or("csv") {
                "multi" if matches!(location, "query" | "formData") => (Style::Form, true),
                "ssv" => (Style::SpaceDelimited, false),
                "tsv" => (Style::TabDelimited, false),
                "pipes" => (Style::PipeDelimited, false),
                _ => (default, false),
            };
            return Self { style, explode };
        }
        let allowed: &[Style] = match location {
            "path" => &[Style::Simple, Style::Label, Style::Matrix],
            "query" | "formData" => &[
                Style::Form,
                Style::SpaceDelimited,
                Style::PipeDelimited,
                Style::DeepObject,
            ],
            "header" => &[Style::Simple],
            "cookie" => &[Style::Form],
            _ => &[],
        };
        let style = style
            .and_then(|s| serde_json::from_value::<Style>(Value::String(s.to_string())).ok())
            .filter(|s| allowed.contains(s))
            .unwrap_or(default);
        Self {
            style,
            explode: explode.unwrap_or(style == Style::Form),
        }
    }
}

/// The input property that names the file sent as multipart file part `part`.
pub fn filename_property(part: &str) -> String {
    format!("{part}_filename")
}

/// Request headers Graft or the vendor connection owns: never offered as a tool input,
/// never taken from one (issue 12.4): credentials (`Authorization`, `Cookie`,
/// `Proxy-*`), message framing (RFC 9110 §7, RFC 9112 §6), MCP's own headers, method
/// overrides (which would turn a read into a write behind the approval gate), and the
/// forwarding and URL-rewrite headers (`Forwarded`, RFC 7239; `X-Forwarded-*`,
/// `X-Original-URL`, `X-Rewrite-URL`, …).
pub const OWNED_HEADERS: &[&str] = &[
    "authorization",
    "cookie",
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "last-event-id",
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
    // what proxies and frameworks read as the client's address, host or path
    // (security review 32.17): a tool must not pose as another client or route
    "forwarded",
    "x-real-ip",
    "x-client-ip",
    "true-client-ip",
    "x-original-url",
    "x-rewrite-url",
    "x-original-host",
    "x-host",
    "x-original-uri",
    "x-original-method",
    "x-forwarded",
    "x-http-host-override",
    "x-scheme",
    "x-url-scheme",
    "via",
    "client-ip",
    "x-cluster-client-ip",
    "cf-connecting-ip",
    "fastly-client-ip",
    "x-proxyuser-ip",
    "x-client-cert",
    "x-ssl-client-cert",
    "x-arr-clientcert",
];

/// Whether `name` is a header Graft owns ([`OWNED_HEADERS`] or any `Proxy-*`), ASCII
/// case-insensitively and with `_` read as `-` (CGI and WSGI servers map both to the
/// same variable), surrounding whitespace ignored; and any name that is not a valid
/// header name (RFC 9110 §5.1 `token`), which could not be sent as declared.
pub fn is_owned_header(name: &str) -> bool {
    let lower = header_key(name);
    !is_header_token(name)
        || lower.starts_with("proxy-")
        || lower.starts_with("x-forwarded-")
        || lower.starts_with("x-original-")
        || lower.starts_with("x-envoy-")
        || OWNED_HEADERS.contains(&lower.as_str())
}

/// A header name as servers compare it: trimmed, lower case, `_` read as `-` (CGI and
/// WSGI servers map both to the same `HTTP_*` variable).
pub fn header_key(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('_', "-")
}

/// Whether `name` is an RFC 9110 §5.6.2 `token` (a valid header field name).
pub fn is_header_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A tool version before it is stored: what an import or an author produces.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDraft {
    /// The tool's name (valid for its vendor, SPEC §2).
    pub name: String,
    /// The OpenAPI operationId it came from, unchanged.
    pub operation_id: Option<String>,
    /// A short human title (the operation's summary).
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// Root `{"type":"object","properties":{..}}`, inlined.
    pub input_schema: Value,
    /// The output schema its results follow (an MCP vendor's tool that declares one).
    pub output_schema: Option<Value>,
    /// Upper-case HTTP method, or [`crate::domain::mcp_vendor::MCP_METHOD`].
    pub method: String,
    /// Path template relative to the vendor's base URL, e.g. `/v1/customers/{customer}`.
    pub path_template: String,
    /// Where each input goes.
    pub binding: Binding,
    /// MCP annotations.
    pub hints: Hints,
    /// The operation's OpenAPI tags (for search; empty for authored tools).
    pub tags: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarding_headers_are_owned() {
        for h in [
            "X-Forwarded-For",
            "x_forwarded_host",
            "Forwarded",
            "X-Original-URL",
            "X-Rewrite-Url",
            "X-Real-IP",
            "Client-IP",
            "CF-Connecting-IP",
            "X-Envoy-Original-Path",
            "Via",
            "X-SSL-Client-Cert",
        ] {
            assert!(is_owned_header(h), "{h}");
        }
        assert!(!is_owned_header("X-Request-Id"));
    }

    #[test]
    fn hints_follow_the_method() {
        assert!(Hints::from_method("get").read_only_hint);
        // a GET whose name says it changes state is a write
        for (id, path, summary) in [
            (Some("views_open"), "/views.open", None),
            (
                Some("dialog_open"),
                "/dialog.open",
                Some("Open a dialog with a user."),
            ),
            (Some("users_setPresence"), "/users.setPresence", None),
            (None, "/views.open", None),
            (None, "/cookies/set", None),
            (None, "/thing", Some("Send a message")),
            (Some("repos/delete-cache"), "/x", None),
            (
                None,
                "/cookies/delete",
                Some("Deletes cookie(s) as provided by the query string"),
            ),
            (Some("delete_search_history"), "/x", None),
            (Some("history_clear"), "/x", None),
            (Some("mark_as_read"), "/x", None),
            (Some("user_info_update"), "/x", None),
            (
                Some("loginUser"),
                "/user/login",
                Some("Logs user into the system"),
            ),
            (Some("views_push"), "/views.push", None),
            // a noun first and a verb last reads as a write too: the safe side
            (Some("invite_resolve"), "/invites/{code}", None),
        ] {
            let h = Hints::for_operation("GET", id, path, summary);
            assert!(!h.read_only_hint && !h.idempotent_hint, "{id:?} {path}");
        }
        for (id, path, summary) in [
            (Some("getOpenIssues"), "/issues", Some("List open issues")),
            (
                Some("admin_inviteRequests_list"),
                "/admin.inviteRequests.list",
                None,
            ),
            (
                Some("repos/list-for-org"),
                "/orgs/{org}/repos",
                Some("List organization repositories"),
            ),
            (
                Some("files_getUploadURLExternal"),
                "/files.getUploadURLExternal",
                None,
            ),
            (None, "/settings", Some("Settings of the team")),
            (None, "/status/{code}", None),
            (
                Some("get_guild_ban"),
                "/guilds/{guild_id}/bans/{user_id}",
                None,
            ),
            (
                Some("conversations_history"),
                "/conversations.history",
                None,
            ),
            (Some("users_info"), "/users.info", None),
            (
                Some("getThing"),
                "/thing",
                Some("Creates the thing when it is missing"),
            ),
        ] {
            assert!(
                Hints::for_operation("GET", id, path, summary).read_only_hint,
                "{id:?} {path}"
            );
        }
        // other methods keep what their method says
        assert!(!Hints::for_operation("POST", Some("listThings"), "/x", None).read_only_hint);
        assert!(!Hints::from_method("POST").read_only_hint);
        assert!(Hints::from_method("DELETE").destructive_hint);
        assert!(Hints::from_method("PUT").idempotent_hint);
        assert!(!Hints::from_method("PATCH").idempotent_hint);
    }
}
