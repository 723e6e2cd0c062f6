//! Names of vendors and tools (SPEC §2): parse-don't-validate newtypes and the
//! deterministic shortening the OpenAPI importer uses.
//!
//! Invariants: a vendor slug matches `^[a-z0-9][a-z0-9-]{0,30}$`; a tool name matches
//! `^[a-z0-9][a-z0-9_]*$` without `__`; `len(vendor) + 2 + len(name) <= 52`, so that an
//! MCP client's `mcp__graft__` prefix keeps the full name within 64 characters
//! (CLIENTS.md).

use sha2::{Digest, Sha256};
use std::fmt;

/// The longest `<vendor>__<name>` Graft serves (SPEC §2).
pub const MAX_QUALIFIED_LEN: usize = 52;

/// A vendor's slug: `^[a-z0-9][a-z0-9-]{0,30}$` (no `_`, so `<vendor>__<name>` splits
/// at the first `__` unambiguously).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VendorSlug(String);

impl VendorSlug {
    /// Parses a slug. Errors: a sentence naming the rule that failed.
    pub fn parse(s: &str) -> Result<Self, String> {
        let ok_first = s
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let ok_rest = s
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if s.is_empty() || s.len() > 31 || !ok_first || !ok_rest {
            return Err(format!(
                "vendor slug {s:?} is invalid: use 1 to 31 characters of a-z, 0-9 and '-', starting with a letter or digit"
            ));
        }
        Ok(Self(s.to_string()))
    }

    /// The slug as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for VendorSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tool's name within its vendor: `^[a-z0-9][a-z0-9_]*$`, no `__`, and short enough
/// that `<vendor>__<name>` fits [`MAX_QUALIFIED_LEN`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(String);

impl ToolName {
    /// Parses a name for `vendor`. Errors: a sentence naming the rule that failed.
    pub fn parse(vendor: &VendorSlug, s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("tool name is empty".into());
        }
        if !s
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            return Err(format!("tool name {s:?} must start with a-z or 0-9"));
        }
        if !s
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!("tool name {s:?} may hold only a-z, 0-9 and '_'"));
        }
        if s.contains("__") {
            return Err(format!("tool name {s:?} may not contain '__'"));
        }
        let len = vendor.as_str().len() + 2 + s.len();
        if len > MAX_QUALIFIED_LEN {
            return Err(format!(
                "tool name {s:?} is too long: {vendor}__{s} has {len} characters, at most {MAX_QUALIFIED_LEN} are allowed"
            ));
        }
        Ok(Self(s.to_string()))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Splits an MCP tool name `<vendor>__<name>` at its first `__`; `None` when there is none.
pub fn split_qualified(qualified: &str) -> Option<(&str, &str)> {
    qualified.split_once("__")
}

/// Turns free text (an operationId, or `method path`) into snake case over
/// `[a-z0-9_]`: camelCase boundaries and every other character become `_`, runs of
/// `_` collapse, and leading/trailing `_` go. Empty input gives `"op"`.
pub fn snake_case(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 8);
    let chars: Vec<char> = raw.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && i > 0 {
                let prev = chars[i - 1];
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                if prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower)
                {
                    out.push('_');
                }
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push('_');
        }
    }
    let mut collapsed = String::with_capacity(out.len());
    for c in out.chars() {
        if c == '_' && (collapsed.is_empty() || collapsed.ends_with('_')) {
            continue;
        }
        collapsed.push(c);
    }
    let trimmed = collapsed.trim_end_matches('_').to_string();
    if trimmed.is_empty() {
        "op".into()
    } else {
        trimmed
    }
}

/// A short, stable hash of `text`: the first `n` hex digits of its SHA-256.
pub fn short_hash(text: &str, n: usize) -> String {
    let digest = Sha256::digest(text.as_bytes());
    hex::encode(digest)[..n].to_string()
}

/// Makes a valid tool name for `vendor` from `raw` (an operationId, or `method path`).
///
/// The snake-cased text is kept when it fits; a longer one is cut and given `_` + 6 hex
/// digits of the hash of `raw`, so the same input always gives the same name. When the
/// result is in `taken`, the hash suffix (then a longer one) tells the two apart.
/// Returns the name and whether it differs from the plain snake case (a rename).
pub fn tool_name_for(
    vendor: &VendorSlug,
    raw: &str,
    taken: &dyn Fn(&str) -> bool,
) -> (ToolName, bool) {
    let max = MAX_QUALIFIED_LEN - 2 - vendor.as_str().len();
    let base = snake_case(raw);
    if base.len() <= max && !taken(&base) {
        return (ToolName(base), false);
    }
    for hash_len in [6usize, 10, 16, 32] {
        let suffix = short_hash(raw, hash_len);
        let keep = max.saturating_sub(hash_len + 1);
        let mut head: String = base.chars().take(keep).collect();
        while head.ends_with('_') {
            head.pop();
        }
        let name = if head.is_empty() {
            format!("op_{suffix}")
        } else {
            format!("{head}_{suffix}")
        };
        let name: String = name.chars().take(max).collect();
        if !taken(&name) {
            return (ToolName(name), true);
        }
    }
    // 32 hex digits of SHA-256 colliding is not a case to plan for; keep a usable name.
    let mut n = 2u32;
    loop {
        let name = format!("op_{}_{n}", short_hash(raw, 8));
        if !taken(&name) {
            return (ToolName(name), true);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> VendorSlug {
        VendorSlug::parse(s).unwrap()
    }

    #[test]
    fn snake_case_handles_camel_symbols_and_paths() {
        assert_eq!(snake_case("getPetById"), "get_pet_by_id");
        assert_eq!(snake_case("repos/get-content"), "repos_get_content");
        assert_eq!(
            snake_case("GET /anything/{anything}"),
            "get_anything_anything"
        );
        assert_eq!(
            snake_case("get_files_id#thumbnail"),
            "get_files_id_thumbnail"
        );
        assert_eq!(snake_case("HTTPServerError"), "http_server_error");
        assert_eq!(snake_case("__"), "op");
        assert_eq!(snake_case("chat.postMessage"), "chat_post_message");
    }

    #[test]
    fn slugs_are_checked() {
        assert!(VendorSlug::parse("stripe").is_ok());
        assert!(VendorSlug::parse("my-api2").is_ok());
        assert!(VendorSlug::parse("my_api").is_err());
        assert!(VendorSlug::parse("-x").is_err());
        assert!(VendorSlug::parse("").is_err());
        assert!(VendorSlug::parse(&"a".repeat(32)).is_err());
    }

    #[test]
    fn names_are_checked() {
        let s = v("stripe");
        assert!(ToolName::parse(&s, "get_customers").is_ok());
        assert!(ToolName::parse(&s, "get__customers")
            .unwrap_err()
            .contains("__"));
        assert!(ToolName::parse(&s, "Get").is_err());
        assert!(ToolName::parse(&s, "_x").is_err());
        assert!(ToolName::parse(&s, &"a".repeat(44)).is_ok());
        assert!(ToolName::parse(&s, &"a".repeat(45))
            .unwrap_err()
            .contains("too long"));
    }

    #[test]
    fn long_names_shorten_deterministically_and_fit() {
        let s = v("github");
        let raw = "actions/list-workflow-runs-for-a-repository-with-a-very-long-name";
        let (a, renamed) = tool_name_for(&s, raw, &|_| false);
        let (b, _) = tool_name_for(&s, raw, &|_| false);
        assert!(renamed);
        assert_eq!(a, b);
        assert!(s.as_str().len() + 2 + a.as_str().len() <= MAX_QUALIFIED_LEN);
        assert!(ToolName::parse(&s, a.as_str()).is_ok(), "{a}");
    }

    #[test]
    fn collisions_get_a_hash_suffix() {
        let s = v("box");
        let (a, renamed) = tool_name_for(&s, "get_files_id#a", &|n| n == "get_files_id_a");
        assert!(renamed);
        assert_ne!(a.as_str(), "get_files_id_a");
        assert!(ToolName::parse(&s, a.as_str()).is_ok());
    }

    #[test]
    fn split_qualified_uses_first_double_underscore() {
        assert_eq!(
            split_qualified("stripe__get_customers"),
            Some(("stripe", "get_customers"))
        );
        assert_eq!(split_qualified("find_tool"), None);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Names made for any list of operations are valid, pairwise different, and the
            /// same when the same document is imported again (issue 13.2).
            #[test]
            fn shortened_names_are_unique_valid_and_stable(
                vendor in "[a-z][a-z0-9-]{0,20}[a-z0-9]",
                ops in proptest::collection::vec(
                    proptest::prop_oneof![
                        "[a-zA-Z][a-zA-Z0-9_./{}-]{0,120}",
                        // long operations that differ only at their end: shortening collides
                        "[a-z]{1,3}".prop_map(|t| format!("{}{t}", "getTheVeryLongResourceName".repeat(4))),
                        // different spellings of one snake case: getPet, get_pet, get-pet
                        proptest::sample::select(vec!["getPet", "get_pet", "get-pet", "GET /pet", "get.pet"]).prop_map(str::to_string),
                    ],
                    1..40,
                ),
            ) {
                let slug = VendorSlug::parse(&vendor).unwrap();
                let name_all = || {
                    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
                    ops.iter()
                        .map(|op| {
                            let (name, _) = tool_name_for(&slug, op, &|n| taken.contains(n));
                            taken.insert(name.as_str().to_string());
                            name.as_str().to_string()
                        })
                        .collect::<Vec<_>>()
                };
                let first = name_all();
                let unique: std::collections::HashSet<&String> = first.iter().collect();
                prop_assert_eq!(unique.len(), first.len(), "{:?}", first);
                for n in &first {
                    prop_assert!(ToolName::parse(&slug, n).is_ok(), "{n:?} for {vendor}");
                }
                prop_assert_eq!(first, name_all());
            }
        }
    }
}
