//! Markdown: cut a page into sections at every heading (wherever it sits: in a list, a quote,
//! setext or ATX), so no chunk ever mixes two sections. Each section keeps its heading
//! breadcrumb and the anchor the site generator gives that heading.

use std::collections::HashMap;

use pulldown_cmark::{
    CodeBlockKind, Event, HeadingLevel, MetadataBlockKind, Options, Parser, Tag, TagEnd,
};

use super::{assemble, collapse_ws, ensure_blank_line, is_directive, ParsedPage, RawSection};
use crate::config::SlugStyle;

/// Makes heading ids the way the site generator does, repeats numbered `-1`, `-2`...
pub struct Slugger {
    style: SlugStyle,
    seen: HashMap<String, usize>,
}

impl Slugger {
    pub fn new(style: SlugStyle) -> Self {
        Slugger {
            style,
            seen: HashMap::new(),
        }
    }

    pub fn slug(&mut self, heading: &str) -> String {
        let mut base = String::new();
        for c in heading.trim().chars() {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                match self.style {
                    SlugStyle::Github => base.extend(c.to_lowercase()),
                    SlugStyle::Mdbook => base.push(c.to_ascii_lowercase()),
                }
            } else if c.is_whitespace() {
                base.push('-');
            }
        }
        self.unique(base)
    }

    /// Registers an id given explicitly (`{#id}`), so later generated ids avoid it.
    pub fn unique(&mut self, base: String) -> String {
        let n = self.seen.entry(base.clone()).or_insert(0);
        let id = if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        *n += 1;
        if id != base {
            self.seen.entry(id.clone()).or_insert(1);
        }
        id
    }
}

/// What front matter says about a page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontMatter {
    /// `title`.
    pub title: Option<String>,
    /// `lang` or `language` (a BCP 47 tag).
    pub lang: Option<String>,
}

/// Reads YAML (`---`) or TOML (`+++`) front matter, found by pulldown-cmark's metadata-block
/// rules, with a real parser: only top-level keys count (a nested `seo: title:` is not the
/// page's title). Front matter that does not parse is ignored, like a missing one.
fn front_matter(body: &str) -> FrontMatter {
    let mut events = parser(body);
    let Some(Event::Start(Tag::MetadataBlock(kind))) = events.next() else {
        return FrontMatter::default();
    };
    let mut text = String::new();
    for event in events {
        match event {
            Event::Text(t) => text.push_str(&t),
            Event::End(TagEnd::MetadataBlock(_)) => break,
            _ => {}
        }
    }
    // Deserialized into the keys Lantern reads: other keys, and nested tables with a `title`
    // of their own, are not looked at.
    let keys: Option<FrontMatterKeys> = match kind {
        MetadataBlockKind::YamlStyle => serde_yaml_ng::from_str(&text).ok(),
        MetadataBlockKind::PlusesStyle => toml::from_str(&text).ok(),
    };
    let Some(keys) = keys else {
        return FrontMatter::default();
    };
    FrontMatter {
        title: keys.title.and_then(Scalar::text),
        lang: keys.lang.or(keys.language).and_then(Scalar::text),
    }
}

/// The top-level front-matter keys Lantern reads.
#[derive(serde::Deserialize)]
struct FrontMatterKeys {
    title: Option<Scalar>,
    lang: Option<Scalar>,
    language: Option<Scalar>,
}

/// A front-matter value: text or a number counts; a list or table under the key does not.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Int(i64),
    Float(f64),
    Other(serde::de::IgnoredAny),
}

impl Scalar {
    fn text(self) -> Option<String> {
        let s = match self {
            Scalar::Text(s) => s,
            Scalar::Int(n) => n.to_string(),
            Scalar::Float(n) => n.to_string(),
            Scalar::Other(_) => return None,
        };
        Some(s.trim().to_string()).filter(|s| !s.is_empty())
    }
}

/// Visible text of an HTML fragment in markdown, parsed as browsers do (html5ever, through
/// scraper): tags and comments removed, entities decoded, scripts and styles dropped.
fn html_text(html: &str) -> String {
    if !html.contains(['<', '&']) {
        return html.to_string();
    }
    let doc = scraper::Html::parse_fragment(html);
    let mut out = String::new();
    for node in doc.root_element().descendants() {
        let scraper::Node::Text(t) = node.value() else {
            continue;
        };
        let hidden = node.ancestors().any(|a| {
            a.value()
                .as_element()
                .is_some_and(|e| matches!(e.name(), "script" | "style" | "template" | "noscript"))
        });
        if !hidden {
            out.push_str(t);
        }
    }
    out
}

/// Title from a file name: `getting-started.md` -> `Getting started`.
pub fn title_from_path(rel: &str) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
    let words = stem.replace(['-', '_'], " ");
    let mut c = words.trim().chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => rel.to_string(),
    }
}

/// Front matter and the body without directive lines: the text that both the chunker and the
/// HTML renderer parse (front matter stays in it as a metadata block), so anchors agree.
pub fn clean_source(src: &str) -> (FrontMatter, String) {
    let body: String = src
        .split_inclusive('\n')
        .filter(|l| !is_directive(l))
        .collect();
    (front_matter(&body), body)
}

/// The markdown dialect Lantern reads (CommonMark plus the common GitHub extensions).
pub fn parser(body: &str) -> Parser<'_> {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
    Parser::new_ext(body, opts)
}

/// Cuts a markdown page into sections.
pub fn parse_markdown(src: &str, fallback_title: &str, slugs: SlugStyle) -> ParsedPage {
    let (fm, body) = clean_source(src);
    let fm_title = fm.title;

    struct Raw {
        level: Option<HeadingLevel>,
        heading: String,
        id: Option<String>,
        text: String,
    }
    let mut raws = vec![Raw {
        level: None,
        heading: String::new(),
        id: None,
        text: String::new(),
    }];
    let mut in_heading = false;
    let mut in_metadata = false;
    for event in parser(&body) {
        // Front matter was read above; it is not text.
        match event {
            Event::Start(Tag::MetadataBlock(_)) => in_metadata = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_metadata = false,
            _ if in_metadata => continue,
            _ => {}
        }
        let cur = raws.last_mut().expect("always one section");
        let buf = if in_heading {
            &mut cur.heading
        } else {
            &mut cur.text
        };
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                raws.push(Raw {
                    level: Some(level),
                    heading: String::new(),
                    id: id.map(|s| s.to_string()),
                    text: String::new(),
                });
                in_heading = true;
            }
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            Event::Text(t) | Event::Code(t) => buf.push_str(&t),
            Event::InlineHtml(t) | Event::Html(t) => buf.push_str(&html_text(&t)),
            // TeX, not HTML: `a<b` is text.
            Event::InlineMath(t) | Event::DisplayMath(t) => buf.push_str(&t),
            Event::FootnoteReference(t) => {
                buf.push('[');
                buf.push_str(&t);
                buf.push(']');
            }
            Event::SoftBreak => buf.push(if in_heading { ' ' } else { '\n' }),
            Event::HardBreak => buf.push('\n'),
            Event::Start(Tag::Item) => buf.push_str("- "),
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_) | CodeBlockKind::Indented))
            | Event::Start(Tag::Paragraph) => ensure_blank_line(buf),
            Event::End(TagEnd::TableCell) => buf.push_str(" | "),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::HtmlBlock
                | TagEnd::Table
                | TagEnd::List(_)
                | TagEnd::FootnoteDefinition,
            ) => ensure_blank_line(buf),
            Event::End(TagEnd::Item | TagEnd::TableHead | TagEnd::TableRow)
                if !buf.ends_with('\n') =>
            {
                buf.push('\n')
            }
            Event::Rule => ensure_blank_line(buf),
            _ => {}
        }
    }

    let mut slugger = Slugger::new(slugs);
    let raws = raws
        .into_iter()
        .map(|raw| {
            let anchor = match (raw.level, raw.id) {
                (None, _) => String::new(),
                (Some(_), Some(id)) => slugger.unique(id),
                (Some(_), None) => slugger.slug(&collapse_ws(&raw.heading)),
            };
            RawSection {
                level: raw.level.map_or(0, |l| l as u8),
                heading: raw.heading,
                anchor,
                text: raw.text,
            }
        })
        .collect();
    let page = assemble(fm_title, fallback_title, raws);
    ParsedPage {
        title: page.title,
        lang: fm.lang,
        sections: page.sections,
        anchors: page.anchors,
        folded_sections: page.folded_sections,
        cut_headings: page.cut_headings,
        ..ParsedPage::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> ParsedPage {
        parse_markdown(src, "Fallback", SlugStyle::Github)
    }

    #[test]
    fn sections_split_at_every_heading_with_breadcrumbs() {
        let p = parse("intro text\n\n# Guide\n\nguide text\n\n## Install\n\ninstall text\n\n### On Linux\n\nlinux\n\n## Use\n\nuse text\n");
        assert_eq!(p.title, "Guide");
        let got: Vec<(String, &str, &str)> = p
            .sections
            .iter()
            .map(|s| (s.breadcrumb.join(" > "), s.anchor.as_str(), s.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Guide".into(), "", "intro text"),
                ("Guide".into(), "guide", "guide text"),
                ("Guide > Install".into(), "install", "install text"),
                ("Guide > Install > On Linux".into(), "on-linux", "linux"),
                ("Guide > Use".into(), "use", "use text"),
            ]
        );
    }

    #[test]
    fn html_in_markdown_keeps_its_text_and_not_its_scripts() {
        let p = parse(
            "# T\n\nPress <kbd>Ctrl</kbd>&nbsp;K &amp; type.\n\n<div class=\"note\">\n<p>Tom &eacute;t&eacute; &lt;ok&gt;</p>\n<script>alert(1)</script><style>p{}</style>\n</div>\n\nMath $a<b$ stays.\n",
        );
        let text = &p.sections[0].text;
        assert!(text.contains("Press Ctrl\u{a0}K & type."), "{text:?}");
        assert!(text.contains("Tom été <ok>"), "{text:?}");
        assert!(!text.contains("alert") && !text.contains("p{}"), "{text:?}");
        assert!(!text.contains("<p>") && !text.contains("class"), "{text:?}");
    }

    #[test]
    fn setext_headings_and_duplicates_get_site_anchors() {
        let p = parse("Title\n=====\n\nA\n\nSame\n----\n\nb\n\nSame\n----\n\nc\n\n## Same\n\nd\n");
        let anchors: Vec<&str> = p.sections.iter().map(|s| s.anchor.as_str()).collect();
        assert_eq!(anchors, vec!["title", "same", "same-1", "same-2"]);
    }

    #[test]
    fn headings_in_lists_and_quotes_start_sections() {
        let p = parse(
            "# T\n\n- item\n- ## In a list\n  after list heading\n\n> ## Quoted\n> quoted body\n",
        );
        let crumbs: Vec<String> = p
            .sections
            .iter()
            .map(|s| s.breadcrumb.join(" > "))
            .collect();
        assert!(crumbs.contains(&"T > In a list".to_string()), "{crumbs:?}");
        assert!(crumbs.contains(&"T > Quoted".to_string()), "{crumbs:?}");
        let quoted = p.sections.iter().find(|s| s.anchor == "quoted").unwrap();
        assert_eq!(quoted.text, "quoted body");
    }

    #[test]
    fn code_fences_keep_hash_lines_as_text() {
        let p = parse("# T\n\n```sh\n# not a heading\nls -la\n```\n\n## Next\n\nx\n");
        assert_eq!(p.sections.len(), 2);
        assert!(p.sections[0].text.contains("# not a heading\nls -la"));
    }

    #[test]
    fn front_matter_gives_title_and_is_not_text() {
        let p = parse("---\ntitle: \"Configuring\"\nweight: 3\n---\n\n## Keys\n\nbody\n");
        assert_eq!(p.title, "Configuring");
        assert_eq!(p.lang, None);
        assert_eq!(p.sections[0].breadcrumb, vec!["Configuring", "Keys"]);
        assert!(!p.sections.iter().any(|s| s.text.contains("weight")));
        // Only top-level keys name the page; nested ones belong to their table.
        let nested = parse("---\nseo:\n  title: SEO text\nlang: de\n---\n\n# Echt\n\nbody\n");
        assert_eq!(nested.title, "Echt");
        assert_eq!(nested.lang.as_deref(), Some("de"));
        let toml = parse("+++\n[extra]\ntitle = \"no\"\n+++\n\n# Yes\n\nbody\n");
        assert_eq!(toml.title, "Yes");
        let toml = parse("+++\ntitle = 2024\nlanguage = \"fr\"\n+++\n\nbody\n");
        assert_eq!(
            (toml.title.as_str(), toml.lang.as_deref()),
            ("2024", Some("fr"))
        );
        // A list where a title should be, or front matter that does not parse, names nothing.
        assert_eq!(
            parse("---\ntitle: [a, b]\nlang: de\n---\n\n# H\n\nx\n").title,
            "H"
        );
        assert_eq!(
            parse("---\ntitle: [a, b]\nlang: de\n---\n\n# H\n\nx\n")
                .lang
                .as_deref(),
            Some("de")
        );
        assert_eq!(
            parse("---\ntitle: \"unclosed\n---\n\n# H\n\nx\n").title,
            "H"
        );
    }

    #[test]
    fn a_page_opening_with_h2_takes_its_title_from_it() {
        let p = parse("## Shared State\n\nintro\n\n### Mutexes\n\nlocks\n");
        assert_eq!(p.title, "Shared State");
        assert_eq!(p.sections[0].breadcrumb, vec!["Shared State"]);
        assert_eq!(p.sections[1].breadcrumb, vec!["Shared State", "Mutexes"]);
        assert_eq!(parse("text first\n\n## Later\n\nx\n").title, "Fallback");
    }

    #[test]
    fn empty_sections_are_dropped_but_named_in_children() {
        let p = parse("# T\n\n## Empty\n\n### Child\n\ntext\n");
        assert_eq!(p.sections.len(), 1);
        assert_eq!(p.sections[0].breadcrumb, vec!["T", "Empty", "Child"]);
    }

    #[test]
    fn html_blocks_become_text_and_explicit_ids_win() {
        let p = parse("# T {#top}\n\n<div class=\"x\">Some <b>bold</b> &amp; text</div>\n\n## Other {#custom}\n\ny\n");
        assert_eq!(p.sections[0].anchor, "top");
        assert!(
            p.sections[0].text.contains("Some bold & text"),
            "{:?}",
            p.sections[0].text
        );
        assert_eq!(p.sections[1].anchor, "custom");
    }

    #[test]
    fn directive_lines_are_dropped() {
        let p = parse("# T\n\n```rust\n{{#rustdoc_include ../listings/x.rs:here}}\n```\n\n{* ../../docs_src/a.py hl[3] *}\n\nkept\n");
        let all: String = p.sections.iter().map(|s| s.text.clone()).collect();
        assert!(!all.contains("{{#"), "{all}");
        assert!(!all.contains("docs_src"), "{all}");
        assert!(all.contains("kept"));
    }

    #[test]
    fn no_words_are_lost() {
        let src = "Intro words here.\n\n# Page\n\nFirst *para* with `code` and [a link](x.md).\n\n- list one\n- list two\n\n| a | b |\n|---|---|\n| c | d |\n\n## Sub\n\n> quoted words\n\n```\nfn main() {}\n```\n\nfootnote[^1].\n\n[^1]: the note.\n";
        let p = parse(src);
        let all: String = p
            .sections
            .iter()
            .map(|s| format!("{} {}\n", s.breadcrumb.join(" "), s.text))
            .collect();
        for w in [
            "Intro", "First", "para", "code", "link", "one", "two", "c", "d", "quoted", "main",
            "note", "Sub",
        ] {
            assert!(all.contains(w), "lost {w:?} in {all:?}");
        }
    }

    #[test]
    fn broken_markdown_keeps_its_words_and_a_title() {
        // Each source with the words that must survive its damage.
        for (src, kept) in [
            (
                "```\nunclosed fence\n# heading in fence",
                &["unclosed", "fence"][..],
            ),
            ("<div>\n# x", &[][..]),
            ("[link](", &["link"][..]),
            ("# \n\n#\n", &[][..]),
            ("\u{0}\u{1}", &[][..]),
            ("|a|\n|-|\n|b|c|d|", &["a", "b"][..]),
            ("> > > - - - # deep", &["deep"][..]),
        ] {
            let page = parse(src);
            assert!(!page.title.trim().is_empty(), "{src:?}: no title");
            let text: String = page.sections.iter().map(|s| s.text.as_str()).collect();
            let all = format!("{} {text}", page.title);
            for w in kept {
                assert!(all.contains(w), "{src:?}: lost {w:?} in {all:?}");
            }
            // A heading inside an unclosed fence is code, not a section.
            assert!(
                page.sections
                    .iter()
                    .all(|s| !s.breadcrumb.iter().any(|b| b == "heading in fence")),
                "{src:?}"
            );
        }
    }
}
