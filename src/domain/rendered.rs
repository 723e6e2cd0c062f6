//! What the tool page shows of a tool's versions (issue 28.10): a description written in
//! CommonMark rendered as safe HTML, and the lines that changed between two versions.
//! Pure.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// `markdown` (CommonMark with tables and strikethrough, as OpenAPI descriptions use)
/// as HTML that is safe to place in a page: raw HTML in the source is shown as text,
/// never interpreted; a link keeps its target only when it is `http:`, `https:`,
/// `mailto:` or a fragment (`#…`), else it becomes plain text; images are replaced by
/// their alt text (a vendor's document must not make a person's browser fetch
/// anything). Every text is escaped by pulldown-cmark's writer.
pub fn markdown_html(markdown: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    // a link whose target was refused drops its start and end tags, keeping its text
    let mut dropped_links: Vec<bool> = Vec::new();
    // text as the parser decoded it (`&#x202E;` is a real override by now): what could
    // hide or reorder it is made visible (security review 32.16)
    let shown = |t: &str| pulldown_cmark::CowStr::from(super::markup::visible(t));
    let events = Parser::new_ext(markdown, options).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(shown(&raw))),
        Event::Text(t) => Some(Event::Text(shown(&t))),
        Event::Code(t) => Some(Event::Code(shown(&t))),
        // the alt text between them stays, as text
        Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => None,
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            if safe_link(&dest_url) {
                dropped_links.push(false);
                Some(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title: shown(&title),
                    id,
                }))
            } else {
                dropped_links.push(true);
                None
            }
        }
        Event::End(TagEnd::Link) => {
            if dropped_links.pop().unwrap_or(false) {
                None
            } else {
                Some(event)
            }
        }
        other => Some(other),
    });
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// Whether a link target may stay a link: `http:`, `https:`, `mailto:` or a fragment.
fn safe_link(dest: &str) -> bool {
    let d = dest.trim_start().to_ascii_lowercase();
    d.starts_with("https://")
        || d.starts_with("http://")
        || d.starts_with("mailto:")
        || d.starts_with('#')
}

/// One line of a diff between two versions' texts ([`line_changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    /// In both.
    Same(String),
    /// Only in the older text.
    Removed(String),
    /// Only in the newer text.
    Added(String),
    /// Unchanged lines left out between two groups of changes.
    Gap,
}

/// Lines of either text past which no diff is made (two versions of a wide schema that
/// differ everywhere would take the diff seconds): [`line_changes`] answers one
/// [`DiffLine::Gap`].
pub const DIFF_MAX_LINES: usize = 5000;

/// How long one diff may take before it settles for a coarser answer (`similar`'s
/// deadline).
const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_millis(100);

/// The lines that differ between `old` and `new` (a Myers line diff, cut short after
/// 100 ms), each group of changes with up to `context` unchanged lines around it, and
/// [`DiffLine::Gap`] between groups; empty when the texts are equal; one `Gap` when a
/// text has more than [`DIFF_MAX_LINES`] lines.
pub fn line_changes(old: &str, new: &str, context: usize) -> Vec<DiffLine> {
    if old == new {
        return vec![];
    }
    if old.lines().count() > DIFF_MAX_LINES || new.lines().count() > DIFF_MAX_LINES {
        return vec![DiffLine::Gap];
    }
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(old, new);
    let mut out = Vec::new();
    for (i, group) in diff.grouped_ops(context).iter().enumerate() {
        if i > 0 {
            out.push(DiffLine::Gap);
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let line = change.value().trim_end_matches(['\n', '\r']).to_string();
                out.push(match change.tag() {
                    similar::ChangeTag::Equal => DiffLine::Same(line),
                    similar::ChangeTag::Delete => DiffLine::Removed(line),
                    similar::ChangeTag::Insert => DiffLine::Added(line),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_and_nothing_runs() {
        let html = markdown_html(
            "List **users**.\n\n- one\n- two\n\n`GET /users` [docs](https://example.com/docs)",
        );
        assert!(html.contains("<strong>users</strong>"), "{html}");
        assert!(html.contains("<li>one</li>"), "{html}");
        assert!(html.contains("<code>GET /users</code>"), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.com/docs">docs</a>"#),
            "{html}"
        );
        for evil in [
            "<script>alert(1)</script>",
            "hi <img src=x onerror=alert(1)>",
            "[click](javascript:alert(1))",
            "[click]( JaVaScRiPt:alert(1))",
            "[x](data:text/html;base64,PHNjcmlwdD4=)",
            "![tracker](https://evil.example/pixel.png)",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<iframe src=https://evil.example></iframe>",
        ] {
            let html = markdown_html(evil);
            for bad in [
                "<script",
                "<img",
                "<iframe",
                "<a href=\"javascript",
                "href=\"data:",
                "onerror=\"",
                "evil.example/pixel",
            ] {
                assert!(!html.to_ascii_lowercase().contains(bad), "{evil} → {html}");
            }
        }
        // a refused link keeps its words; an image its alt text
        assert_eq!(
            markdown_html("[click](javascript:alert(1))"),
            "<p>click</p>\n"
        );
        assert_eq!(
            markdown_html("![a tracker](https://e.example/p.png)"),
            "<p>a tracker</p>\n"
        );
        assert!(markdown_html("<b>bold</b>").contains("&lt;b&gt;bold&lt;/b&gt;"));
        // a decoded reference that hides or reorders text is shown
        let html = markdown_html("pay &#x202E;evil&ZeroWidthSpace; `a\u{200B}b`");
        assert!(
            !html.contains('\u{202E}') && !html.contains('\u{200B}'),
            "{html}"
        );
        assert!(html.contains("U+202E"), "{html}");
    }

    #[test]
    fn changes_between_versions_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nH\n";
        let d = line_changes(old, new, 1);
        use DiffLine::*;
        assert_eq!(
            d,
            [
                Same("a".into()),
                Removed("b".into()),
                Added("B".into()),
                Same("c".into()),
                Gap,
                Same("g".into()),
                Removed("h".into()),
                Added("H".into()),
            ]
        );
        assert!(line_changes("same\n", "same\n", 3).is_empty());
        let wide = "x\n".repeat(DIFF_MAX_LINES + 1);
        assert_eq!(line_changes(&wide, "y\n", 3), [Gap]);
    }
}
