//! Text for search (SPEC §3.4): Markdown and HTML reduced to plain text, identifiers split
//! into words, words stemmed (Snowball English, from `rust-stemmers`), stop words dropped.
//!
//! One [`Analyzer`] turns both a tool's search text and an agent's query into terms, so a
//! plural, a verb form or a camelCase identifier meets its other spellings.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use rust_stemmers::{Algorithm, Stemmer};

/// Cuts `s` to at most `max` characters, ending in `…` when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// English words that carry no meaning for finding a tool: articles, pronouns,
/// prepositions, auxiliaries, and the filler of a request ("please", "can you").
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
    "each", "else", "etc", "for", "from", "had", "has", "have", "having", "he", "her", "here",
    "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let",
    "lets", "may", "me", "might", "mine", "more", "most", "much", "must", "my", "myself", "need",
    "needs", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our",
    "ours", "out", "over", "own", "please", "same", "she", "should", "so", "some", "such", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "through",
    "thus", "to", "too", "under", "until", "up", "us", "using", "very", "via", "want", "was", "we",
    "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "would", "you", "your", "yours", "yourself",
];

/// Whether `word` (lower case) is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Markdown (CommonMark, with tables) and embedded HTML reduced to plain text: tags
/// dropped, entities decoded, link targets and image URLs dropped (their text kept),
/// code kept as text, bare URLs dropped, whitespace collapsed to single spaces.
pub fn plain_text(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let push = |s: &str, out: &mut String| out.push_str(s);
    let mut in_image = 0usize;
    for event in Parser::new_ext(
        source,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    ) {
        match event {
            Event::Text(t) | Event::Code(t) if in_image == 0 => push(&t, &mut out),
            Event::Html(h) => {
                push(" ", &mut out);
                push(&strip_tags(&h, true), &mut out);
                push(" ", &mut out);
            }
            // an inline tag (`<b>`, `<code>`) joins its text; a break separates words
            Event::InlineHtml(h) => push(&strip_tags(&h, breaks_words(&h)), &mut out),
            Event::SoftBreak | Event::HardBreak | Event::Rule => push(" ", &mut out),
            Event::Start(Tag::Image { .. }) => in_image += 1,
            Event::End(TagEnd::Image) => in_image = in_image.saturating_sub(1),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::TableCell
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_),
            ) => {
                // a block ends a sentence unless it already did
                let t = out.trim_end();
                if !t.is_empty() && !t.ends_with(['.', '!', '?', ':', ';']) {
                    out.truncate(t.len());
                    out.push('.');
                }
                push(" ", &mut out);
            }
            _ => {}
        }
    }
    let decoded = html_escape::decode_html_entities(&out);
    decoded
        .split_whitespace()
        .filter(|w| !(w.starts_with("http://") || w.starts_with("https://")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether an inline HTML tag separates words (`<br>`, `<p>`, `<li>`, …).
fn breaks_words(tag: &str) -> bool {
    let name: String = tag
        .trim_start_matches(['<', '/'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        name.as_str(),
        "br" | "p"
            | "div"
            | "li"
            | "ul"
            | "ol"
            | "tr"
            | "td"
            | "th"
            | "table"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "hr"
    )
}

/// Text with every `<…>` tag removed (the text between tags kept); `spaced` puts a
/// space where each tag was.
fn strip_tags(html: &str, spaced: bool) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                if spaced {
                    out.push(' ');
                }
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The first sentence of plain `text`, at most `max` characters (cut at a word boundary,
/// ending in `…` when cut). A sentence ends at `.`, `!` or `?` followed by a space and
/// not preceded by a one-letter abbreviation ("e.g. ").
pub fn first_sentence(text: &str, max: usize) -> String {
    let text = text.trim();
    let mut end = text.len();
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?') && bytes.get(i + 1).is_none_or(|b| *b == b' ') {
            // "e.g." / "i.e." / "vs." are not ends
            let before = &text[..i];
            let last_word = before.rsplit(' ').next().unwrap_or("");
            let abbreviation = last_word.len() <= 3 && last_word.contains('.')
                || matches!(
                    last_word.to_ascii_lowercase().as_str(),
                    "e.g" | "i.e" | "vs" | "etc"
                );
            if !abbreviation {
                end = i + c.len_utf8();
                break;
            }
        }
    }
    let sentence = &text[..end];
    if sentence.chars().count() <= max {
        return sentence.to_string();
    }
    let mut cut: String = sentence.chars().take(max.saturating_sub(1)).collect();
    if let Some(space) = cut.rfind(' ').filter(|&s| s > max / 2) {
        cut.truncate(space);
    }
    let trimmed = cut.trim_end_matches([' ', ',', ';', ':', '.']).len();
    cut.truncate(trimmed);
    cut.push('…');
    cut
}

/// Splits text into lower-case words: any character that is not a letter or digit
/// separates words, and so do identifier boundaries (`getRepoByID` → get, repo, by,
/// id; `HTTPResponse` → http, response; `snake_case`, `kebab-case`, `a.b/c` alike).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        if chunk.is_empty() {
            continue;
        }
        let chars: Vec<char> = chunk.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // aB | ABc (the last capital of a run starts the next word)
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                || (prev.is_ascii_digit() && cur.is_alphabetic() && i - start > 1);
            if boundary {
                out.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        out.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    out
}

/// The singular and plural of an English noun (a rule of thumb: `-ies`/`-y`, `-es`
/// after s/x/z/ch/sh, `-s`); the word itself first.
pub fn number_forms(word: &str) -> Vec<String> {
    let mut out = vec![word.to_string()];
    if word.len() < 3 || word.chars().any(|c| c.is_ascii_digit()) {
        return out;
    }
    if let Some(stem) = word.strip_suffix("ies") {
        out.push(format!("{stem}y"));
    } else if let Some(stem) = word
        .strip_suffix("es")
        .filter(|s| s.ends_with(['s', 'x', 'z']) || s.ends_with("ch") || s.ends_with("sh"))
    {
        out.push(stem.to_string());
    } else if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        out.push(format!("{word}es"));
    } else if let Some(stem) = word.strip_suffix('s') {
        out.push(stem.to_string());
    } else if let Some(stem) = word
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        out.push(format!("{stem}ies"));
    } else if word.ends_with(['s', 'x', 'z']) || word.ends_with("ch") || word.ends_with("sh") {
        out.push(format!("{word}es"));
    } else {
        out.push(format!("{word}s"));
    }
    out
}

/// Turns text into search terms: [`words`], stop words dropped, each stemmed.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(english)")
    }
}

/// Words the Snowball stemmer conflates with words of other meaning in API documents
/// ("customer" → "custom", as in custom fields; "authorization" → "author", as in a
/// commit's author; "business" → "busi", as in busy), or splits from their family
/// ("subscription" → "subscript" beside "subscrib"): word → the stem used instead.
/// Sorted by word.
const STEM_EXCEPTIONS: &[(&str, &str)] = &[
    ("authorization", "authoriz"),
    ("authorizations", "authoriz"),
    ("authorize", "authoriz"),
    ("authorized", "authoriz"),
    ("authorizes", "authoriz"),
    ("business", "business"),
    ("businesses", "business"),
    ("customer", "customer"),
    ("customers", "customer"),
    ("production", "production"),
    ("subscription", "subscrib"),
    ("subscriptions", "subscrib"),
    ("transcription", "transcrib"),
    ("transcriptions", "transcrib"),
];

impl Analyzer {
    /// The stem of one lower-case word (Snowball English, but for
    /// [`STEM_EXCEPTIONS`]).
    pub fn stem(&self, word: &str) -> String {
        if let Ok(i) = STEM_EXCEPTIONS.binary_search_by(|(w, _)| (*w).cmp(word)) {
            return STEM_EXCEPTIONS[i].1.to_string();
        }
        self.stemmer.stem(word).into_owned()
    }

    /// Terms of `text`, in order, repeats kept.
    pub fn terms(&self, text: &str) -> Vec<String> {
        words(text)
            .into_iter()
            .filter(|w| !is_stop_word(w))
            .map(|w| self.stem(&w))
            .collect()
    }
}

/// Words of time ("tomorrow", "friday", "nightly"): in a query they say when, not
/// which operation.
const TIME_WORDS: &[&str] = &[
    "afternoon",
    "annually",
    "april",
    "asap",
    "august",
    "daily",
    "december",
    "evening",
    "february",
    "friday",
    "hourly",
    "january",
    "july",
    "june",
    "later",
    "monday",
    "monthly",
    "morning",
    "night",
    "nightly",
    "november",
    "october",
    "quarterly",
    "saturday",
    "september",
    "soon",
    "sunday",
    "thursday",
    "today",
    "tomorrow",
    "tonight",
    "tuesday",
    "wednesday",
    "week",
    "weekend",
    "weekly",
    "yearly",
    "yesterday",
];

/// Words that open a clause about the circumstances of a task ("… once CI is green",
/// "… before maintenance", "… saying it's fixed"): what follows is not the operation.
const CLAUSE_OPENERS: &[&str] = &[
    "after", "although", "because", "before", "once", "saying", "though", "unless", "until",
    "whenever", "while",
];

/// Forms of "be" that, up to five words before "saying", make it a verb of the task
/// rather than the start of a clause: "what are viewers *saying*", "what's the team
/// *saying*" ask to read what was said; "post a note *saying* it's fixed" carries it.
/// Apostrophes are compared straight ("what’s" is "what's"); forms without one are here
/// too ("whats").
const BE_FORMS: &[&str] = &[
    "am", "are", "be", "been", "being", "he's", "is", "it's", "she's", "that's", "thats",
    "there's", "theres", "they're", "theyre", "was", "we're", "were", "what's", "whats", "who's",
    "whos", "you're",
];

/// Words that make a following form of "be" part of a relative clause ("the customer
/// *who is* waiting saying …"), which leaves "saying" opening the payload.
const RELATIVES: &[&str] = &["that", "which", "who", "whoever", "whom"];

/// Determiners and pronouns that make a preceding "that" or "so" open a clause ("that the
/// deploy finished", "so everyone sees it") rather than point at a thing ("that email").
const CLAUSE_SUBJECTS: &[&str] = &[
    "everybody",
    "everyone",
    "he",
    "i",
    "it",
    "its",
    "it's",
    "my",
    "our",
    "she",
    "that",
    "the",
    "their",
    "there",
    "they",
    "this",
    "we",
    "you",
    "your",
];

/// A query split into the words that name the task and the **payload**: what the call
/// would carry rather than which operation it is (issue 10: "let the team know in the
/// channel *that the deploy finished*" is about posting a message; "deploy" must not pull
/// deployment tools to the top). Payload is, in a query's raw words: numbers, times,
/// sizes and ids (a word that starts with a digit: `3pm`, `4GB`, `1:1`, `415`; or a
/// `KEY-123` id), `#channel` and `@handle` words, e-mail addresses, quoted text, words of
/// time (today, friday, nightly), and a clause opened by a word such as "once", "before",
/// "saying" (but not "saying" as the task's verb: "what are viewers saying", see
/// [`BE_FORMS`]), or "that"/"so" followed by a determiner or pronoun, to the end of the
/// query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryParts {
    /// The query without its payload (the query itself when nothing else would be left).
    pub core: String,
    /// The payload's lower-case words (as [`words`] splits them).
    pub payload: Vec<String>,
    /// Whether every word besides stop words was payload (`core` is then the query
    /// itself, and `payload` empty).
    pub only_payload: bool,
}

/// Splits a query into [`QueryParts`].
pub fn query_parts(query: &str) -> QueryParts {
    let raw: Vec<&str> = query.split_whitespace().collect();
    let mut keep = vec![true; raw.len()];
    let mut quoted = false;
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
            .to_lowercase()
    };
    let mut i = 0;
    while i < raw.len() {
        let w = raw[i];
        let b = bare(w);
        // quoted text: from a word that opens a quote to the word that closes it
        let opens = !quoted && w.starts_with(['"', '“']);
        if quoted || opens {
            keep[i] = false;
            let inner = if opens {
                &w[w.chars().next().map_or(0, char::len_utf8)..]
            } else {
                w
            };
            quoted = !inner.ends_with(['"', '”']);
            i += 1;
            continue;
        }
        let next = raw.get(i + 1).map(|n| bare(n)).unwrap_or_default();
        // "saying" after a form of "be" in the five words before it is the task's verb,
        // unless that "be" is a relative clause's ("who is waiting saying …")
        let progressive = b == "saying"
            && (i.saturating_sub(5)..i).any(|j| {
                BE_FORMS.contains(&bare(raw[j]).replace('’', "'").as_str())
                    && (j == 0 || !RELATIVES.contains(&bare(raw[j - 1]).as_str()))
            });
        let clause = i > 0
            && ((CLAUSE_OPENERS.contains(&b.as_str()) && !progressive)
                || ((b == "that" || b == "so") && CLAUSE_SUBJECTS.contains(&next.as_str()))
                || (b == "now" && next == "that"));
        if clause {
            keep[i..].iter_mut().for_each(|k| *k = false);
            break;
        }
        let trimmed =
            w.trim_matches(|c: char| matches!(c, ',' | '.' | '!' | '?' | ';' | '(' | ')'));
        let id_like = {
            // KEY-123
            let mut parts = trimmed.splitn(2, '-');
            let (a, z) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            !a.is_empty()
                && a.chars().all(|c| c.is_ascii_uppercase())
                && !z.is_empty()
                && z.chars().all(|c| c.is_ascii_digit())
        };
        // an identifier a vendor minted, not an API word (v1, oauth2, sha256, s3_bucket, a
        // path): a part of 4+ digits (ord_8812), or of 6+ letters and digits that switch
        // between the two at least twice (ch_3NfYh2KZ, a uuid's 550e8400), between `_`,
        // `-` or `.`
        let minted = !trimmed.contains(['/', '{'])
            && trimmed.split(['_', '-', '.']).any(|part| {
                let all_alnum = !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric());
                let digits = part.chars().filter(char::is_ascii_digit).count();
                let switches = part
                    .as_bytes()
                    .windows(2)
                    .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
                    .count();
                all_alnum
                    && ((digits >= 4 && digits == part.len()) || (part.len() >= 6 && switches >= 2))
            });
        // a constant's name (NPM_TOKEN, SENTRY_DSN) or an owner/name slug (acme/web)
        let constant = trimmed.contains('_')
            && trimmed.len() >= 4
            && trimmed
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        let slug = !trimmed.starts_with('/')
            && !trimmed.contains('{')
            && trimmed.split('/').count() == 2
            && trimmed.split('/').all(|p| {
                !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || "-_.".contains(c))
            });
        let phone =
            trimmed.starts_with('+') && trimmed[1..].starts_with(|c: char| c.is_ascii_digit());
        let payload = trimmed.starts_with(|c: char| c.is_ascii_digit() || c == '$')
            || minted
            || constant
            || slug
            || phone
            || trimmed.starts_with(['#', '@'])
            || trimmed.contains('@')
            || id_like
            || TIME_WORDS.contains(&b.trim_end_matches("'s"));
        if payload {
            keep[i] = false;
        }
        i += 1;
    }
    let core: Vec<&str> = raw
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(w, _)| *w)
        .collect();
    let payload: Vec<String> = raw
        .iter()
        .zip(&keep)
        .filter(|(_, k)| !**k)
        .flat_map(|(w, _)| words(w))
        .collect();
    if core
        .iter()
        .all(|w| words(w).iter().all(|x| is_stop_word(x)))
    {
        return QueryParts {
            core: query.trim().to_string(),
            payload: Vec::new(),
            only_payload: keep.iter().any(|k| !k),
        };
    }
    QueryParts {
        core: core.join(" "),
        payload,
        only_payload: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stop_word("the") && !is_stop_word("create"));
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(words("getRepoByID"), ["get", "repo", "by", "id"]);
        assert_eq!(words("HTTPResponse"), ["http", "response"]);
        assert_eq!(
            words("repos/create-webhook"),
            ["repos", "create", "webhook"]
        );
        assert_eq!(words("chat.postMessage"), ["chat", "post", "message"]);
        assert_eq!(words("list_pull_requests"), ["list", "pull", "requests"]);
        assert_eq!(words("oauth2 v1Customers"), ["oauth2", "v1", "customers"]);
        assert_eq!(
            words("GetV2010AccountCall"),
            ["get", "v2010", "account", "call"]
        );
    }

    #[test]
    fn markdown_and_html_become_plain_text() {
        let md = "Lists **all** [pull requests](https://docs.github.com/x) of a repo.\n\n<p>Use <code>state</code> &amp; more</p>\n\n![logo](https://x/y.png) See https://example.com";
        assert_eq!(
            plain_text(md),
            "Lists all pull requests of a repo. Use state & more See"
        );
        assert_eq!(plain_text("# Title\nBody"), "Title. Body.");
    }

    #[test]
    fn the_first_sentence_is_cut_at_a_word() {
        assert_eq!(
            first_sentence("Creates a pet. Then more.", 160),
            "Creates a pet."
        );
        assert_eq!(
            first_sentence("Sends e.g. a message to a channel. More", 160),
            "Sends e.g. a message to a channel."
        );
        let long = "word ".repeat(60);
        let cut = first_sentence(&long, 40);
        assert!(cut.chars().count() <= 40 && cut.ends_with('…'), "{cut}");
        assert!(!cut.contains("wor…"));
    }

    #[test]
    fn number_forms_give_singular_and_plural() {
        assert_eq!(number_forms("repositories"), ["repositories", "repository"]);
        assert_eq!(number_forms("repository"), ["repository", "repositories"]);
        assert_eq!(number_forms("webhooks"), ["webhooks", "webhook"]);
        assert_eq!(number_forms("box"), ["box", "boxes"]);
        assert_eq!(number_forms("addresses"), ["addresses", "address"]);
        assert_eq!(number_forms("status"), ["status", "statuses"]);
    }

    #[test]
    fn stem_exceptions_are_sorted_and_keep_meanings_apart() {
        assert!(STEM_EXCEPTIONS.windows(2).all(|w| w[0].0 < w[1].0));
        let a = Analyzer::default();
        assert_ne!(a.stem("customer"), a.stem("custom"));
        assert_ne!(a.stem("authorization"), a.stem("author"));
        assert_eq!(a.stem("subscription"), a.stem("subscribe"));
        assert_eq!(a.stem("customers"), a.stem("customer"));
    }

    #[test]
    fn the_analyzer_stems_and_drops_stop_words() {
        let a = Analyzer::default();
        assert_eq!(a.terms("Creating the webhooks"), ["creat", "webhook"]);
        assert_eq!(a.terms("create a webhook"), ["creat", "webhook"]);
        assert_eq!(a.terms("listPullRequests"), a.terms("list pull request"));
    }

    #[test]
    fn payload_is_what_the_call_carries() {
        let p = query_parts("let the team know in the channel that the deploy finished");
        assert_eq!(p.core, "let the team know in the channel");
        assert_eq!(p.payload, ["that", "the", "deploy", "finished"]);
        let p = query_parts("schedule a video meeting for Thursday at 3pm");
        assert_eq!(p.core, "schedule a video meeting for at");
        assert_eq!(p.payload, ["thursday", "3pm"]);
        let p = query_parts("add Dana to the #launch channel");
        assert_eq!(p.payload, ["launch"]);
        let p = query_parts("log 3 hours of work on PROJ-123");
        assert_eq!(p.core, "log hours of work on");
        let p = query_parts("merge the pull request once CI is green");
        assert_eq!(p.core, "merge the pull request");
        let p = query_parts("post \"build is red, see logs\" to Slack");
        assert_eq!(p.core, "post to Slack");
        let p = query_parts("cancel tomorrow's standup");
        assert_eq!(p.core, "cancel standup");
        // ids a vendor minted and phone numbers are payload; API words with digits are not
        let p = query_parts("refund ch_3NfYh2KZ on order ord_8812 and text +447700900123");
        assert_eq!(p.core, "refund on order and text");
        let p = query_parts("store NPM_TOKEN as a secret of acme/web");
        assert_eq!(p.core, "store as a secret of");
        let p = query_parts("POST /v1/refunds with oauth2 and a sha256 of the s3_bucket");
        assert_eq!(
            p.core,
            "POST /v1/refunds with oauth2 and a sha256 of the s3_bucket"
        );
        let p = query_parts("find the Slack user whose email is jane@acme.com");
        assert_eq!(p.payload, ["jane", "acme", "com"]);
        // "that" pointing at a thing is not a clause; words like s3 and v2 are names
        assert_eq!(
            query_parts("mark that email as read").core,
            "mark that email as read"
        );
        assert_eq!(
            query_parts("list objects in S3 bucket").payload,
            Vec::<String>::new()
        );
        // "saying" as the task's own verb, after a form of "be", opens no clause
        for q in [
            "what are viewers saying under my latest video",
            "what's the team saying about the launch",
            "see what people were saying about our brand",
        ] {
            assert_eq!(query_parts(q).core, q);
        }
        assert_eq!(
            query_parts("reply to the thread saying it's fixed").core,
            "reply to the thread"
        );
        assert_eq!(
            query_parts("is there a way to post a note saying we're closed").core,
            "is there a way to post a note"
        );
        for q in [
            "what are the people in #general saying about the outage",
            "what’s the team saying about the launch",
            "whats the team saying about the launch",
        ] {
            assert!(query_parts(q).core.contains("saying"), "{q}");
        }
        // a "be" of a relative clause leaves "saying" opening the payload
        assert_eq!(
            query_parts("text the customer who is waiting saying their order shipped").core,
            "text the customer who is waiting"
        );
        assert_eq!(
            query_parts("email the customers who are overdue saying their card will be charged")
                .core,
            "email the customers who are overdue"
        );
        // nothing but payload: the query stays whole
        let p = query_parts("tomorrow at 3pm");
        assert_eq!((p.core.as_str(), p.payload.len()), ("tomorrow at 3pm", 0));
    }
}
