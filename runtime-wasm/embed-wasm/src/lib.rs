//! The embedder for the browser: a thin wasm-bindgen layer over `lantern-embedder`, run in a Web
//! Worker so the page stays responsive while the model loads and runs.

use lantern_embedder::Embedder;
use sha2::{Digest, Sha256};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct WasmEmbedder {
    inner: Embedder,
    sha256: String,
}

#[wasm_bindgen]
impl WasmEmbedder {
    /// Builds the embedder from the prepared model and tokenizer bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(
        model: &[u8],
        tokenizer: &[u8],
        dim: usize,
        max_tokens: usize,
    ) -> Result<WasmEmbedder, JsError> {
        let sha256 = hex::encode(Sha256::digest(model));
        let inner = Embedder::from_bytes(model, tokenizer, dim, max_tokens)
            .map_err(|e| JsError::new(&e.to_string()))?;
        Ok(WasmEmbedder { inner, sha256 })
    }

    /// sha256 of the model file, to check against the bundle's.
    #[wasm_bindgen(getter)]
    pub fn sha256(&self) -> String {
        self.sha256.clone()
    }

    /// A unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, JsError> {
        self.inner
            .embed(text)
            .map_err(|e| JsError::new(&e.to_string()))
    }
}
