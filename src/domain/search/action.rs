//! The action a request asks for and an operation does (SPEC §3.4, issue 10): reading
//! or changing something, from a query's opening words and an operation's method and
//! name; and the idioms and filler words that say nothing of the task.

use super::enrich::SearchText;
use super::text::{self, words};

/// Query words of conversation, not of the task ("let the team know", "what did people
/// say"): dropped from queries (documents keep theirs).
pub(super) const QUERY_FILLER: &[&str] = &[
    "actually",
    "anybody",
    "anyone",
    "basically",
    "everybody",
    "everyone",
    "hey",
    "kind",
    "know",
    "let",
    "lets",
    "like",
    "maybe",
    "ok",
    "okay",
    "people",
    "really",
    "right",
    "said",
    "say",
    "somebody",
    "someone",
    "sort",
    "stuff",
    "thanks",
    "thing",
    "things",
    "whether",
    "whose",
    "yet",
];

/// What an operation or a request does, in two kinds: reading, or changing something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reads (GET; `get`, `list`, `search` in an RPC-style name).
    Read,
    /// Creates, changes, sends or deletes.
    Change,
}

/// Words of an operation's name that say it reads.
const READ_NAME_WORDS: &[&str] = &[
    "count", "describe", "fetch", "find", "get", "list", "lookup", "query", "read", "retrieve",
    "search", "show", "watch",
];

/// Words of an operation's name that say it changes something. Not "post", "put" (the
/// method, as in `searchForIssuesUsingJqlPost`) or "set" (a replica set).
const CHANGE_NAME_WORDS: &[&str] = &[
    "add", "cancel", "create", "delete", "insert", "mark", "modify", "patch", "remove", "replace",
    "send", "update", "upload",
];

/// An operation's action: GET and HEAD read; PUT, PATCH and DELETE change; POST (and
/// an unknown method) changes unless the name's verbs say only that it reads (RPC-style
/// APIs read with POST: Plaid's `/accounts/balance/get`, Jira's search by POST).
pub fn doc_action(text: &SearchText) -> Action {
    // the method, from its verbs (enrich::method_verbs)
    let verbs: Vec<&str> = text.verbs.split(' ').collect();
    if verbs.contains(&"get") || verbs.contains(&"check") {
        return Action::Read;
    }
    if verbs.contains(&"update") || verbs.contains(&"delete") {
        return Action::Change;
    }
    let name = words(&text.name);
    let reads = name.iter().any(|w| READ_NAME_WORDS.contains(&w.as_str()));
    let changes = name.iter().any(|w| CHANGE_NAME_WORDS.contains(&w.as_str()));
    if reads && !changes {
        Action::Read
    } else {
        Action::Change
    }
}

/// Question words and verbs that open a request to read ("what's on my calendar",
/// "list pull requests", "who starred my repo"). Not "how", "when" or "get": "how do I
/// create…", "when it fails, rerun…", "get rid of…".
const READ_OPENERS: &[&str] = &[
    "browse", "fetch", "find", "list", "look", "lookup", "search", "see", "show", "view", "what",
    "whats", "where", "which", "who", "whose",
];

/// Verbs that open a request to change something ("add a task", "cancel the meeting").
/// Not the words that open a request as often as a noun ("email addresses of…", "text
/// search", "charges made this month", "post", "store").
const CHANGE_OPENERS: &[&str] = &[
    "add",
    "append",
    "archive",
    "assign",
    "ban",
    "buy",
    "cancel",
    "change",
    "close",
    "create",
    "cut",
    "delete",
    "disable",
    "edit",
    "enable",
    "invite",
    "kick",
    "make",
    "mark",
    "merge",
    "move",
    "publish",
    "purge",
    "remind",
    "remove",
    "rename",
    "reopen",
    "reschedule",
    "register",
    "resize",
    "restart",
    "rerun",
    "revoke",
    "rotate",
    "save",
    "scale",
    "schedule",
    "send",
    "set",
    "share",
    "start",
    "stop",
    "submit",
    "suspend",
    "transcribe",
    "turn",
    "update",
    "upload",
    "void",
    "write",
];

/// Words that open a request to change something only as verbs, and are nouns as often
/// ("store the key" / "store locations", "record a payment" / "record of payments",
/// "post the notes" / "post comments"): a change when a determiner or pronoun follows
/// ("store the…", "put it…"), or when a lead-in came first ("I need to store…").
const CHANGE_OPENERS_AS_VERBS: &[&str] = &["keep", "log", "post", "put", "record", "store"];

/// Words after which an opener is a verb with its object.
const OBJECT_OPENERS: &[&str] = &[
    "a", "an", "another", "her", "his", "it", "its", "my", "new", "our", "some", "that", "the",
    "their", "them", "these", "this", "those", "your",
];

/// Words that may come before a request's verb and say nothing of the action ("I'd like
/// to", "go ahead and", "we need to"); with apostrophes dropped ("id", "im"), as
/// [`query_action`] reads words.
const LEAD_IN: &[&str] = &[
    "ahead", "go", "id", "im", "ive", "kindly", "like", "need", "wanna", "want", "wed", "youd",
];

/// Reads idioms whose words mean together what none does alone. Takes and returns a
/// query's lower-case words (as [`words`] splits them).
///
/// - "let the team know" asks to tell them, though "let" and "know" are
///   [`QUERY_FILLER`] alone: the "know" of a "let" up to eight words before it becomes
///   "tell". "Let me know" and "let us know" ask for an answer, not a message, and stay
///   filler.
/// - "issue" opening a request before a determiner is the verb ("issue a refund",
///   "I'd like to issue an invoice"), not the tracker's noun ("issue comments") nor its
///   object ("which issue the bot opened"), and becomes "create". (Kept beside
///   "create", "issue" let Stripe's test helpers for Issuing outrank its refunds.)
pub(super) fn idioms(mut words: Vec<String>) -> Vec<String> {
    const DETERMINERS: &[&str] = &[
        "a", "an", "another", "her", "his", "my", "new", "our", "some", "that", "the", "their",
        "this", "your",
    ];
    for l in 0..words.len() {
        let asks_me = matches!(words.get(l + 1).map(String::as_str), Some("me" | "us"));
        if (words[l] == "let" || words[l] == "lets") && !asks_me {
            if let Some(k) = words[l + 1..].iter().take(8).position(|w| w == "know") {
                words[l + 1 + k] = "tell".to_string();
            }
        }
    }
    let opener = words
        .iter()
        .position(|w| !(w.len() == 1 || says_no_action(w)));
    if let Some(f) = opener {
        let next = words.get(f + 1).map(String::as_str).unwrap_or("");
        let asked_about = f > 0 && READ_OPENERS.contains(&words[f - 1].as_str());
        if (words[f] == "issue" || words[f] == "issuing")
            && DETERMINERS.contains(&next)
            && !asked_about
        {
            words[f] = "create".to_string();
        }
    }
    words
}

/// Whether a word of a request says nothing of its action: a stop word, [`QUERY_FILLER`]
/// or a [`LEAD_IN`] ("please", "I'd like to").
fn says_no_action(w: &str) -> bool {
    text::is_stop_word(w) || QUERY_FILLER.contains(&w) || LEAD_IN.contains(&w)
}

/// The action a query asks for, from its first word that is not a stop word or filler
/// ("please add…", "can you list…"); `None` when that word says neither (or names the
/// object first: "customer refund").
pub fn query_action(query: &str) -> Option<Action> {
    core_action(&text::query_parts(query).core)
}

/// [`query_action`] of a query's core (its words without the payload,
/// [`text::QueryParts::core`]).
pub(super) fn core_action(core: &str) -> Option<Action> {
    // question words are stop words elsewhere; here they open a request
    let opens = |w: &String| READ_OPENERS.contains(&w.as_str()) || !says_no_action(w);
    let all = idioms(words(&core.replace('\'', "")));
    let at = all.iter().position(opens)?;
    let first = &all[at];
    if READ_OPENERS.contains(&first.as_str()) {
        // a question about how to change something is not a request to read
        let changes_later = all[at + 1..]
            .iter()
            .any(|w| CHANGE_OPENERS.contains(&w.as_str()));
        (!changes_later).then_some(Action::Read)
    } else if CHANGE_OPENERS.contains(&first.as_str()) {
        Some(Action::Change)
    } else if CHANGE_OPENERS_AS_VERBS.contains(&first.as_str()) {
        let object = all
            .get(at + 1)
            .is_some_and(|w| OBJECT_OPENERS.contains(&w.as_str()));
        let led_in = all[..at].iter().any(|w| LEAD_IN.contains(&w.as_str()));
        (object || led_in).then_some(Action::Change)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::search::enrich::{enrich, EnrichInput};
    use crate::domain::search::tests::{doc, names};
    use crate::domain::search::SearchIndex;

    #[test]
    fn let_someone_know_asks_to_tell_them() {
        // "let" and "know" are filler alone; together they ask for a message, and the
        // team and channel words alone would rank the tools about teams and channels
        let docs = vec![
            doc(
                1,
                "slack",
                "chat_post_message",
                "POST",
                "/chat.postMessage",
                "Sends a message to a channel.",
            ),
            doc(
                2,
                "slack",
                "admin_conversations_get_teams",
                "GET",
                "/admin.conversations.getTeams",
                "Get all the workspaces a given public or private channel is connected to.",
            ),
            doc(
                3,
                "slack",
                "conversations_list",
                "GET",
                "/conversations.list",
                "Lists all channels in a Slack team.",
            ),
        ];
        let idx = SearchIndex::build(docs, None);
        let got = names(
            &idx,
            "let the team know in the channel that the deploy finished",
        );
        assert_eq!(got[0], "slack__chat_post_message", "{got:?}");
        // "let" alone, or a "know" far from it, stays filler
        let w = |q: &str| idioms(words(q));
        assert!(!w("let me see the channels").contains(&"tell".to_string()));
        assert!(!w("let the bot in so the whole team gets to know").contains(&"tell".to_string()));
        assert!(w("lets let everyone in the channel know").contains(&"tell".to_string()));
        // "let me know" asks for an answer; "know" may come well after "let"
        assert!(!w("let me know my stripe balance").contains(&"tell".to_string()));
        assert!(!w("let us know which invoices are overdue").contains(&"tell".to_string()));
        assert!(w("let my whole engineering team over in slack know").contains(&"tell".to_string()));
        // "issue" opening a request is the verb; elsewhere it is the noun
        let creates = |q: &str| w(q).contains(&"create".to_string());
        for q in [
            "please issue a refund",
            "issue an invoice to acme",
            "I'd like to issue a refund to a customer for an order",
            "go ahead and issue a refund",
            "issuing a refund to a customer",
        ] {
            assert!(creates(q), "{q}");
        }
        for q in [
            "issue comments on the repo",
            "close the issue the bot opened",
            "which issue the customer filed is open",
        ] {
            assert!(!creates(q), "{q}");
        }
    }

    #[test]
    fn issue_opening_a_request_is_the_verb() {
        let docs = vec![
            doc(
                1,
                "stripe",
                "post_refunds",
                "POST",
                "/v1/refunds",
                "Create a refund.",
            ),
            doc(
                2,
                "stripe",
                "post_test_helpers_issuing_transactions_transaction_refund",
                "POST",
                "/v1/test_helpers/issuing/transactions/{transaction}/refund",
                "Refund a test-mode Transaction.",
            ),
            doc(
                3,
                "stripe",
                "get_issuing_cards",
                "GET",
                "/v1/issuing/cards",
                "Returns a list of Issuing Card objects.",
            ),
        ];
        let idx = SearchIndex::build(docs, None);
        let got = names(&idx, "issue a refund to a customer for an order");
        assert_eq!(got[0], "stripe__post_refunds", "{got:?}");
        let got = names(&idx, "list issuing cards");
        assert_eq!(got[0], "stripe__get_issuing_cards", "{got:?}");
    }

    #[test]
    fn the_action_of_a_query_and_of_an_operation() {
        assert_eq!(
            query_action("what's on my calendar tomorrow"),
            Some(Action::Read)
        );
        assert_eq!(
            query_action("please list pull requests"),
            Some(Action::Read)
        );
        assert_eq!(query_action("can you add a task"), Some(Action::Change));
        // lead-ins say nothing; an opening "issue" is the verb
        assert_eq!(
            query_action("I'd like to issue a refund to a customer"),
            Some(Action::Change)
        );
        assert_eq!(
            query_action("go ahead and list the open invoices"),
            Some(Action::Read)
        );
        assert_eq!(
            query_action("cancel tomorrow's standup"),
            Some(Action::Change)
        );
        assert_eq!(query_action("customer refund"), None);
        assert_eq!(query_action("read this paragraph aloud"), None);
        let text = |name: &str, method: &str, path: &str| {
            enrich(&EnrichInput {
                name,
                operation_id: None,
                method,
                path,
                summary: None,
                description: "",
                tags: &[],
                input_schema: None,
            })
        };
        // POST: by the name's verbs (RPC-style APIs read with POST)
        assert_eq!(
            doc_action(&text(
                "accounts_balance_get",
                "POST",
                "/accounts/balance/get"
            )),
            Action::Read
        );
        assert_eq!(
            doc_action(&text("chat_post_message", "POST", "/chat.postMessage")),
            Action::Change
        );
        // other methods say it
        assert_eq!(doc_action(&text("pets", "GET", "/pets")), Action::Read);
        assert_eq!(
            doc_action(&text("pets", "DELETE", "/pets/{id}")),
            Action::Change
        );
        assert_eq!(
            doc_action(&text("search_issues_post", "POST", "/search")),
            Action::Read
        );
        let cases = [
            (
                "mark_message_as_read",
                "PUT",
                "/messages/{id}/read",
                Action::Change,
            ),
            (
                "watch_apps_v1_daemon_set",
                "GET",
                "/watch/daemonsets",
                Action::Read,
            ),
            (
                "list_user_unfollow",
                "DELETE",
                "/users/{id}/following/{t}",
                Action::Change,
            ),
        ];
        for (name, method, path, want) in cases {
            assert_eq!(doc_action(&text(name, method, path)), want, "{name}");
        }
        // a question about how to change is not a read; words that are often nouns
        // open nothing
        assert_eq!(
            query_action("how do I create a webhook"),
            Some(Action::Change)
        );
        assert_eq!(query_action("what is the way to delete a repo"), None);
        assert_eq!(query_action("get rid of the old webhook"), None);
        assert_eq!(query_action("email addresses of everyone"), None);
    }

    #[test]
    fn a_request_to_store_save_or_set_ranks_the_write_above_the_read() {
        // issue 24.5: GitHub's secret of a repository, read and written at one path,
        // among other operations of the same API
        let mut docs = vec![
            doc(
                1,
                "github",
                "actions_get_repo_secret",
                "GET",
                "/repos/{owner}/{repo}/actions/secrets/{secret_name}",
                "Get a repository secret",
            ),
            doc(
                2,
                "github",
                "actions_create_or_update_repo_secret",
                "PUT",
                "/repos/{owner}/{repo}/actions/secrets/{secret_name}",
                "Create or update a repository secret with an encrypted value",
            ),
            doc(
                3,
                "github",
                "actions_list_repo_secrets",
                "GET",
                "/repos/{owner}/{repo}/actions/secrets",
                "List repository secrets",
            ),
        ];
        for (i, (name, method, path, summary)) in [
            (
                "issues_create",
                "POST",
                "/repos/{owner}/{repo}/issues",
                "Create an issue",
            ),
            (
                "issues_list_for_repo",
                "GET",
                "/repos/{owner}/{repo}/issues",
                "List repository issues",
            ),
            (
                "pulls_create",
                "POST",
                "/repos/{owner}/{repo}/pulls",
                "Create a pull request",
            ),
            (
                "repos_get",
                "GET",
                "/repos/{owner}/{repo}",
                "Get a repository",
            ),
            (
                "users_get_authenticated",
                "GET",
                "/user",
                "Get the authenticated user",
            ),
            (
                "actions_list_workflow_runs",
                "GET",
                "/repos/{owner}/{repo}/actions/runs",
                "List workflow runs for a repository",
            ),
            (
                "repos_create_deploy_key",
                "POST",
                "/repos/{owner}/{repo}/keys",
                "Create a deploy key",
            ),
            ("gists_create", "POST", "/gists", "Create a gist"),
            (
                "orgs_list_members",
                "GET",
                "/orgs/{org}/members",
                "List organization members",
            ),
        ]
        .into_iter()
        .enumerate()
        {
            docs.push(doc(10 + i as i64, "github", name, method, path, summary));
        }
        let idx = SearchIndex::build(docs, None);
        for q in [
            "I need to store NPM_TOKEN as an encrypted Actions secret on the acme/web repo",
            "store the signing key as a secret of the acme/web repository",
            "save a new secret for the repo",
            "please set the repository secret SENTRY_DSN",
            "put the token in the repo's actions secrets",
        ] {
            let got = names(&idx, q);
            let at = |n: &str| got.iter().position(|g| g == n).unwrap_or(usize::MAX);
            let write = at("github__actions_create_or_update_repo_secret");
            assert!(
                write < 2 && write < at("github__actions_get_repo_secret"),
                "{q}: {got:?}"
            );
        }
        // the noun stays a noun: a store's or a record's reads are reads
        assert_eq!(query_action("store locations near the airport"), None);
        assert_eq!(query_action("record of payments last month"), None);
    }
}
