//! A site's chrome, found by structure: navigation bars, headers, footers and theme blocks are
//! the blocks a generator stamps on many pages with links of the same words ("Prev", "Up",
//! "Next") or the same text around them ("Previous topic"), and a page's own table of contents
//! is a block of links to its own headings. No class names: a DocBook navigation table, a
//! Sphinx theme's sidebar and a Hugo footer are found by one rule.
//!
//! Two passes over a site's built pages: [`page_keys`] gives each page's block fingerprints,
//! [`Chrome::learn`] keeps those on enough pages, and extraction then leaves those blocks out.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use ego_tree::iter::Edge;
use ego_tree::NodeId;
use scraper::{ElementRef, Node};

use super::walk::walk;

/// A block is chrome when its fingerprint is on at least this share of a site's pages...
const MIN_SHARE: f64 = 0.25;
/// ...and on at least this many pages (a three-page site has no chrome to learn).
const MIN_PAGES: usize = 3;

/// Elements that can be a block of chrome: a bar, a list, a table, one entry of a list.
/// Headings and inline elements never are (a heading named like other pages' is content).
const BLOCKS: &[&str] = &[
    "div",
    "p",
    "ul",
    "ol",
    "li",
    "dl",
    "table",
    "tr",
    "section",
    "center",
    "blockquote",
    "form",
];

/// Inline markup: no part of a block's shape, its words belong to the block around it, so a
/// title written with `<span class="application">` on one page is shaped like a plain one.
const INLINE: &[&str] = &[
    "span", "em", "strong", "b", "i", "code", "acronym", "abbr", "sup", "sub", "small", "kbd",
    "var", "samp", "tt", "mark", "cite", "q", "s", "u", "time", "br", "wbr", "img", "font", "del",
    "ins", "dfn", "bdi", "bdo", "label",
];

/// The fingerprints of the blocks a site repeats.
#[derive(Debug, Default, Clone)]
pub struct Chrome {
    keys: HashSet<u64>,
}

impl Chrome {
    /// No chrome known: only a page's own table of contents is left out.
    pub fn none() -> Self {
        Self::default()
    }

    /// Keeps the fingerprints found on enough of `pages` (each page's keys, deduplicated).
    pub fn learn<'a>(pages: impl IntoIterator<Item = &'a [u64]>) -> Self {
        let mut counts: HashMap<u64, usize> = HashMap::new();
        let mut n = 0usize;
        for keys in pages {
            n += 1;
            for &k in keys {
                *counts.entry(k).or_default() += 1;
            }
        }
        let floor = MIN_PAGES.max((n as f64 * MIN_SHARE).ceil() as usize);
        Self {
            keys: counts
                .into_iter()
                .filter(|&(_, c)| c >= floor)
                .map(|(k, _)| k)
                .collect(),
        }
    }

    /// How many fingerprints are chrome.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no fingerprint is chrome.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The blocks under `roots` to leave out: repeated ones and the page's own contents.
    pub(crate) fn hidden(&self, roots: &[ElementRef<'_>], skip: SkipFn) -> HashSet<NodeId> {
        let mut out = HashSet::new();
        for root in roots {
            for (id, block) in blocks(*root, skip) {
                if block.own_contents
                    || block.pager
                    || block.keys.iter().flatten().any(|k| self.keys.contains(k))
                {
                    out.insert(id);
                }
            }
        }
        out
    }
}

/// Elements extraction never reads (scripts, `<nav>`, marked ignored): left out of fingerprints
/// too, so a page's keys describe what it would index.
pub(crate) type SkipFn = fn(ego_tree::NodeRef<'_, Node>, &scraper::node::Element) -> bool;

/// A page's block fingerprints, each once.
pub(crate) fn page_keys(roots: &[ElementRef<'_>], skip: SkipFn) -> Vec<u64> {
    let mut keys: Vec<u64> = roots
        .iter()
        .flat_map(|r| blocks(*r, skip))
        .flat_map(|(_, b)| b.keys.into_iter().flatten())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// What one candidate block is.
struct Block {
    /// By its links' words (a bar of "Prev | Up | Next" whose titles change page to page), and
    /// by its other words (a "Previous topic" box whose link names the page before).
    keys: [Option<u64>; 2],
    /// Three or more links, nearly all to this page's own anchors, and little else: the page's
    /// table of contents, which repeats its headings.
    own_contents: bool,
    /// Two or more links, every one a move through the site (`rel="prev"`, `accesskey`): a
    /// pager, even on the one page whose bar lacks a "Next".
    pager: bool,
}

/// One open element while walking: hashes of its shape, its links' words and its other words,
/// in document order, and counts.
struct Frame {
    id: NodeId,
    candidate: bool,
    link: bool,
    shape: DefaultHasher,
    link_words: DefaultHasher,
    other_words: DefaultHasher,
    links: u32,
    own_links: u32,
    moves: u32,
    heading: bool,
    n_link_words: u32,
    n_words: u32,
}

fn blocks(root: ElementRef<'_>, skip: SkipFn) -> Vec<(NodeId, Block)> {
    let mut out = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut in_link = 0usize;
    for edge in walk(root, skip) {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) => {
                    let link = el.name() == "a" && el.attr("href").is_some();
                    if !link && INLINE.contains(&el.name()) {
                        continue;
                    }
                    let mut shape = DefaultHasher::new();
                    el.name().hash(&mut shape);
                    let mut classes: Vec<&str> = el.classes().collect();
                    classes.sort_unstable();
                    classes.hash(&mut shape);
                    let own = link && el.attr("href").is_some_and(|h| h.starts_with('#'));
                    let moves = link && is_move(el);
                    in_link += link as usize;
                    stack.push(Frame {
                        id: node.id(),
                        candidate: node.id() != root.id() && BLOCKS.contains(&el.name()),
                        link,
                        shape,
                        link_words: DefaultHasher::new(),
                        other_words: DefaultHasher::new(),
                        links: link as u32,
                        own_links: own as u32,
                        moves: moves as u32,
                        heading: matches!(el.name(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6"),
                        n_link_words: 0,
                        n_words: 0,
                    });
                }
                Node::Text(t) => {
                    let Some(top) = stack.last_mut() else {
                        continue;
                    };
                    for word in words(t) {
                        top.n_words += 1;
                        if in_link > 0 {
                            top.n_link_words += 1;
                            word.hash(&mut top.link_words);
                        } else {
                            word.hash(&mut top.other_words);
                        }
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                // Inline elements and text opened no frame.
                if stack.last().is_none_or(|f| f.id != node.id()) {
                    continue;
                }
                let Some(f) = stack.pop() else { continue };
                in_link -= f.link as usize;
                let (shape, links_h, other_h) = (
                    f.shape.finish(),
                    f.link_words.finish(),
                    f.other_words.finish(),
                );
                if f.candidate && f.links > 0 && f.n_words > 0 {
                    let other = f.n_words - f.n_link_words;
                    // A block holding a heading is content unless links are most of it (a
                    // site header whose h1 links home).
                    let link_bar = if f.heading {
                        f.n_link_words * 5 >= f.n_words * 3
                    } else {
                        (f.links >= 2 && f.n_link_words * 4 >= f.n_words)
                            || f.n_link_words * 5 >= f.n_words * 2
                    };
                    let key = |tag: u8, h: u64| {
                        let mut k = DefaultHasher::new();
                        (tag, shape, h).hash(&mut k);
                        k.finish()
                    };
                    out.push((
                        f.id,
                        Block {
                            keys: [
                                // A bar of links: two or more making a quarter of the words
                                // (DocBook's bar names the chapter in as many words as its
                                // four links), or links making 40% of them.
                                link_bar.then(|| key(b'L', links_h)),
                                (other > 0).then(|| key(b'T', other_h)),
                            ],
                            own_contents: f.links >= 3
                                && f.own_links * 5 >= f.links * 4
                                && f.n_link_words * 10 >= f.n_words * 7,
                            pager: f.links >= 2 && f.moves == f.links && link_bar,
                        },
                    ));
                }
                if let Some(parent) = stack.last_mut() {
                    shape.hash(&mut parent.shape);
                    links_h.hash(&mut parent.link_words);
                    other_h.hash(&mut parent.other_words);
                    parent.links += f.links;
                    parent.own_links += f.own_links;
                    parent.moves += f.moves;
                    parent.heading |= f.heading;
                    parent.n_link_words += f.n_link_words;
                    parent.n_words += f.n_words;
                }
            }
        }
    }
    out
}

/// A link that moves through the site rather than to a topic: `rel` prev, next, up, first,
/// last, home, start, index or contents (HTML's link types), or a keyboard shortcut
/// (`accesskey`, which DocBook and Sphinx give their previous, up and next links).
fn is_move(el: &scraper::node::Element) -> bool {
    const MOVES: &[&str] = &[
        "prev", "previous", "next", "up", "first", "last", "home", "start", "index", "contents",
    ];
    el.attr("accesskey").is_some_and(|k| !k.trim().is_empty())
        || el.attr("rel").is_some_and(|r| {
            r.split_ascii_whitespace()
                .any(|t| MOVES.contains(&t.to_ascii_lowercase().as_str()))
        })
}

/// A text's words as fingerprints see them: letters only, lower-cased, so section numbers
/// and dates ("31.5.", "Nov 11, 2026") do not make every page's bar its own.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Leaves the sections that repeat on enough of `pages` on the first page alone: the same
/// heading over the same words ("Last update:" over a date in a theme's sidebar, an options
/// block a generator writes on every command's page). One copy stays findable; the others
/// only crowded results with ties. Returns how many sections went.
pub fn repeated_sections(pages: &mut [&mut super::ParsedPage]) -> usize {
    let key = |s: &super::Section| {
        let mut h = DefaultHasher::new();
        let heading = if s.breadcrumb.len() > 1 {
            s.breadcrumb.last().map(String::as_str)
        } else {
            None
        };
        heading.map(|t| words(t).collect::<Vec<_>>()).hash(&mut h);
        for w in words(&s.text) {
            w.hash(&mut h);
        }
        h.finish()
    };
    let per_page: Vec<Vec<u64>> = pages
        .iter()
        .map(|p| {
            let mut keys: Vec<u64> = p.sections.iter().map(key).collect();
            keys.sort_unstable();
            keys.dedup();
            keys
        })
        .collect();
    let repeated = Chrome::learn(per_page.iter().map(Vec::as_slice));
    if repeated.is_empty() {
        return 0;
    }
    let mut kept: HashSet<u64> = HashSet::new();
    let mut dropped = 0;
    for page in pages.iter_mut() {
        let before = page.sections.len();
        page.sections.retain(|s| {
            let k = key(s);
            !repeated.keys.contains(&k) || kept.insert(k)
        });
        dropped += before - page.sections.len();
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::super::{chrome_keys, parse_html, ParsedPage};
    use super::*;

    const TOPICS: &[&str] = &[
        "Vacuuming tables",
        "Logical replication",
        "Write-ahead logging",
        "Index types",
        "Connection pooling",
        "Text search parsers",
    ];

    /// A site of `TOPICS.len()` pages from `page(i, prev, this, next)`, read as the build
    /// reads it: chrome learnt from every page, each page extracted without it, then sections
    /// repeated across pages dropped.
    fn site(page: impl Fn(usize, &str, &str, &str) -> String) -> Vec<ParsedPage> {
        let n = TOPICS.len();
        let html: Vec<String> = (0..n)
            .map(|i| page(i, TOPICS[(i + n - 1) % n], TOPICS[i], TOPICS[(i + 1) % n]))
            .collect();
        let keys: Vec<Vec<u64>> = html.iter().map(|h| chrome_keys(h).unwrap()).collect();
        let chrome = Chrome::learn(keys.iter().map(Vec::as_slice));
        let mut pages: Vec<ParsedPage> = html
            .iter()
            .map(|h| parse_html(h, "Fallback", &chrome).unwrap())
            .collect();
        repeated_sections(&mut pages.iter_mut().collect::<Vec<_>>());
        pages
    }

    fn all_text(p: &ParsedPage) -> String {
        let mut out = p.title.clone();
        for s in &p.sections {
            out.push_str(&format!("\n{}\n{}", s.breadcrumb.join(" > "), s.text));
        }
        out
    }

    fn assert_clean(pages: &[ParsedPage], chrome_words: &[&str]) {
        for (i, p) in pages.iter().enumerate() {
            let text = all_text(p);
            for w in chrome_words {
                assert!(!text.contains(w), "{w:?} left in page {i}:\n{text}");
            }
            // The content stays, under its own title.
            assert_eq!(p.title, TOPICS[i], "{text}");
            assert!(
                text.contains(&format!("explains {} in depth", TOPICS[i])),
                "{text}"
            );
        }
    }

    #[test]
    fn docbook_navigation_tables_are_left_out() {
        let pages = site(|i, prev, this, next| {
            // The last page's bars have no "Next": a shape of their own, found as a pager.
            let next_link = if i + 1 < TOPICS.len() {
                format!(r#"<a accesskey="n" href="{next}.html">Next</a>"#)
            } else {
                String::new()
            };
            let bar = |summary: &str| {
                format!(
                    r#"<div class="navheader"><table summary="{summary}"><tr><th colspan="3">{i}.1. {this}</th></tr>
                    <tr><td><a accesskey="p" href="p{prev}.html">Prev</a></td><td><a accesskey="u" href="c.html">Up</a></td>
                    <th>Chapter {i}. Server Administration</th><td><a accesskey="h" href="index.html">Home</a></td>
                    <td>{next_link}</td></tr></table><hr/></div>"#
                )
            };
            format!(
                r#"<html><head><title>{i}.1. {this}</title></head><body>{}
                <div class="sect1" id="s{i}"><div class="titlepage"><h2 class="title">{this}</h2></div>
                <p>This part explains {this} in depth, with the settings that govern it and
                <a href="other.html">one link</a> to a related part.</p></div>{}</body></html>"#,
                bar("Navigation header"),
                bar("Navigation footer"),
            )
        });
        assert_clean(
            &pages,
            &["Prev", "Next", "Home", "Chapter", "Server Administration"],
        );
    }

    #[test]
    fn javadoc_bars_are_left_out() {
        let pages = site(|_, prev, this, next| {
            let bar = format!(
                r#"<div class="topNav"><ul class="navList"><li><a href="o.html">Overview</a></li>
                <li><a href="p.html">Package</a></li><li class="navBarCell1Rev">Class</li>
                <li><a href="t.html">Tree</a></li><li><a href="d.html">Deprecated</a></li>
                <li><a href="i.html">Index</a></li><li><a href="h.html">Help</a></li></ul></div>
                <div class="subNav"><ul><li><a href="{prev}.html">Prev Class</a></li>
                <li><a href="{next}.html">Next Class</a></li></ul>
                <ul><li><a href="f.html" target="_top">Frames</a></li><li><a href="nf.html">No Frames</a></li></ul></div>"#
            );
            format!(
                r#"<html><head><title>{this}</title></head><body>{bar}
                <div class="header"><h1 class="title">{this}</h1></div>
                <div class="contentContainer"><div class="block">This class explains {this} in depth;
                see <a href="x.html">Object</a> for the methods it inherits.</div></div>{bar}</body></html>"#
            )
        });
        assert_clean(
            &pages,
            &["Overview", "Deprecated", "Prev Class", "No Frames"],
        );
    }

    #[test]
    fn hugo_and_docusaurus_theme_blocks_are_left_out() {
        let pages = site(|i, _, this, _| {
            format!(
                r#"<html><head><title>{this} | Example Docs</title></head><body>
                <div class="td-navbar"><a href="/">Example Docs</a> <a href="/docs/">Documentation</a>
                <a href="/blog/">Blog</a> <a href="https://github.com/x">GitHub</a></div>
                <div class="container"><div class="crumbs"><a href="/">Home</a> / <a href="/docs/">Docs</a> / {this}</div>
                <div class="content"><h1>{this}</h1>
                <p>Chapter {i} explains {this} in depth. Read <a href="/docs/{i}">the reference</a>.</p>
                <div class="theme-edit"><a href="https://example.com/edit/{i}.md">Edit this page</a></div>
                </div><div class="site-footer">Copyright 2024 Example Inc. <a href="/privacy">Privacy</a>
                · <a href="/terms">Terms</a></div></div></body></html>"#
            )
        });
        assert_clean(
            &pages,
            &[
                "GitHub",
                "Blog",
                "Home /",
                "Edit this page",
                "Privacy",
                "Copyright",
            ],
        );
    }

    #[test]
    fn sphinx_sidebars_and_own_contents_are_left_out() {
        let pages = site(|i, prev, this, next| {
            format!(
                r##"<html><head><title>{this}</title></head><body><div id="hd">
                <h1><a href="index.html">Example 3.2 documentation</a></h1>
                <div class="nav">&laquo; <a href="{prev}.html">previous</a> | <a href="up.html">up</a> |
                <a href="{next}.html">next</a> &raquo;</div></div>
                <div class="section" id="t{i}"><h1>{this}</h1><p>The guide explains {this} in depth.</p>
                <div class="contents topic"><ul><li><a href="#a">Settings</a></li><li><a href="#b">Limits</a></li>
                <li><a href="#c">Examples</a></li></ul></div>
                <h2 id="a">Settings</h2><p>Settings of {this}.</p></div>
                <div class="sphinxsidebar" role="navigation"><h3>Table of contents</h3><p>sidebar words</p></div>
                <h3>Last update:</h3><p>Nov 11, 2026</p></body></html>"##
            )
        });
        assert_clean(
            &pages,
            &["documentation", "previous", "sidebar words", "Limits"],
        );
        // The theme's "Last update:" box stays once, on the first page.
        let updates: Vec<bool> = pages
            .iter()
            .map(|p| all_text(p).contains("Last update"))
            .collect();
        assert_eq!(updates.iter().filter(|&&u| u).count(), 1, "{updates:?}");
        assert!(updates[0]);
        // The page's own headings are still sections.
        assert!(pages[0].sections.iter().any(|s| s.anchor == "a"));
    }

    #[test]
    fn content_shared_by_a_few_pages_and_unique_tables_of_contents_stay() {
        let pages = site(|i, _, this, _| {
            // Two pages of six share a "See also" box: under a quarter of the site.
            let shared = if i < 2 {
                r#"<div class="seealso"><p>See also <a href="r.html">the reference</a>.</p></div>"#
            } else {
                ""
            };
            format!(
                r#"<html><head><title>{this}</title></head><body><main><h1>{this}</h1>
                <p>This explains {this} in depth.</p>{shared}
                <ul><li><a href="{i}-a.html">{this} setup</a></li><li><a href="{i}-b.html">{this} tuning</a></li>
                <li><a href="{i}-c.html">{this} limits</a></li></ul></main></body></html>"#
            )
        });
        for (i, p) in pages.iter().enumerate() {
            let text = all_text(p);
            assert!(text.contains(&format!("{} tuning", TOPICS[i])), "{text}");
            assert_eq!(text.contains("See also the reference"), i < 2, "{text}");
        }
    }

    #[test]
    fn sections_repeated_across_pages_stay_on_the_first_page_alone() {
        let html = |this: &str| {
            format!(
                r#"<html><body><main><h1>{this}</h1><p>It explains {this} in depth.</p>
                <h2>Feedback</h2><p>Was this page helpful? Tell us on the forum.</p></main></body></html>"#
            )
        };
        let mut pages: Vec<ParsedPage> = TOPICS
            .iter()
            .map(|t| parse_html(&html(t), "x", &Chrome::none()).unwrap())
            .collect();
        let dropped = repeated_sections(&mut pages.iter_mut().collect::<Vec<_>>());
        assert_eq!(dropped, TOPICS.len() - 1);
        assert!(all_text(&pages[0]).contains("helpful"));
        assert!(pages[1..]
            .iter()
            .all(|p| p.sections.len() == 1 && !all_text(p).contains("helpful")));
    }

    #[test]
    fn a_pager_goes_on_a_page_of_its_own_and_a_lone_link_stays() {
        let p = parse_html(
            r#"<html><body><main><h1>Alone</h1><p>Words of the page.</p>
            <p><a rel="prev" href="a.html">Older</a> <a rel="next" href="b.html">Newer</a></p>
            <p>See <a rel="next" href="b.html">the next part</a> for more.</p></main></body></html>"#,
            "x",
            &Chrome::none(),
        )
        .unwrap();
        let text = all_text(&p);
        assert!(!text.contains("Older") && !text.contains("Newer"), "{text}");
        assert!(text.contains("See the next part for more."), "{text}");
    }
}
