//! Security schemes (OpenAPI 3.x "Security Scheme Object", Swagger 2.0
//! `securityDefinitions`): the connection a document calls for (issue 14.5), the
//! parameters that carry an operation's credential (issue 25.2), and public operations.

use super::document::deref;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The connection a document's security schemes call for (issue 14.5), as
/// `(kind, header or query parameter name)`: `apiKey` in a header → `("header", name)`,
/// in the query → `("query", name)`; HTTP `bearer`, `oauth2` and `openIdConnect` →
/// `("bearer", None)`; HTTP `basic` (Swagger 2.0 `basic`) → `("basic", None)`. An API
/// key (pasted once) is preferred to HTTP auth, and that to OAuth (whose token comes
/// from a flow); among equals, the schemes the document's top-level `security` requires
/// come first, then the others in document order. `None` when no scheme is one Graft's
/// connections can send (a cookie, for instance). Follows OpenAPI 3.x "Security Scheme Object" and Swagger 2.0
/// `securityDefinitions`.
pub fn connection_hint(doc: &Value) -> Option<(&'static str, Option<String>)> {
    let schemes = doc
        .pointer("/components/securitySchemes")
        .or_else(|| doc.get("securityDefinitions"))
        .and_then(Value::as_object)?;
    let required: Vec<&str> = doc
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|r| r.keys().map(String::as_str))
        .collect();
    let ordered = required
        .iter()
        .filter_map(|n| schemes.get(*n))
        .chain(schemes.values());
    // (rank, kind, name): a key a person pastes beats a token from an OAuth flow
    let usable = |s: &Value| -> Option<(u8, &'static str, Option<String>)> {
        let field = |k: &str| s.get(k).and_then(Value::as_str);
        match field("type")? {
            "apiKey" => {
                let name = field("name").map(str::trim).filter(|n| !n.is_empty())?;
                match field("in")? {
                    "header" => Some((0, "header", Some(name.to_string()))),
                    "query" => Some((0, "query", Some(name.to_string()))),
                    _ => None,
                }
            }
            "http" => match field("scheme")?.to_ascii_lowercase().as_str() {
                "bearer" => Some((1, "bearer", None)),
                "basic" => Some((1, "basic", None)),
                _ => None,
            },
            "basic" => Some((1, "basic", None)),
            "oauth2" | "openIdConnect" => Some((2, "bearer", None)),
            _ => None,
        }
    };
    ordered
        .filter_map(|s| usable(deref(doc, s)))
        .enumerate()
        .min_by_key(|(i, (rank, _, _))| (*rank, *i))
        .map(|(_, (_, kind, name))| (kind, name))
}

/// The parameter each `apiKey` security scheme puts the credential in, by scheme name:
/// `(in, name lower-cased)` (OpenAPI 3.1 §4.8.27 "Security Scheme Object"; Swagger 2.0
/// `securityDefinitions`).
pub(super) fn scheme_params(doc: &Value) -> HashMap<String, (String, String)> {
    let mut out = HashMap::new();
    let schemes = doc
        .pointer("/components/securitySchemes")
        .or_else(|| doc.get("securityDefinitions"))
        .and_then(Value::as_object);
    for (scheme, s) in schemes.into_iter().flatten() {
        let s = deref(doc, s);
        if s.get("type").and_then(Value::as_str) == Some("apiKey") {
            if let (Some(n), Some(i)) = (
                s.get("name").and_then(Value::as_str),
                s.get("in").and_then(Value::as_str),
            ) {
                out.insert(scheme.clone(), (i.to_string(), n.to_ascii_lowercase()));
            }
        }
    }
    out
}

/// The parameters that carry the credential for one operation (issue 25.2): those of the
/// `apiKey` schemes its effective security requirement names (its own `security`, else
/// the document's; every alternative counted). Only a document that declares no
/// requirement anywhere lets every scheme's parameter count. A parameter that merely
/// looks like one (`key`, `token`) is an ordinary input.
pub(super) fn credential_params(
    doc: &Value,
    op: &Value,
    schemes: &HashMap<String, (String, String)>,
) -> HashSet<(String, String)> {
    let requirement = op.get("security").or_else(|| doc.get("security"));
    match requirement.and_then(Value::as_array) {
        Some(alternatives) => alternatives
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|r| r.keys())
            .filter_map(|name| schemes.get(name).cloned())
            .collect(),
        None => schemes.values().cloned().collect(),
    }
}

/// `found` and the parameters a person named, in each place a parameter can carry one.
pub(super) fn with_named(
    mut found: HashSet<(String, String)>,
    names: &[String],
) -> HashSet<(String, String)> {
    for n in names {
        for location in ["query", "header", "cookie"] {
            found.insert((location.to_string(), n.trim().to_ascii_lowercase()));
        }
    }
    found
}

/// Whether an operation declares that it needs no credential: its own `security` is an
/// empty list, or it has none and the document's top-level `security` is an empty list
/// (OpenAPI 3.1 §4.8.10 and §4.8.30; Swagger 2.0 alike). A document that declares no
/// `security` anywhere is not public: its connection is what the person set up.
pub fn is_public(doc: &Value, op: &Value) -> bool {
    let empty = |v: &Value| v.as_array().is_some_and(Vec::is_empty);
    match op.get("security") {
        Some(s) => empty(s),
        None => doc.get("security").is_some_and(empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::openapi::tests::plan;
    use crate::domain::tool::BodyEncoding;
    use serde_json::json;

    #[test]
    fn connection_hint_reads_security_schemes() {
        // the petstore document's schemes: OAuth first, an API key header second
        let petstore = json!({"openapi": "3.0.2", "info": {"title": "p", "version": "1"}, "paths": {},
            "components": {"securitySchemes": {
                "petstore_auth": {"type": "oauth2", "flows": {"implicit": {"authorizationUrl": "https://x/", "scopes": {}}}},
                "api_key": {"type": "apiKey", "name": "api_key", "in": "header"}}}});
        assert_eq!(
            connection_hint(&petstore),
            Some(("header", Some("api_key".into())))
        );
        let doc = |schemes: Value, security: Value| {
            json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},
                   "components": {"securitySchemes": schemes}, "security": security})
        };
        let bearer = json!({"type": "http", "scheme": "Bearer"});
        let basic = json!({"type": "http", "scheme": "basic"});
        let query = json!({"type": "apiKey", "in": "query", "name": "key"});
        let cookie = json!({"type": "apiKey", "in": "cookie", "name": "sid"});
        let oauth = json!({"type": "oauth2", "flows": {}});
        // the required one first among equals; a key beats HTTP auth beats OAuth
        assert_eq!(
            connection_hint(&doc(json!({"a": basic, "b": bearer}), json!([{"b": []}]))),
            Some(("bearer", None))
        );
        assert_eq!(
            connection_hint(&doc(json!({"a": basic, "b": bearer}), json!([]))),
            Some(("basic", None))
        );
        assert_eq!(
            connection_hint(&doc(json!({"o": oauth, "q": query}), json!([{"o": []}]))),
            Some(("query", Some("key".into())))
        );
        assert_eq!(
            connection_hint(&doc(json!({"o": oauth}), json!([]))),
            Some(("bearer", None))
        );
        // nothing Graft can send, and no schemes at all
        assert_eq!(connection_hint(&doc(json!({"c": cookie}), json!([]))), None);
        assert_eq!(
            connection_hint(&json!({"openapi": "3.0.0", "paths": {}})),
            None
        );
        // Swagger 2.0, through a $ref-free securityDefinitions
        let swagger = json!({"swagger": "2.0", "paths": {},
            "securityDefinitions": {"b": {"type": "basic"}, "k": {"type": "apiKey", "in": "header", "name": "X-Key"}}});
        assert_eq!(
            connection_hint(&swagger),
            Some(("header", Some("X-Key".into())))
        );
    }

    #[test]
    fn swagger2_form_data_and_an_ordinary_token_parameter() {
        // issue 25.2: Slack's `token` is declared as an ordinary parameter (its security
        // scheme is OAuth), so it stays an input; only a scheme's own parameter is the
        // credential's place
        let p = plan(json!({
            "swagger": "2.0", "host": "slack.test", "basePath": "/api", "schemes": ["https"],
            "securityDefinitions": {"oauth": {"type": "oauth2"}, "k": {"type": "apiKey", "in": "query", "name": "api_key"}},
            "paths": {"/chat.postMessage": {"post": {"operationId": "chat_postMessage", "consumes": ["application/x-www-form-urlencoded"],
                "parameters": [
                    {"name": "token", "in": "header", "required": true, "type": "string"},
                    {"name": "key", "in": "query", "type": "string"},
                    {"name": "API_KEY", "in": "query", "type": "string"},
                    {"name": "channel", "in": "formData", "required": true, "type": "string"}
                ]}}}
        }));
        assert_eq!(p.base_url.as_deref(), Some("https://slack.test/api"));
        let t = &p.tools[0];
        assert!(t.input_schema["properties"].get("token").is_some());
        assert!(t.input_schema["properties"].get("key").is_some());
        assert!(t.input_schema["properties"].get("API_KEY").is_none());
        assert_eq!(
            t.binding.credential_params,
            vec![("query".to_string(), "API_KEY".to_string())]
        );
        assert_eq!(t.binding.body, Some(BodyEncoding::Form));
        assert_eq!(t.input_schema["required"], json!(["token", "channel"]));
        assert!(!t.binding.public);
    }

    #[test]
    fn only_the_operations_own_schemes_name_credential_parameters() {
        // issue 25 review: a scheme other operations use does not make `key` the
        // credential of an operation whose security is bearer only
        let p = plan(json!({
            "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
            "components": {"securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "legacy": {"type": "apiKey", "in": "query", "name": "key"}}},
            "security": [{"bearer": []}],
            "paths": {
                "/sorted": {"get": {"operationId": "sorted", "parameters": [{"name": "key", "in": "query", "schema": {"type": "string"}}]}},
                "/legacy": {"get": {"operationId": "legacy", "security": [{"legacy": []}], "parameters": [{"name": "key", "in": "query", "schema": {"type": "string"}}]}}
            }
        }));
        let t = |n: &str| p.tools.iter().find(|t| t.name == n).unwrap();
        assert!(t("sorted").input_schema["properties"].get("key").is_some());
        assert!(t("sorted").binding.credential_params.is_empty());
        assert!(t("legacy").input_schema["properties"].get("key").is_none());
        assert_eq!(
            t("legacy").binding.credential_params,
            vec![("query".to_string(), "key".to_string())]
        );
    }

    #[test]
    fn an_empty_security_list_makes_an_operation_public() {
        let p = plan(json!({
            "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
            "components": {"securitySchemes": {"b": {"type": "http", "scheme": "bearer"}}},
            "security": [{"b": []}],
            "paths": {
                "/health": {"get": {"operationId": "health", "security": []}},
                "/me": {"get": {"operationId": "me"}},
                "/maybe": {"get": {"operationId": "maybe", "security": [{}, {"b": []}]}}
            }
        }));
        let public = |n: &str| p.tools.iter().find(|t| t.name == n).unwrap().binding.public;
        assert!(public("health"));
        assert!(!public("me"));
        assert!(!public("maybe"));
        let p = plan(json!({
            "openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "security": [],
            "paths": {"/a": {"get": {"operationId": "a"}}, "/b": {"get": {"operationId": "b", "security": [{"k": []}]}}}
        }));
        assert!(p.tools[0].binding.public && !p.tools[1].binding.public);
    }
}
