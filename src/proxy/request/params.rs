//! Path, header and cookie parameters: each value as the text it is sent as, serialized
//! as declared (OpenAPI 3.1 §4.8.12.4 "Style Values"; Swagger 2.0 `collectionFormat`),
//! encoded (RFC 3986 path segments, RFC 6265 cookie octets), or refused with a sentence
//! (a path value that could leave its segment, a header value HTTP cannot carry).

use crate::domain::tool::{ParamStyle, Style};
use serde_json::{Map, Value};

const PATH_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

pub(super) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A path parameter's value, or why it is refused.
pub(super) fn path_value(name: &str, v: &Value) -> Result<String, String> {
    let text = match v {
        Value::Array(items) => items
            .iter()
            .map(|i| scalar_text(i).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(","),
        other => scalar_text(other)
            .ok_or_else(|| format!("path parameter {name:?} must be a string or number"))?,
    };
    let lower = text.to_ascii_lowercase();
    let escapes = [
        "/", "\\", "?", "#", "%2f", "%5c", "%3f", "%23", "%2e", "%00",
    ];
    // `.;x` is a dot segment to servers that read `;` as starting path parameters
    let head = text.split(';').next().unwrap_or("");
    if text.is_empty() || matches!(head, "." | "..") || escapes.iter().any(|e| lower.contains(e)) {
        return Err(format!(
            "path parameter {name:?} = {text:?} is refused: a path value may not be empty, '.' or '..', or hold '/', '\\\\', '?', '#' or their encoded forms"
        ));
    }
    Ok(percent_encoding::utf8_percent_encode(&text, PATH_SEGMENT).to_string())
}

/// The text of an array item or object property value in a styled parameter: scalars
/// as they are, anything nested as its JSON text (OpenAPI defines no style for nesting).
pub(super) fn item_text(v: &Value) -> String {
    scalar_text(v).unwrap_or_else(|| v.to_string())
}

/// An object's properties as `[k1, v1, k2, v2, …]`, `null` values left out.
pub(super) fn flat_pairs(m: &Map<String, Value>) -> Vec<String> {
    m.iter()
        .filter(|(_, v)| !v.is_null())
        .flat_map(|(k, v)| [k.clone(), item_text(v)])
        .collect()
}

/// A path parameter serialized as declared (`simple`, `label`, `matrix`; Swagger 2.0's
/// delimited formats join with their delimiter), each value checked and encoded as
/// [`path_value`] does; `name` is the parameter's name (matrix writes it).
pub(super) fn styled_path(name: &str, v: &Value, st: ParamStyle) -> Result<String, String> {
    if st.style == Style::Json {
        return path_value(name, &Value::String(v.to_string()));
    }
    // label style separates with `.`, which a path segment otherwise keeps as it is
    let label = st.style == Style::Label;
    let one = |x: &Value| {
        path_value(name, &Value::String(item_text(x))).map(|t| {
            if label {
                t.replace('.', "%2E")
            } else {
                t
            }
        })
    };
    let (lead, sep, kv) = match st.style {
        Style::Label => (".", if st.explode { "." } else { "," }, "="),
        Style::Matrix => (";", if st.explode { ";" } else { "," }, "="),
        Style::SpaceDelimited => ("", "%20", "="),
        Style::PipeDelimited => ("", "|", "="),
        Style::TabDelimited => ("", "%09", "="),
        _ => ("", ",", "="),
    };
    let matrix = st.style == Style::Matrix;
    let named = |body: String| {
        if matrix {
            format!(";{name}={body}")
        } else {
            format!("{lead}{body}")
        }
    };
    match v {
        Value::Array(items) => {
            let parts = items.iter().map(one).collect::<Result<Vec<_>, _>>()?;
            if parts.is_empty() {
                return Err(format!("path parameter {name:?} may not be an empty list"));
            }
            Ok(if matrix && st.explode {
                parts.iter().map(|p| format!(";{name}={p}")).collect()
            } else {
                named(parts.join(sep))
            })
        }
        Value::Object(m) => {
            let mut parts = Vec::new();
            for (k, x) in m.iter().filter(|(_, x)| !x.is_null()) {
                let (k, x) = (one(&Value::String(k.clone()))?, one(x)?);
                parts.push(if st.explode {
                    format!("{k}{kv}{x}")
                } else {
                    format!("{k},{x}")
                });
            }
            if parts.is_empty() {
                return Err(format!(
                    "path parameter {name:?} may not be an empty object"
                ));
            }
            Ok(if matrix && st.explode {
                format!(";{}", parts.join(";"))
            } else {
                named(parts.join(sep))
            })
        }
        other => Ok(named(one(other)?)),
    }
}

/// A header parameter's value serialized as declared (`simple`: arrays `a,b`, objects
/// `k,v` or exploded `k=v`; Swagger 2.0's delimited formats by their delimiter).
pub(super) fn styled_header(name: &str, v: &Value, st: ParamStyle) -> Result<String, String> {
    if st.style == Style::Json {
        return header_value(name, &Value::String(v.to_string()));
    }
    let sep = match st.style {
        Style::SpaceDelimited => " ",
        Style::PipeDelimited => "|",
        Style::TabDelimited => "\t",
        _ => ",",
    };
    let text = match v {
        Value::Array(items) => items
            .iter()
            .filter(|i| !i.is_null())
            .map(item_text)
            .collect::<Vec<_>>()
            .join(sep),
        Value::Object(m) if st.explode => m
            .iter()
            .filter(|(_, x)| !x.is_null())
            .map(|(k, x)| format!("{k}={}", item_text(x)))
            .collect::<Vec<_>>()
            .join(sep),
        Value::Object(m) => flat_pairs(m).join(sep),
        other => item_text(other),
    };
    header_value(name, &Value::String(text))
}

/// Cookie pairs of a parameter serialized as declared (`form`: arrays `name=a,b` or,
/// exploded, one `name=a` per item; objects `name=k,v` or exploded `k=v` each).
pub(super) fn styled_cookie(
    name: &str,
    v: &Value,
    st: ParamStyle,
    out: &mut Vec<(String, String)>,
) -> Result<(), String> {
    let enc = |t: String| cookie_value(name, &Value::String(t));
    match v {
        Value::Null => {}
        _ if st.style == Style::Json => out.push((name.to_string(), enc(v.to_string())?)),
        Value::Array(items) if st.explode => {
            for i in items.iter().filter(|i| !i.is_null()) {
                out.push((name.to_string(), enc(item_text(i))?));
            }
        }
        Value::Array(items) => {
            let texts: Vec<String> = items
                .iter()
                .filter(|i| !i.is_null())
                .map(|i| enc(item_text(i)))
                .collect::<Result<_, _>>()?;
            out.push((name.to_string(), texts.join(",")));
        }
        Value::Object(m) if st.explode => {
            for (k, x) in m.iter().filter(|(_, x)| !x.is_null()) {
                if !crate::domain::tool::is_header_token(k) {
                    return Err(format!("cookie {name:?}: {k:?} is not a valid cookie name"));
                }
                out.push((k.clone(), enc(item_text(x))?));
            }
        }
        Value::Object(m) => {
            let texts: Vec<String> = flat_pairs(m)
                .into_iter()
                .map(enc)
                .collect::<Result<_, _>>()?;
            out.push((name.to_string(), texts.join(",")));
        }
        other => out.push((name.to_string(), enc(item_text(other))?)),
    }
    Ok(())
}

/// Bytes a cookie value may hold as they are (RFC 6265 §4.1.1 `cookie-octet`); the
/// rest is percent-encoded.
const COOKIE_OCTET: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b',')
    .add(b';')
    .add(b'\\')
    .add(b'%');

/// An array's scalar items as text joined by `,` (OpenAPI `style: simple` and `form`
/// without explode); objects and nulls inside it are left out.
fn comma_joined(items: &[Value]) -> String {
    items
        .iter()
        .filter_map(scalar_text)
        .collect::<Vec<_>>()
        .join(",")
}

/// A cookie parameter's value (OpenAPI `style: form`: arrays joined by `,`, which is
/// then encoded), or why it is refused.
pub(super) fn cookie_value(name: &str, v: &Value) -> Result<String, String> {
    let text = match v {
        Value::Array(a) => comma_joined(a),
        Value::Object(_) => {
            return Err(format!("cookie {name:?} must be a string, number or list"))
        }
        other => scalar_text(other).unwrap_or_default(),
    };
    Ok(percent_encoding::utf8_percent_encode(&text, COOKIE_OCTET).to_string())
}

pub(super) fn header_value(name: &str, v: &Value) -> Result<String, String> {
    let text = match v {
        Value::Array(a) => comma_joined(a),
        Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| [k.clone(), scalar_text(x).unwrap_or_default()])
            .collect::<Vec<_>>()
            .join(","),
        other => scalar_text(other).unwrap_or_default(),
    };
    // HTAB is allowed in a field value (RFC 9110 §5.5), other controls are not
    if text.chars().any(|c| c.is_control() && c != '\t') {
        return Err(format!(
            "header {name:?} may not contain control characters"
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use crate::domain::tool::{Binding, ParamStyle, Style};
    use crate::proxy::request::tests::{binding, input, op};
    use crate::proxy::request::{build, Credential};
    use serde_json::{json, Map, Value};

    #[test]
    fn path_values_cannot_escape() {
        let b = binding();
        let op = op("GET", "/items/{id}", &b);
        for bad in [
            "../admin", "..", "a/b", "a?b", "a#b", "%2e%2e", "a%2Fb", ".", ".;x", "..;/",
        ] {
            let e = build(
                "https://api.test/v1",
                op,
                &input(json!({"id": bad})),
                &Credential::None,
            );
            assert!(e.is_err(), "{bad} accepted");
        }
        let ok = build(
            "https://api.test/v1",
            op,
            &input(json!({"id": "a..b"})),
            &Credential::None,
        )
        .unwrap();
        assert_eq!(ok.url.path(), "/v1/items/a..b");
    }

    /// Issue 25.8 and 25.9: every OpenAPI style a parameter may declare, read back from
    /// the request Graft builds by a reference reading of OpenAPI 3.1 §4.8.12.4 ("Style
    /// Values" and "Style Examples"), gives the values the agent sent.
    mod styles {
        use super::*;
        use proptest::prelude::*;
        use std::collections::BTreeMap;

        #[derive(Debug, Clone, PartialEq)]
        enum Shape {
            Scalar(String),
            List(Vec<String>),
            Object(BTreeMap<String, String>),
        }

        impl Shape {
            fn json(&self) -> Value {
                match self {
                    Shape::Scalar(s) => Value::String(s.clone()),
                    Shape::List(l) => serde_json::json!(l),
                    Shape::Object(m) => serde_json::json!(m),
                }
            }
        }

        fn decode_form(s: &str) -> String {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        }

        fn decode_pct(s: &str) -> String {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .unwrap()
                .into_owned()
        }

        fn pairs_of(items: Vec<String>) -> BTreeMap<String, String> {
            items
                .chunks(2)
                .map(|kv| (kv[0].clone(), kv.get(1).cloned().unwrap_or_default()))
                .collect()
        }

        fn eq_pairs(parts: Vec<&str>, decode: &dyn Fn(&str) -> String) -> BTreeMap<String, String> {
            parts
                .into_iter()
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap();
                    (decode(k), decode(v))
                })
                .collect()
        }

        /// The reference reading of a query parameter `p` of `kind` (0 scalar, 1 list,
        /// 2 object) from a raw query string.
        fn read_query(raw: &str, st: ParamStyle, kind: u8) -> Shape {
            let pairs: Vec<(String, &str)> = raw
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap();
                    (decode_form(k), v)
                })
                .collect();
            read_pairs(&pairs, st, kind, &decode_form)
        }

        /// The reference reading of a form-style parameter `p` (a query's or a cookie's)
        /// of `kind` from its `(name, raw value)` pairs, each value read by `decode`.
        fn read_pairs(
            pairs: &[(String, &str)],
            st: ParamStyle,
            kind: u8,
            decode: &dyn Fn(&str) -> String,
        ) -> Shape {
            let delim = match st.style {
                Style::SpaceDelimited => "%20",
                Style::PipeDelimited => "|",
                _ => ",",
            };
            let own = || pairs.iter().filter(|(k, _)| k == "p").map(|(_, v)| *v);
            match kind {
                0 => Shape::Scalar(decode(own().next().unwrap())),
                1 if st.explode || st.style == Style::DeepObject => {
                    Shape::List(own().map(decode).collect())
                }
                1 => Shape::List(own().next().unwrap().split(delim).map(decode).collect()),
                _ if st.style == Style::DeepObject => Shape::Object(
                    pairs
                        .iter()
                        .map(|(k, v)| {
                            let key = k
                                .strip_prefix("p[")
                                .and_then(|k| k.strip_suffix(']'))
                                .unwrap();
                            (key.to_string(), decode(v))
                        })
                        .collect(),
                ),
                _ if st.explode => {
                    Shape::Object(pairs.iter().map(|(k, v)| (k.clone(), decode(v))).collect())
                }
                _ => Shape::Object(pairs_of(
                    own().next().unwrap().split(delim).map(decode).collect(),
                )),
            }
        }

        /// The reference reading of a path parameter `p` from the raw path segment.
        fn read_path(raw: &str, st: ParamStyle, kind: u8) -> Shape {
            let (body, sep) = match st.style {
                Style::Label => (
                    raw.strip_prefix('.').unwrap(),
                    if st.explode { "." } else { "," },
                ),
                Style::Matrix if st.explode && kind == 2 => (raw.strip_prefix(';').unwrap(), ";"),
                Style::Matrix if st.explode && kind == 1 => {
                    let items = raw
                        .split(';')
                        .skip(1)
                        .map(|p| decode_pct(p.strip_prefix("p=").unwrap()))
                        .collect();
                    return Shape::List(items);
                }
                Style::Matrix => (raw.strip_prefix(";p=").unwrap(), ","),
                _ => (raw, ","),
            };
            match kind {
                0 => Shape::Scalar(decode_pct(body)),
                1 => Shape::List(body.split(sep).map(decode_pct).collect()),
                _ if st.explode => Shape::Object(eq_pairs(body.split(sep).collect(), &decode_pct)),
                _ => Shape::Object(pairs_of(body.split(sep).map(decode_pct).collect())),
            }
        }

        fn read_header(raw: &str, st: ParamStyle, kind: u8) -> Shape {
            match kind {
                0 => Shape::Scalar(raw.to_string()),
                1 => Shape::List(raw.split(',').map(str::to_string).collect()),
                _ if st.explode => {
                    Shape::Object(eq_pairs(raw.split(',').collect(), &|s| s.to_string()))
                }
                _ => Shape::Object(pairs_of(raw.split(',').map(str::to_string).collect())),
            }
        }

        fn read_cookie(raw: &str, st: ParamStyle, kind: u8) -> Shape {
            let pairs: Vec<(String, &str)> = raw
                .split("; ")
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap();
                    (k.to_string(), v)
                })
                .collect();
            read_pairs(&pairs, st, kind, &decode_pct)
        }

        /// Text a value may hold in each place: anything printable but a tab in the
        /// query and in cookies; no `/ \\ ? # %` in the path (those are refused there);
        /// a plain token in headers, where values are not encoded.
        fn text_for(location: &'static str) -> BoxedStrategy<String> {
            match location {
                "query" | "cookie" => "[ -~é]{0,6}".boxed(),
                "path" => "[A-Za-z0-9][A-Za-z0-9 ,;=|.~_-]{0,4}[A-Za-z0-9]?".boxed(),
                _ => "[A-Za-z0-9_.-]{1,6}".boxed(),
            }
        }

        fn shape(location: &'static str, kind: u8) -> BoxedStrategy<Shape> {
            let keys = "[a-z]{1,5}";
            match kind {
                0 => text_for(location).prop_map(Shape::Scalar).boxed(),
                1 => proptest::collection::vec(text_for(location), 1..4)
                    .prop_map(Shape::List)
                    .boxed(),
                _ => proptest::collection::btree_map(keys, text_for(location), 1..4)
                    .prop_map(Shape::Object)
                    .boxed(),
            }
        }

        fn declaration() -> impl Strategy<Value = (&'static str, ParamStyle, u8)> {
            let styles = |location: &'static str| -> Vec<Style> {
                match location {
                    "query" => vec![
                        Style::Form,
                        Style::SpaceDelimited,
                        Style::PipeDelimited,
                        Style::DeepObject,
                    ],
                    "path" => vec![Style::Simple, Style::Label, Style::Matrix],
                    "cookie" => vec![Style::Form],
                    _ => vec![Style::Simple],
                }
            };
            prop_oneof![Just("query"), Just("path"), Just("header"), Just("cookie")]
                .prop_flat_map(move |location| {
                    (
                        Just(location),
                        proptest::sample::select(styles(location)),
                        any::<bool>(),
                        0u8..3,
                    )
                })
                .prop_filter(
                    "a style OpenAPI defines for the value",
                    |(_, style, explode, kind)| {
                        match style {
                            // deepObject is for objects; delimited styles for lists and objects
                            Style::DeepObject => *kind == 2 && *explode,
                            Style::SpaceDelimited | Style::PipeDelimited => *kind != 0 && !*explode,
                            _ => true,
                        }
                    },
                )
                .prop_map(|(location, style, explode, kind)| {
                    (location, ParamStyle { style, explode }, kind)
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]
            #[test]
            fn every_declared_style_reads_back_to_the_values_sent(
                (location, st, kind, value) in declaration().prop_flat_map(|(location, st, kind)| {
                    (Just(location), Just(st), Just(kind), shape(location, kind))
                })
            ) {
                let mut b = Binding::default();
                match location {
                    "path" => { b.path.insert("p".into(), "p".into()); }
                    "query" => { b.query.insert("p".into(), "p".into()); }
                    "header" => { b.headers.insert("p".into(), "X-P".into()); }
                    _ => { b.cookies.insert("p".into(), "p".into()); }
                }
                b.styles.insert("p".into(), st);
                let template = if location == "path" { "/x/{p}" } else { "/x" };
                let op = op("GET", template, &b);
                let mut input = Map::new();
                input.insert("p".into(), value.json());
                let r = build("https://api.test", op, &input, &Credential::None)
                    .map_err(|e| TestCaseError::fail(format!("{value:?}: {e}")))?;
                let header = |name: &str| r.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
                let back = match location {
                    "query" => read_query(r.url.query().unwrap_or(""), st, kind),
                    "path" => read_path(r.url.path().strip_prefix("/x/").unwrap(), st, kind),
                    "header" => read_header(&header("X-P").unwrap(), st, kind),
                    _ => read_cookie(&header("Cookie").unwrap(), st, kind),
                };
                prop_assert_eq!(&back, &value, "{} {:?}: {}", location, st, r.url);
            }
        }
    }
}
