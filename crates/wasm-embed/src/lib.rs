//! The embedder for the browser: a thin wasm-bindgen layer over `lantern-embedder`, run in a Web
//! Worker so the page stays responsive while the model loads and runs.

use lantern_embedder::{Embedder, Manifest};
use wasm_bindgen::prelude::*;

fn js(e: lantern_embedder::Error) -> JsError {
    JsError::new(&e.to_string())
}

/// The model contract read from a published `manifest.json`.
#[wasm_bindgen]
pub struct WasmManifest {
    inner: Manifest,
}

#[wasm_bindgen]
impl WasmManifest {
    /// Parses and checks manifest JSON.
    #[wasm_bindgen(constructor)]
    pub fn new(json: &[u8]) -> Result<WasmManifest, JsError> {
        let inner = Manifest::from_json(json).map_err(js)?;
        Ok(WasmManifest { inner })
    }

    /// sha256 of the model file: what the bundle's header must name.
    #[wasm_bindgen(getter)]
    pub fn sha256(&self) -> String {
        self.inner.sha256.clone()
    }

    /// The model file's name, relative to the manifest.
    #[wasm_bindgen(getter, js_name = modelFile)]
    pub fn model_file(&self) -> String {
        self.inner.files.model.clone()
    }

    /// The packed model's file name, relative to the manifest, when the model was packed for
    /// browsers: fetched instead of the model file.
    #[wasm_bindgen(getter, js_name = packedFile)]
    pub fn packed_file(&self) -> Option<String> {
        self.inner.packed.as_ref().map(|p| p.file.clone())
    }

    /// The tokenizer file's name, relative to the manifest.
    #[wasm_bindgen(getter, js_name = tokenizerFile)]
    pub fn tokenizer_file(&self) -> String {
        self.inner.files.tokenizer.clone()
    }
}

/// A loaded embedder.
#[wasm_bindgen]
pub struct WasmEmbedder {
    inner: Embedder,
}

#[wasm_bindgen]
impl WasmEmbedder {
    /// Builds the embedder from the files the manifest names, checking their sha256 sums.
    #[wasm_bindgen(constructor)]
    pub fn new(
        manifest: &WasmManifest,
        model: &[u8],
        tokenizer: &[u8],
    ) -> Result<WasmEmbedder, JsError> {
        Embedder::new(&manifest.inner, model, tokenizer)
            .map(|inner| WasmEmbedder { inner })
            .map_err(js)
    }

    /// Builds the embedder from the packed model (checked against the manifest's sha256 for
    /// it), decoding its weights here.
    #[wasm_bindgen(js_name = fromPacked)]
    pub fn from_packed(
        manifest: &WasmManifest,
        packed: &[u8],
        tokenizer: &[u8],
    ) -> Result<WasmEmbedder, JsError> {
        Embedder::from_packed(&manifest.inner, packed, tokenizer)
            .map(|inner| WasmEmbedder { inner })
            .map_err(js)
    }

    /// A unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, JsError> {
        self.inner.embed(text).map_err(js)
    }
}
