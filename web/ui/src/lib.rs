#![warn(missing_docs)]
//! Lantern's reader UI, in Leptos: a keyboard-first search dialog (or a full search page) that
//! shows keyword results as soon as the bundle is loaded and upgrades them to hybrid when the
//! embedder is ready. It runs inside the widget's shadow root, so no style leaks either way.
//!
//! `search` holds the root component, which provides the shared state (`ctx`) as context;
//! `results` and `answer` are its children; `state` is the plain logic; `runtime` the bridge to
//! lantern.js. Search, ranking and the answer protocol all live in `lantern-engine`.

mod answer;
mod ctx;
mod labels;
mod recent;
mod results;
mod runtime;
mod search;
mod state;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use runtime::Bridge;

/// The search core, exported from this module too: widget.js hands it to lantern.js.
pub use lantern_search_wasm::SearchIndex;

/// Handle returned to widget.js.
#[wasm_bindgen]
pub struct Ui {
    open: RwSignal<bool>,
}

#[wasm_bindgen]
impl Ui {
    /// Opens the dialog.
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
        view! { <search::Search open=open bridge=bridge page=page initial=query.clone() /> }
    });
    handle.forget();
    Ui { open }
}
