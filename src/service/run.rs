//! Running a tool (SPEC §4): one code path for first-class `tools/call` and `run_tool`.
//! Validate → connection → build → dry run → approval → send → answer → record.

use super::{Graft, ServiceError, ServiceResult};
use crate::db;
use crate::domain::schema;
use crate::domain::tool::Binding;
use crate::proxy::request::{self, Credential, Operation};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long checking one input against a tool's schema may take before the call is
/// refused as invalid input (the work runs on the blocking pool, never on an async
/// worker).
pub const VALIDATION_BUDGET: Duration = Duration::from_secs(2);

/// Validations running at once in the process (each on a blocking thread): the CPU count,
/// at least 2. Each agent has one of them at most.
pub fn validation_slots() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2)
}

/// A tool version's input schema, parsed and compiled once (versions are immutable).
pub(crate) struct InputCheck {
    validator: jsonschema::Validator,
    schema: Value,
}

/// The answer of a run, in MCP terms (the adapter turns it into a `CallToolResult`).
#[derive(Debug, Clone, PartialEq)]
pub enum RunAnswer {
    /// Success: text content and, for a JSON object, `structuredContent`.
    Ok {
        /// Text for the model.
        text: String,
        /// Structured content.
        structured: Option<Value>,
        /// An image or a blob, when the vendor answered binary content.
        media: Option<super::answer::Media>,
    },
    /// A tool error (`isError`) with `structuredContent.error = {code, message, ..details}`.
    Err {
        /// `invalid_input`, `approval_required`, `approval_denied`, `vendor_error`,
        /// `vendor_unreachable`, `connection_revoked`, `connection_suspended`,
        /// `connection_ambiguous`, `cancelled`, `rate_limited`,
        /// `tool_retired`, `vendor_disabled`, `vendor_removed`.
        code: &'static str,
        /// A sentence for the model.
        message: String,
        /// More fields (violations, status and body, approval URL, …).
        details: Value,
    },
}

impl RunAnswer {
    fn err(code: &'static str, message: impl Into<String>, details: Value) -> Self {
        Self::Err {
            code,
            message: message.into(),
            details,
        }
    }

    /// The error code, when an error.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Self::Ok { .. } => None,
            Self::Err { code, .. } => Some(code),
        }
    }
}

/// The answer to a call past one of the agent's limits: `rate_limited`, when to retry
/// (`retryAfterSeconds`), nothing sent or logged.
fn rate_limited(what: String, wait: Duration) -> RunAnswer {
    let secs = wait.as_secs().max(1);
    RunAnswer::err(
        "rate_limited",
        format!("{what}: nothing was sent; try again in {secs} s"),
        json!({"retryAfterSeconds": secs}),
    )
}

/// Whether a tool writes (SPEC §4.4): its method is not GET/HEAD/OPTIONS, or its
/// readOnlyHint is false.
pub fn writes(method: &str, read_only_hint: bool) -> bool {
    !matches!(
        method.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "OPTIONS"
    ) || !read_only_hint
}

/// The end of an occurrence of `secret` at `text[i..]`, matching each byte of the secret
/// as itself, as `%XX` (either case), as `+` for a space, as `\` + itself (JSON's `\"`,
/// `\\`, `\/`), as a JSON `\u00XX` escape, or as an HTML character reference (`&amp;`,
/// `&#38;`, `&#x26;`): so a vendor that echoes the credential in any URL, JSON or HTML
/// encoding of it is still caught. Where two spellings fit at one place (a `%` that is
/// itself or starts `%25`, a `u` that is itself or starts `\u0075`) each is tried.
fn encoded_match(text: &[u8], i: usize, secret: &[u8]) -> Option<usize> {
    let Some((&b, rest)) = secret.split_first() else {
        return Some(i);
    };
    let t = *text.get(i)?;
    let hex = |at: usize| (*text.get(at)? as char).to_digit(16);
    let mut spellings: [Option<usize>; 5] = [None; 5];
    // letters in either case: a vendor that upper-cases what it echoes still echoes it
    if t.eq_ignore_ascii_case(&b) || (t == b'+' && b == b' ') {
        spellings[0] = Some(1);
    }
    if t == b'%' && hex(i + 1).zip(hex(i + 2)).map(|(h, l)| h * 16 + l) == Some(u32::from(b)) {
        spellings[1] = Some(3);
    }
    if t == b'\\' && matches!(b, b'"' | b'\\' | b'/') && text.get(i + 1) == Some(&b) {
        spellings[2] = Some(2);
    }
    if t == b'\\'
        && text.get(i + 1) == Some(&b'u')
        && text.len() >= i + 6
        && std::str::from_utf8(&text[i + 2..i + 6])
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            == Some(u32::from(b))
    {
        spellings[3] = Some(6);
    }
    if t == b'&' {
        spellings[4] = html_reference(&text[i..], b);
    }
    spellings
        .into_iter()
        .flatten()
        .find_map(|n| encoded_match(text, i + n, rest))
}

/// HTML5 named character references of ASCII punctuation (WHATWG HTML, "Named character
/// references"), with the byte each stands for.
const NAMED_REFERENCES: &[(&str, u8)] = &[
    ("amp", b'&'),
    ("AMP", b'&'),
    ("lt", b'<'),
    ("LT", b'<'),
    ("gt", b'>'),
    ("GT", b'>'),
    ("quot", b'"'),
    ("QUOT", b'"'),
    ("apos", b'\''),
    ("excl", b'!'),
    ("num", b'#'),
    ("dollar", b'$'),
    ("percnt", b'%'),
    ("lpar", b'('),
    ("rpar", b')'),
    ("ast", b'*'),
    ("midast", b'*'),
    ("plus", b'+'),
    ("comma", b','),
    ("period", b'.'),
    ("sol", b'/'),
    ("colon", b':'),
    ("semi", b';'),
    ("equals", b'='),
    ("quest", b'?'),
    ("commat", b'@'),
    ("lsqb", b'['),
    ("lbrack", b'['),
    ("bsol", b'\\'),
    ("rsqb", b']'),
    ("rbrack", b']'),
    ("Hat", b'^'),
    ("lowbar", b'_'),
    ("UnderBar", b'_'),
    ("grave", b'`'),
    ("DiacriticalGrave", b'`'),
    ("lcub", b'{'),
    ("lbrace", b'{'),
    ("verbar", b'|'),
    ("vert", b'|'),
    ("VerticalLine", b'|'),
    ("rcub", b'}'),
    ("rbrace", b'}'),
    ("tilde", b'~'),
    ("Tab", b'\t'),
    ("NewLine", b'\n'),
];

/// Longest reference [`html_reference`] reads, in bytes.
pub(crate) const MAX_REFERENCE_LEN: usize = 32;

/// The length of an HTML character reference at the start of `text` that stands for
/// the ASCII byte `b`: a named one ([`NAMED_REFERENCES`]), or a decimal or hex numeric
/// one with any number of leading zeros, with or without its `;` (browsers decode
/// `&#65` too); at most [`MAX_REFERENCE_LEN`] bytes.
fn html_reference(text: &[u8], b: u8) -> Option<usize> {
    let text = &text[..text.len().min(MAX_REFERENCE_LEN)];
    if text.get(1) == Some(&b'#') {
        let (digits_from, radix) = match text.get(2) {
            Some(b'x' | b'X') => (3, 16),
            _ => (2, 10),
        };
        let digits = text[digits_from..]
            .iter()
            .take_while(|c| (**c as char).is_digit(radix))
            .count();
        if digits == 0 {
            return None;
        }
        let number = std::str::from_utf8(&text[digits_from..digits_from + digits]).ok()?;
        let value = u32::from_str_radix(number.trim_start_matches('0'), radix)
            .or_else(|_| {
                if number.bytes().all(|c| c == b'0') {
                    Ok(0)
                } else {
                    Err(())
                }
            })
            .ok()?;
        let end = digits_from + digits;
        let end = if text.get(end) == Some(&b';') {
            end + 1
        } else {
            end
        };
        return (value == u32::from(b)).then_some(end);
    }
    let semi = text.iter().position(|&c| c == b';')?;
    let name = std::str::from_utf8(&text[1..semi]).ok()?;
    NAMED_REFERENCES
        .iter()
        .any(|(n, v)| *n == name && *v == b)
        .then_some(semi + 1)
}

/// Characters of an error message the calls log keeps.
const LOGGED_MESSAGE_CHARS: usize = 300;
/// Characters of one string value of an input the calls log keeps.
const LOGGED_STRING_CHARS: usize = 200;
/// Items of one array of an input the calls log keeps.
const LOGGED_ARRAY_ITEMS: usize = 20;
/// Bytes of an input the calls log keeps (the JSON text is cut there, ending in `…`).
const LOGGED_INPUT_BYTES: usize = 4096;

/// Whether an input field's name looks like it holds a secret: one of its words
/// (camelCase, snake_case, kebab-case split) is a secret word (`password`, `token`,
/// `secret`, `apiKey`, `authorization`, …).
fn secret_field(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "signature",
        "otp",
        "pin",
        "cvv",
        "cvc",
        "ssn",
        "privatekey",
        "accesskey",
        "secretkey",
        "session",
        "sid",
        "jwt",
        "bearer",
        "pass",
        "passcode",
        "hmac",
        "dsn",
        "authorisation",
    ];
    // plurals too: tokens, passwords, accessTokens
    let words: Vec<String> = crate::domain::search::text::words(name)
        .into_iter()
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if WORDS.contains(&stem) => stem.to_string(),
            _ => w,
        })
        .collect();
    // `key` alone (Google's and Trello's API key parameter), not `issue_key`
    if words.len() == 1 && words[0] == "key" {
        return true;
    }
    let joined: String = words.concat();
    words.iter().any(|w| WORDS.contains(&w.as_str()))
        || [
            "apikey",
            "accesskey",
            "privatekey",
            "secretkey",
            "clientsecret",
            "signingkey",
        ]
        .iter()
        .any(|k| joined.contains(k))
}

/// Adds to `out` every string or number under a field whose name looks secret
/// ([`secret_field`]), and such a field's whole value as JSON text (`under`: inside such
/// a field already), so that an error message quoting them can be redacted.
fn secret_values(v: &Value, under: bool, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let secret = under || secret_field(k);
                if secret && !under && (v.is_object() || v.is_array()) {
                    out.push(v.to_string());
                }
                secret_values(v, secret, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| secret_values(i, under, out)),
        Value::String(s) if under => out.push(s.clone()),
        Value::Number(n) if under => out.push(n.to_string()),
        _ => {}
    }
}

/// The input of a call as the calls log keeps it (issue 14.4): JSON text where the
/// value of every field whose name looks secret ([`secret_field`]) and every occurrence
/// of the connection's `secrets` read `<redacted>` (each string is redacted before it is
/// cut, so a cut secret cannot slip through), strings are cut at 200 characters, arrays
/// at 20 items, and the whole at 4 KB (ending in `…`).
pub(crate) fn logged_input(input: &Value, secrets: &[String]) -> String {
    let string = |s: &str| -> String {
        let s = redact(s, secrets);
        if s.chars().count() > LOGGED_STRING_CHARS {
            format!(
                "{}…",
                s.chars().take(LOGGED_STRING_CHARS).collect::<String>()
            )
        } else {
            s
        }
    };
    let text = redact(&trim_value(input, &string).to_string(), secrets);
    if text.len() <= LOGGED_INPUT_BYTES {
        return text;
    }
    let mut end = LOGGED_INPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// [`logged_input`]'s walk: secret-looking fields redacted, strings (values and keys)
/// through `string`, arrays cut at 20 items.
fn trim_value(v: &Value, string: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = if secret_field(k) && !v.is_null() {
                        Value::String(request::REDACTED.into())
                    } else {
                        trim_value(v, string)
                    };
                    (string(k), v)
                })
                .collect(),
        ),
        Value::Array(items) => {
            let mut out: Vec<Value> = items
                .iter()
                .take(LOGGED_ARRAY_ITEMS)
                .map(|i| trim_value(i, string))
                .collect();
            if items.len() > LOGGED_ARRAY_ITEMS {
                out.push(Value::String(format!(
                    "… {} more",
                    items.len() - LOGGED_ARRAY_ITEMS
                )));
            }
            Value::Array(out)
        }
        Value::String(s) => Value::String(string(s)),
        v => v.clone(),
    }
}

/// The forms a vendor may echo a secret in besides its text: base64 (standard and
/// URL-safe alphabets, unpadded, as echoed inside a longer string) and hex (security
/// review 32.11). Each is matched as [`encoded_match`] matches text.
fn secret_forms(secrets: &[String]) -> Vec<String> {
    use base64::Engine;
    let mut out: Vec<String> = Vec::with_capacity(secrets.len() * 4);
    for s in secrets.iter().filter(|s| s.len() >= 3) {
        out.push(s.clone());
        // base64 of the secret where it starts at any of the three byte offsets of a
        // longer base64 text (inside encoded JSON, or Basic auth's `user:secret`): the
        // characters that stand for the secret's bits alone
        for engine in [
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            for offset in 0..3usize {
                let mut bytes = vec![0u8; offset];
                bytes.extend_from_slice(s.as_bytes());
                let e = engine.encode(&bytes);
                let start = [0, 2, 3][offset];
                let end = bytes.len() * 8 / 6;
                let middle = e.get(start..end).unwrap_or_default();
                if middle.len() >= 8 && !out.iter().any(|o| o == middle) {
                    out.push(middle.to_string());
                }
                if offset == 0 && !out.contains(&e) {
                    out.push(e);
                }
            }
        }
        out.push(hex::encode(s.as_bytes()));
    }
    // the longest first: a form inside another (a password's base64 within that of
    // `user:password`) must not leave the rest of the longer one behind
    out.sort_by_key(|f| std::cmp::Reverse(f.len()));
    out
}

/// Replaces every secret in `text`, raw, in any letter case, in any URL/JSON/HTML
/// encoding, or as base64 or hex of its bytes ([`secret_forms`]), with `<redacted>`.
fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secret_forms(secrets).iter() {
        let bytes = out.as_bytes();
        let secret = s.as_bytes();
        let mut result = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            let first = bytes[i];
            let may_start = first.eq_ignore_ascii_case(&secret[0])
                || first == b'%'
                || first == b'+'
                || first == b'\\'
                || first == b'&';
            match may_start.then(|| encoded_match(bytes, i, secret)).flatten() {
                Some(end) => {
                    result.extend_from_slice(request::REDACTED.as_bytes());
                    i = end;
                }
                None => {
                    result.push(first);
                    i += 1;
                }
            }
        }
        out = String::from_utf8(result)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    }
    out
}

impl Graft {
    /// The connection a tool's calls use, for people: `(label, why)`.
    pub(super) async fn connection_in_words(
        &self,
        tool_id: i64,
    ) -> ServiceResult<Option<(String, String)>> {
        let (vendor_id, default) = db::select_tool_connection(self.pool(), tool_id).await?;
        let conns = db::select_vendor_connections(self.pool(), vendor_id).await?;
        if let Some(id) = default {
            return Ok(conns.iter().find(|c| c.id == id).map(|c| {
                let state = if c.revoked_at.is_some() {
                    "the tool's default, revoked"
                } else {
                    "the tool's default"
                };
                (c.label.clone(), state.to_string())
            }));
        }
        let active: Vec<_> = conns.iter().filter(|c| c.revoked_at.is_none()).collect();
        Ok(match active.len() {
            1 => Some((
                active[0].label.clone(),
                "the vendor's only active connection".into(),
            )),
            // as credential_for decides: the newest, revoked, and the call refused
            0 => conns.last().map(|c| {
                (
                    c.label.clone(),
                    "revoked: calls fail until a person adds a connection".into(),
                )
            }),
            n => Some((
                format!("{n} active connections"),
                "ambiguous: set the tool's default (graft tool connection)".into(),
            )),
        })
    }

    /// Re-seals every stored connection secret under `new` (security review 32.6, `graft
    /// key rotate`), in one write transaction: each secret is opened with the key this
    /// service holds and sealed with `new`, so after the commit only `new` opens them.
    /// Returns how many were re-sealed. Errors: `Invalid` when a secret does not open
    /// with the current key (nothing is changed).
    pub async fn reseal_secrets(&self, new: &super::secrets::SecretKey) -> ServiceResult<usize> {
        let mut tx = self.write_tx().await?;
        let conns = db::select_connections(self.pool()).await?;
        let mut n = 0;
        for c in conns {
            let Some(sealed) = c.secret_ciphertext.as_deref() else {
                continue;
            };
            let plain = self.inner.key.open(sealed).map_err(|_| {
                ServiceError::Invalid(format!(
                    "the secret of connection {} ({}) does not open with the current key: nothing was changed",
                    c.id, c.label
                ))
            })?;
            db::update_connection_secret(&mut tx, c.id, &new.seal(&plain)).await?;
            n += 1;
        }
        tx.commit().await?;
        self.checkpoint().await;
        self.state_changed().await;
        Ok(n)
    }

    /// Checks that the secret key opens the stored secrets (a wrong `GRAFT_SECRET_KEY`
    /// is caught at start, not at the first call). Errors: `Invalid` with the remedy.
    pub async fn check_secret_key(&self) -> ServiceResult<()> {
        if let Some(c) = db::select_connections(self.pool())
            .await?
            .into_iter()
            .find(|c| c.secret_ciphertext.is_some())
        {
            self.inner.key.open(c.secret_ciphertext.as_deref().unwrap_or_default()).map_err(|_| {
                ServiceError::Invalid(format!(
                    "the secret key does not open the stored connection secrets (connection {} \"{}\" of {}): give Graft the key they were sealed with (GRAFT_SECRET_KEY, GRAFT_SECRET_KEY_FILE, else the data directory's secret.key; a key file that was missing was just created with a new key). After an interrupted `graft key rotate`, the new key is in secret.key.new beside the key file; after a rotation while a server ran, a connection that server added is sealed with the old key: revoke it and add it again",
                    c.id, c.label, c.vendor
                ))
            })?;
        }
        Ok(())
    }

    /// A tool's credential and vendor URL for a call, from memory while nothing changed.
    async fn call_setting(
        &self,
        tool: &db::ToolRow,
    ) -> ServiceResult<std::sync::Arc<super::hot::CallSetting>> {
        let hot = &self.inner.hot;
        let epoch = hot.epoch();
        if let Some(s) = hot.setting(tool.id, epoch) {
            return Ok(s);
        }
        let credential = self.credential_for(tool.id).await?;
        let vendor = self.vendor(&tool.vendor).await?;
        let s = std::sync::Arc::new(super::hot::CallSetting {
            credential,
            base_url: vendor.base_url,
            internal: vendor.internal,
        });
        hot.put_setting(tool.id, epoch, s.clone());
        Ok(s)
    }

    /// The credential a tool's calls use (SPEC §4.5): its default connection, else the
    /// vendor's only active one, else none. `Err(answer)` for a revoked or ambiguous one.
    async fn credential_for(&self, tool_id: i64) -> ServiceResult<Result<Credential, RunAnswer>> {
        let (vendor_id, default) = db::select_tool_connection(self.pool(), tool_id).await?;
        let conns = db::select_vendor_connections(self.pool(), vendor_id).await?;
        let chosen = match default {
            Some(id) => conns.iter().find(|c| c.id == id),
            None => {
                let active: Vec<_> = conns.iter().filter(|c| c.revoked_at.is_none()).collect();
                match active.len() {
                    1 => Some(active[0]),
                    0 if conns.is_empty() => return Ok(Ok(Credential::None)),
                    0 => conns.last(),
                    _ => {
                        return Ok(Err(RunAnswer::err(
                            "connection_ambiguous",
                            "the vendor has several active connections and this tool has no default: ask a person to set one",
                            json!({"connections": active.iter().map(|c| c.label.clone()).collect::<Vec<_>>()}),
                        )))
                    }
                }
            }
        };
        let Some(c) = chosen else {
            return Ok(Ok(Credential::None));
        };
        if c.revoked_at.is_some() {
            return Ok(Err(RunAnswer::err(
                "connection_revoked",
                format!(
                    "the connection {:?} this tool uses was revoked: ask a person for a new one",
                    c.label
                ),
                json!({"connection": c.label}),
            )));
        }
        if let Some(why) = c.suspended_at.and(c.suspended_reason.as_ref()) {
            return Ok(Err(RunAnswer::err(
                "connection_suspended",
                format!(
                    "{why}: its connection {:?} sends nothing until a person confirms it there (the vendor's page in the console, or graft connection confirm {})",
                    c.label, c.vendor
                ),
                json!({"connection": c.label}),
            )));
        }
        let secret = match &c.secret_ciphertext {
            Some(s) => self
                .inner
                .key
                .open(s)
                .map_err(|e| ServiceError::Internal(anyhow::anyhow!(e)))?,
            None => String::new(),
        };
        let name = c.header_or_param_name.clone().unwrap_or_default();
        Ok(Ok(match c.auth_kind.as_str() {
            "bearer" => Credential::Bearer(secret),
            "header" => Credential::Header {
                name,
                value: secret,
            },
            "query" => Credential::Query {
                name,
                value: secret,
            },
            "basic" => {
                let (user, password) = secret.split_once(':').unwrap_or((secret.as_str(), ""));
                Credential::Basic {
                    user: user.into(),
                    password: password.into(),
                }
            }
            _ => Credential::None,
        }))
    }

    /// Checks `input` against a tool version's input schema (JSON Schema 2020-12 /
    /// draft-07 by `$schema`, patterns bounded as [`schema::validator`] says) and
    /// returns it as it will be sent: numbers with no fractional part where the schema
    /// wants an integer become integers first ([`schema::integral_floats_to_integers`],
    /// issue 25.10). Violations, as `{pointer, message}`: each top-level input the
    /// schema does not declare (issue 25.3: it would otherwise travel in the query
    /// string), then the first violation of the schema.
    ///
    /// Bounded in every way an agent could push it: compiling and validating run on
    /// tokio's blocking pool, so no slow schema or input holds an async worker (other
    /// agents' calls, `/healthz`, the console); an agent has one validation running at a
    /// time and the process [`validation_slots`] at most, so validations that outlive
    /// their answer cannot pile up; the check stops at the first violation (collecting
    /// every error of a big input against a wide `anyOf` took gigabytes); and past
    /// [`VALIDATION_BUDGET`] (waiting for a slot included) the input is refused with one
    /// violation saying so.
    async fn check_input(
        &self,
        agent_id: i64,
        tool_id: i64,
        version: i64,
        schema_text: &str,
        input: Value,
        exploded: Vec<String>,
    ) -> ServiceResult<(Vec<Value>, Value)> {
        let too_slow = || {
            vec![json!({"pointer": "/", "message": format!(
                "the input took longer than {} s to validate against this tool's schema; send a smaller input",
                VALIDATION_BUDGET.as_secs()
            )})]
        };
        let deadline = tokio::time::Instant::now() + VALIDATION_BUDGET;
        let mine = self
            .inner
            .agent_validations
            .lock()
            .expect("validation slots")
            .entry(agent_id)
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(1)))
            .clone();
        let slots = async {
            let mine = mine.acquire_owned().await.ok()?;
            let any = self
                .inner
                .validation_slots
                .clone()
                .acquire_owned()
                .await
                .ok()?;
            Some((mine, any))
        };
        let Ok(Some(permits)) = tokio::time::timeout_at(deadline, slots).await else {
            return Ok((too_slow(), input));
        };
        let key = (tool_id, version);
        let cached = self
            .inner
            .validators
            .lock()
            .expect("validator cache")
            .get(&key)
            .cloned();
        let schema_text = schema_text.to_owned();
        let kept = input.clone();
        let work = tokio::task::spawn_blocking(move || {
            // the slots are held until the work ends, even when its answer was given up
            let _permits = permits;
            let check = match cached {
                Some(v) => v,
                None => {
                    let schema: Value = serde_json::from_str(&schema_text)
                        .map_err(|e| ServiceError::Internal(e.into()))?;
                    let validator = schema::validator(&schema).map_err(|e| {
                        ServiceError::Internal(anyhow::anyhow!(
                            "stored schema of tool {tool_id} v{version} is invalid: {e}"
                        ))
                    })?;
                    Arc::new(InputCheck { validator, schema })
                }
            };
            let mut input = input;
            schema::integral_floats_to_integers(&check.schema, &mut input);
            let mut found: Vec<Value> = match &input {
                Value::Object(m) => schema::undeclared(&check.schema, m)
                    .into_iter()
                    .map(|k| {
                        let pointer = format!("/{}", k.replace('~', "~0").replace('/', "~1"));
                        let owned = {
                            let h = crate::domain::tool::header_key(&k);
                            h.starts_with("proxy-")
                                || h.starts_with("x-forwarded-")
                                || h.starts_with("x-original-")
                                || h.starts_with("x-envoy-")
                                || crate::domain::tool::OWNED_HEADERS.contains(&h.as_str())
                        };
                        let message = if owned {
                            format!("{k:?} is set by Graft or the vendor connection, not by the tool's input: leave it out")
                        } else {
                            format!("{k:?} is not an input of this tool (it is not in its inputSchema's properties): leave it out or use one of the declared properties")
                        };
                        json!({"pointer": pointer, "message": message})
                    })
                    .collect(),
                _ => Vec::new(),
            };
            // an object parameter sent as form + explode puts each of its properties in
            // the query as a parameter of its own: an undeclared one would be a new
            // parameter (or a second value of a declared one), so it is refused too
            for prop in &exploded {
                let (Some(Value::Object(value)), Some(sub)) = (
                    input.get(prop),
                    check.schema.pointer(&format!(
                        "/properties/{}",
                        prop.replace('~', "~0").replace('/', "~1")
                    )),
                ) else {
                    continue;
                };
                if sub.get("properties").is_none() {
                    continue;
                }
                for k in schema::undeclared(sub, value) {
                    found.push(json!({
                        "pointer": format!("/{prop}/{k}"),
                        "message": format!("{k:?} is not a property of {prop:?}: it would be sent as a query parameter of its own; leave it out"),
                    }));
                }
            }
            if let Err(e) = check.validator.validate(&input) {
                let pointer = e.instance_path().to_string();
                found.push(json!({"pointer": if pointer.is_empty() { "/".to_string() } else { pointer }, "message": e.to_string()}));
            }
            Ok::<_, ServiceError>((check, found, input))
        });
        let (check, found, input) = match tokio::time::timeout_at(deadline, work).await {
            Ok(done) => done.map_err(|e| ServiceError::Internal(e.into()))??,
            Err(_) => return Ok((too_slow(), kept)),
        };
        let mut cache = self.inner.validators.lock().expect("validator cache");
        if cache.len() > 1024 {
            cache.clear();
        }
        cache.insert(key, check);
        Ok((found, input))
    }

    /// Runs a tool for an agent (SPEC §4), whether or not it is promoted: the caller
    /// decides who may (first-class calls need promotion; `run_tool` does not).
    /// Every call is recorded in `tool_calls`; calls that reach the vendor update
    /// `tool_usage`. Errors: `ToolNotFound`, and internal faults; everything the model can
    /// act on is a [`RunAnswer::Err`].
    pub async fn run_tool(
        &self,
        agent_id: i64,
        vendor: &str,
        name: &str,
        input: Value,
        dry_run: bool,
    ) -> ServiceResult<RunAnswer> {
        self.run_tool_cancellable(
            agent_id,
            vendor,
            name,
            input,
            dry_run,
            &CancellationToken::new(),
        )
        .await
    }

    /// [`Graft::run_tool`] that `cancel` stops (see [`Graft::run_tool_row`]).
    pub async fn run_tool_cancellable(
        &self,
        agent_id: i64,
        vendor: &str,
        name: &str,
        input: Value,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<RunAnswer> {
        let tool = self.tool_for_call(vendor, name).await?;
        self.run_tool_row(agent_id, &tool, input, dry_run, cancel)
            .await
    }

    /// [`Graft::run_tool`] for a tool already resolved (with [`Graft::tool_for_call`]).
    /// `cancel`: the agent's `notifications/cancelled` for this call (MCP 2025-11-25
    /// utilities/cancellation); when it fires while the vendor has not answered, the
    /// vendor request is dropped, the call answers `cancelled` and is logged so (a write
    /// "may have acted").
    pub async fn run_tool_row(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        input: Value,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<RunAnswer> {
        // the agent's call budget (security review 32.8): a call past it is answered and
        // not logged, so that the log cannot be flooded
        let quotas = &self.inner.quotas;
        if let Err(wait) = self
            .inner
            .meter
            .spend(quotas, agent_id, super::quota::Spend::Call)
        {
            return Ok(rate_limited(
                format!(
                    "this agent made more than {} tool calls in the last minute (GRAFT_AGENT_CALLS_PER_MINUTE)",
                    quotas.calls_per_minute
                ),
                wait,
            ));
        }
        let Some(_running) = self.inner.meter.running(quotas, agent_id) else {
            return Ok(rate_limited(
                format!(
                    "this agent has {} tool calls running already (GRAFT_AGENT_CONCURRENT_CALLS)",
                    quotas.concurrent_calls
                ),
                Duration::from_secs(1),
            ));
        };
        let started = Instant::now();
        // what the log keeps of the input: redacted before the input is used up
        let secrets = match self.call_setting(tool).await {
            Ok(s) => s
                .credential
                .as_ref()
                .map(|c| c.secrets())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        let logged = logged_input(&input, &secrets);
        // an error message may quote the input (a violation, a refused path value):
        // what sits under a secret-looking field is redacted there too
        let mut hidden = secrets;
        secret_values(&input, false, &mut hidden);
        let (answer, http_status) = self
            .run_steps(agent_id, tool, input, dry_run, cancel)
            .await?;
        let message = match &answer {
            RunAnswer::Ok { .. } => None,
            RunAnswer::Err { message, .. } => Some(crate::domain::openapi::truncate_chars(
                &redact(message, &hidden),
                LOGGED_MESSAGE_CHARS,
            )),
        };
        let call = db::NewCall {
            agent_id,
            tool_id: tool.id,
            version: tool.version,
            dry_run,
            status: if answer.code().is_none() {
                "ok"
            } else {
                "error"
            },
            http_status: http_status.map(i64::from),
            duration_ms: started.elapsed().as_millis() as i64,
            error_code: answer.code(),
            input: Some(&logged),
            message: message.as_deref(),
        };
        // the call log and, when the vendor was reached, the tool's usage: one transaction.
        // The call has happened by now: when the log cannot be written (the database went
        // away, or stayed busy), the agent still gets the vendor's answer, so that it never
        // repeats a write it believes failed.
        let recorded = async {
            let mut tx = self.write_tx().await?;
            db::record_call(&mut tx, &call, http_status.is_some(), self.now()).await?;
            tx.commit().await
        }
        .await;
        if let Err(e) = recorded {
            tracing::error!(error = ?e, agent = agent_id, tool = %format!("{}__{}", tool.vendor, tool.name), http_status = ?call.http_status, "a tool call ran but could not be written to the calls log");
        }
        match &answer {
            RunAnswer::Ok { .. } => {
                tracing::info!(agent = agent_id, tool = %format!("{}__{}", tool.vendor, tool.name), version = tool.version, dry_run, http_status = ?call.http_status, ms = call.duration_ms, "tool call")
            }
            RunAnswer::Err { code, message, .. } => {
                tracing::warn!(agent = agent_id, tool = %format!("{}__{}", tool.vendor, tool.name), version = tool.version, dry_run, http_status = ?call.http_status, ms = call.duration_ms, code, reason = %crate::domain::openapi::truncate_chars(&redact(message, &hidden), 500), "tool call failed")
            }
        }
        Ok(answer)
    }

    async fn run_steps(
        &self,
        agent_id: i64,
        tool: &db::ToolRow,
        input: Value,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<(RunAnswer, Option<u16>)> {
        let qualified = format!("{}__{}", tool.vendor, tool.name);
        // 0. a retired tool, or one of a disabled vendor, runs nothing
        if let Err(e) = super::usable(tool) {
            let code = if tool.vendor_removed_at.is_some() {
                "vendor_removed"
            } else if tool.vendor_disabled_at.is_some() {
                "vendor_disabled"
            } else {
                "tool_retired"
            };
            let message = match e {
                ServiceError::ToolNotFound(m) => m,
                other => other.to_string(),
            };
            return Ok((
                RunAnswer::err(code, message, json!({"tool": qualified})),
                None,
            ));
        }
        // 1. validate
        let input = match input {
            Value::Null => Value::Object(Map::new()),
            v => v,
        };
        let binding: Binding =
            serde_json::from_str(&tool.binding).map_err(|e| ServiceError::Internal(e.into()))?;
        let exploded: Vec<String> = binding
            .styles
            .iter()
            .filter(|(p, st)| {
                st.explode
                    && st.style == crate::domain::tool::Style::Form
                    && (binding.query.contains_key(*p) || binding.cookies.contains_key(*p))
            })
            .map(|(p, _)| p.clone())
            .collect();
        let (violations, input) = self
            .check_input(
                agent_id,
                tool.id,
                tool.version,
                &tool.input_schema,
                input,
                exploded,
            )
            .await?;
        if !violations.is_empty() {
            let list = violations
                .iter()
                .map(|v| {
                    format!(
                        "{}: {}",
                        v["pointer"].as_str().unwrap_or(""),
                        v["message"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            return Ok((
                RunAnswer::err(
                    "invalid_input",
                    format!("the input does not match {qualified}'s input schema: {list}"),
                    json!({"violations": violations}),
                ),
                None,
            ));
        }
        let Value::Object(input) = input else {
            return Ok((
                RunAnswer::err(
                    "invalid_input",
                    "input must be a JSON object",
                    json!({"violations": [{"pointer": "/", "message": "not an object"}]}),
                ),
                None,
            ));
        };
        // 2. connection and request
        let setting = self.call_setting(tool).await?;
        // an operation that declares `security: []` gets no credential, and needs no
        // connection (issue 25.1)
        let credential = match &setting.credential {
            _ if binding.public => &Credential::None,
            Ok(c) => c,
            Err(answer) => return Ok((answer.clone(), None)),
        };
        let base_url = &setting.base_url;
        let op = Operation {
            method: &tool.method,
            path_template: &tool.path_template,
            binding: &binding,
        };
        let planned = match request::build(base_url, op, &input, credential) {
            Ok(p) => p,
            Err(msg) => return Ok((RunAnswer::err("invalid_input", msg, json!({})), None)),
        };
        // 3. dry run: reads go on, everything else stops here with a redacted preview
        let method = tool.method.to_ascii_uppercase();
        if dry_run && !matches!(method.as_str(), "GET" | "HEAD") {
            let preview = request::build(base_url, op, &input, &credential.redacted())
                .map_err(|e| ServiceError::Internal(anyhow::anyhow!(e)))?
                .preview();
            let structured = json!({"dryRun": true, "request": preview});
            let text = format!(
                "Dry run of {qualified}: nothing was sent. The request would be:\n{}",
                serde_json::to_string_pretty(&structured["request"]).unwrap_or_default()
            );
            return Ok((
                RunAnswer::Ok {
                    text,
                    structured: Some(structured),
                    media: None,
                },
                None,
            ));
        }
        // 4. approval of writes, and of every tool or version an agent authored
        if tool.gated() {
            let mut approval = db::select_approval(self.pool(), agent_id, tool.id).await?;
            // a grant stands for the version it was given on (a new version that changes
            // nothing carries it forward); one for another version raced a publish
            if let Some(a) = approval
                .as_mut()
                .filter(|a| a.state == "granted" && a.version.is_some_and(|v| v != tool.version))
            {
                let why = format!(
                    "the approval was given for version {}",
                    a.version.unwrap_or_default()
                );
                db::repend_approval(
                    self.pool(),
                    agent_id,
                    tool.id,
                    tool.version,
                    &why,
                    self.now(),
                )
                .await?;
                a.state = "pending".into();
                a.changed = Some(why);
            }
            match approval.as_ref().map(|a| a.state.as_str()) {
                Some("granted") => {}
                Some("denied") => {
                    return Ok((
                        RunAnswer::err(
                            "approval_denied",
                            format!("a person denied this agent the use of {qualified}"),
                            json!({"tool": qualified}),
                        ),
                        None,
                    ))
                }
                _ => {
                    db::insert_pending_approval(
                        self.pool(),
                        agent_id,
                        tool.id,
                        tool.version,
                        self.now(),
                    )
                    .await?;
                    let agent = self.agent(agent_id).await?;
                    let url = format!(
                        "{}/approvals?agent={}&tool={qualified}",
                        self.inner.public_url, agent.name
                    );
                    let why = if writes(&method, tool.read_only_hint) {
                        format!("which changes data at {}", tool.vendor)
                    } else {
                        "which an agent wrote".to_string()
                    };
                    let changed = approval
                        .as_ref()
                        .and_then(|a| a.changed.as_deref())
                        .map(|c| {
                            format!(
                                " Version {} is new since the last decision: {c}.",
                                tool.version
                            )
                        })
                        .unwrap_or_default();
                    let tell = format!(
                        "Graft needs a person's approval before {} can run {qualified} version {} ({method} {}), {why}.{changed} Please approve it at {url} (or run: graft approve {} {qualified}), then tell me to try again.",
                        agent.name, tool.version, tool.path_template, agent.name
                    );
                    let mut details = json!({"approvalUrl": url, "tellUser": tell, "tool": qualified, "version": tool.version});
                    if let Some(c) = approval.as_ref().and_then(|a| a.changed.clone()) {
                        details["changed"] = Value::String(c);
                    }
                    let lead = if writes(&method, tool.read_only_hint) {
                        format!("{qualified} writes, and its first use needs a person's approval")
                    } else {
                        format!("{qualified} version {} was written by an agent, and its first use needs a person's approval", tool.version)
                    };
                    return Ok((
                        RunAnswer::err(
                            "approval_required",
                            format!("{lead}; nothing was sent.{changed} Tell your user: {tell}"),
                            details,
                        ),
                        None,
                    ));
                }
            }
        }
        // 5. send; an agent's notifications/cancelled stops the vendor request (issue
        // 25.11): reqwest drops the connection, and the log says what may have happened
        let secrets = credential.secrets();
        let response = tokio::select! {
            r = self.inner.proxy.send(&planned, setting.internal) => match r {
                Ok(r) => r,
                Err(msg) => return Ok((RunAnswer::err("vendor_unreachable", msg, json!({})), None)),
            },
            _ = cancel.cancelled() => {
                let message = if writes(&method, tool.read_only_hint) {
                    format!("cancelled by the agent before {} answered; the vendor may have acted: check before repeating this write", tool.vendor)
                } else {
                    format!("cancelled by the agent before {} answered", tool.vendor)
                };
                return Ok((RunAnswer::err("cancelled", message, json!({})), None));
            }
        };
        let limits = self.inner.proxy.limits();
        let mut uri = planned.url.clone();
        uri.set_query(None);
        let rendered = super::answer::render(
            &response.body,
            response.content_type.as_deref(),
            response.truncated,
            &limits,
            &|t| redact(t, &secrets),
            &secrets,
            uri.as_str(),
        );
        let super::answer::Rendered {
            mut text,
            structured: value,
            media,
            ..
        } = rendered;
        let status = response.status;
        let reason = http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let status_line = format!("HTTP {status} {reason}").trim_end().to_string();
        // what the vendor said beside the body (issue 25.5), redacted like the body
        let mut headers = super::answer::kept_headers(&response.headers, &|t| redact(t, &secrets));
        if let Some(next) = &response.redirect {
            // a redirect Graft did not follow (another origin, out of the base path, too
            // many hops): where the answer is, never fetched with the credential (issue
            // 25.6)
            let location = redact(next.as_str(), &secrets);
            headers.remove("location");
            let header_lines = super::answer::header_lines(&headers);
            let text = format!(
                "{} answered {status_line}: the answer is at {location}. Graft follows redirects only on the vendor's own origin and base path, so it did not fetch this one and sent no credential there; fetch that URL yourself if you can, or give it to your user.{header_lines}",
                tool.vendor
            );
            let structured = json!({"status": status, "location": location, "headers": headers});
            return Ok((
                RunAnswer::Ok {
                    text,
                    structured: Some(structured),
                    media: None,
                },
                Some(status),
            ));
        }
        let header_lines = super::answer::header_lines(&headers);
        if (200..300).contains(&status) {
            let mut structured = value.filter(Value::is_object);
            if text.is_empty() {
                // 204/205 or an empty 2xx body: a success the agent can read
                text = if matches!(status, 204 | 205) {
                    status_line
                } else {
                    format!("{status_line} (empty body)")
                };
            }
            if !headers.is_empty() {
                text.push_str(&header_lines);
                if let Some(Value::Object(m)) = &mut structured {
                    m.entry(super::answer::HEADERS_KEY)
                        .or_insert_with(|| Value::Object(headers.clone()));
                }
            }
            Ok((
                RunAnswer::Ok {
                    text,
                    structured,
                    media,
                },
                Some(status),
            ))
        } else {
            // the body as JSON when it is JSON and within the budget, else its text; and
            // in the message too: most clients give the model only the text of an error
            // (issue 25.4)
            let body = value.unwrap_or(Value::String(text.clone()));
            let retry = super::answer::retry_after(&headers, self.inner.clock.now());
            let when = match (retry, status) {
                (Some(secs), _) => {
                    format!(" Retry after {secs} s (the vendor's Retry-After or rate-limit reset).")
                }
                (None, 429 | 503) => {
                    " The vendor did not say when to retry: wait a little before trying again."
                        .to_string()
                }
                _ => String::new(),
            };
            let said = if text.trim().is_empty() {
                "The body was empty.".to_string()
            } else {
                format!("It said:\n{text}")
            };
            let mut details = json!({"status": status, "body": body});
            if !headers.is_empty() {
                details["headers"] = Value::Object(headers);
            }
            if let Some(secs) = retry {
                details["retryAfterSeconds"] = json!(secs);
            }
            Ok((
                RunAnswer::err(
                    "vendor_error",
                    format!(
                        "{} answered {status_line}.{when} {said}{header_lines}",
                        tool.vendor
                    ),
                    details,
                ),
                Some(status),
            ))
        }
    }
}

impl Graft {
    /// The calls log (issue 14.4), newest first: at most `limit` (clamped to 1–500) calls
    /// that `filter` admits, each with its agent's and tool's names, outcome and redacted
    /// input. Every call of an agent is there, first-class or through `run_tool`, dry
    /// runs and refused ones included.
    pub async fn calls(
        &self,
        filter: &db::CallFilter,
        limit: i64,
    ) -> ServiceResult<Vec<db::CallLogRow>> {
        Ok(db::select_call_log(&self.inner.pool, filter, limit.clamp(1, 500)).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_write_rule() {
        assert!(!writes("GET", true));
        assert!(writes("GET", false));
        assert!(writes("POST", true));
        assert!(writes("DELETE", true));
        assert!(!writes("options", true));
    }

    #[test]
    fn the_log_keeps_inputs_without_secrets_and_bounded() {
        for name in [
            "password",
            "apiKey",
            "X-API-Key",
            "client_secret",
            "accessToken",
            "Authorization",
            "pin",
            "key",
            "sessionId",
            "jwt",
            "tokens",
            "accessTokens",
            "passwords",
            "secrets",
            "signing_key",
            "dsn",
        ] {
            assert!(secret_field(name), "{name} looks secret");
        }
        for name in [
            "name",
            "author",
            "keyword",
            "pinned",
            "tokenizer_name",
            "issue_key",
            "monkey",
            "passenger",
            "status",
        ] {
            assert!(!secret_field(name), "{name} is not a secret");
        }
        let input = json!({"user": {"name": "ann", "Password": "pw1"}, "note": "my s3cr3t!", "token": null});
        assert_eq!(
            logged_input(&input, &["s3cr3t".to_string()]),
            r#"{"note":"my <redacted>!","token":null,"user":{"Password":"<redacted>","name":"ann"}}"#
        );
        // a long connection secret, and one that crosses the 200-character cut
        let long_secret = "S".repeat(250);
        let crossing = format!("{}{}", "x".repeat(190), "SECRET-abcdefghij");
        let text = logged_input(
            &json!({"a": format!("zz{long_secret}"), "b": crossing}),
            &[long_secret.clone(), "SECRET-abcdefghij".into()],
        );
        assert!(
            !text.contains("SSSSSSSSSS") && !text.contains("SECRET"),
            "{text}"
        );
        let mut hidden = Vec::new();
        secret_values(
            &json!({"password": {"x": "hunter2-secret"}, "user": {"pin": 1234}}),
            false,
            &mut hidden,
        );
        assert_eq!(
            hidden,
            [r#"{"x":"hunter2-secret"}"#, "hunter2-secret", "1234"]
        );
        let long = json!({"text": "é".repeat(500), "list": (0..30).collect::<Vec<_>>()});
        let v: Value = serde_json::from_str(&logged_input(&long, &[])).unwrap();
        assert_eq!(v["text"].as_str().unwrap().chars().count(), 201);
        assert_eq!(v["list"].as_array().unwrap().len(), 21);
        assert_eq!(v["list"][20], "… 10 more");
        let huge = json!((0..20)
            .map(|i| (format!("k{i}"), json!("x".repeat(199))))
            .collect::<Map<_, _>>());
        let text = logged_input(&huge, &[]);
        assert!(text.len() <= LOGGED_INPUT_BYTES + '…'.len_utf8() && text.ends_with('…'));
    }

    #[test]
    fn redaction_covers_case_base64_and_hex() {
        use base64::Engine;
        let secret = "sk_live_Ab12+/cd".to_string();
        let s = std::slice::from_ref(&secret);
        for echoed in [
            secret.to_ascii_uppercase(),
            secret.to_ascii_lowercase(),
            base64::engine::general_purpose::STANDARD.encode(&secret),
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&secret),
            hex::encode(&secret),
            hex::encode(&secret).to_ascii_uppercase(),
            // inside a longer base64 text, at each byte offset (Basic auth's user:secret)
            base64::engine::general_purpose::STANDARD.encode(format!("x{secret}")),
            base64::engine::general_purpose::STANDARD.encode(format!("xy{secret}")),
            base64::engine::general_purpose::STANDARD.encode(format!("user:{secret}:tail")),
        ] {
            let text = format!("token was {echoed}.");
            let out = redact(&text, s);
            assert!(
                !out.contains(&echoed) && out.contains(request::REDACTED),
                "{text} -> {out}"
            );
        }
    }

    #[test]
    fn redaction_covers_encodings() {
        let s = vec!["a b/c+d".to_string()];
        assert_eq!(
            redact("x a b/c+d y a+b%2Fc%2Bd", &s),
            "x <redacted> y <redacted>"
        );
        // JSON \u escapes (NDJSON, cut bodies) and HTML character references
        let s = vec!["s3cr3t&key<>".to_string()];
        assert_eq!(
            redact(r#"{"a":"s3cr3t\u0026key\u003c\u003E"}"#, &s),
            r#"{"a":"<redacted>"}"#
        );
        assert_eq!(
            redact("<p>s3cr3t&amp;key&lt;&#62;</p> s3cr3t&#x26;key&lt;&gt;", &s),
            "<p><redacted></p> <redacted>"
        );
        assert_eq!(redact("s3cr3t&ampkey", &s), "s3cr3t&ampkey");
        // found by a review: leading zeros, no `;`, HTML5 names
        assert_eq!(
            redact(
                "s3cr3t&#x00000026;key&#0000060&gt; s3cr3t&AMP;key&lt;&#62",
                &s
            ),
            "<redacted> <redacted>"
        );
        let s = vec!["ab+c/d=e".to_string()];
        assert_eq!(redact("ab&plus;c&sol;d&equals;e", &s), "<redacted>");
        // .NET's and Go's encoders write `+` as `\u002B`
        let s = vec!["ab+cd/ef==".to_string()];
        assert_eq!(
            redact(r#"{"t":"ab\u002Bcd\/ef\u003d="}"#, &s),
            r#"{"t":"<redacted>"}"#
        );
    }

    /// One byte of a secret as a vendor might write it back: raw, percent-encoded (either
    /// hex case; `+` for a space), JSON-escaped (`\/`, `\u00XX`), or as an HTML
    /// character reference (named, decimal, hex).
    fn encode_byte(b: u8, how: u8) -> String {
        let c = b as char;
        match how % 8 {
            0 => c.to_string(),
            1 => format!("%{b:02X}"),
            2 => format!("%{b:02x}"),
            3 => format!("\\u{:04x}", b),
            4 => format!("\\u{:04X}", b),
            5 if b == b' ' => "+".into(),
            5 if matches!(c, '/' | '"' | '\\') => format!("\\{c}"),
            6 => format!("&#{b};"),
            7 => format!("&#x{b:x};"),
            _ => match c {
                '&' => "&amp;".into(),
                '<' => "&lt;".into(),
                '>' => "&gt;".into(),
                '"' => "&quot;".into(),
                _ => c.to_string(),
            },
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any secret (printable ASCII), each byte in any of the encodings above, inside
            /// any text, is gone after redaction (issue 13.2).
            #[test]
            fn redaction_removes_every_encoding_of_a_secret(
                secret in "[ -~]{3,40}",
                hows in proptest::collection::vec(0u8..8, 40),
                before in "\\PC{0,40}",
                after in "\\PC{0,40}",
            ) {
                let encoded: String = secret
                    .bytes()
                    .zip(hows.iter())
                    .map(|(b, h)| encode_byte(b, *h))
                    .collect();
                let text = format!("{before}{encoded}{after}");
                let out = redact(&text, std::slice::from_ref(&secret));
                prop_assert!(!out.contains(&encoded), "{text:?} -> {out:?}");
                prop_assert!(out.contains(request::REDACTED), "{text:?} -> {out:?}");
            }
        }
    }
}
