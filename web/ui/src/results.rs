//! The results list: recent searches for an empty box, then hits grouped by page, each with its
//! breadcrumb, highlighted excerpt and, on demand, why it ranked where it did.

use leptos::prelude::*;

use lantern_engine::{highlight_segments, Hit, Mode, Results};

use crate::ctx::Ctx;
use crate::labels::{fill, Labels};
use crate::state::hit_link;

/// What goes under the search box.
#[component]
pub fn ResultsBody() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    move || {
        if ctx.query.get().trim().is_empty() {
            return recent_list(ctx).into_any();
        }
        let Some(r) = ctx.results.get() else {
            return view! { <p class="hint">{ctx.labels.searching}</p> }.into_any();
        };
        if r.hits.is_empty() {
            return view! { <p class="empty">{ctx.labels.empty}</p> }.into_any();
        }
        let mode = mode_used(&r, ctx.labels);
        let mut index = 0usize;
        let groups = r
            .pages
            .into_iter()
            .map(|g| {
                let hits = g
                    .hits
                    .into_iter()
                    .map(|h| {
                        let i = index;
                        index += 1;
                        view! { <ResultOption hit=h index=i /> }
                    })
                    .collect_view();
                let more = (g.more > 0).then(|| {
                    let label = match g.more {
                        1 => ctx.labels.more_one.to_string(),
                        n => fill(ctx.labels.more_many, &[("n", &n.to_string())]),
                    };
                    // An option of the list (a listbox holds nothing else), reached by
                    // pointer or a screen reader's browse mode; arrows step through sections.
                    view! {
                        <a
                            role="option"
                            class="more"
                            aria-selected="false"
                            tabindex="-1"
                            href=safe_href(&g.url)
                        >
                            {label}
                        </a>
                    }
                });
                let title = g.title.clone();
                view! {
                    <div class="group" role="group" aria-label=title>
                        <div class="page-title" aria-hidden="true">{g.title}</div>
                        <ul role="none">{hits}</ul>
                        {more}
                    </div>
                }
            })
            .collect_view();
        view! {
            {r.no_good_match
                .then(|| {
                    view! {
                        <p class="no-match">{ctx.labels.no_good_match}</p>
                    }
                })}
            <p class="mode-used">{mode}</p>
            <div id="lantern-listbox" role="listbox" aria-label=ctx.labels.list class="results">
                {groups}
            </div>
        }
        .into_any()
    }
}

fn recent_list(ctx: Ctx) -> impl IntoView {
    let list = ctx.recents.get();
    if list.is_empty() {
        return view! { <p class="hint">{ctx.labels.hint}</p> }.into_any();
    }
    view! {
        <div class="recent">
            <p class="label">{ctx.labels.recent}</p>
            {list
                .into_iter()
                .map(|s| {
                    let q = s.clone();
                    view! {
                        <button
                            type="button"
                            class="recent-item"
                            on:click=move |_| {
                                ctx.query.set(q.clone());
                                ctx.run();
                            }
                        >
                            {s}
                        </button>
                    }
                })
                .collect_view()}
        </div>
    }
    .into_any()
}

/// One result row: a link to the section, its breadcrumb, the highlighted excerpt (text nodes,
/// never markup) and a "why?" toggle.
#[component]
fn ResultOption(hit: Hit, index: usize) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let chunk = hit.chunk;
    let url = hit_link(&hit, &ctx.query.get_untracked());
    let parts = highlight_segments(&hit.excerpt, &hit.highlights)
        .into_iter()
        .map(|(text, hl)| {
            if hl {
                view! { <mark>{text}</mark> }.into_any()
            } else {
                text.into_any()
            }
        })
        .collect_view();
    let explain = format!(
        "keyword: {} · semantic: {} · fused score {:.4}",
        hit.keyword
            .map(|s| format!("#{} (BM25 {:.2})", s.rank, s.score))
            .unwrap_or_else(|| "no match".into()),
        hit.vector
            .map(|s| format!("#{} (cosine {:.3})", s.rank, s.score))
            .unwrap_or_else(|| "not in top 50".into()),
        hit.score
    );
    let open = move || ctx.why.get() == Some(chunk);
    // The option is the link itself: an option may hold no other control (axe-core's
    // nested-interactive), so "why?" sits beside it, a pointer's aid hidden from screen
    // readers, as the explanation is only a ranking detail.
    view! {
        <li role="none" class="hit-row" on:mousemove=move |_| ctx.active.set(index)>
            <a
                role="option"
                id=format!("lantern-opt-{index}")
                class="hit"
                tabindex="-1"
                aria-selected=move || (ctx.active.get() == index).to_string()
                href=safe_href(&url)
                on:click=move |ev| {
                    ev.prevent_default();
                    ctx.go(&url);
                }
            >
                <span class="crumb">{hit.breadcrumb}</span>
                <span class="excerpt">{parts}</span>
            </a>
            <span
                class="why"
                aria-hidden="true"
                on:click=move |_| ctx.why.update(|w| *w = if *w == Some(chunk) { None } else { Some(chunk) })
            >
                {ctx.labels.why}
            </span>
            {move || open().then(|| view! { <p class="explain">{explain.clone()}</p> })}
        </li>
    }
}

/// What a screen reader hears when results change, from a live region that stays in place
/// (one inserted with its text is not reliably read): the count, or "no good match".
pub fn announcement(ctx: Ctx) -> String {
    let l = ctx.labels;
    if ctx.query.get().trim().is_empty() {
        return String::new();
    }
    match ctx.results.get() {
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
fn mode_used(r: &Results, l: &Labels) -> String {
    let used = if r.approximate {
        l.used_quick
    } else {
        match r.mode {
            Mode::Hybrid => l.used_hybrid,
            Mode::Keyword => l.used_keyword,
            Mode::Vector => l.used_semantic,
        }
    };
    used.into()
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
