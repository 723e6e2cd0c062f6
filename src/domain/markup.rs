//! Descriptions as models read them (issue 12.14): OpenAPI documents write descriptions
//! in CommonMark, but many carry HTML (`<p>`, `<br>`, anchors, lists). Those are served
//! as Markdown, converted by htmd (a turndown.js port over html5ever), in tools/list,
//! find_tool and the console alike; text without HTML tags is left exactly as written.

/// HTML elements that mark a description as HTML (ASCII, lower case).
const TAGS: &[&str] = &[
    "a",
    "b",
    "blockquote",
    "br",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "tt",
    "u",
    "ul",
];

/// Whether `text` holds an HTML element of [`TAGS`] (`<p>`, `</a>`, `<br/>`, `<a href`)
/// outside Markdown code: a placeholder like `<token>`, a comparison like `a < b` or a
/// tag inside backticks is not HTML.
pub fn has_html(text: &str) -> bool {
    tag_count(text) > 0
}

/// `text` without Markdown code (fenced blocks and backtick spans).
fn without_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut in_span = false;
        for c in line.chars() {
            if c == '`' {
                in_span = !in_span;
            } else if !in_span {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// How many HTML elements of [`TAGS`] open or close in `text` outside Markdown code.
fn tag_count(text: &str) -> usize {
    let text = without_code(text);
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &bytes[i..]) {
        let mut j = i + off + 1;
        if bytes.get(j) == Some(&b'/') {
            j += 1;
        }
        let start = j;
        while j < bytes.len() && bytes[j].is_ascii_alphanumeric() {
            j += 1;
        }
        let name = text[start..j].to_ascii_lowercase();
        let ends = matches!(bytes.get(j), Some(b'>' | b' ' | b'/' | b'\n' | b'\t'));
        if ends && TAGS.contains(&name.as_str()) {
            count += 1;
        }
        i = i + off + 1;
    }
    count
}

/// Whether `text` is written in HTML rather than Markdown with a stray tag: it starts
/// with an element, or holds several and no Markdown of its own (fences, links, lists,
/// headings, emphasis).
fn is_html_text(text: &str) -> bool {
    let n = tag_count(text);
    if n == 0 {
        return false;
    }
    let t = text.trim_start();
    let first = &t[..t.find('>').map_or(t.len(), |i| i + 1)];
    let starts_with_tag = t.starts_with('<') && tag_count(first) > 0;
    let markdown = ["```", "](", "\n- ", "\n* ", "\n#", "**", "\n1. "]
        .iter()
        .any(|m| text.contains(m));
    starts_with_tag || (n >= 3 && !markdown)
}

/// `text` with its HTML turned into Markdown (paragraphs, line breaks, links, lists,
/// code, emphasis; entities decoded; runs of blank lines collapsed) when it is written
/// in HTML; Markdown with a stray `<br>` keeps its Markdown and gets a line break; any
/// other text is unchanged, as is text that cannot be converted.
pub fn html_to_markdown(text: &str) -> String {
    if !is_html_text(text) {
        if tag_count(text) == 0 {
            return text.to_string();
        }
        let mut out = text.to_string();
        for br in ["<br>", "<br/>", "<br />", "<BR>", "<BR/>", "<BR />"] {
            out = out.replace(br, "\n");
        }
        return out;
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["script", "style"])
        .build();
    match converter.convert(text) {
        Ok(md) => {
            let mut out = String::with_capacity(md.len());
            let mut blank = 0;
            for line in md.lines() {
                if line.trim().is_empty() {
                    blank += 1;
                    if blank > 1 {
                        continue;
                    }
                } else {
                    blank = 0;
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
            out.trim().to_string()
        }
        Err(_) => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_and_plain_text_stays() {
        assert!(has_html("<p>Lists pets.</p>"));
        assert!(has_html("one<br/>two"));
        assert!(has_html("see <a href=\"https://x.test\">docs</a>"));
        assert!(!has_html("Send <token> in the header"));
        assert!(!has_html("a < b and c > d"));
        assert!(!has_html("Markdown **stays** as `is`"));
        let md = html_to_markdown(
            "<p>Lists the <b>open</b> issues.</p><p>See <a href=\"https://docs.example.com/issues\">the docs</a> &amp; more.</p><ul><li>one</li><li>two</li></ul>",
        );
        assert!(!md.contains('<'), "{md}");
        assert!(md.contains("**open**"), "{md}");
        assert!(
            md.contains("[the docs](https://docs.example.com/issues)"),
            "{md}"
        );
        assert!(md.contains("& more"), "{md}");
        assert!(md.contains("one") && md.contains("two"), "{md}");
        assert!(!md.contains("\n\n\n"), "{md}");
        let plain = "Get a pet.\n\nReturns <id> too.";
        assert_eq!(html_to_markdown(plain), plain);
        // Markdown with one stray tag keeps its Markdown (and the placeholders)
        let md = "Lists the repo's `team_slug` values.<br>Send <token> in the header.\n\n- first_item\n- second_item\n\n```\ncurl -H 'X: <value>' https://x\n```\nSee [the docs](https://x.test/a_b).";
        let out = html_to_markdown(md);
        assert!(
            out.contains("`team_slug`") && out.contains("<token>") && out.contains("- first_item"),
            "{out}"
        );
        assert!(
            out.contains("[the docs](https://x.test/a_b)") && out.contains("<value>"),
            "{out}"
        );
        assert!(!out.contains("<br>"), "{out}");
        // a tag inside backticks is code, not HTML
        let code = "Pass e.g. `<b>` or `<i>` as the marker.";
        assert_eq!(html_to_markdown(code), code);
    }
}

/// Whether `c` is a character that hides or reorders text without being seen: a
/// bidirectional control, a zero-width character or a tag character (the set
/// [`visible`] marks, control characters aside).
pub fn hides(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
}

/// `text` with every character that could hide or reorder what a person reads shown as
/// a visible `⟨U+XXXX⟩`: Unicode bidirectional controls (U+061C, U+200E, U+200F,
/// U+202A–U+202E, U+2066–U+2069; TR #9, "Trojan Source", CVE-2021-42574), zero-width
/// characters (U+200B–U+200D, U+2060, U+FEFF), tag characters (U+E0000–U+E007F) and
/// control characters but newline and tab (a terminal escape rewrites what a CLI
/// prints). For agent-written text shown to people (security review 32.16).
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = hides(c) || (c.is_control() && c != '\n' && c != '\t');
        if hidden {
            out.push_str(&format!("⟨U+{:04X}⟩", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod visible_tests {
    use super::visible;

    #[test]
    fn hidden_characters_are_shown() {
        assert_eq!(
            visible("a\u{202E}b\u{200B}c\u{E0041}\u{1b}[2J\n"),
            "a⟨U+202E⟩b⟨U+200B⟩c⟨U+E0041⟩⟨U+001B⟩[2J\n"
        );
        assert_eq!(visible("plain text, é"), "plain text, é");
    }
}
