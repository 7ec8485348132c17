#![warn(missing_docs)]
//! Lantern's reader UI: a keyboard-first search dialog (or a full search page) that shows
//! keyword results as soon as the bundle is loaded and upgrades them to hybrid when meaning
//! arrives. It runs inside the widget's shadow root, so no style leaks either way.
//!
//! Plain Rust over web-sys, no UI framework: Leptos cost a reader 77 KB gzip of the
//! first download, a third of it, for a dialog of a dozen controls (#54). State flows one
//! way: `ctx` holds it and changes it, then redraws the part that shows it: `search` the
//! frame and the keyboard, `results` the list, `answer` the answer panel, all through `dom`.
//! `state` is the plain logic; `runtime` the bridge to lantern.js. Search, ranking and the
//! answer protocol all live in `lantern-engine`.

mod answer;
mod ctx;
mod dom;
mod labels;
mod recent;
mod results;
mod runtime;
mod search;
mod state;

use wasm_bindgen::prelude::*;

use runtime::Bridge;

/// The search core, exported from this module too: widget.js hands it to lantern.js.
pub use lantern_search_wasm::SearchIndex;

/// Handle returned to widget.js.
#[wasm_bindgen]
pub struct Ui {
    ctx: ctx::Ctx,
}

#[wasm_bindgen]
impl Ui {
    /// Opens the dialog.
    pub fn open(&self) {
        self.ctx.set_open(true);
    }
}

/// Mounts the UI into `host` (an element inside the widget's shadow root). `page` renders it
/// inline as a search page instead of a dialog; `query` pre-fills the box.
#[wasm_bindgen]
pub fn mount(host: web_sys::HtmlElement, bridge: Bridge, page: bool, query: String) -> Ui {
    Ui {
        ctx: search::mount(&host, bridge, page, query),
    }
}
