#![warn(missing_docs)]
//! The search core for the browser: a thin wasm-bindgen layer over `lantern-engine`. It holds no
//! search or protocol logic of its own; it only converts types.

use std::cell::RefCell;

use lantern_engine::{
    check_file_name, AnswerRequest, AskSession, Bundle, Engine, Filter, Mode, QueryTable, Results,
    Script,
};
use serde::de::value::{Error as ValueError, StrDeserializer};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

thread_local! {
    /// The results `search` returned lately, with the objects it returned them as (a few:
    /// searches in flight can finish in any order).
    static RECENT_RESULTS: RefCell<Vec<(JsValue, Results)>> = const { RefCell::new(Vec::new()) };
}

/// Results kept for [`results_of`].
const RECENT_KEPT: usize = 8;

/// Takes the results behind `object`, one `search` returned lately, for Rust code linked into
/// this module (the widget's UI): it gets them as they are instead of reading the object back,
/// so no reader for every result type is in the module a reader downloads first.
pub fn results_of(object: &JsValue) -> Option<Results> {
    RECENT_RESULTS.with_borrow_mut(|recent| {
        let at = recent
            .iter()
            .position(|(o, _)| js_sys::Object::is(o, object))?;
        Some(recent.remove(at).1)
    })
}

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
    /// Decodes and validates bundle bytes (a whole bundle, or the meta file of a split one);
    /// throws with a clear message on a bad bundle.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: &[u8]) -> Result<SearchIndex, JsError> {
        let bundle = Bundle::from_bytes(bytes).map_err(js)?;
        Ok(SearchIndex {
            engine: Engine::new(bundle),
        })
    }

    /// Loads one shard of a split bundle (a name from `results.missing`); throws on a file that
    /// is not one of its shards or is damaged.
    #[wasm_bindgen(js_name = addShard)]
    pub fn add_shard(&mut self, name: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.engine.add_shard(name, bytes).map_err(js)
    }

    /// The file names of every shard of a split bundle (none for a whole bundle).
    #[wasm_bindgen(js_name = shardFiles)]
    pub fn shard_files(&self) -> Vec<String> {
        self.engine.bundle().shard_files()
    }

    /// The file names of the shards of a split bundle not loaded yet.
    #[wasm_bindgen(js_name = unloadedShards)]
    pub fn unloaded_shards(&self) -> Vec<String> {
        self.engine.bundle().unloaded_shards()
    }

    /// Bytes of the shards not loaded yet, at most.
    #[wasm_bindgen(js_name = unloadedBytes)]
    pub fn unloaded_bytes(&self) -> f64 {
        self.engine.bundle().unloaded_bytes() as f64
    }

    /// The shards `ask(question, vector)` needs that are not loaded yet.
    #[wasm_bindgen(js_name = askMissing)]
    pub fn ask_missing(&self, question: &str, vector: Option<Vec<f32>>) -> Vec<String> {
        AskSession::missing_shards(&self.engine, question, vector.as_deref())
    }

    /// Model id, model sha256, dimensions and counts.
    pub fn info(&self) -> Result<JsValue, JsError> {
        let h = self.engine.bundle().header();
        to_js(&Info {
            model_id: h.model.id.clone(),
            model_sha256: h.model.sha256.clone(),
            dim: h.model.dim,
            pages: h.pages,
            chunks: h.chunks,
            abstain_cosine: h.abstain_cosine,
        })
    }

    /// Attaches the bundle's query table (`BUNDLE.query`), so that searches without a model
    /// vector are hybrid with approximate meaning; throws on a bad file or one fitted to
    /// another bundle.
    #[wasm_bindgen(js_name = setQueryTable)]
    pub fn set_query_table(&mut self, bytes: &[u8]) -> Result<(), JsError> {
        let table = QueryTable::from_bytes(bytes).map_err(js)?;
        self.engine.set_query_table(table).map_err(js)
    }

    /// Whether a query table is attached.
    #[wasm_bindgen(getter, js_name = hasQueryTable)]
    pub fn has_query_table(&self) -> bool {
        self.engine.has_query_table()
    }

    /// Accepts a model folder's model if it is the one the bundle was built with (else
    /// throws), from what the page read of its manifest.json: `sha256`, `scripts` and the
    /// packed model's file name, returned once checked to be a plain name in the folder.
    /// Checked before any model byte is downloaded; the worker that builds the model reads
    /// and checks the whole manifest (so neither a JSON reader nor the manifest's reader is
    /// in this module).
    #[wasm_bindgen(js_name = acceptModel)]
    pub fn accept_model(
        &mut self,
        sha256: &str,
        scripts: Vec<String>,
        packed_file: Option<String>,
    ) -> Result<String, JsError> {
        let scripts = scripts
            .iter()
            .map(|s| Script::deserialize(StrDeserializer::<ValueError>::new(s)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| js(format!("model manifest: {e}")))?;
        self.engine
            .accept_model_facts(sha256, scripts)
            .map_err(js)?;
        let Some(packed) = packed_file else {
            return Err(JsError::new(
                "the model folder publishes no packed model for browsers (publish the site with `lantern build SITE_DIR`, which writes one)",
            ));
        };
        check_file_name(&packed).map_err(js)?;
        Ok(packed)
    }

    /// Searches. `mode` is "hybrid", "vector" (or "semantic") or "keyword"; without `vector`
    /// the query table embeds the query when one is attached (the result says `approximate`),
    /// else the search is keyword-only and the result says so. `filters` is `{ key: value or
    /// [values] }`; a key no page carries throws.
    pub fn search(
        &self,
        query: &str,
        mode: &str,
        k: usize,
        vector: Option<Vec<f32>>,
        filters: JsValue,
    ) -> Result<JsValue, JsError> {
        let mode: Mode = mode.parse().map_err(js)?;
        let filter = if filters.is_undefined() || filters.is_null() {
            Filter::default()
        } else {
            filter_from_js(&filters)?
        };
        let k = k.clamp(1, 100);
        let results = match vector {
            None if mode != Mode::Keyword && self.engine.has_query_table() => {
                self.engine.search_table(query, mode, k, &filter)
            }
            v => self
                .engine
                .search_filtered(query, v.as_deref(), mode, k, &filter),
        };
        let results = results.map_err(js)?;
        let object = to_js(&results)?;
        RECENT_RESULTS.with_borrow_mut(|recent| {
            if recent.len() == RECENT_KEPT {
                recent.remove(0);
            }
            recent.push((object.clone(), results));
        });
        Ok(object)
    }

    /// The site's filters: `[{ key, values: [[value, pages], ...] }]`.
    pub fn facets(&self) -> Result<JsValue, JsError> {
        to_js(&self.engine.facets())
    }

    /// The first request of an ask for `question` (searching hybrid when `vector` is given):
    /// `{ question, passages }`, no passages when search found no good match. The answer
    /// module (lantern_ask_wasm) takes it from here, so the protocol and its JSON reader load
    /// only when a reader asks.
    #[wasm_bindgen(js_name = answerRequest)]
    pub fn answer_request(
        &self,
        question: &str,
        vector: Option<Vec<f32>>,
    ) -> Result<JsValue, JsError> {
        to_js(&AnswerRequest::search(
            &self.engine,
            question,
            vector.as_deref(),
        ))
    }
}

fn js(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(js)
}

/// A page's `{ key: value or [values] }`, read field by field: serde's untagged enums would put
/// their buffering deserializer into the module every reader downloads first.
fn filter_from_js(filters: &JsValue) -> Result<Filter, JsError> {
    let bad = || js("filters must be { key: value or [values] }, with string values");
    if !filters.is_object() || js_sys::Array::is_array(filters) {
        return Err(bad());
    }
    // A `Map` too (serde-wasm-bindgen writes the UI's `Filter` as one).
    let object: js_sys::Object = match filters.dyn_ref::<js_sys::Map>() {
        Some(map) => js_sys::Object::from_entries(map).map_err(|_| bad())?,
        None => filters.clone().unchecked_into(),
    };
    let mut filter = Filter::default();
    for entry in js_sys::Object::entries(&object).iter() {
        let entry: js_sys::Array = entry.unchecked_into();
        let key = entry.get(0).as_string().ok_or_else(bad)?;
        let value = entry.get(1);
        if let Some(v) = value.as_string() {
            filter = filter.with(&key, &v);
        } else if js_sys::Array::is_array(&value) {
            for v in js_sys::Array::from(&value).iter() {
                filter = filter.with(&key, &v.as_string().ok_or_else(bad)?);
            }
        } else {
            return Err(bad());
        }
    }
    Ok(filter)
}
