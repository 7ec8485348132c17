//! Built HTML of any site generator: the page's content root cut into sections at its
//! headings, anchored by the ids the generator wrote (no slug guessing), with the page's
//! language, title, meta and filters. Parsed by html5ever (through scraper), so broken markup
//! is repaired the way a browser repairs it, and walked without recursion, so no nesting depth
//! can exhaust the stack.
//!
//! Attributes a site can set (Pagefind's `data-pagefind-*` spellings are read too, so a site
//! marked up for Pagefind needs no changes):
//! - `data-lantern-body`: index only these elements (else `<main>`, `<article>`,
//!   `[role=main]`, `<body>`, the first that exists);
//! - `data-lantern-ignore`: leave this element out;
//! - `data-lantern-title`: this element's text is the page title;
//! - `data-lantern-meta="key:value"` / `data-lantern-filter="key:value"` (or just `key`, the
//!   element's text being the value): facts shown with results, and values to filter by.

use ego_tree::iter::Edge;
use scraper::{ElementRef, Html, Node, Selector};

use super::chrome::{self, Chrome};
use super::walk::walk;
use super::{assemble, collapse_ws, ensure_blank_line, is_directive, ParsedPage, RawSection};

/// Why a built page is not indexed although it parsed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HtmlSkip {
    /// `<meta name="robots" content="noindex">`: the site asks search to leave it out
    /// (mdBook's print.html, which repeats every chapter, says so).
    #[error("marked noindex (<meta name=\"robots\">)")]
    NoIndex,
    /// `<meta http-equiv="refresh">`: a redirect stub, not content.
    #[error("a redirect page (<meta http-equiv=\"refresh\">)")]
    Redirect,
    /// Elements nested deeper than [`MAX_DEPTH`]: no page needs it, and the HTML tree builder
    /// slows down with the square of the depth (100,000 nested divs took minutes).
    #[error("elements nested {0} deep (the limit is {MAX_DEPTH})")]
    TooDeep(usize),
}

/// The deepest element nesting a page may have.
pub const MAX_DEPTH: usize = 512;

/// Elements that close themselves or are closed by the next of their kind: they do not deepen
/// the tree however they are written.
const NOT_NESTING: &[&str] = &[
    "p", "li", "dt", "dd", "tr", "td", "th", "option", "area", "base", "br", "col", "embed", "hr",
    "img", "input", "link", "meta", "source", "track", "wbr", "thead", "tbody",
];

/// An upper bound on how deep the page's elements nest, from its tags alone (before parsing,
/// so a hostile page costs one linear scan). As HTML5 parses: `<div/>` opens a div (the slash
/// closes an element only inside `<svg>` or `<math>`), and an end tag with no open element of
/// its name closes nothing.
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut open: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut foreign = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(off) = bytes[i..].iter().position(|&b| b == b'<') {
        i += off + 1;
        let closing = bytes.get(i) == Some(&b'/');
        let start = i + closing as usize;
        let end = bytes[start..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |n| start + n);
        if end == start {
            continue;
        }
        let name = text[start..end].to_ascii_lowercase();
        if NOT_NESTING.contains(&name.as_str()) {
            continue;
        }
        let is_foreign_root = name == "svg" || name == "math";
        let self_closing = foreign > 0
            && bytes[end..]
                .iter()
                .position(|&b| b == b'>')
                .is_some_and(|n| n > 0 && bytes[end + n - 1] == b'/');
        if closing {
            match open.get_mut(&name) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    depth = depth.saturating_sub(1);
                    if is_foreign_root {
                        foreign = foreign.saturating_sub(1);
                    }
                }
                // A stray end tag: the parser ignores it.
                _ => {}
            }
        } else if !self_closing {
            *open.entry(name).or_default() += 1;
            depth += 1;
            max = max.max(depth);
            if is_foreign_root {
                foreign += 1;
            }
        }
    }
    max
}

/// Elements whose text is never content.
const SKIPPED: &[&str] = &[
    "nav", "header", "footer", "aside", "script", "style", "template", "noscript", "svg", "iframe",
    "object", "canvas", "button", "select", "dialog",
];

/// Elements that end a line of text (so their words do not run together).
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "table",
    "thead",
    "tbody",
    "tr",
    "blockquote",
    "figure",
    "figcaption",
    "details",
    "summary",
    "hr",
    "address",
    "form",
    "fieldset",
    "caption",
];

/// At most this many meta or filter pairs per page, each key and value cut to a sane length:
/// they travel in every bundle and every result.
const MAX_PAIRS: usize = 64;
const MAX_KEY: usize = 64;
const MAX_VALUE: usize = 256;

fn selector(css: &str) -> Selector {
    Selector::parse(css).expect("a valid built-in selector")
}

/// ARIA landmarks that are never the content, whatever element carries them (Sphinx themes
/// mark their sidebars `role="navigation"` on a `<div>`).
const CHROME_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "search",
    "complementary",
];

fn ignored(node: ego_tree::NodeRef<'_, Node>, el: &scraper::node::Element) -> bool {
    if el.attr("data-lantern-ignore").is_some()
        || el.attr("data-pagefind-ignore").is_some()
        || el.attr("hidden").is_some()
        || el
            .attr("role")
            .is_some_and(|r| CHROME_ROLES.contains(&r.trim().to_ascii_lowercase().as_str()))
    {
        return true;
    }
    // A header holding a heading inside the content is the article's own (Docusaurus puts the
    // page's h1 there); any other header is site chrome.
    if el.name() == "header" {
        return !node.descendants().any(|d| {
            d.value()
                .as_element()
                .is_some_and(|e| heading_level(e.name()).is_some())
        });
    }
    // Sphinx's and MkDocs' permalink marks ("¶"), on headings and on API entries alike.
    if el.name() == "a" && el.classes().any(|c| c == "headerlink") {
        return true;
    }
    SKIPPED.contains(&el.name())
}

/// Parses a page that is to be indexed: refused when too deep to parse cheaply, marked
/// noindex or a redirect.
fn open(text: &str) -> Result<Html, HtmlSkip> {
    let depth = nesting_depth(text);
    if depth > MAX_DEPTH {
        return Err(HtmlSkip::TooDeep(depth));
    }
    let doc = Html::parse_document(text);
    for meta in doc.select(&selector("meta")) {
        let attr = |n: &str| meta.attr(n).unwrap_or("").to_ascii_lowercase();
        if attr("name") == "robots" && attr("content").contains("noindex") {
            return Err(HtmlSkip::NoIndex);
        }
        if attr("http-equiv") == "refresh" {
            return Err(HtmlSkip::Redirect);
        }
    }
    Ok(doc)
}

/// The fingerprints of a built page's blocks, for [`Chrome::learn`] over the whole site.
pub fn chrome_keys(text: &str) -> Result<Vec<u64>, HtmlSkip> {
    let doc = open(text)?;
    Ok(chrome::page_keys(&content_roots(&doc), ignored))
}

/// Reads one built page, leaving out the site's `chrome` (and the page's own table of
/// contents). `fallback_title` names a page with no heading and no `<title>`.
pub fn parse_html(
    text: &str,
    fallback_title: &str,
    chrome: &Chrome,
) -> Result<ParsedPage, HtmlSkip> {
    let doc = open(text)?;
    let lang = doc
        .root_element()
        .attr("lang")
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string);
    let explicit_title = doc
        .select(&selector("[data-lantern-title], [data-pagefind-title]"))
        .map(|e| clean_heading(&e.text().collect::<String>()))
        .find(|t| !t.is_empty());
    let head_title = doc
        .select(&selector("head > title"))
        .map(|e| collapse_ws(&e.text().collect::<String>()))
        .find(|t| !t.is_empty());

    let roots = content_roots(&doc);
    let hidden = chrome.hidden(&roots, ignored);
    let mut raws = sections(&roots, &hidden);
    for raw in &mut raws {
        if raw.text.lines().any(is_directive) {
            raw.text = raw
                .text
                .split_inclusive('\n')
                .filter(|l| !is_directive(l))
                .collect();
        }
    }
    let page = assemble(
        explicit_title,
        head_title.as_deref().unwrap_or(fallback_title),
        raws,
    );
    let duplicate_ids = duplicated(&doc, &page.anchors);
    Ok(ParsedPage {
        title: page.title,
        lang,
        sections: page.sections,
        anchors: page.anchors,
        folded_sections: page.folded_sections,
        cut_headings: page.cut_headings,
        duplicate_ids,
        meta: pairs(&doc, "[data-lantern-meta], [data-pagefind-meta]", "meta"),
        filters: pairs(
            &doc,
            "[data-lantern-filter], [data-pagefind-filter]",
            "filter",
        ),
    })
}

/// The sections' anchors that more than one element of the page carries as its id: a browser
/// takes a link to them to the first, which may not be the section's heading. At most
/// [`MAX_NAMED_IDS`], sorted.
fn duplicated(doc: &Html, anchors: &[String]) -> Vec<String> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for el in doc.select(&selector("[id]")) {
        if let Some(id) = el.value().id() {
            *counts.entry(id).or_default() += 1;
        }
    }
    let mut out: Vec<String> = anchors
        .iter()
        .filter(|a| !a.is_empty() && counts.get(a.as_str()).is_some_and(|&n| n > 1))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out.truncate(MAX_NAMED_IDS);
    out
}

/// Duplicate ids one page's warning names at most.
const MAX_NAMED_IDS: usize = 10;

/// The elements whose text is the page's content: every `[data-lantern-body]` (outermost
/// ones), else the first `<main>`, `<article>` or `[role=main]`, else `<body>`.
fn content_roots(doc: &Html) -> Vec<ElementRef<'_>> {
    let marked: Vec<ElementRef> = doc
        .select(&selector("[data-lantern-body], [data-pagefind-body]"))
        .collect();
    if !marked.is_empty() {
        let ids: Vec<_> = marked.iter().map(|e| e.id()).collect();
        return marked
            .iter()
            .filter(|e| !e.ancestors().any(|a| ids.contains(&a.id())))
            .copied()
            .collect();
    }
    for css in ["main", "article", "[role=main]", "body"] {
        if let Some(e) = doc.select(&selector(css)).next() {
            return vec![e];
        }
    }
    vec![doc.root_element()]
}

/// Cuts the roots' text at headings. Anchors are the heading's id, else an id or name inside
/// it, else the nearest element before it that has an id (a wrapping `<section id>`).
fn sections(
    roots: &[ElementRef<'_>],
    hidden: &std::collections::HashSet<ego_tree::NodeId>,
) -> Vec<RawSection> {
    let mut raws = vec![RawSection {
        level: 0,
        heading: String::new(),
        anchor: String::new(),
        text: String::new(),
    }];
    let mut last_id = String::new();
    for root in roots {
        let mut heading = None;
        let mut pre = 0usize;
        let skip = |node: ego_tree::NodeRef<'_, Node>, el: &scraper::node::Element| {
            ignored(node, el) || hidden.contains(&node.id())
        };
        for edge in walk(*root, skip) {
            match edge {
                Edge::Open(node) => {
                    let cur = raws.last_mut().expect("always one section");
                    match node.value() {
                        Node::Text(t) => {
                            if heading.is_some() {
                                push_flow(&mut cur.heading, t);
                            } else if pre > 0 {
                                cur.text.push_str(t);
                            } else {
                                push_flow(&mut cur.text, t);
                            }
                        }
                        Node::Element(el) => {
                            let name = el.name();
                            let own_id = el
                                .id()
                                .or_else(|| (name == "a").then(|| el.attr("name")).flatten())
                                .map(str::trim)
                                .filter(|i| !i.is_empty());
                            if let Some(level) = heading_level(name).filter(|_| heading.is_none()) {
                                raws.push(RawSection {
                                    level,
                                    heading: String::new(),
                                    anchor: own_id.unwrap_or("").to_string(),
                                    text: String::new(),
                                });
                                heading = Some((node.id(), last_id.clone()));
                                if let Some(id) = own_id {
                                    last_id = id.to_string();
                                }
                                continue;
                            }
                            if let Some(id) = own_id {
                                if heading.is_some() && cur.anchor.is_empty() {
                                    cur.anchor = id.to_string();
                                }
                                last_id = id.to_string();
                            }
                            if heading.is_some() {
                                continue;
                            }
                            match name {
                                "br" => cur.text.push('\n'),
                                "pre" => {
                                    ensure_blank_line(&mut cur.text);
                                    pre += 1;
                                }
                                "li" => {
                                    new_line(&mut cur.text);
                                    cur.text.push_str("- ");
                                }
                                "td" | "th"
                                    if !cur.text.ends_with(['\n', ' ']) && !cur.text.is_empty() =>
                                {
                                    cur.text.push(' ')
                                }
                                n if BLOCKS.contains(&n) => ensure_blank_line(&mut cur.text),
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
                Edge::Close(node) => {
                    let Node::Element(el) = node.value() else {
                        continue;
                    };
                    let cur = raws.last_mut().expect("always one section");
                    if let Some((hid, before)) = &heading {
                        if *hid == node.id() {
                            cur.heading = clean_heading(&cur.heading);
                            if cur.anchor.is_empty() {
                                cur.anchor = before.clone();
                            }
                            heading = None;
                        }
                        continue;
                    }
                    match el.name() {
                        "pre" => {
                            pre = pre.saturating_sub(1);
                            ensure_blank_line(&mut cur.text);
                        }
                        "li" | "tr" => new_line(&mut cur.text),
                        "td" | "th" => cur.text.push_str(" | "),
                        n if BLOCKS.contains(&n) => ensure_blank_line(&mut cur.text),
                        _ => {}
                    }
                }
            }
        }
        // A root cut off inside a heading (it cannot be, but a stray state must not leak).
        if let Some((_, before)) = heading {
            let cur = raws.last_mut().expect("always one section");
            if cur.anchor.is_empty() {
                cur.anchor = before;
            }
        }
        if let Some(cur) = raws.last_mut() {
            ensure_blank_line(&mut cur.text);
        }
    }
    raws
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// Text outside `<pre>`: runs of whitespace become one space, as a browser shows them.
fn push_flow(buf: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_whitespace() {
            if !buf.is_empty() && !buf.ends_with([' ', '\n']) {
                buf.push(' ');
            }
        } else {
            buf.push(c);
        }
    }
}

fn new_line(buf: &mut String) {
    if !buf.is_empty() && !buf.ends_with('\n') {
        buf.push('\n');
    }
}

/// Heading text without the permalink marks generators append (`¶` in Sphinx and MkDocs).
fn clean_heading(text: &str) -> String {
    collapse_ws(text.trim_end_matches(|c: char| c.is_whitespace() || "¶#§🔗".contains(c)))
}

/// `key:value` pairs from the elements `css` selects; `key` alone takes the element's text.
fn pairs(doc: &Html, css: &str, kind: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for el in doc.select(&selector(css)) {
        let spec = el
            .attr(&format!("data-lantern-{kind}"))
            .or_else(|| el.attr(&format!("data-pagefind-{kind}")))
            .unwrap_or("");
        let (key, value) = match spec.split_once(':') {
            Some((k, v)) => (k.trim().to_string(), collapse_ws(v)),
            None => (
                spec.trim().to_string(),
                collapse_ws(&el.text().collect::<String>()),
            ),
        };
        if key.is_empty() || value.is_empty() || key.chars().any(char::is_control) {
            continue;
        }
        let cut = |s: String, n: usize| s.chars().take(n).collect::<String>();
        let pair = (cut(key, MAX_KEY), cut(value, MAX_VALUE));
        if !out.contains(&pair) {
            out.push(pair);
        }
        if out.len() == MAX_PAIRS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(html: &str) -> ParsedPage {
        parse_html(html, "Fallback", &Chrome::none()).expect("indexed")
    }

    fn summary(p: &ParsedPage) -> Vec<(String, String, String)> {
        p.sections
            .iter()
            .map(|s| (s.breadcrumb.join(" > "), s.anchor.clone(), s.text.clone()))
            .collect()
    }

    #[test]
    fn main_content_is_cut_at_headings_with_the_ids_written() {
        let p = parse(
            r#"<!doctype html><html lang="de"><head><title>T - Site</title>
            <script>var leaked = "script text";</script></head>
            <body><nav>Sidebar link</nav><header>Site header</header>
            <main><h1 id="guide">Guide</h1><p>Intro   words
            here.</p><h2 id="install_1">Install</h2><ul><li>one</li><li>two</li></ul>
            <pre><code>fn main() {
    println!("hi");
}</code></pre><aside>aside text</aside>
            <h3>No id</h3><p>under it</p></main><footer>Footer text</footer></body></html>"#,
        );
        assert_eq!(p.title, "Guide");
        assert_eq!(p.lang.as_deref(), Some("de"));
        let s = summary(&p);
        assert_eq!(
            s[0],
            ("Guide".into(), "guide".into(), "Intro words here.".into())
        );
        assert_eq!(s[1].0, "Guide > Install");
        assert_eq!(s[1].1, "install_1");
        assert!(s[1].2.contains("- one\n- two"), "{:?}", s[1].2);
        assert!(
            s[1].2.contains("fn main() {\n    println!(\"hi\");\n}"),
            "{:?}",
            s[1].2
        );
        // A heading without an id links to the nearest id before it.
        assert_eq!(
            s[2],
            (
                "Guide > Install > No id".into(),
                "install_1".into(),
                "under it".into()
            )
        );
        let all = format!("{s:?}");
        for leaked in [
            "script text",
            "Sidebar",
            "Site header",
            "aside text",
            "Footer",
        ] {
            assert!(!all.contains(leaked), "{leaked} in {all}");
        }
        assert_eq!(p.anchors, vec!["guide", "install_1", "install_1"]);
    }

    #[test]
    fn anchors_that_several_elements_carry_are_named() {
        let p = parse(
            r#"<html><body><main><h1 id="top">T</h1><p>x</p>
            <h2 id="setup">Setup</h2><p>one</p><div id="setup">a widget</div>
            <h2 id="usage">Usage</h2><p>two</p></main></body></html>"#,
        );
        assert_eq!(p.duplicate_ids, vec!["setup"]);
        let clean =
            parse("<html><body><h1 id=a>A</h1><p>x</p><h2 id=b>B</h2><p>y</p></body></html>");
        assert!(clean.duplicate_ids.is_empty());
    }

    #[test]
    fn marked_bodies_ignores_titles_meta_and_filters() {
        let p = parse(
            r#"<html><head><title>Head title</title></head><body>
            <div data-lantern-body><h2 id="a">First</h2><p>kept
            <span data-lantern-ignore>dropped</span></p>
            <p data-lantern-filter="version:2.0">v</p>
            <span data-lantern-meta="author">Ada  Lovelace</span></div>
            <div>outside the body</div>
            <section data-pagefind-body><h2 id="b">Second</h2><p>also kept</p>
            <p data-pagefind-filter="version:3.0"></p><i data-lantern-title>Real Title</i>
            <p data-lantern-filter=":no key"></p></section>
            </body></html>"#,
        );
        assert_eq!(p.title, "Real Title");
        let all = format!("{:?}", summary(&p));
        assert!(all.contains("kept") && all.contains("also kept"), "{all}");
        assert!(
            !all.contains("dropped") && !all.contains("outside"),
            "{all}"
        );
        assert_eq!(
            p.filters,
            vec![
                ("version".into(), "2.0".into()),
                ("version".into(), "3.0".into())
            ]
        );
        assert_eq!(p.meta, vec![("author".into(), "Ada Lovelace".into())]);
    }

    #[test]
    fn an_article_header_with_the_title_is_content() {
        let p = parse(
            r#"<html><head><title>Intro | Site</title></head><body><header>Site chrome</header>
            <main><article><header><h1 id="intro">Intro</h1><p>byline</p></header>
            <p>Body text.</p><header><span>Share this</span></header></article></main></body></html>"#,
        );
        assert_eq!(p.title, "Intro");
        let all = format!("{:?}", p.sections);
        assert!(
            all.contains("byline") && all.contains("Body text."),
            "{all}"
        );
        assert!(
            !all.contains("Share this") && !all.contains("chrome"),
            "{all}"
        );
    }

    #[test]
    fn sphinx_and_mkdocs_headings_lose_their_permalink_marks() {
        let p = parse(
            r##"<html><body><div role="main"><section id="install"><h1>Install<a class="headerlink" href="#install">¶</a></h1>
            <p>text</p><section id="linux"><h2>On Linux<a class="headerlink" href="#linux">¶</a></h2><p>apt</p>
            </section></section></div></body></html>"##,
        );
        assert_eq!(p.title, "Install");
        assert_eq!(
            summary(&p),
            vec![
                ("Install".into(), "install".into(), "text".into()),
                ("Install > On Linux".into(), "linux".into(), "apt".into())
            ]
        );
        // An API entry's mark (Sphinx puts one on every described object) is not text either.
        let p = parse(
            r##"<html><body><div role="main"><h1>Config</h1><dl class="py data"><dt class="sig sig-object py" id="SECRET_KEY">
            <span class="sig-name descname">SECRET_KEY</span><a class="headerlink" href="#SECRET_KEY" title="Link to this definition">¶</a></dt>
            <dd><p>A secret key.</p></dd></dl></div></body></html>"##,
        );
        let all = format!("{:?}", p.sections);
        assert!(all.contains("SECRET_KEY") && !all.contains('¶'), "{all}");
    }

    #[test]
    fn noindex_and_redirect_pages_are_named_skips() {
        let noindex = r#"<html><head><meta name="robots" content="noindex"></head><body><main><p>x</p></main></body></html>"#;
        assert_eq!(
            parse_html(noindex, "x", &Chrome::none()),
            Err(HtmlSkip::NoIndex)
        );
        let redirect = r#"<html><head><meta http-equiv="refresh" content="0; url=a.html"></head><body>moved</body></html>"#;
        assert_eq!(
            parse_html(redirect, "x", &Chrome::none()),
            Err(HtmlSkip::Redirect)
        );
    }

    #[test]
    fn title_falls_back_to_the_head_then_the_file_name() {
        let p = parse("<html><head><title>From head</title></head><body><p>text first</p><h2 id=x>Later</h2><p>y</p></body></html>");
        assert_eq!(p.title, "From head");
        assert_eq!(parse("<p>just text</p>").title, "Fallback");
    }

    #[test]
    fn broken_and_hostile_html_does_not_panic() {
        let deep = "<div>".repeat(100_000) + "deep text" + &"</div>".repeat(10);
        assert_eq!(
            parse_html(&deep, "x", &Chrome::none()),
            Err(HtmlSkip::TooDeep(100_000))
        );
        let bold = "<b>".repeat(100_000) + "x";
        assert!(matches!(
            parse_html(&bold, "x", &Chrome::none()),
            Err(HtmlSkip::TooDeep(_))
        ));
        // The slash does not close a div, and stray end tags close nothing: refused by the
        // scan before the tree builder sees them.
        for deep in [
            "<div/>".repeat(100_000) + "x",
            "<div></b></i>".repeat(100_000) + "x",
        ] {
            assert!(
                matches!(
                    parse_html(&deep, "x", &Chrome::none()),
                    Err(HtmlSkip::TooDeep(_))
                ),
                "{}",
                &deep[..20]
            );
        }
        // Inside SVG the slash does close: a drawing of many paths is not deep.
        let drawing = format!(
            "<svg>{}</svg><p>after</p>",
            "<path d='M0 0'/>".repeat(5_000)
        );
        assert!(parse_html(&drawing, "x", &Chrome::none()).is_ok());
        // Deep but allowed, and unclosed paragraphs and list items do not count.
        let ok = "<div>".repeat(MAX_DEPTH) + "deep text" + &"<p>para<li>item".repeat(5_000);
        let p = parse(&ok);
        assert!(format!("{:?}", p.sections).contains("deep text"));
        for src in [
            "",
            "<",
            "<h2 id=",
            "<html><body><h1>unclosed <b>bold",
            "\u{0}\u{1}<p>ctl</p>",
            "<table><tr><td>a<td>b</table>",
            "<h1><h2>nested</h2></h1>",
            "<pre><pre>x</pre>",
            "<template><h1>t</h1></template><main></main>",
        ] {
            let _ = parse_html(src, "x", &Chrome::none());
        }
    }
}
