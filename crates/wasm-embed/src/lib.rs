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

    /// sha256 of the model file: what the bundle's header must name (browsers run the same
    /// model packed, `packedFile`).
    #[wasm_bindgen(getter)]
    pub fn sha256(&self) -> String {
        self.inner.sha256.clone()
    }

    /// The packed model's file name, relative to the manifest: what browsers run (the model
    /// file needs tract's ONNX reader, which this module leaves out to be smaller). None when
    /// the model was not packed.
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
    /// Builds the embedder from the packed model, decoding its weights here. `sha256`: the
    /// packed file's, computed by the browser (WebCrypto), else computed here; either way
    /// checked against the manifest's.
    #[wasm_bindgen(js_name = fromPacked)]
    pub fn from_packed(
        manifest: &WasmManifest,
        packed: &[u8],
        sha256: Option<String>,
        tokenizer: &[u8],
    ) -> Result<WasmEmbedder, JsError> {
        match sha256 {
            Some(sum) => Embedder::from_packed_hashed(&manifest.inner, packed, &sum, tokenizer),
            None => Embedder::from_packed(&manifest.inner, packed, tokenizer),
        }
        .map(|inner| WasmEmbedder { inner })
        .map_err(js)
    }

    /// A unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, JsError> {
        self.inner.embed(text).map_err(js)
    }
}
