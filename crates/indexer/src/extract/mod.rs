//! Extraction: a source file becomes a page title and its sections, each with a breadcrumb
//! and an anchor. One module per input format (markdown sources, built HTML of any site
//! generator); everything after this (chunking, embedding, the bundle) is the same for both.
//! Both formats hand their headings to [`assemble`], so titles and breadcrumbs follow one rule.

mod chrome;
mod html;
mod markdown;
mod walk;

pub use chrome::{repeated_sections, Chrome};
pub use html::{chrome_keys, parse_html, HtmlSkip};
pub use markdown::{clean_source, parser, title_from_path, FrontMatter};

use crate::config::{is_html_path, SlugStyle};

/// One heading's worth of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Page title, then the enclosing headings down to this one.
    pub breadcrumb: Vec<String>,
    /// The heading's id; empty for text before the first heading.
    pub anchor: String,
    /// The section's text, headings and markup taken out.
    pub text: String,
}

/// A parsed page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedPage {
    /// The page title.
    pub title: String,
    /// The page's language (front matter `lang`, `<html lang>`), if it names one.
    pub lang: Option<String>,
    /// The page's sections, in document order.
    pub sections: Vec<Section>,
    /// The id of every heading in document order, empty sections' included.
    pub anchors: Vec<String>,
    /// `key:value` facts shown with results (`data-lantern-meta`), in document order.
    pub meta: Vec<(String, String)>,
    /// `key:value` pairs results can be filtered by (`data-lantern-filter`), in document order.
    pub filters: Vec<(String, String)>,
    /// Headings past [`MAX_SECTIONS`] whose text went into the last section kept.
    pub folded_sections: usize,
    /// Headings (the title included) cut to [`MAX_HEADING_CHARS`].
    pub cut_headings: usize,
    /// Section anchors that several elements of a built page carry as their id (links to
    /// them land on the first).
    pub duplicate_ids: Vec<String>,
}

/// The longest heading or title kept, in characters. Every chunk under a heading carries it
/// in its breadcrumb: a 1 MB `<h1>` over 30 sections made a 126 MB bundle. Real headings stay
/// far below (the longest in the shared corpora is about 90).
pub const MAX_HEADING_CHARS: usize = 300;

/// A heading as readers see it: whitespace collapsed, the invisible characters that reorder
/// or hide text (bidi controls, zero-width characters) removed, line and paragraph separators
/// made spaces, and cut to [`MAX_HEADING_CHARS`]. Returns whether it was cut.
fn visible_heading(raw: &str) -> (String, bool) {
    let shown: String = raw
        .chars()
        .filter(|c| !is_invisible(*c))
        .map(|c| {
            if matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let shown = collapse_ws(&shown);
    match shown.char_indices().nth(MAX_HEADING_CHARS) {
        Some((at, _)) => (format!("{}…", shown[..at].trim_end()), true),
        None => (shown, false),
    }
}

/// Characters with no glyph that change how the text around them reads: bidi embeddings,
/// overrides and isolates (U+202E shows "txt.exe" as "exe.txt"), marks and zero-width ones.
/// Left out of headings here and of what the CLI prints.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{061C}')
}

/// Sections one page keeps at most; the text of any further heading is folded into the last
/// one kept (still searchable, one link fewer). Real pages stay far below (the largest in the
/// shared corpora has a few dozen); a page of 200,000 tiny sections made 200,000 chunks, each
/// embedded on its own, where its 3.6 MB of text make a few thousand.
pub const MAX_SECTIONS: usize = 2_000;

/// A page's title, its sections and every heading's anchor, from [`assemble`].
pub(crate) struct Assembled {
    pub title: String,
    pub sections: Vec<Section>,
    pub anchors: Vec<String>,
    pub folded_sections: usize,
    pub cut_headings: usize,
}

/// Reads one markdown source. `fallback_title` names a page that states no title of its own.
pub fn extract(text: &str, fallback_title: &str, slugs: SlugStyle) -> ParsedPage {
    markdown::parse_markdown(text, fallback_title, slugs)
}

/// Reads one source file of either format, by its extension; a built page without the site's
/// `chrome`.
pub fn extract_source(
    rel: &str,
    text: &str,
    slugs: SlugStyle,
    chrome: &Chrome,
) -> Result<ParsedPage, HtmlSkip> {
    let fallback = title_from_path(rel);
    if is_html_path(rel) {
        parse_html(text, &fallback, chrome)
    } else {
        Ok(extract(text, &fallback, slugs))
    }
}

/// A heading (or the text before the first one) as a format's parser found it.
pub(crate) struct RawSection {
    /// 1-6; 0 for the text before the first heading.
    pub level: u8,
    pub heading: String,
    /// The anchor the site links to (already made unique by the format).
    pub anchor: String,
    pub text: String,
}

/// The page title and breadcrumbs from a page's headings. The title is `explicit` (front
/// matter, `data-lantern-title`); else the first h1; else the first heading when it opens the
/// page (mdBook sub-chapters start at h2); else `fallback`.
pub(crate) fn assemble(
    explicit: Option<String>,
    fallback: &str,
    raws: Vec<RawSection>,
) -> Assembled {
    let mut cut_headings = 0;
    let heading_of = |r: Option<&RawSection>| {
        r.map(|r| visible_heading(&r.heading).0)
            .filter(|h| !h.is_empty())
    };
    let first_h1 = heading_of(raws.iter().find(|r| r.level == 1));
    let opening = raws
        .iter()
        .position(|r| r.level > 0)
        .filter(|&i| raws[..i].iter().all(|r| r.text.trim().is_empty()))
        .and_then(|i| heading_of(raws.get(i)));
    let (title, title_cut) = visible_heading(
        &explicit
            .or(first_h1)
            .or(opening)
            .unwrap_or_else(|| fallback.to_string()),
    );
    cut_headings += title_cut as usize;

    let mut stack: Vec<(u8, String)> = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut anchors = Vec::new();
    let mut folded_sections = 0;
    for raw in raws {
        let (heading, cut) = visible_heading(&raw.heading);
        cut_headings += cut as usize;
        if raw.level > 0 {
            anchors.push(raw.anchor.clone());
            while stack.last().is_some_and(|(l, _)| *l >= raw.level) {
                stack.pop();
            }
            stack.push((raw.level, heading.clone()));
        }
        let mut breadcrumb = vec![title.clone()];
        for (i, (_, h)) in stack.iter().enumerate() {
            // The heading that names the page is already the title.
            let is_title = i == 0 && *h == title;
            if !is_title && !h.is_empty() {
                breadcrumb.push(h.clone());
            }
        }
        let text = tidy(&raw.text);
        if text.is_empty() {
            continue;
        }
        if sections.len() >= MAX_SECTIONS {
            if let Some(last) = sections.last_mut() {
                last.text.push_str("\n\n");
                if !heading.is_empty() {
                    last.text.push_str(&heading);
                    last.text.push_str("\n\n");
                }
                last.text.push_str(&text);
                folded_sections += 1;
                continue;
            }
        }
        sections.push(Section {
            breadcrumb,
            anchor: raw.anchor,
            text,
        });
    }
    Assembled {
        title,
        sections,
        anchors,
        folded_sections,
        cut_headings,
    }
}

/// mdBook `{{#include ...}}` and mkdocs `{* ... *}` lines pull in other files at site build
/// time; their arguments are not prose, so they are dropped (from markdown before it is read,
/// and from built pages where a generator left one unexpanded).
pub(crate) fn is_directive(line: &str) -> bool {
    let t = line.trim();
    (t.starts_with("{{#") && t.ends_with("}}")) || (t.starts_with("{*") && t.ends_with("*}"))
}

pub(crate) fn ensure_blank_line(buf: &mut String) {
    if buf.is_empty() || buf.ends_with("\n\n") {
        return;
    }
    if buf.ends_with('\n') {
        buf.push('\n');
    } else {
        buf.push_str("\n\n");
    }
}

pub(crate) fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Trims trailing spaces and runs of blank lines; keeps code indentation.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_past_the_cap_are_folded_into_the_last_section_kept() {
        let over = 25;
        let mut md = String::from("# Big page\n\n");
        for i in 0..MAX_SECTIONS + over {
            md.push_str(&format!("## Part {i}\n\nword{i} here.\n\n"));
        }
        let page = extract(&md, "big", SlugStyle::default());
        assert_eq!(page.sections.len(), MAX_SECTIONS);
        assert_eq!(page.folded_sections, over);
        // Nothing is lost: the last heading and its text are in the last section kept.
        let last = page.sections.last().unwrap();
        let tail = MAX_SECTIONS + over - 1;
        assert!(last.text.contains(&format!("Part {tail}")), "{}", last.text);
        assert!(last.text.contains(&format!("word{tail} here")));
        // Every heading still has its anchor.
        assert_eq!(page.anchors.len(), MAX_SECTIONS + over + 1);
    }

    #[test]
    fn pages_under_the_cap_fold_nothing() {
        let page = extract("# A\n\ntext\n\n## B\n\nmore\n", "a", SlugStyle::default());
        assert_eq!(page.sections.len(), 2);
        assert_eq!(page.folded_sections, 0);
    }

    #[test]
    fn giant_and_invisible_headings_are_cut_and_cleaned() {
        let giant = "word ".repeat(200_000);
        let mut md = format!("# {giant}\n\nintro\n\n");
        for i in 0..30 {
            md.push_str(&format!(
                "## Part {i}\u{202E}txt.exe\u{200B}\n\ntext {i}\n\n"
            ));
        }
        let page = extract(&md, "big", SlugStyle::default());
        assert_eq!(page.cut_headings, 1);
        assert!(page.title.chars().count() <= MAX_HEADING_CHARS + 1);
        assert!(page.title.ends_with('…'));
        let bytes: usize = page
            .sections
            .iter()
            .map(|s| s.breadcrumb.iter().map(String::len).sum::<usize>())
            .sum();
        assert!(bytes < 31 * 400, "breadcrumbs stay small: {bytes}");
        let last = page.sections.last().unwrap();
        assert_eq!(last.breadcrumb.last().unwrap(), "Part 29txt.exe");
    }
}
