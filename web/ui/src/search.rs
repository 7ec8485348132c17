//! The dialog's frame: its nodes, built once (the box, the mode switch, the status line, the
//! live region, the results' place), the keyboard, and the listeners. Listeners sit on the
//! frame and find what was clicked by its `data-act`, so the rows redrawn on every search
//! carry none of their own.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, HtmlInputElement, KeyboardEvent};

use lantern_engine::Mode;

use crate::ctx::Ctx;
use crate::dom::{self, el, flag, Build};
use crate::labels::{fill, Labels};
use crate::runtime::Bridge;
use crate::state::{hit_link, shown_hits, step, Answer};

/// The modes in the switch's order.
const MODES: [Mode; 3] = [Mode::Hybrid, Mode::Keyword, Mode::Vector];

/// The frame's nodes that change.
pub struct View {
    overlay: Element,
    dialog: Element,
    pub input: HtmlInputElement,
    modes: Vec<Element>,
    ask: Option<Element>,
    facets: Element,
    pub answer: Element,
    status: Element,
    pub announce: Element,
    pub body: Element,
}

/// Builds the dialog into `host` and wires it; `page` renders it inline as a search page.
pub fn mount(host: &HtmlElement, bridge: Bridge, page: bool, initial: String) -> Ctx {
    let l = crate::labels::for_lang(&page_lang());
    let can_ask = bridge.proxy().is_some();
    let view = frame(l, page, can_ask);
    let _ = host.append_child(&view.overlay);
    view.input.set_value(&initial);
    let ctx = Ctx::new(view, bridge, l, page, initial);
    listen(&ctx);
    ctx.show_open();
    ctx.show_modes();
    ctx.show_ask();
    ctx.show_stage();
    ctx.show_results();
    if page {
        ctx.set_open(true);
    }
    ctx
}

fn frame(l: &Labels, page: bool, can_ask: bool) -> View {
    let input: HtmlInputElement = el("input")
        .attr("type", "search")
        .attr("role", "combobox")
        .attr("aria-autocomplete", "list")
        .attr("aria-controls", "lantern-listbox")
        .attr("aria-expanded", "false")
        .attr("placeholder", l.placeholder)
        .attr("autocomplete", "off")
        .attr("spellcheck", "false")
        .unchecked_into();
    let bar = el("div").attr("class", "bar").child(&input);
    if !page {
        bar.append_child(
            &el("button")
                .attr("type", "button")
                .attr("class", "close")
                .attr("aria-label", l.close)
                .attr("data-act", "close")
                .text("Esc"),
        )
        .ok();
    }
    let modes: Vec<Element> = MODES
        .iter()
        .enumerate()
        .map(|(i, m)| {
            el("button")
                .attr("type", "button")
                .attr("role", "radio")
                .attr("class", "mode")
                .attr("data-act", "mode")
                .attr("data-i", &i.to_string())
                .text(match m {
                    Mode::Hybrid => l.hybrid,
                    Mode::Keyword => l.keyword,
                    Mode::Vector => l.semantic,
                })
        })
        .collect();
    let switch = el("div")
        .attr("class", "modes")
        .attr("role", "radiogroup")
        .attr("aria-label", l.modes);
    for m in &modes {
        let _ = switch.append_child(m);
    }
    let ask = can_ask.then(|| {
        el("button")
            .attr("type", "button")
            .attr("class", "ask")
            .attr("data-act", "ask")
            .text(l.ask)
    });
    if let Some(a) = &ask {
        let _ = switch.append_child(a);
    }
    let facets = el("div");
    let answer = el("div");
    let status = el("p").attr("class", "status").attr("aria-live", "polite");
    // A live region that stays in place (one inserted with its text is not reliably read).
    let announce = el("p").attr("class", "sr-only").attr("role", "status");
    // Focusable, so a keyboard can scroll a long list (its options are reached by arrows from
    // the input, not by Tab).
    let body = el("div")
        .attr("class", "body")
        .attr("tabindex", "0")
        .attr("aria-label", l.results);
    let dialog = el("div")
        .attr("class", "dialog")
        .attr("role", if page { "search" } else { "dialog" })
        .attr("aria-modal", if page { "false" } else { "true" })
        .attr("aria-label", l.dialog)
        .child(&bar)
        .child(&switch)
        .child(&facets)
        .child(&answer)
        .child(&status)
        .child(&announce)
        .child(&body)
        .child(
            &el("p")
                .attr("class", "keys")
                .attr("aria-hidden", "true")
                .text(l.keys),
        );
    let overlay = el("div")
        .attr(
            "class",
            if page {
                "lantern page"
            } else {
                "lantern overlay"
            },
        )
        .child(&dialog);
    View {
        overlay,
        dialog,
        input,
        modes,
        ask,
        facets,
        answer,
        status,
        announce,
        body,
    }
}

fn listen(ctx: &Ctx) {
    let v = ctx.view();
    let c = ctx.clone();
    dom::on(&v.input, "input", move |_| {
        c.set_query(c.view().input.value());
        c.run_typed();
    });
    let c = ctx.clone();
    dom::on(&v.overlay, "click", move |ev| {
        if !c.is_page() && ev.target() == ev.current_target() {
            c.set_open(false);
        }
    });
    let c = ctx.clone();
    dom::on(&v.dialog, "keydown", move |ev| {
        if let Some(k) = ev.dyn_ref::<KeyboardEvent>() {
            on_key(&c, k);
        }
    });
    let c = ctx.clone();
    dom::on(&v.dialog, "mousemove", move |ev| {
        if let Some(i) = dom::closest(&ev, ".hit-row").and_then(|r| index(&r)) {
            c.set_active(i);
        }
    });
    let c = ctx.clone();
    dom::on(&v.dialog, "click", move |ev| {
        let Some(target) = dom::closest(&ev, "[data-act]") else {
            return;
        };
        let attr = |k: &str| target.get_attribute(k).unwrap_or_default();
        match attr("data-act").as_str() {
            "close" => c.set_open(false),
            "mode" => {
                if let Some(&m) = index(&target).and_then(|i| MODES.get(i)) {
                    c.set_mode(m);
                }
            }
            "ask" => c.ask(),
            "facet" => c.toggle_filter(&attr("data-key"), &attr("data-value")),
            "hit" => {
                ev.prevent_default();
                if let Some(i) = index(&target) {
                    open_hit(&c, i);
                }
            }
            "why" => {
                if let Ok(chunk) = attr("data-chunk").parse() {
                    c.toggle_why(chunk);
                }
            }
            "recent" => {
                let q = target.text_content().unwrap_or_default();
                c.view().input.set_value(&q);
                c.set_query(q);
                c.run();
            }
            "passages" => {
                let shown = attr("aria-expanded") == "true";
                let _ = target.set_attribute("aria-expanded", &(!shown).to_string());
                if let Ok(Some(list)) = c.view().answer.query_selector("ol.passages") {
                    flag(&list, "hidden", shown);
                }
            }
            _ => {}
        }
    });
}

/// A node's `data-i`.
fn index(e: &Element) -> Option<usize> {
    e.get_attribute("data-i")?.parse().ok()
}

/// Follows the `i`th result in display order.
fn open_hit(ctx: &Ctx, i: usize) {
    let link = {
        let s = ctx.state();
        let link = shown_hits(s.results.as_ref())
            .nth(i)
            .map(|h| hit_link(h, &s.query));
        link
    };
    if let Some(link) = link {
        ctx.go(&link);
    }
}

fn on_key(ctx: &Ctx, ev: &KeyboardEvent) {
    let page = ctx.is_page();
    match ev.key().as_str() {
        k @ ("ArrowDown" | "ArrowUp") => {
            ev.prevent_default();
            let (active, len) = {
                let s = ctx.state();
                (s.active, shown_hits(s.results.as_ref()).count())
            };
            ctx.set_active(step(active, len, k == "ArrowDown"));
        }
        "Enter" => {
            let (i, len) = {
                let s = ctx.state();
                (s.active, shown_hits(s.results.as_ref()).count())
            };
            if i < len {
                ev.prevent_default();
                open_hit(ctx, i);
            }
        }
        "Escape" if !page => ctx.set_open(false),
        "Tab" if !page => trap_focus(ev, &ctx.view().dialog),
        _ => {}
    }
}

/// Keeps Tab and Shift-Tab cycling inside the dialog while it is open.
fn trap_focus(ev: &KeyboardEvent, dialog: &Element) {
    let Ok(list) = dialog.query_selector_all("input, button:not([tabindex='-1']), a[href]") else {
        return;
    };
    let items: Vec<HtmlElement> = (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into().ok())
        .collect();
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return;
    };
    let root = dialog.get_root_node();
    let focused = js_sys::Reflect::get(&root, &"activeElement".into()).ok();
    let is = |el: &HtmlElement| {
        focused
            .as_ref()
            .is_some_and(|f| f == AsRef::<wasm_bindgen::JsValue>::as_ref(el))
    };
    if ev.shift_key() && is(first) {
        ev.prevent_default();
        let _ = last.focus();
    } else if !ev.shift_key() && is(last) {
        ev.prevent_default();
        let _ = first.focus();
    }
}

/// The page's language (`<html lang>`), for the labels.
fn page_lang() -> String {
    dom::document()
        .document_element()
        .and_then(|e| e.get_attribute("lang"))
        .unwrap_or_default()
}

impl Ctx {
    /// Shown or hidden.
    pub fn show_open(&self) {
        flag(&self.view().overlay, "hidden", !self.state().open);
    }

    /// What follows the box's text: the ask button, and the results (see `results`).
    pub fn show_query(&self) {
        let v = self.view();
        let q = self.state().query.clone();
        if v.input.value() != q {
            v.input.set_value(&q);
        }
        self.show_ask();
    }

    pub fn show_modes(&self) {
        let mode = self.state().mode;
        for (b, m) in self.view().modes.iter().zip(MODES) {
            let _ = b.set_attribute("aria-checked", &(m == mode).to_string());
        }
    }

    /// "Ask": only present when the widget names an answer proxy.
    pub fn show_ask(&self) {
        if let Some(b) = &self.view().ask {
            let s = self.state();
            let busy = matches!(s.answer, Answer::Streaming(_));
            flag(b, "disabled", s.query.trim().is_empty() || busy);
        }
    }

    pub fn show_stage(&self) {
        let s = self.state();
        let p = &self.view().status;
        let _ = p.set_attribute("data-stage", s.stage.name());
        dom::clear(p);
        if s.stage.loading() {
            let _ = p.append_child(
                &el("span")
                    .attr("class", "spinner")
                    .attr("aria-hidden", "true"),
            );
        }
        let _ = p.append_child(&dom::text(&s.stage.status(self.labels())));
    }

    /// The site's filters as toggles, one group per key; nothing for a site without filters.
    pub fn show_facets(&self) {
        let s = self.state();
        let l = self.labels();
        let holder = &self.view().facets;
        dom::clear(holder);
        for f in &s.facets {
            let group = el("div")
                .attr("class", "facets")
                .attr("role", "group")
                .attr("aria-label", &fill(l.filter_by, &[("key", &f.key)]))
                .child(&el("span").attr("class", "facet-key").text(&f.key));
            for (value, pages) in &f.values {
                let b = el("button")
                    .attr("type", "button")
                    .attr("class", "facet")
                    .attr("data-act", "facet")
                    .attr("data-key", &f.key)
                    .attr("data-value", value)
                    .attr(
                        "aria-pressed",
                        &s.filter.contains(&f.key, value).to_string(),
                    )
                    .text(value)
                    .child(&el("span").attr("class", "count").text(&pages.to_string()));
                let _ = group.append_child(&b);
            }
            let _ = holder.append_child(&group);
        }
    }

    /// The highlighted option: marked on the rows and named by the box.
    pub fn show_active(&self) {
        let s = self.state();
        let v = self.view();
        let count = shown_hits(s.results.as_ref()).count();
        if let Ok(rows) = v.body.query_selector_all("a.hit") {
            for i in 0..rows.length() {
                if let Some(a) = rows.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                    let on = index(&a) == Some(s.active);
                    let _ = a.set_attribute("aria-selected", &on.to_string());
                }
            }
        }
        let _ = v
            .input
            .set_attribute("aria-expanded", &(count > 0).to_string());
        if count == 0 {
            let _ = v.input.remove_attribute("aria-activedescendant");
        } else {
            let _ = v.input.set_attribute(
                "aria-activedescendant",
                &format!("lantern-opt-{}", s.active),
            );
        }
    }
}
