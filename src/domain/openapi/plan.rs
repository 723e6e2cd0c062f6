//! The import plan (issue 2 item 4, issue 14.3): every operation of a document drafted
//! and named for the vendor (SPEC §2), the ones already in the toolbox under their tools'
//! names, and the ones left out with why; or one operation's draft, for `acquire`.

use super::document::{base_url, operation_key, operations, spec_version};
use super::input::OpCtx;
use super::security::{credential_params, scheme_params, with_named};
use crate::domain::names::{self, VendorSlug};
use crate::domain::tool::ToolDraft;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

/// One operation of a document that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `operationId`, or `METHOD /path`.
    pub operation: String,
    /// A sentence saying why.
    pub reason: String,
}

/// What importing a document will do; nothing is stored yet.
#[derive(Debug, Clone, Default)]
pub struct ImportPlan {
    /// The base URL the document declares (first server / `schemes`+`host`+`basePath`).
    pub base_url: Option<String>,
    /// One draft per importable operation not yet in the toolbox, in document order.
    pub tools: Vec<ToolDraft>,
    /// One draft per importable operation already in the toolbox, under its tool's name
    /// (a re-import compares them with the tools' current versions).
    pub existing: Vec<ToolDraft>,
    /// `(operation, name)` for each tool whose name is not the plain snake case of its
    /// operation (shortened or told apart from another).
    pub renamed: Vec<(String, String)>,
    /// Operations left out, with reasons.
    pub skipped: Vec<Skipped>,
    /// Every operation seen.
    pub total_operations: usize,
}

/// Plans the import of `doc` for `vendor`.
///
/// `taken(name)` says whether a name is already used in this vendor's toolbox;
/// `imported` maps the operation keys already in the toolbox to their tools' names: those
/// operations are drafted under that name into [`ImportPlan::existing`], for the caller
/// to compare (a re-import, issue 14.3). `progress(done, total)` is
/// called after each operation. Errors: the document is not OpenAPI 2.0/3.x or has no
/// `paths`.
pub fn plan_import(
    doc: &Value,
    vendor: &VendorSlug,
    taken: &dyn Fn(&str) -> bool,
    imported: &HashMap<String, String>,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<ImportPlan, String> {
    plan_import_with(doc, vendor, taken, imported, &[], progress)
}

/// [`plan_import`] where the parameters named in `credential_names` (case-insensitive,
/// in the query, a header or a cookie) carry the connection's secret as a security
/// scheme's would: a person said so for a document that declares its credential as an
/// ordinary parameter (Slack's `token`; issue 25.2).
pub fn plan_import_with(
    doc: &Value,
    vendor: &VendorSlug,
    taken: &dyn Fn(&str) -> bool,
    imported: &HashMap<String, String>,
    credential_names: &[String],
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<ImportPlan, String> {
    let version = spec_version(doc)?;
    if !doc.get("paths").is_some_and(Value::is_object) {
        return Err("the document has no \"paths\" object".into());
    }
    let ops = operations(doc);
    let mut plan = ImportPlan {
        base_url: base_url(doc),
        total_operations: ops.len(),
        ..Default::default()
    };
    let schemes = scheme_params(doc);
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut keys: HashSet<String> = HashSet::new();
    for (i, (method, path, item, op)) in ops.iter().enumerate() {
        let mut key = operation_key(op, method, path);
        if !keys.insert(key.clone()) {
            // an operationId used twice: the second is known by its method and path, so
            // that a re-import finds each operation's own tool
            key = format!("{} {path}", method.to_ascii_uppercase());
            keys.insert(key.clone());
        }
        if method == "trace" {
            plan.skipped.push(Skipped {
                operation: key,
                reason: "TRACE operations are not imported".into(),
            });
        } else {
            let credentials = with_named(credential_params(doc, op, &schemes), credential_names);
            let ctx = OpCtx {
                doc,
                version,
                credentials: &credentials,
            };
            match ctx.draft(method, path, item, op) {
                Ok(mut draft) if imported.contains_key(&key) => {
                    draft.name = imported[&key].clone();
                    draft.operation_id = Some(key);
                    plan.existing.push(draft);
                }
                Ok(mut draft) => {
                    let is_taken = |n: &str| used.contains(n) || taken(n);
                    let (name, renamed) = names::tool_name_for(vendor, &key, &is_taken);
                    if renamed {
                        plan.renamed.push((key.clone(), name.to_string()));
                    }
                    used.insert(name.to_string());
                    draft.name = name.to_string();
                    draft.operation_id = Some(key);
                    plan.tools.push(draft);
                }
                Err(reason) => plan.skipped.push(Skipped {
                    operation: key,
                    reason,
                }),
            }
        }
        progress(i + 1, ops.len());
    }
    Ok(plan)
}

/// A draft for one operation of `doc`, found by its operation key (`operationId`, or
/// `METHOD /path`), named for `vendor` (avoiding names `taken` says are used).
/// Errors: no such operation, or one that cannot become a tool (with why).
pub fn draft_operation(
    doc: &Value,
    vendor: &VendorSlug,
    key: &str,
    taken: &dyn Fn(&str) -> bool,
    credential_names: &[String],
) -> Result<ToolDraft, String> {
    let version = spec_version(doc)?;
    let schemes = scheme_params(doc);
    for (method, path, item, op) in operations(doc) {
        if operation_key(op, &method, &path) != key {
            continue;
        }
        if method == "trace" {
            return Err("TRACE operations are not imported".into());
        }
        let credentials = with_named(credential_params(doc, op, &schemes), credential_names);
        let ctx = OpCtx {
            doc,
            version,
            credentials: &credentials,
        };
        let mut d = ctx.draft(&method, &path, item, op)?;
        let (name, _) = names::tool_name_for(vendor, key, taken);
        d.name = name.to_string();
        d.operation_id = Some(key.to_string());
        return Ok(d);
    }
    Err(format!(
        "the vendor's stored OpenAPI document has no operation {key:?}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reimport_drafts_known_operations_under_their_names_and_bad_documents_error() {
        let v = VendorSlug::parse("acme").unwrap();
        let doc = json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": "a"}}, "/b": {"get": {"operationId": "b"}}}});
        let known: HashMap<String, String> = [("a".to_string(), "old_name".to_string())].into();
        let p = plan_import(&doc, &v, &|n| n == "old_name", &known, &mut |_, _| {}).unwrap();
        assert_eq!(
            p.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["b"]
        );
        assert_eq!(p.existing.len(), 1);
        assert_eq!(p.existing[0].name, "old_name");
        assert_eq!(p.existing[0].operation_id.as_deref(), Some("a"));
        assert!(p.skipped.is_empty());
        // an operationId used twice: the second is known by method and path, so each
        // operation finds its own tool again
        let dup = json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": "dup"}}, "/b": {"get": {"operationId": "dup"}}}});
        let first = plan_import(&dup, &v, &|_| false, &HashMap::new(), &mut |_, _| {}).unwrap();
        let keys: Vec<_> = first
            .tools
            .iter()
            .map(|t| t.operation_id.clone().unwrap())
            .collect();
        assert_eq!(keys, ["dup", "GET /b"]);
        let known: HashMap<String, String> = first
            .tools
            .iter()
            .map(|t| (t.operation_id.clone().unwrap(), t.name.clone()))
            .collect();
        let again = plan_import(
            &dup,
            &v,
            &|n| known.values().any(|k| k == n),
            &known,
            &mut |_, _| {},
        )
        .unwrap();
        assert!(again.tools.is_empty());
        assert_eq!(
            again
                .existing
                .iter()
                .map(|t| t.path_template.as_str())
                .collect::<Vec<_>>(),
            ["/a", "/b"]
        );
        assert_eq!(again.existing[0].name, first.tools[0].name);
        assert_eq!(again.existing[1].name, first.tools[1].name);
        assert!(plan_import(
            &json!({"hello": 1}),
            &v,
            &|_| false,
            &HashMap::new(),
            &mut |_, _| {}
        )
        .is_err());
    }
}
