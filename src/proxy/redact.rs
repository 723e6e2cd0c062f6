//! Redaction (SPEC §8): no secret of a connection reaches a log, an answer or a page, in
//! any encoding a vendor may echo it in; inputs are logged bounded and without secrets.

use super::request;
use serde_json::Value;

/// The end of an occurrence of `secret` at `text[i..]`, matching each byte of the secret
/// as itself, as `%XX` (either case), as `+` for a space, as `\` + itself (JSON's `\"`,
/// `\\`, `\/`), as a JSON `\u00XX` escape, or as an HTML character reference (`&amp;`,
/// `&#38;`, `&#x26;`): so a vendor that echoes the credential in any URL, JSON or HTML
/// encoding of it is still caught. Where two spellings fit at one place (a `%` that is
/// itself or starts `%25`, a `u` that is itself or starts `\u0075`) each is tried.
pub(crate) fn encoded_match(text: &[u8], i: usize, secret: &[u8]) -> Option<usize> {
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
pub(crate) fn html_reference(text: &[u8], b: u8) -> Option<usize> {
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
pub const LOGGED_MESSAGE_CHARS: usize = 300;

/// Characters of one string value of an input the calls log keeps.
const LOGGED_STRING_CHARS: usize = 200;

/// Items of one array of an input the calls log keeps.
const LOGGED_ARRAY_ITEMS: usize = 20;

/// Bytes of an input the calls log keeps (the JSON text is cut there, ending in `…`).
const LOGGED_INPUT_BYTES: usize = 4096;

/// Whether an input field's name looks like it holds a secret: one of its words
/// (camelCase, snake_case, kebab-case split) is a secret word (`password`, `token`,
/// `secret`, `apiKey`, `authorization`, …).
pub(crate) fn secret_field(name: &str) -> bool {
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
pub fn secret_values(v: &Value, under: bool, out: &mut Vec<String>) {
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
    let forms = secret_forms(secrets);
    // each string is read only as far as its first 200 characters' redaction needs
    // (at most 4 bytes a character), however long the agent's value is
    let string = |s: &str| -> String {
        let (s, read_all) = redact_forms(s, &forms, LOGGED_STRING_CHARS * 4 + 1);
        if !read_all || s.chars().count() > LOGGED_STRING_CHARS {
            format!(
                "{}…",
                s.chars().take(LOGGED_STRING_CHARS).collect::<String>()
            )
        } else {
            s
        }
    };
    let (text, read_all) = redact_forms(
        &trim_value(input, &string).to_string(),
        &forms,
        LOGGED_INPUT_BYTES + 1,
    );
    if read_all && text.len() <= LOGGED_INPUT_BYTES {
        return text;
    }
    let mut end = LOGGED_INPUT_BYTES.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// [`logged_input`]'s walk: secret-looking fields redacted, strings (values and keys)
/// through `string`, arrays cut at 20 items.
pub(crate) fn trim_value(v: &Value, string: &dyn Fn(&str) -> String) -> Value {
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
pub(crate) fn secret_forms(secrets: &[String]) -> Vec<String> {
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
/// Where occurrences overlap (a password inside the base64 of `user:password`, two
/// secrets sharing characters), their whole span reads `<redacted>` once.
pub fn redact(text: &str, secrets: &[String]) -> String {
    redact_forms(text, &secret_forms(secrets), usize::MAX).0
}

/// [`redact`] with the forms made already, reading `text` only until `limit` bytes are
/// written: one pass, left to right, each place tried against every form, so the output
/// is always a prefix of the whole text's redaction and the work is bounded by `limit`
/// (plus the forms' encoded lengths read ahead), not by `text`'s length. Returns the
/// output and whether all of `text` was read.
pub(crate) fn redact_forms(text: &str, forms: &[String], limit: usize) -> (String, bool) {
    let bytes = text.as_bytes();
    if forms.is_empty() {
        let mut end = limit.min(bytes.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        return (text[..end].to_string(), end == bytes.len());
    }
    // the bytes an occurrence may start with: a form's first letter in either case, or
    // the start of an encoding of any byte
    let mut may_start = [false; 256];
    for b in [b'%', b'+', b'\\', b'&'] {
        may_start[usize::from(b)] = true;
    }
    for f in forms {
        let b = f.as_bytes()[0];
        may_start[usize::from(b.to_ascii_lowercase())] = true;
        may_start[usize::from(b.to_ascii_uppercase())] = true;
    }
    let match_end = |i: usize| -> Option<usize> {
        let first = bytes[i];
        if !may_start[usize::from(first)] {
            return None;
        }
        let any = matches!(first, b'%' | b'+' | b'\\' | b'&');
        forms
            .iter()
            .filter(|f| any || first.eq_ignore_ascii_case(&f.as_bytes()[0]))
            .filter_map(|f| encoded_match(bytes, i, f.as_bytes()))
            .max()
    };
    let mut out = Vec::with_capacity(bytes.len().min(limit).saturating_add(16));
    let mut i = 0;
    while i < bytes.len() {
        if out.len() >= limit {
            break;
        }
        match match_end(i) {
            Some(mut end) => {
                // an occurrence that starts inside this one and ends past it is taken in
                let mut j = i + 1;
                while j < end {
                    if let Some(e) = match_end(j) {
                        end = end.max(e);
                    }
                    j += 1;
                }
                out.extend_from_slice(request::REDACTED.as_bytes());
                i = end;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    // a stop inside a character: finish it, so the text stays whole
    while i < bytes.len() && !text.is_char_boundary(i) {
        out.push(bytes[i]);
        i += 1;
    }
    let read_all = i >= bytes.len();
    let out = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (out, read_all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

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
    fn a_long_value_is_read_only_as_far_as_the_log_keeps() {
        let secret = "tok-5531-abcdef".to_string();
        // a megabyte of text: only its start is read, and a secret that crosses the cut
        // at 200 characters is still hidden
        let mut big = "y".repeat(195);
        big.push_str(&secret);
        big.push_str(&"z".repeat(1 << 20));
        let text = logged_input(&json!({"content": big}), std::slice::from_ref(&secret));
        assert!(!text.contains("tok-") && text.contains("y<reda…"), "{text}");
        assert!(text.len() < 400, "{}", text.len());
        // overlapping occurrences of two secrets read <redacted> once, whole
        assert_eq!(
            redact("[abcdefghi]", &["abcdef".into(), "defghi".into()]),
            "[<redacted>]"
        );
        // a bounded read stops soon after the limit and says so
        let (part, read_all) = redact_forms(&"é".repeat(1000), &[], 11);
        assert_eq!((part.len(), read_all), (12, false));
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

            /// Read only until `limit` bytes are written, the redaction is a prefix of the
            /// whole text's, at least `limit` bytes long unless the whole text was read:
            /// a logged input cut after redaction keeps nothing the full redaction hides.
            #[test]
            fn a_bounded_redaction_is_a_prefix_of_the_whole(
                secrets in proptest::collection::vec("[a-c%+&#;x0-9]{3,8}", 1..3),
                text in "[a-c%+&#;x0-9é ]{0,200}",
                limit in 0usize..220,
            ) {
                let forms = secret_forms(&secrets);
                let whole = redact(&text, &secrets);
                let (part, read_all) = redact_forms(&text, &forms, limit);
                prop_assert!(whole.starts_with(&part), "{text:?}: {part:?} / {whole:?}");
                prop_assert!(read_all || part.len() >= limit);
                prop_assert_eq!(read_all, part == whole);
            }
        }
    }
}
