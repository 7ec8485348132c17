//! The few DOM operations the dialog needs, straight over web-sys: elements built with
//! attributes and text (text always goes in as a text node, never as markup), listeners that
//! live as long as the page, and a timer. The dialog's dozen controls and a few dozen result
//! nodes a keystroke do not need a reactive framework; this is what it costs instead (#54).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, Event, EventTarget};

/// The page's document (the widget only runs in one).
pub fn document() -> Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect_throw("a document")
}

/// A new element (the tag names are the UI's own, always valid).
pub fn el(tag: &str) -> Element {
    document().create_element(tag).unwrap_throw()
}

/// A text node.
pub fn text(t: &str) -> web_sys::Text {
    document().create_text_node(t)
}

/// Building an element in one expression.
pub trait Build: Sized {
    /// Sets an attribute.
    fn attr(self, name: &str, value: &str) -> Self;
    /// Appends text, as a text node.
    fn text(self, text: &str) -> Self;
    /// Appends a child.
    fn child(self, child: &Element) -> Self;
}

impl Build for Element {
    fn attr(self, name: &str, value: &str) -> Self {
        let _ = self.set_attribute(name, value);
        self
    }
    fn text(self, t: &str) -> Self {
        let _ = self.append_child(&text(t));
        self
    }
    fn child(self, child: &Element) -> Self {
        let _ = self.append_child(child);
        self
    }
}

/// Sets or removes a boolean attribute (`hidden`, `disabled`).
pub fn flag(e: &Element, name: &str, on: bool) {
    let _ = if on {
        e.set_attribute(name, "")
    } else {
        e.remove_attribute(name)
    };
}

/// Replaces an element's children with text, only when it changed (a live region re-reads
/// any write).
pub fn set_text(e: &Element, text: &str) {
    if e.text_content().as_deref() != Some(text) {
        e.set_text_content(Some(text));
    }
}

/// Removes every child.
pub fn clear(e: &Element) {
    e.set_text_content(None);
}

/// Listens for `event` on `target` for the page's life (the dialog's skeleton is never
/// removed; rows re-rendered per search get no listeners of their own, see `search`).
pub fn on(target: &EventTarget, event: &str, f: impl FnMut(Event) + 'static) {
    let cb = Closure::<dyn FnMut(Event)>::new(f);
    let _ = target.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
    cb.forget();
}

/// The nearest element to an event's target (itself included) matching `selector`.
pub fn closest(ev: &Event, selector: &str) -> Option<Element> {
    ev.target()?
        .dyn_into::<Element>()
        .ok()?
        .closest(selector)
        .ok()?
}

/// Runs `f` once after `ms` milliseconds.
pub fn set_timeout(ms: u32, f: impl FnOnce() + 'static) {
    if let Some(w) = web_sys::window() {
        let cb = Closure::once_into_js(f);
        let _ =
            w.set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), ms as i32);
    }
}
