//! The results list: recent searches for an empty box, then hits grouped by page, each with its
//! breadcrumb, highlighted excerpt and, on demand, why it ranked where it did; and what a
//! screen reader hears when they change.

use web_sys::Element;

use lantern_engine::{highlight_segments, Hit, Mode, Results};

use crate::ctx::{Ctx, State};
use crate::dom::{self, el, Build};
use crate::labels::{fill, Labels};
use crate::state::{fixed, hit_link};

impl Ctx {
    /// Redraws what goes under the search box, and the announcement.
    pub fn show_results(&self) {
        let body = &self.view().body;
        dom::clear(body);
        {
            let s = self.state();
            let l = self.labels();
            for node in body_nodes(&s, l) {
                let _ = body.append_child(&node);
            }
            dom::set_text(&self.view().announce, &announcement(&s, l));
        }
        self.show_active();
    }
}

fn body_nodes(s: &State, l: &Labels) -> Vec<Element> {
    if s.query.trim().is_empty() {
        return vec![recent_list(&s.recents, l)];
    }
    let Some(r) = &s.results else {
        return vec![el("p").attr("class", "hint").text(l.searching)];
    };
    if r.hits.is_empty() {
        return vec![el("p").attr("class", "empty").text(l.empty)];
    }
    let mut out = Vec::new();
    if r.no_good_match {
        out.push(el("p").attr("class", "no-match").text(l.no_good_match));
    }
    out.push(el("p").attr("class", "mode-used").text(mode_used(r, l)));
    let list = el("div")
        .attr("id", "lantern-listbox")
        .attr("role", "listbox")
        .attr("aria-label", l.list)
        .attr("class", "results");
    let mut index = 0usize;
    for g in &r.pages {
        let rows = el("ul").attr("role", "none");
        for h in &g.hits {
            let _ = rows.append_child(&row(h, index, s, l));
            index += 1;
        }
        let group = el("div")
            .attr("class", "group")
            .attr("role", "group")
            .attr("aria-label", &g.title)
            .child(
                &el("div")
                    .attr("class", "page-title")
                    .attr("aria-hidden", "true")
                    .text(&g.title),
            )
            .child(&rows);
        if g.more > 0 {
            let label = match g.more {
                1 => l.more_one.to_string(),
                n => fill(l.more_many, &[("n", &n.to_string())]),
            };
            // An option of the list (a listbox holds nothing else), reached by pointer or a
            // screen reader's browse mode; arrows step through sections.
            let _ = group.append_child(
                &el("a")
                    .attr("role", "option")
                    .attr("class", "more")
                    .attr("aria-selected", "false")
                    .attr("tabindex", "-1")
                    .attr("href", &safe_href(&g.url))
                    .text(&label),
            );
        }
        let _ = list.append_child(&group);
    }
    out.push(list);
    out
}

fn recent_list(recents: &[String], l: &Labels) -> Element {
    if recents.is_empty() {
        return el("p").attr("class", "hint").text(l.hint);
    }
    let list = el("div")
        .attr("class", "recent")
        .child(&el("p").attr("class", "label").text(l.recent));
    for q in recents {
        let _ = list.append_child(
            &el("button")
                .attr("type", "button")
                .attr("class", "recent-item")
                .attr("data-act", "recent")
                .text(q),
        );
    }
    list
}

/// One result row: a link to the section, its breadcrumb, the highlighted excerpt (text nodes,
/// never markup) and a "why?" toggle. The option is the link itself: an option may hold no
/// other control (axe-core's nested-interactive), so "why?" sits beside it, a pointer's aid
/// hidden from screen readers, as the explanation is only a ranking detail.
fn row(hit: &Hit, index: usize, s: &State, l: &Labels) -> Element {
    let i = index.to_string();
    let excerpt = el("span").attr("class", "excerpt");
    for (text, hl) in highlight_segments(&hit.excerpt, &hit.highlights) {
        if hl {
            let _ = excerpt.append_child(&el("mark").text(&text));
        } else {
            let _ = excerpt.append_child(&dom::text(&text));
        }
    }
    let link = el("a")
        .attr("role", "option")
        .attr("id", &format!("lantern-opt-{index}"))
        .attr("class", "hit")
        .attr("tabindex", "-1")
        .attr("aria-selected", "false")
        .attr("href", &safe_href(&hit_link(hit, &s.query)))
        .attr("data-act", "hit")
        .attr("data-i", &i)
        .child(&el("span").attr("class", "crumb").text(&hit.breadcrumb))
        .child(&excerpt);
    let li = el("li")
        .attr("role", "none")
        .attr("class", "hit-row")
        .attr("data-i", &i)
        .child(&link)
        .child(
            &el("span")
                .attr("class", "why")
                .attr("aria-hidden", "true")
                .attr("data-act", "why")
                .attr("data-chunk", &hit.chunk.to_string())
                .text(l.why),
        );
    if s.why == Some(hit.chunk) {
        let _ = li.append_child(&el("p").attr("class", "explain").text(&explain(hit)));
    }
    li
}

/// Why a hit ranked where it did.
fn explain(hit: &Hit) -> String {
    format!(
        "keyword: {} · semantic: {} · fused score {}",
        hit.keyword
            .map(|s| format!("#{} (BM25 {})", s.rank, fixed(s.score as f64, 2)))
            .unwrap_or_else(|| "no match".into()),
        hit.vector
            .map(|s| format!("#{} (cosine {})", s.rank, fixed(s.score as f64, 3)))
            .unwrap_or_else(|| "not in top 50".into()),
        fixed(hit.score as f64, 4)
    )
}

/// What a screen reader hears when results change: the count, or "no good match".
fn announcement(s: &State, l: &Labels) -> String {
    // The first screen of results is not announced: its count is about to change.
    if s.query.trim().is_empty() || s.more_coming {
        return String::new();
    }
    match &s.results {
        None => String::new(),
        Some(r) if r.hits.is_empty() => l.none.into(),
        Some(r) if r.no_good_match => l.weak.into(),
        Some(r) if r.hits.len() == 1 => l.one.into(),
        Some(r) => fill(
            l.many,
            &[
                ("n", &r.hits.len().to_string()),
                ("p", &r.pages.len().to_string()),
            ],
        ),
    }
}

/// Which evidence ranked the results, in words.
fn mode_used(r: &Results, l: &Labels) -> &'static str {
    if r.approximate {
        l.used_quick
    } else {
        match r.mode {
            Mode::Hybrid => l.used_hybrid,
            Mode::Keyword => l.used_keyword,
            Mode::Vector => l.used_semantic,
        }
    }
}

/// A link's `href`: the URL when a reader may follow it (`lantern_engine::is_safe_link`), else
/// none that leads anywhere.
pub(crate) fn safe_href(url: &str) -> String {
    if lantern_engine::is_safe_link(url) {
        url.to_string()
    } else {
        "#".to_string()
    }
}
