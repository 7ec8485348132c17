//! Markdown to HTML pages for the demo site (and for side-by-side benchmarks). Heading ids come
//! from the chunker's own anchor list, so every search result's deep link lands on its section.
//! Documents are untrusted: raw HTML is shown as text and script URLs are neutralized.

use std::path::Path;

use anyhow::Result;
use pulldown_cmark::{html, CowStr, Event, Tag};

use crate::config::Config;
use crate::extract::{clean_source, extract, parser, title_from_path};
use crate::source;

/// One rendered page.
pub struct RenderedPage {
    /// The page's URL.
    pub url: String,
    /// Where the page is written, relative to the site folder (not encoded).
    pub path: String,
    /// The page title.
    pub title: String,
    /// The page's HTML body.
    pub body: String,
}

/// Renders one page's markdown to an HTML fragment.
pub fn render_markdown(src: &str, rel: &str, config: &Config) -> RenderedPage {
    let page = extract(src, &title_from_path(rel), config.slugs);
    let (_, body) = clean_source(src);
    let mut anchors = page.anchors.iter();
    let events = parser(&body).map(|ev| match ev {
        // Only the id (the chunker's anchor) and classes survive: `{onfocus=...}` attribute
        // syntax would otherwise put event handlers on the page.
        Event::Start(Tag::Heading { level, classes, .. }) => Event::Start(Tag::Heading {
            level,
            id: anchors.next().map(|a| CowStr::from(a.clone())),
            classes,
            attrs: Vec::new(),
        }),
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(&dest_url, config).into(),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_url(&dest_url, config).into(),
            title,
            id,
        }),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    RenderedPage {
        url: config.page_url(rel),
        path: config.page_path(rel),
        title: page.title,
        body: out,
    }
}

/// Drops script-capable schemes; points relative `.md` links at the rendered pages.
fn safe_url(url: &str, config: &Config) -> String {
    let lower = url.trim().to_ascii_lowercase();
    if ["javascript:", "vbscript:", "data:"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        return "#".into();
    }
    let relative = !lower.contains("://") && !lower.starts_with('/') && !lower.starts_with('#');
    if relative && config.urls == crate::config::UrlStyle::Html {
        let (path, frag) = url
            .split_once('#')
            .map_or((url, None), |(p, f)| (p, Some(f)));
        if let Some(stem) = path.strip_suffix(".md") {
            return match frag {
                Some(f) => format!("{stem}.html#{f}"),
                None => format!("{stem}.html"),
            };
        }
    }
    url.to_string()
}

/// `s` escaped for HTML text and attribute values.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Renders every in-scope page under `docs` into `out`, each with a navigation list and the
/// search widget (`<lantern-search>` loaded from `widget_src`). Returns the number of pages.
pub fn render_site(
    docs: &Path,
    out: &Path,
    config: &Config,
    site_title: &str,
    widget_head: &str,
) -> Result<usize> {
    let collected = source::collect(docs, config)?;
    if collected.input == crate::config::Input::Html {
        anyhow::bail!(
            "{} holds built HTML: `lantern site` renders markdown; index a built site with `lantern build`",
            docs.display()
        );
    }
    let files = collected.files;
    let pages: Vec<RenderedPage> = files
        .iter()
        .map(|f| render_markdown(&f.text, &f.rel, config))
        .collect();
    let mut nav = String::from("<ul>");
    for p in &pages {
        nav.push_str(&format!(
            "<li><a href=\"{}\">{}</a></li>",
            escape(&p.url),
            escape(&p.title)
        ));
    }
    nav.push_str("</ul>");
    let base = escape(config.base_url.trim_end_matches('/'));
    let search = RenderedPage {
        url: format!("{base}/search.html"),
        path: "search.html".into(),
        title: "Search".into(),
        body: "<h1>Search</h1>\n<lantern-search page></lantern-search>\n".into(),
    };
    for p in pages.iter().chain(std::iter::once(&search)) {
        let html = format!(
            r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · {site}</title>
<link rel="stylesheet" href="{base}/assets/site.css">
{widget_head}
</head>
<body>
<header><a class="brand" href="{base}/index.html">{site}</a><lantern-search></lantern-search></header>
<div class="layout"><nav>{nav}</nav><main data-pagefind-body>
{body}
</main></div>
</body>
</html>
"#,
            title = escape(&p.title),
            site = escape(site_title),
            body = p.body,
        );
        let rel = if p.path.is_empty() || p.path.ends_with('/') {
            format!("{}index.html", p.path)
        } else {
            p.path.clone()
        };
        crate::write_atomic(&out.join(rel), html.as_bytes())?;
    }
    Ok(pages.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_attributes_cannot_add_event_handlers() {
        let c = Config::default();
        for src in [
            "# Hi {tabindex=0 autofocus=autofocus onfocus=alert(document.domain)}\n",
            "Hi {onclick=alert(1) style=position:fixed}\n==\n",
            "## Sub {#ok .note onmouseover=alert(1)}\n",
        ] {
            let html = render_markdown(src, "a.md", &c).body;
            for bad in [
                "onfocus",
                "onclick",
                "onmouseover",
                "autofocus",
                "style=",
                "tabindex",
            ] {
                assert!(!html.contains(bad), "{bad} in {html}");
            }
            assert!(html.contains(" id=\""), "{html}");
        }
        let html = render_markdown("## Sub {#ok .note}\n", "a.md", &c).body;
        assert!(
            html.contains("id=\"ok\"") && html.contains("class=\"note\""),
            "{html}"
        );
    }

    #[test]
    fn heading_ids_match_chunk_anchors() {
        let src =
            "# Title\n\nx\n\n## Same\n\ny\n\n## Same\n\nz\n\n### Empty\n\n## Custom {#mine}\n\nw\n";
        let c = Config::default();
        let r = render_markdown(src, "a.md", &c);
        for id in ["title", "same", "same-1", "empty", "mine"] {
            assert!(
                r.body.contains(&format!("id=\"{id}\"")),
                "{id} missing in {}",
                r.body
            );
        }
    }

    #[test]
    fn untrusted_html_is_shown_as_text() {
        let src = "# T\n\n<img src=x onerror=alert(1)>\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](other.md#sec)\n";
        let r = render_markdown(src, "a.md", &Config::default());
        assert!(!r.body.contains("<img"), "{}", r.body);
        assert!(!r.body.contains("<script"), "{}", r.body);
        assert!(r.body.contains("&lt;script&gt;"));
        assert!(!r.body.contains("javascript:"));
        assert!(r.body.contains("href=\"other.html#sec\""));
    }
}
