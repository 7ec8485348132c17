//! The embedder for the browser: a thin wasm-bindgen layer over `lantern-embedder`, run in a Web
//! Worker so the page stays responsive while the model loads and runs.

use lantern_embedder::{Embedder, Manifest};
use wasm_bindgen::prelude::*;

fn js(e: lantern_embedder::Error) -> JsError {
    JsError::new(&e.to_string())
}

/// A loaded embedder.
#[wasm_bindgen]
pub struct WasmEmbedder {
    inner: Embedder,
}

#[wasm_bindgen]
impl WasmEmbedder {
    /// Builds the embedder from the model folder's manifest (JSON, the contract) and the
    /// packed model it names, decoding its weights here. `sha256`: the packed file's, computed
    /// by the browser (WebCrypto), else computed here; either way checked against the
    /// manifest's.
    #[wasm_bindgen(js_name = fromPacked)]
    pub fn from_packed(
        manifest: &[u8],
        packed: &[u8],
        sha256: Option<String>,
        tokenizer: &[u8],
    ) -> Result<WasmEmbedder, JsError> {
        let manifest = Manifest::from_json(manifest).map_err(|e| js(e.into()))?;
        match sha256 {
            Some(sum) => Embedder::from_packed_hashed(&manifest, packed, &sum, tokenizer),
            None => Embedder::from_packed(&manifest, packed, tokenizer),
        }
        .map(|inner| WasmEmbedder { inner })
        .map_err(js)
    }

    /// A unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, JsError> {
        self.inner.embed(text).map_err(js)
    }
}
