#![warn(missing_docs)]
//! The embedder for the browser: a thin wasm-bindgen layer over `lantern-embedder`, run in a Web
//! Worker so the page stays responsive while the model loads and runs.

use lantern_embedder::{sha256_hex, Embedder, Manifest, PendingEmbedder};
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
    ) -> Result<WasmEmbedder, JsError> {
        Self::open_packed(manifest, packed, sha256)?.build()
    }

    /// The quick first half of `fromPacked`: the files checked, the tokenizer read, the word
    /// table known. The word rows of a question already asked can be fetched (`rowsMissing`,
    /// `rowsFile`) while `build` runs, and added after it.
    #[wasm_bindgen(js_name = openPacked)]
    pub fn open_packed(
        manifest: &[u8],
        packed: &[u8],
        sha256: Option<String>,
    ) -> Result<WasmPendingEmbedder, JsError> {
        let manifest = Manifest::from_json(manifest).map_err(|e| js(e.into()))?;
        let sum = sha256.unwrap_or_else(|| sha256_hex(packed));
        Embedder::open_packed(&manifest, packed, &sum)
            .map(|inner| WasmPendingEmbedder { inner })
            .map_err(js)
    }

    /// The shards of word rows that embedding `text` needs and are not held yet (the packed
    /// model leaves its word-embedding table in files of their own, fetched as queries need
    /// them).
    #[wasm_bindgen(js_name = rowsMissing)]
    pub fn rows_missing(&self, text: &str) -> Result<Vec<u32>, JsError> {
        let shards = self.inner.rows_missing(text).map_err(js)?;
        Ok(shards.into_iter().map(|s| s as u32).collect())
    }

    /// Every shard not held yet.
    #[wasm_bindgen(js_name = rowsAbsent)]
    pub fn rows_absent(&self) -> Vec<u32> {
        self.inner
            .rows_absent()
            .into_iter()
            .map(|s| s as u32)
            .collect()
    }

    /// A shard's file name, relative to the model's manifest.
    #[wasm_bindgen(js_name = rowsFile)]
    pub fn rows_file(&self, shard: u32) -> Option<String> {
        self.inner.word_rows_file(shard as usize)
    }

    /// Adds a shard from its file, checked against the packed model's sha256 for it.
    #[wasm_bindgen(js_name = addRows)]
    pub fn add_rows(&mut self, shard: u32, file: &[u8]) -> Result<(), JsError> {
        self.inner.add_word_rows(shard as usize, file).map_err(js)
    }

    /// A unit-length embedding of `text` (its word rows held: `rowsMissing` is empty).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, JsError> {
        self.inner.embed(text).map_err(js)
    }
}

/// A packed model opened, not built yet (`WasmEmbedder.openPacked`).
#[wasm_bindgen]
pub struct WasmPendingEmbedder {
    inner: PendingEmbedder,
}

#[wasm_bindgen]
impl WasmPendingEmbedder {
    /// As `WasmEmbedder.rowsMissing`.
    #[wasm_bindgen(js_name = rowsMissing)]
    pub fn rows_missing(&self, text: &str) -> Result<Vec<u32>, JsError> {
        let shards = self.inner.rows_missing(text).map_err(js)?;
        Ok(shards.into_iter().map(|s| s as u32).collect())
    }

    /// As `WasmEmbedder.rowsFile`.
    #[wasm_bindgen(js_name = rowsFile)]
    pub fn rows_file(&self, shard: u32) -> Option<String> {
        self.inner.word_rows_file(shard as usize)
    }

    /// Decodes the weights into the encoder (this object is used up).
    pub fn build(self) -> Result<WasmEmbedder, JsError> {
        self.inner
            .build()
            .map(|inner| WasmEmbedder { inner })
            .map_err(js)
    }
}
