//! The root component: the shared state (provided as context to the children), loading, the
//! search box, the mode switch and the keyboard.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::KeyboardEvent;

use lantern_engine::Mode;

use crate::answer::answer_panel;
use crate::ctx::Ctx;
use crate::results::ResultsBody;
use crate::runtime::Bridge;
use crate::state::{flat_hits, hit_link, step, Answer, Stage};

#[component]
pub fn Search(
    open: RwSignal<bool>,
    bridge: StoredValue<Bridge, LocalStorage>,
    page: bool,
    initial: String,
) -> impl IntoView {
    let can_ask = bridge.with_value(|b| b.proxy().is_some());
    let ctx = Ctx::new(initial, bridge);
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
                aria-label=ctx.labels.dialog
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
                        placeholder=ctx.labels.placeholder
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
                                <button type="button" class="close" aria-label=ctx.labels.close on:click=move |_| open.set(false)>
                                    "Esc"
                                </button>
                            }
                        })}
                </div>
                <div class="modes" role="radiogroup" aria-label=ctx.labels.modes>
                    <ModeButton mode=Mode::Hybrid />
                    <ModeButton mode=Mode::Keyword />
                    <ModeButton mode=Mode::Vector />
                    {can_ask.then(|| view! { <AskButton /> })}
                </div>
                <Facets />
                {move || answer_panel(ctx.answer.get(), ctx.labels)}
                <p class="status" aria-live="polite" data-stage=move || ctx.stage.get().name()>
                    {move || ctx.stage.get().loading().then(|| view! { <span class="spinner" aria-hidden="true"></span> })}
                    {move || ctx.stage.get().status(ctx.labels)}
                </p>
                // Focusable, so a keyboard can scroll a long list (its options are reached by
                // arrows from the input, not by Tab).
                <p class="sr-only" role="status">{move || crate::results::announcement(ctx)}</p>
                <div class="body" tabindex="0" aria-label=ctx.labels.results>
                    <ResultsBody />
                </div>
                <p class="keys" aria-hidden="true">{ctx.labels.keys}</p>
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
            {match mode {
                Mode::Hybrid => ctx.labels.hybrid,
                Mode::Keyword => ctx.labels.keyword,
                Mode::Vector => ctx.labels.semantic,
            }}
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
                    let label = crate::labels::fill(ctx.labels.filter_by, &[("key", &key)]);
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
            {ctx.labels.ask}
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
