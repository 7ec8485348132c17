//! Lantern's reader UI, in Leptos: a keyboard-first search dialog (or a full search page) that
//! shows keyword results as soon as the bundle is loaded and upgrades them to hybrid when the
//! embedder is ready. It runs inside the widget's shadow root, so no style leaks either way.

mod highlight;
mod recent;
mod runtime;

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::prelude::*;
use web_sys::KeyboardEvent;

use lantern_engine::search::{Hit, Mode, Results};
use runtime::{AskOutcome, Bridge, Progress, Runtime};

/// The answer panel's state.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    None,
    Streaming(String),
    Done(AskOutcome),
    Failed(String),
}

const K: u32 = 12;

/// What is loaded so far.
#[derive(Clone, Debug, PartialEq)]
enum Stage {
    Idle,
    Bundle(Progress),
    Keyword,
    Model(Progress),
    Hybrid,
    Failed(String),
}

/// Handle returned to widget.js.
#[wasm_bindgen]
pub struct Ui {
    open: RwSignal<bool>,
}

#[wasm_bindgen]
impl Ui {
    pub fn open(&self) {
        self.open.set(true);
    }
}

/// Mounts the UI into `host` (an element inside the widget's shadow root). `page` renders it
/// inline as a search page instead of a dialog; `query` pre-fills the box.
#[wasm_bindgen]
pub fn mount(host: web_sys::HtmlElement, bridge: Bridge, page: bool, query: String) -> Ui {
    let open = RwSignal::new(page);
    let bridge = StoredValue::new_local(bridge);
    let handle = leptos::mount::mount_to(host, move || {
        view! { <Search open=open bridge=bridge page=page initial=query.clone() /> }
    });
    handle.forget();
    Ui { open }
}

fn mb(bytes: f64) -> String {
    if bytes >= 1_048_576.0 {
        format!("{:.1} MB", bytes / 1_048_576.0)
    } else {
        format!("{:.0} KB", bytes / 1024.0)
    }
}

#[component]
fn Search(
    open: RwSignal<bool>,
    bridge: StoredValue<Bridge, LocalStorage>,
    page: bool,
    initial: String,
) -> impl IntoView {
    let query = RwSignal::new(initial);
    let mode = RwSignal::new(Mode::Hybrid);
    let stage = RwSignal::new(Stage::Idle);
    let results = RwSignal::new(None::<Results>);
    let active = RwSignal::new(0usize);
    let why = RwSignal::new(None::<u32>);
    let recents = RwSignal::new(recent::load());
    let runtime = StoredValue::new_local(None::<Runtime>);
    let seq = StoredValue::new(0u64);
    let input_ref = NodeRef::<leptos::html::Input>::new();
    let answer = RwSignal::new(Answer::None);
    let show_passages = RwSignal::new(false);
    let can_ask = bridge.with_value(|b| b.proxy().is_some());
    let dialog_ref = NodeRef::<leptos::html::Div>::new();

    // Runs the current query; stale answers (an older sequence number) are dropped.
    let run = move || {
        let q = query.get_untracked();
        let Some(rt) = runtime.get_value() else {
            return;
        };
        if q.trim().is_empty() {
            results.set(None);
            return;
        }
        let m = match mode.get_untracked() {
            Mode::Hybrid => "hybrid",
            Mode::Vector => "vector",
            Mode::Keyword => "keyword",
        };
        let n = seq.get_value() + 1;
        seq.set_value(n);
        spawn_local(async move {
            match runtime::search(&rt, &q, m, K).await {
                Ok(r) if seq.get_value() == n => {
                    let count = r.hits.len();
                    results.set(Some(r));
                    active.update(|a| *a = (*a).min(count.saturating_sub(1)));
                }
                Ok(_) => {}
                Err(e) => stage.set(Stage::Failed(e)),
            }
        });
    };

    // Load on first open: the bundle, then the embedder in the background.
    Effect::new(move |_| {
        if !open.get() || stage.get_untracked() != Stage::Idle {
            return;
        }
        stage.set(Stage::Bundle(Progress::default()));
        spawn_local(async move {
            let b = bridge.get_value();
            let rt = match runtime::load_bundle(&b, move |p| stage.set(Stage::Bundle(p))).await {
                Ok(rt) => rt,
                Err(e) => {
                    stage.set(Stage::Failed(e));
                    return;
                }
            };
            runtime.set_value(Some(rt.clone()));
            stage.set(Stage::Keyword);
            run();
            stage.set(Stage::Model(Progress::default()));
            match runtime::load_semantic(&b, &rt, move |p| stage.set(Stage::Model(p))).await {
                Ok(()) => {
                    stage.set(Stage::Hybrid);
                    run(); // upgrade the visible results in place
                }
                Err(e) => stage.set(Stage::Failed(format!("semantic search unavailable: {e}"))),
            }
        });
    });

    // Focus the box when the dialog opens.
    Effect::new(move |_| {
        if open.get() {
            if let Some(i) = input_ref.get() {
                let _ = i.focus();
            }
        }
    });

    let flat = move || -> Vec<Hit> {
        results
            .get()
            .map(|r| r.pages.into_iter().flat_map(|g| g.hits).collect())
            .unwrap_or_default()
    };

    let go = move |url: String| {
        recent::remember(&query.get_untracked());
        if let Some(w) = web_sys::window() {
            let _ = w.location().assign(&url);
        }
    };

    let on_key = move |ev: KeyboardEvent| {
        let hits = flat();
        match ev.key().as_str() {
            "ArrowDown" => {
                ev.prevent_default();
                if !hits.is_empty() {
                    active.update(|a| *a = (*a + 1) % hits.len());
                }
            }
            "ArrowUp" => {
                ev.prevent_default();
                if !hits.is_empty() {
                    active.update(|a| *a = (*a + hits.len() - 1) % hits.len());
                }
            }
            "Enter" => {
                if let Some(h) = hits.get(active.get_untracked()) {
                    ev.prevent_default();
                    go(h.url.clone());
                }
            }
            "Escape" if !page => open.set(false),
            "Tab" if !page => trap_focus(&ev, dialog_ref),
            _ => {}
        }
    };

    let status = move || match stage.get() {
        Stage::Idle => String::new(),
        Stage::Bundle(p) => format!("Loading the search index… {}", mb(p.loaded)),
        Stage::Keyword => "Keyword search ready".into(),
        Stage::Model(p) if p.loaded == 0.0 => "Keyword results · loading semantic search…".into(),
        Stage::Model(p) if p.total > 0.0 => format!(
            "Keyword results · loading semantic search {} / {}",
            mb(p.loaded),
            mb(p.total)
        ),
        Stage::Model(p) => format!("Keyword results · loading semantic search {}", mb(p.loaded)),
        Stage::Hybrid => "Hybrid search (keywords + meaning)".into(),
        Stage::Failed(e) => e,
    };
    let loading = move || matches!(stage.get(), Stage::Model(_) | Stage::Bundle(_));

    let mode_button = move |m: Mode, label: &'static str| {
        view! {
            <button
                type="button"
                role="radio"
                class="mode"
                aria-checked=move || (mode.get() == m).to_string()
                on:click=move |_| {
                    mode.set(m);
                    run();
                }
            >
                {label}
            </button>
        }
    };

    let body = move || {
        let r = results.get();
        let q = query.get();
        if q.trim().is_empty() {
            let list = recents.get();
            if list.is_empty() {
                return view! { <p class="hint">"Type a question or some words. Quotes match a phrase."</p> }
                    .into_any();
            }
            return view! {
                <div class="recent">
                    <p class="label">"Recent searches"</p>
                    {list
                        .into_iter()
                        .map(|s| {
                            let s2 = s.clone();
                            view! {
                                <button
                                    type="button"
                                    class="recent-item"
                                    on:click=move |_| {
                                        query.set(s2.clone());
                                        run();
                                    }
                                >
                                    {s}
                                </button>
                            }
                        })
                        .collect_view()}
                </div>
            }
            .into_any();
        }
        let Some(r) = r else {
            return view! { <p class="hint">"Searching…"</p> }.into_any();
        };
        if r.hits.is_empty() {
            return view! { <p class="empty" role="status">"No results. Try other words."</p> }
                .into_any();
        }
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
                        result_option(h, i, active, why, go)
                    })
                    .collect_view();
                view! {
                    <li class="group" role="presentation">
                        <div class="page-title" role="presentation">{g.title}</div>
                        <ul role="presentation">{hits}</ul>
                    </li>
                }
            })
            .collect_view();
        view! {
            {r.no_good_match
                .then(|| {
                    view! {
                        <p class="no-match" role="status">
                            "No good match in these docs. The closest sections are listed below."
                        </p>
                    }
                })}
            <p class="mode-used">
                {match r.mode {
                    Mode::Hybrid => "hybrid results",
                    Mode::Vector => "semantic results",
                    Mode::Keyword => "keyword results",
                }}
            </p>
            <ul id="lantern-listbox" role="listbox" aria-label="Search results" class="results">
                {groups}
            </ul>
        }
        .into_any()
    };

    view! {
        <div
            class=move || if page { "lantern page" } else { "lantern overlay" }
            hidden=move || !open.get()
            on:click=move |ev| {
                if !page && ev.target() == ev.current_target() {
                    open.set(false);
                }
            }
        >
            <div
                class="dialog"
                node_ref=dialog_ref
                role=if page { "search" } else { "dialog" }
                aria-modal=if page { "false" } else { "true" }
                aria-label="Search the documentation"
                on:keydown=on_key
            >
                <div class="bar">
                    <input
                        node_ref=input_ref
                        type="search"
                        role="combobox"
                        aria-autocomplete="list"
                        aria-controls="lantern-listbox"
                        aria-expanded=move || results.get().is_some_and(|r| !r.hits.is_empty()).to_string()
                        aria-activedescendant=move || {
                            if flat().is_empty() { String::new() } else { format!("lantern-opt-{}", active.get()) }
                        }
                        placeholder="Search the docs"
                        autocomplete="off"
                        spellcheck="false"
                        prop:value=move || query.get()
                        on:input=move |ev| {
                            query.set(event_target_value(&ev));
                            active.set(0);
                            run();
                        }
                    />
                    {(!page)
                        .then(|| {
                            view! {
                                <button type="button" class="close" aria-label="Close search" on:click=move |_| open.set(false)>
                                    "Esc"
                                </button>
                            }
                        })}
                </div>
                <div class="modes" role="radiogroup" aria-label="Search mode">
                    {mode_button(Mode::Hybrid, "Hybrid")}
                    {mode_button(Mode::Keyword, "Keyword")}
                    {mode_button(Mode::Vector, "Semantic")}
                    {can_ask
                        .then(|| {
                            view! {
                                <button
                                    type="button"
                                    class="ask"
                                    disabled=move || query.get().trim().is_empty() || matches!(answer.get(), Answer::Streaming(_))
                                    on:click=move |_| {
                                        let Some(rt) = runtime.get_value() else { return };
                                        let q = query.get_untracked();
                                        show_passages.set(false);
                                        answer.set(Answer::Streaming(String::new()));
                                        spawn_local(async move {
                                            let b = bridge.get_value();
                                            let r = runtime::ask(&b, &rt, &q, move |t| answer.set(Answer::Streaming(t))).await;
                                            answer.set(match r {
                                                Ok(o) => Answer::Done(o),
                                                Err(e) => Answer::Failed(e),
                                            });
                                        });
                                    }
                                >
                                    "Ask"
                                </button>
                            }
                        })}
                </div>
                {move || answer_panel(answer.get(), show_passages)}
                <p class="status" aria-live="polite" data-stage=move || format!("{:?}", stage.get()).split('(').next().unwrap_or("").to_lowercase()>
                    {move || loading().then(|| view! { <span class="spinner" aria-hidden="true"></span> })}
                    {status}
                </p>
                <div class="body">{body}</div>
                <p class="keys" aria-hidden="true">"↑↓ move · Enter open · Esc close"</p>
            </div>
        </div>
    }
}

/// The answer: streamed text while it arrives, then the verified answer with its citations as
/// links to the passages' sections, or the reason there is none. All text, never HTML.
fn answer_panel(a: Answer, show: RwSignal<bool>) -> impl IntoView {
    let body = match a {
        Answer::None => return None,
        Answer::Streaming(t) => view! {
            <p class="answer-status" role="status">"Writing an answer from the docs…"</p>
            <p class="answer-draft">{t}</p>
        }
        .into_any(),
        Answer::Failed(e) => {
            view! { <p class="answer-status" role="alert">{format!("No answer: {e}")}</p> }
                .into_any()
        }
        Answer::Done(o) if o.status == "answered" => {
            let passages = o.passages.clone();
            let paras = o
                .text
                .split("\n\n")
                .filter(|p| !p.trim().is_empty())
                .map(|p| {
                    let parts = citation_parts(p)
                        .into_iter()
                        .map(|(text, n)| match n.and_then(|n| passages.iter().find(|x| x.n == n)) {
                            Some(x) => view! { <a class="cite" href=x.url.clone() title=x.breadcrumb.clone()>{text}</a> }.into_any(),
                            None => text.into_any(),
                        })
                        .collect_view();
                    view! { <p>{parts}</p> }
                })
                .collect_view();
            let list = o
                .passages
                .into_iter()
                .map(|x| view! { <li><a href=x.url>{format!("[{}] {}", x.n, x.breadcrumb)}</a><p>{x.text}</p></li> })
                .collect_view();
            view! {
                <div class="answer-text">{paras}</div>
                <button type="button" class="why" on:click=move |_| show.update(|s| *s = !*s) aria-expanded=move || show.get().to_string()>
                    "passages used"
                </button>
                <ol class="passages" hidden=move || !show.get()>{list}</ol>
            }
            .into_any()
        }
        Answer::Done(o) => {
            let why = match o.reason.as_deref() {
                Some("no_good_match") => "I couldn't find this in the docs. The closest sections are listed below.",
                Some("not_in_context") => "The most relevant passages do not contain the answer.",
                _ => "An answer came back but its citations could not be verified against the docs, so it is not shown.",
            };
            view! { <p class="answer-status abstained" role="status">{why}</p> }.into_any()
        }
    };
    Some(view! { <section class="answer" aria-label="Answer">{body}</section> })
}

/// Splits text into plain pieces and `[n]` citation markers.
fn citation_parts(text: &str) -> Vec<(String, Option<u32>)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('[') {
        let after = &rest[i + 1..];
        match after
            .find(']')
            .and_then(|j| after[..j].trim().parse::<u32>().ok().map(|n| (j, n)))
        {
            Some((j, n)) => {
                if i > 0 {
                    out.push((rest[..i].to_string(), None));
                }
                out.push((format!("[{n}]"), Some(n)));
                rest = &after[j + 1..];
            }
            None => {
                out.push((rest[..=i].to_string(), None));
                rest = after;
            }
        }
    }
    if !rest.is_empty() {
        out.push((rest.to_string(), None));
    }
    out
}

/// One result row: a link to the section, its breadcrumb, the highlighted excerpt and, on
/// demand, why it ranked where it did.
fn result_option(
    h: Hit,
    i: usize,
    active: RwSignal<usize>,
    why: RwSignal<Option<u32>>,
    go: impl Fn(String) + Copy + 'static,
) -> impl IntoView {
    let url = h.url.clone();
    let chunk = h.chunk;
    let parts = highlight::segments(&h.excerpt, &h.highlights)
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
        h.keyword
            .map(|s| format!("#{} (BM25 {:.2})", s.rank, s.score))
            .unwrap_or_else(|| "no match".into()),
        h.vector
            .map(|s| format!("#{} (cosine {:.3})", s.rank, s.score))
            .unwrap_or_else(|| "not in top 50".into()),
        h.score
    );
    view! {
        <li
            role="option"
            id=format!("lantern-opt-{i}")
            class="hit"
            aria-selected=move || (active.get() == i).to_string()
            on:mousemove=move |_| active.set(i)
        >
            <a
                href=url.clone()
                on:click=move |ev| {
                    ev.prevent_default();
                    go(url.clone());
                }
            >
                <span class="crumb">{h.breadcrumb}</span>
                <span class="excerpt">{parts}</span>
            </a>
            <button
                type="button"
                class="why"
                tabindex="-1"
                aria-expanded=move || (why.get() == Some(chunk)).to_string()
                on:click=move |_| why.update(|w| *w = if *w == Some(chunk) { None } else { Some(chunk) })
            >
                "why?"
            </button>
            {move || (why.get() == Some(chunk)).then(|| view! { <p class="explain">{explain.clone()}</p> })}
        </li>
    }
}

/// Keeps Tab and Shift-Tab cycling inside the dialog while it is open.
fn trap_focus(ev: &KeyboardEvent, dialog: NodeRef<leptos::html::Div>) {
    let Some(d) = dialog.get() else { return };
    let Ok(list) = d.query_selector_all("input, button:not([tabindex='-1']), a[href]") else {
        return;
    };
    let items: Vec<web_sys::HtmlElement> = (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into().ok())
        .collect();
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return;
    };
    let root = d.get_root_node();
    let focused = js_sys::Reflect::get(&root, &"activeElement".into()).ok();
    let is = |el: &web_sys::HtmlElement| {
        focused
            .as_ref()
            .is_some_and(|f| f == AsRef::<JsValue>::as_ref(el))
    };
    if ev.shift_key() && is(first) {
        ev.prevent_default();
        let _ = last.focus();
    } else if !ev.shift_key() && is(last) {
        ev.prevent_default();
        let _ = first.focus();
    }
}
