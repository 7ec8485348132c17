//! The root component: the shared state (provided as context to the children), loading, the
//! search box, the mode switch and the keyboard.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::prelude::*;
use web_sys::KeyboardEvent;

use lantern_engine::{Facet, Filter, Mode, Results};

use crate::answer::answer_panel;
use crate::recent;
use crate::results::ResultsBody;
use crate::runtime::{self, Bridge, Progress, Runtime};
use crate::state::{
    fetch_delay, flat_hits, hit_link, keep_active, needs_model, step, Answer, Stage, K,
    MEANING_AFTER_MS,
};

/// State shared by the components; every field is a cheap, copyable handle.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub query: RwSignal<String>,
    pub mode: RwSignal<Mode>,
    pub stage: RwSignal<Stage>,
    pub results: RwSignal<Option<Results>>,
    /// Index of the highlighted option in display order.
    pub active: RwSignal<usize>,
    /// The chunk whose "why?" is open.
    pub why: RwSignal<Option<u32>>,
    pub recents: RwSignal<Vec<String>>,
    pub answer: RwSignal<Answer>,
    /// The site's filters, shown as facets when it has any.
    pub facets: RwSignal<Vec<Facet>>,
    /// The facet values chosen.
    pub filter: RwSignal<Filter>,
    runtime: StoredValue<Option<Runtime>, LocalStorage>,
    bridge: StoredValue<Bridge, LocalStorage>,
    seq: StoredValue<u64>,
    /// The query table has been asked for.
    table: StoredValue<bool>,
    /// The query and filter the shown results answer.
    shown: StoredValue<Option<(String, Filter)>>,
}

impl Ctx {
    /// Runs the current query; answers to older queries are dropped when they arrive late.
    pub fn run(self) {
        spawn_local(self.search(0));
    }

    /// Runs the query as typed: answered at once from what is loaded, while what it lacks is
    /// fetched only if no keystroke follows within [`fetch_delay`].
    pub fn run_typed(self) {
        let wait = fetch_delay(&self.query.get_untracked());
        spawn_local(self.search(wait));
    }

    /// [`Ctx::run`], finished when its results are shown (or a newer search superseded it).
    async fn search(self, wait: u32) {
        let q = self.query.get_untracked();
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        if q.trim().is_empty() {
            self.results.set(None);
            return;
        }
        let mode = self.mode.get_untracked();
        let filter = self.filter.get_untracked();
        let n = self.seq.get_value() + 1;
        self.seq.set_value(n);
        match runtime::search(&rt, &q, mode, K, &filter, wait).await {
            Ok(Some(r)) if self.seq.get_value() == n => {
                let asked = Some((q, filter));
                // The same question answered better (quick meaning, then the model): the
                // selected section stays selected. A new question starts at the top. Only an
                // upgrade pays for comparing the lists.
                let active = if self.shown.get_value() == asked {
                    keep_active(
                        self.active.get_untracked(),
                        &flat_hits(self.results.get_untracked()),
                        &flat_hits(Some(r.clone())),
                    )
                } else {
                    self.active
                        .get_untracked()
                        .min(r.hits.len().saturating_sub(1))
                };
                self.shown.set_value(asked);
                let wants_model = needs_model(&r, mode);
                self.results.set(Some(r));
                self.active.set(active);
                if wants_model {
                    self.want_meaning_after_pause();
                }
            }
            // A superseded search's failure is not the reader's concern: a newer one runs.
            Err(e) if self.seq.get_value() == n => self.stage.set(Stage::Failed(e)),
            _ => {}
        }
    }

    /// Opens a result (remembering the query).
    pub fn go(self, url: &str) {
        // Whatever a bundle says, only a path or an http(s) link is followed.
        if !lantern_engine::is_safe_link(url) {
            return;
        }
        recent::remember(&self.query.get_untracked());
        if let Some(w) = web_sys::window() {
            let _ = w.location().assign(url);
        }
    }

    /// Asks for a cited answer to the current query.
    pub fn ask(self) {
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        let q = self.query.get_untracked();
        let answer = self.answer;
        answer.set(Answer::Streaming(String::new()));
        let bridge = self.bridge.get_value();
        spawn_local(async move {
            let r = runtime::ask(&bridge, &rt, &q, move |t| answer.set(Answer::Streaming(t))).await;
            answer.set(match r {
                Ok(o) => Answer::Done(o),
                Err(e) => Answer::Failed(e),
            });
        });
    }

    /// Loads the bundle and shows keyword results; meaning (the query table's quick meaning,
    /// then the model) follows only for a question that needs it ([`Ctx::want_meaning`]), or
    /// at once when the service worker already holds the model.
    fn load(self) {
        self.stage.set(Stage::Bundle(Progress::default()));
        let stage = self.stage;
        spawn_local(async move {
            let b = self.bridge.get_value();
            let rt = match runtime::load_bundle(&b, move |p| stage.set(Stage::Bundle(p))).await {
                Ok(rt) => rt,
                Err(e) => {
                    stage.set(Stage::Failed(e));
                    return;
                }
            };
            self.runtime.set_value(Some(rt.clone()));
            self.facets.set(runtime::facets(&rt));
            stage.set(Stage::Keyword);
            // Keyword results first, with nothing else on the wire (the reader may still be
            // typing: the query as typed so far waits like a keystroke's).
            self.search(fetch_delay(&self.query.get_untracked())).await;
            if !runtime::has_model(&b) {
                stage.set(Stage::QuickOnly(false));
            } else if b.save_data() {
                stage.set(Stage::SaveData(false));
            } else {
                stage.set(Stage::Ready(false));
                if runtime::model_cached(&b).await {
                    self.load_model();
                }
            }
            let weak = self.results.with_untracked(|r| {
                r.as_ref()
                    .is_some_and(|r| needs_model(r, self.mode.get_untracked()))
            });
            if weak {
                self.want_meaning_after_pause();
            }
        });
    }

    /// [`Ctx::want_meaning`] once the reader has paused on the current query for
    /// [`MEANING_AFTER_MS`]; nothing if they typed on.
    fn want_meaning_after_pause(self) {
        let n = self.seq.get_value();
        set_timeout(
            move || {
                if self.seq.get_value() == n {
                    self.want_meaning();
                }
            },
            std::time::Duration::from_millis(MEANING_AFTER_MS),
        );
    }

    /// The query needs meaning: the query table (small: approximate meaning at once) and,
    /// unless the reader saves data, the model. Each is fetched once.
    pub fn want_meaning(self) {
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        if self
            .bridge
            .with_value(|b| runtime::has_model(b) && !b.save_data())
        {
            self.load_model();
        }
        if self.table.get_value() {
            return;
        }
        self.table.set_value(true);
        let stage = self.stage;
        spawn_local(async move {
            if runtime::load_query_table(&rt).await {
                let mut upgraded = false;
                stage.update(|s| {
                    if let Stage::Ready(quick)
                    | Stage::Model(_, quick)
                    | Stage::SaveData(quick)
                    | Stage::QuickOnly(quick) = s
                    {
                        *quick = true;
                        upgraded = true;
                    }
                });
                // Not once the model's results are in: they are better.
                if upgraded {
                    self.run();
                }
            }
        });
    }

    /// Starts the model's download unless it is loading, loaded or not to be loaded; the
    /// visible results are upgraded in place when it arrives.
    pub fn load_model(self) {
        let Stage::Ready(quick) = self.stage.get_untracked() else {
            return;
        };
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        let b = self.bridge.get_value();
        let stage = self.stage;
        stage.set(Stage::Model(Progress::default(), quick));
        spawn_local(async move {
            let progress = move |p| {
                stage.update(|s| {
                    if let Stage::Model(at, _) = s {
                        *at = p;
                    }
                })
            };
            match runtime::load_semantic(&b, &rt, progress).await {
                Ok(()) => {
                    stage.set(Stage::Hybrid);
                    self.run(); // upgrade the visible results in place
                }
                Err(e) => stage.set(Stage::Failed(format!("semantic search unavailable: {e}"))),
            }
        });
    }
}

#[component]
pub fn Search(
    open: RwSignal<bool>,
    bridge: StoredValue<Bridge, LocalStorage>,
    page: bool,
    initial: String,
) -> impl IntoView {
    let can_ask = bridge.with_value(|b| b.proxy().is_some());
    let ctx = Ctx {
        query: RwSignal::new(initial),
        mode: RwSignal::new(Mode::Hybrid),
        stage: RwSignal::new(Stage::Idle),
        results: RwSignal::new(None),
        active: RwSignal::new(0),
        why: RwSignal::new(None),
        recents: RwSignal::new(recent::load()),
        answer: RwSignal::new(Answer::None),
        facets: RwSignal::new(Vec::new()),
        filter: RwSignal::new(Filter::default()),
        runtime: StoredValue::new_local(None),
        bridge,
        seq: StoredValue::new(0),
        table: StoredValue::new(false),
        shown: StoredValue::new(None),
    };
    provide_context(ctx);
    let input_ref = NodeRef::<leptos::html::Input>::new();
    let dialog_ref = NodeRef::<leptos::html::Div>::new();

    // Nothing is downloaded before the first open.
    Effect::new(move |_| {
        if open.get() && ctx.stage.get_untracked() == Stage::Idle {
            ctx.load();
        }
    });
    // Focus moves to the input on open, and back to what had it (the trigger, a page's link)
    // on close, as a dialog should leave a keyboard where it found it.
    let opener = StoredValue::new_local(None::<web_sys::HtmlElement>);
    Effect::new(move |was_open: Option<bool>| {
        let now = open.get();
        if now && was_open != Some(true) {
            opener.set_value(focused_element());
            if let Some(i) = input_ref.get() {
                let _ = i.focus();
            }
        } else if !now && was_open == Some(true) {
            if let Some(el) = opener.get_value() {
                let _ = el.focus();
            }
        }
        now
    });

    let on_key = move |ev: KeyboardEvent| {
        let hits = flat_hits(ctx.results.get_untracked());
        match ev.key().as_str() {
            k @ ("ArrowDown" | "ArrowUp") => {
                ev.prevent_default();
                ctx.active
                    .update(|a| *a = step(*a, hits.len(), k == "ArrowDown"));
            }
            "Enter" => {
                if let Some(h) = hits.get(ctx.active.get_untracked()) {
                    ev.prevent_default();
                    ctx.go(&hit_link(h, &ctx.query.get_untracked()));
                }
            }
            "Escape" if !page => open.set(false),
            "Tab" if !page => trap_focus(&ev, dialog_ref),
            _ => {}
        }
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
                        aria-expanded=move || ctx.results.get().is_some_and(|r| !r.hits.is_empty()).to_string()
                        aria-activedescendant=move || {
                            if flat_hits(ctx.results.get()).is_empty() {
                                String::new()
                            } else {
                                format!("lantern-opt-{}", ctx.active.get())
                            }
                        }
                        placeholder="Search the docs"
                        autocomplete="off"
                        spellcheck="false"
                        prop:value=move || ctx.query.get()
                        on:input=move |ev| {
                            ctx.query.set(event_target_value(&ev));
                            ctx.active.set(0);
                            ctx.run_typed();
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
                    <ModeButton mode=Mode::Hybrid />
                    <ModeButton mode=Mode::Keyword />
                    <ModeButton mode=Mode::Vector />
                    {can_ask.then(|| view! { <AskButton /> })}
                </div>
                <Facets />
                {move || answer_panel(ctx.answer.get())}
                <p class="status" aria-live="polite" data-stage=move || ctx.stage.get().name()>
                    {move || ctx.stage.get().loading().then(|| view! { <span class="spinner" aria-hidden="true"></span> })}
                    {move || ctx.stage.get().status()}
                </p>
                // Focusable, so a keyboard can scroll a long list (its options are reached by
                // arrows from the input, not by Tab).
                <p class="sr-only" role="status">{move || crate::results::announcement(ctx)}</p>
                <div class="body" tabindex="0" aria-label="Results">
                    <ResultsBody />
                </div>
                <p class="keys" aria-hidden="true">"↑↓ move · Enter open · Esc close"</p>
            </div>
        </div>
    }
}

/// One choice of the mode switch.
#[component]
fn ModeButton(mode: Mode) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    view! {
        <button
            type="button"
            role="radio"
            class="mode"
            aria-checked=move || (ctx.mode.get() == mode).to_string()
            on:click=move |_| {
                ctx.mode.set(mode);
                ctx.run();
            }
        >
            {mode.label()}
        </button>
    }
}

/// The site's filters as toggles, one group per key; nothing for a site without filters.
#[component]
fn Facets() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    move || {
        let facets = ctx.facets.get();
        (!facets.is_empty()).then(|| {
            facets
                .into_iter()
                .map(|f| {
                    let key = f.key.clone();
                    let values = f
                        .values
                        .into_iter()
                        .map(|(value, pages)| {
                            let (k, v) = (key.clone(), value.clone());
                            let (k2, v2) = (key.clone(), value.clone());
                            view! {
                                <button
                                    type="button"
                                    class="facet"
                                    aria-pressed=move || ctx.filter.with(|f| f.contains(&k, &v)).to_string()
                                    on:click=move |_| {
                                        ctx.filter.update(|f| f.toggle(&k2, &v2));
                                        ctx.active.set(0);
                                        ctx.run();
                                    }
                                >
                                    {value}
                                    <span class="count">{pages}</span>
                                </button>
                            }
                        })
                        .collect_view();
                    let label = format!("Filter by {key}");
                    view! {
                        <div class="facets" role="group" aria-label=label>
                            <span class="facet-key">{key}</span>
                            {values}
                        </div>
                    }
                })
                .collect_view()
        })
    }
}

/// "Ask": only shown when the widget names an answer proxy.
#[component]
fn AskButton() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    view! {
        <button
            type="button"
            class="ask"
            disabled=move || {
                ctx.query.get().trim().is_empty() || matches!(ctx.answer.get(), Answer::Streaming(_))
            }
            on:click=move |_| ctx.ask()
        >
            "Ask"
        </button>
    }
}

/// Keeps Tab and Shift-Tab cycling inside the dialog while it is open.
/// The element with focus, looking into shadow roots (the widget's trigger lives in one).
fn focused_element() -> Option<web_sys::HtmlElement> {
    use wasm_bindgen::JsCast;
    let mut el = web_sys::window()?.document()?.active_element()?;
    while let Some(inner) = el.shadow_root().and_then(|r| r.active_element()) {
        el = inner;
    }
    el.dyn_into::<web_sys::HtmlElement>().ok()
}

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
