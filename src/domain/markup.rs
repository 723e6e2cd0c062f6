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

/// Whether `text` holds an HTML element of [`TAGS`] (`<p>`, `</a>`, `<br/>`, `<a href`):
/// a placeholder like `<token>` or a comparison like `a < b` is not HTML.
pub fn has_html(text: &str) -> bool {
    let bytes = text.as_bytes();
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
            return true;
        }
        i = i + off + 1;
    }
    false
}

/// `text` with its HTML turned into Markdown (paragraphs, line breaks, links, lists,
/// code, emphasis; entities decoded; runs of blank lines collapsed), or unchanged when
/// it has no HTML ([`has_html`]) or cannot be converted.
pub fn html_to_markdown(text: &str) -> String {
    if !has_html(text) {
        return text.to_string();
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
    }
}
