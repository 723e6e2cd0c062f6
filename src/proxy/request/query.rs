//! The query string and form-encoded bodies: parameters with no declared style
//! (arrays repeated, objects nested as `a[b]=c`, as Stripe reads them) or serialized as
//! declared (OpenAPI 3.1 §4.8.12.4 "Style Examples": form, space- and pipe-delimited,
//! deepObject), each name and item form-urlencoded on its own.

use super::params::{flat_pairs, item_text, scalar_text};
use crate::domain::tool::{ParamStyle, Style};
use serde_json::Value;

/// Flattens a value into `(key, text)` pairs with `a[b]` / `a[0]` nesting; `null` is
/// left out.
pub(super) fn flatten_nested(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Null => {}
        Value::Object(m) => {
            for (k, sub) in m {
                flatten_nested(&format!("{prefix}[{k}]"), sub, out);
            }
        }
        Value::Array(a) => {
            for (i, sub) in a.iter().enumerate() {
                flatten_nested(&format!("{prefix}[{i}]"), sub, out);
            }
        }
        other => out.push((prefix.to_string(), scalar_text(other).unwrap_or_default())),
    }
}

/// Query pairs of one parameter with no declared style (authored tools, versions
/// imported before styles were kept): form + explode for arrays, deepObject for objects.
pub(super) fn query_pairs(name: &str, v: &Value, out: &mut Vec<QueryPart>) {
    match v {
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            for x in a {
                if let Some(t) = scalar_text(x) {
                    out.push(QueryPart::one(name, t));
                }
            }
        }
        other => {
            let mut pairs = Vec::new();
            flatten_nested(name, other, &mut pairs);
            out.extend(pairs.into_iter().map(|(k, t)| QueryPart::one(&k, t)));
        }
    }
}

/// One query parameter as sent: `name=item<delim>item…`, each of `name` and the items
/// form-urlencoded on its own and the delimiter written as it is, so that a delimiter
/// inside a value (`a,b` as one item of a comma-joined list) stays told apart from the
/// one between items (OpenAPI 3.1 §4.8.12.4: `color=blue,black,brown`,
/// `color=blue%20black%20brown`, `color=blue|black|brown`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct QueryPart {
    pub(super) name: String,
    items: Vec<String>,
    delim: &'static str,
}

impl QueryPart {
    pub(super) fn one(name: &str, value: String) -> Self {
        Self {
            name: name.to_string(),
            items: vec![value],
            delim: "",
        }
    }

    pub(super) fn encoded(&self) -> String {
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let items: Vec<String> = self.items.iter().map(|i| enc(i)).collect();
        format!("{}={}", enc(&self.name), items.join(self.delim))
    }
}

/// The delimiter of a non-exploded array in a query (`%20` and `%09` already encoded).
fn query_delim(style: Style) -> &'static str {
    match style {
        Style::SpaceDelimited => "%20",
        Style::PipeDelimited => "|",
        Style::TabDelimited => "%09",
        _ => ",",
    }
}

/// A query parameter serialized as declared (OpenAPI 3.1 §4.8.12.4 "Style Examples").
pub(super) fn styled_query(name: &str, v: &Value, st: ParamStyle, out: &mut Vec<QueryPart>) {
    match v {
        Value::Null => {}
        _ if st.style == Style::Json => out.push(QueryPart::one(name, v.to_string())),
        // arrays have no deepObject form in OpenAPI: nested with indexes, `a[0]=x`, as
        // Stripe reads them
        Value::Array(_) if st.style == Style::DeepObject => {
            let mut pairs = Vec::new();
            flatten_nested(name, v, &mut pairs);
            out.extend(pairs.into_iter().map(|(k, t)| QueryPart::one(&k, t)));
        }
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .filter(|i| !i.is_null())
                .map(item_text)
                .collect();
            if st.explode {
                out.extend(items.into_iter().map(|i| QueryPart::one(name, i)));
            } else if !items.is_empty() {
                out.push(QueryPart {
                    name: name.to_string(),
                    items,
                    delim: query_delim(st.style),
                });
            }
        }
        Value::Object(m) => match st.style {
            Style::DeepObject => {
                let mut pairs = Vec::new();
                flatten_nested(name, v, &mut pairs);
                out.extend(pairs.into_iter().map(|(k, t)| QueryPart::one(&k, t)));
            }
            _ if st.explode => {
                for (k, x) in m.iter().filter(|(_, x)| !x.is_null()) {
                    out.push(QueryPart::one(k, item_text(x)));
                }
            }
            _ => {
                let items = flat_pairs(m);
                if !items.is_empty() {
                    out.push(QueryPart {
                        name: name.to_string(),
                        items,
                        delim: query_delim(st.style),
                    });
                }
            }
        },
        other => out.push(QueryPart::one(name, item_text(other))),
    }
}
