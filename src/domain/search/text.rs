//! Text for search (SPEC §3.4): Markdown and HTML reduced to plain text, identifiers split
//! into words, words stemmed (Snowball English, from `rust-stemmers`), stop words dropped.
//!
//! One [`Analyzer`] turns both a tool's search text and an agent's query into terms, so a
//! plural, a verb form or a camelCase identifier meets its other spellings.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use rust_stemmers::{Algorithm, Stemmer};

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

impl Analyzer {
    /// The stem of one lower-case word.
    pub fn stem(&self, word: &str) -> String {
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
    fn the_analyzer_stems_and_drops_stop_words() {
        let a = Analyzer::default();
        assert_eq!(a.terms("Creating the webhooks"), ["creat", "webhook"]);
        assert_eq!(a.terms("create a webhook"), ["creat", "webhook"]);
        assert_eq!(a.terms("listPullRequests"), a.terms("list pull request"));
    }
}
