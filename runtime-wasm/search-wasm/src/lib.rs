//! The search core for the browser: a thin wasm-bindgen layer over `lantern-engine`. It holds no
//! search logic of its own; it converts types and, for JavaScript, turns byte offsets into
//! UTF-16 offsets.

use lantern_engine::answer::{self, Verdict};
use lantern_engine::{Bundle, Engine, Mode};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// A loaded bundle, ready to search.
#[wasm_bindgen]
pub struct SearchIndex {
    engine: Engine,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Info {
    model_id: String,
    model_sha256: String,
    dim: u32,
    pages: u32,
    chunks: u32,
    abstain_cosine: f32,
}

#[wasm_bindgen]
impl SearchIndex {
    /// Decodes and validates bundle bytes; throws with a clear message on a bad bundle.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: &[u8]) -> Result<SearchIndex, JsError> {
        let bundle = Bundle::from_bytes(bytes).map_err(|e| JsError::new(&e.to_string()))?;
        Ok(SearchIndex {
            engine: Engine::new(bundle),
        })
    }

    /// Model id, model sha256, dimensions and counts.
    pub fn info(&self) -> Result<JsValue, JsError> {
        let h = &self.engine.bundle().header;
        to_js(&Info {
            model_id: h.model.id.clone(),
            model_sha256: h.model.sha256.clone(),
            dim: h.model.dim,
            pages: h.pages,
            chunks: h.chunks,
            abstain_cosine: h.abstain_cosine,
        })
    }

    /// Throws unless the embedder's model is the one the bundle was built with.
    #[wasm_bindgen(js_name = checkModel)]
    pub fn check_model(&self, sha256: &str) -> Result<(), JsError> {
        self.engine
            .bundle()
            .check_model(sha256)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Searches. `mode` is "hybrid", "vector" (or "semantic") or "keyword"; without `vector`
    /// the search is keyword-only and the result says so.
    pub fn search(
        &self,
        query: &str,
        mode: &str,
        k: usize,
        vector: Option<Vec<f32>>,
    ) -> Result<JsValue, JsError> {
        let mode: Mode = mode.parse().map_err(|e: String| JsError::new(&e))?;
        let mut results = self
            .engine
            .search(query, vector.as_deref(), mode, k.clamp(1, 100));
        let utf16 = |s: &str, b: u32| s[..b as usize].encode_utf16().count() as u32;
        for hit in results
            .hits
            .iter_mut()
            .chain(results.pages.iter_mut().flat_map(|g| g.hits.iter_mut()))
        {
            let ex = hit.excerpt.clone();
            for r in hit.highlights.iter_mut() {
                *r = (utf16(&ex, r.0), utf16(&ex, r.1));
            }
        }
        to_js(&results)
    }
}

#[wasm_bindgen]
impl SearchIndex {
    /// Searches (hybrid when `vector` is given) and builds the request for the answer proxy:
    /// `{ request }`, or `{ abstain: "no_good_match", results }` when no model should be asked.
    #[wasm_bindgen(js_name = answerRequest)]
    pub fn answer_request(
        &self,
        question: &str,
        vector: Option<Vec<f32>>,
    ) -> Result<JsValue, JsError> {
        let results = self.engine.search(
            question,
            vector.as_deref(),
            Mode::Hybrid,
            answer::MAX_PASSAGES,
        );
        match answer::request(&self.engine, question, &results) {
            Ok(request) => to_js(&serde_json::json!({ "request": request })),
            Err(reason) => to_js(&serde_json::json!({ "abstain": reason, "results": results })),
        }
    }

    /// Checks an answer's citations against the `sent` passages: `{ verdict: "accept", cited }`,
    /// `{ verdict: "retry", correction }` or `{ verdict: "abstain", reason }`.
    #[wasm_bindgen(js_name = verifyAnswer)]
    pub fn verify_answer(
        &self,
        text: &str,
        sent: usize,
        retried: bool,
    ) -> Result<JsValue, JsError> {
        let v = match answer::verify(text, sent, retried) {
            Verdict::Accept { cited } => serde_json::json!({ "verdict": "accept", "cited": cited }),
            Verdict::Retry { correction } => {
                serde_json::json!({ "verdict": "retry", "correction": correction })
            }
            Verdict::Abstain(reason) => {
                serde_json::json!({ "verdict": "abstain", "reason": reason })
            }
        };
        to_js(&v)
    }
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&e.to_string()))
}
