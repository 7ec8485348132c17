//! What a site publishes beside its pages, carried inside the `lantern` binary: the browser
//! runtime (search core, embedder and UI modules, `lantern.js`, the widget and the service
//! worker) and the model readers' browsers run, which the indexer runs too.
//!
//! `dist/package.sh` builds them and sets `LANTERN_ASSETS_DIR` while compiling this crate; a
//! plain `cargo build` carries nothing, and the commands read the same files from a checkout
//! (`models/minilm`, and the runtime `site/build.sh` assembles).

#![warn(missing_docs)]

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/assets.rs"));
}

/// A file carried in the binary: its path relative to its folder, and its bytes.
pub type Asset = (&'static str, &'static [u8]);

/// The browser runtime, as published under a site's `lantern/` folder (`widget.js`,
/// `lantern.js`, `pkg/…`, `ui/…`, `sw.js` with its version stamped); empty when this build
/// carries none.
pub fn web() -> &'static [Asset] {
    embedded::WEB
}

/// The model as a site publishes it (`manifest.json`, the pack, its word rows); empty when this
/// build carries none.
pub fn model() -> &'static [Asset] {
    embedded::MODEL
}

/// One file of [`model`] by name.
pub fn model_file(name: &str) -> Option<&'static [u8]> {
    model().iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}
