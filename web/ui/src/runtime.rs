//! The bridge to the runtime (lantern.js): the widget script hands the UI an object that loads
//! the bundle and the embedder and searches. The UI holds no search logic.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use lantern_engine::{Abstention, AskOutcome, Facet, Filter, Mode, Passage, Results};

/// Asks for a cited answer; `on_text` receives the answer so far while it streams.
pub async fn ask(
    bridge: &Bridge,
    runtime: &Runtime,
    question: &str,
    on_text: impl Fn(String) + 'static,
) -> Result<AskOutcome, String> {
    let cb = Closure::<dyn Fn(JsValue)>::new(move |t: JsValue| {
        on_text(t.as_string().unwrap_or_default())
    });
    let p = bridge.ask_js(runtime, question, &cb.into_js_value());
    let v = JsFuture::from(p).await.map_err(message)?;
    outcome_of(&v).ok_or_else(|| "the answer module returned no outcome this UI can read".into())
}

/// The answer module's outcome (`AskOutcome` as JSON-compatible JS, see lantern.js `ask`),
/// read field by field: serde's reader for it and its parts cost every reader's first
/// download about 13 KB for a panel most never open.
fn outcome_of(v: &JsValue) -> Option<AskOutcome> {
    let passages = list(&field(v, "passages"))?
        .iter()
        .map(|p| {
            Some(Passage {
                n: field(&p, "n").as_f64()? as u32,
                chunk: field(&p, "chunk").as_f64()? as u32,
                url: field(&p, "url").as_string()?,
                breadcrumb: field(&p, "breadcrumb").as_string()?,
                text: field(&p, "text").as_string()?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    match field(v, "status").as_string()?.as_str() {
        "answered" => Some(AskOutcome::Answered {
            text: field(v, "text").as_string()?,
            cited: list(&field(v, "cited"))?
                .iter()
                .map(|n| n.as_f64().map(|n| n as u32))
                .collect::<Option<_>>()?,
            passages,
        }),
        "abstained" => Some(AskOutcome::Abstained {
            reason: match field(v, "reason").as_string()?.as_str() {
                "no_good_match" => Abstention::NoGoodMatch,
                "not_in_context" => Abstention::NotInContext,
                "unverifiable_citations" => Abstention::UnverifiableCitations,
                _ => return None,
            },
            passages,
            model_calls: field(v, "modelCalls").as_f64()? as u32,
        }),
        _ => None,
    }
}

/// An array, or nothing (`Array.from` would throw on a non-iterable).
fn list(v: &JsValue) -> Option<js_sys::Array> {
    v.dyn_ref::<js_sys::Array>().cloned()
}

fn field(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

#[wasm_bindgen]
extern "C" {
    /// `{ loadBundle(onProgress), loadSemantic(runtime, onProgress), modelCached(), saveData,
    /// hasModel, proxy, ask }`
    /// from widget.js.
    #[derive(Clone)]
    pub type Bridge;
    #[wasm_bindgen(method, js_name = loadBundle)]
    fn load_bundle(this: &Bridge, on_progress: &JsValue) -> Promise;
    #[wasm_bindgen(method, js_name = loadSemantic)]
    fn load_semantic(this: &Bridge, runtime: &Runtime, on_progress: &JsValue) -> Promise;
    #[wasm_bindgen(method, js_name = modelCached)]
    fn model_cached_js(this: &Bridge) -> Promise;
    /// The reader's browser asks to save data (`navigator.connection.saveData`).
    #[wasm_bindgen(method, getter, js_name = saveData)]
    pub fn save_data(this: &Bridge) -> bool;
    /// `false` when the site publishes no model (`model="none"`, quick meaning only).
    #[wasm_bindgen(method, getter, js_name = hasModel)]
    fn has_model_js(this: &Bridge) -> Option<bool>;
    /// The answer proxy's URL; asking is off without one.
    #[wasm_bindgen(method, getter)]
    pub fn proxy(this: &Bridge) -> Option<String>;
    #[wasm_bindgen(method, js_name = ask)]
    fn ask_js(this: &Bridge, runtime: &Runtime, question: &str, on_delta: &JsValue) -> Promise;

    /// A `Lantern` instance.
    #[derive(Clone)]
    pub type Runtime;
    #[wasm_bindgen(method, catch)]
    fn search(this: &Runtime, query: &str, options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(method, getter, js_name = facets)]
    fn facets_js(this: &Runtime) -> JsValue;
    #[wasm_bindgen(method, js_name = loadQueryTable)]
    fn load_query_table_js(this: &Runtime) -> Promise;
}

/// Waits for the bundle's query table; true once it is attached.
pub async fn load_query_table(runtime: &Runtime) -> bool {
    resolves_true(runtime.load_query_table_js()).await
}

/// A promise that resolves to `true`; a rejection or any other value counts as false.
async fn resolves_true(p: Promise) -> bool {
    JsFuture::from(p)
        .await
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// The site's filters (none for most sites).
pub fn facets(runtime: &Runtime) -> Vec<Facet> {
    // `[{ key, values: [[value, pages], ...] }]`, read field by field (see `outcome_of`).
    let read = |f: JsValue| {
        let values = list(&field(&f, "values"))?
            .iter()
            .map(|pair| {
                let pair = list(&pair)?;
                Some((pair.get(0).as_string()?, pair.get(1).as_f64()? as u32))
            })
            .collect::<Option<_>>()?;
        Some(Facet {
            key: field(&f, "key").as_string()?,
            values,
        })
    };
    list(&runtime.facets_js())
        .and_then(|all| all.iter().map(read).collect::<Option<_>>())
        .unwrap_or_default()
}

/// Progress of a download, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    pub loaded: f64,
    pub total: f64,
}

fn progress_callback(f: impl Fn(Progress) + 'static) -> JsValue {
    let cb = Closure::<dyn Fn(JsValue)>::new(move |p: JsValue| {
        let get = |k: &str| {
            js_sys::Reflect::get(&p, &k.into())
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0)
        };
        f(Progress {
            loaded: get("loaded"),
            total: get("total"),
        })
    });
    cb.into_js_value()
}

fn message(e: JsValue) -> String {
    js_sys::Reflect::get(&e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "unknown error".into())
}

pub async fn load_bundle(
    bridge: &Bridge,
    on_progress: impl Fn(Progress) + 'static,
) -> Result<Runtime, String> {
    let p = bridge.load_bundle(&progress_callback(on_progress));
    JsFuture::from(p)
        .await
        .map(|v| v.unchecked_into())
        .map_err(message)
}

/// Whether the site publishes a model at all (a bridge that does not say, does).
pub fn has_model(bridge: &Bridge) -> bool {
    bridge.has_model_js() != Some(false)
}

/// True when the service worker's cache already holds the model, so loading it costs no
/// download.
pub async fn model_cached(bridge: &Bridge) -> bool {
    resolves_true(bridge.model_cached_js()).await
}

pub async fn load_semantic(
    bridge: &Bridge,
    runtime: &Runtime,
    on_progress: impl Fn(Progress) + 'static,
) -> Result<(), String> {
    let p = bridge.load_semantic(runtime, &progress_callback(on_progress));
    JsFuture::from(p).await.map(|_| ()).map_err(message)
}

/// Searches as the search box does: a newer search supersedes this one (then `None`), and
/// what the loaded shards lack is fetched after `wait` ms. When the `k` results need texts not
/// loaded yet, `on_first` gets the `first` ones as soon as theirs arrive.
pub async fn search(
    runtime: &Runtime,
    query: &str,
    mode: Mode,
    (first, k): (u32, u32),
    filter: &Filter,
    wait: u32,
    on_first: impl FnOnce(Results) + 'static,
) -> Result<Option<Results>, String> {
    let opts = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&opts, &"mode".into(), &mode.as_str().into());
    let _ = js_sys::Reflect::set(&opts, &"k".into(), &k.into());
    let _ = js_sys::Reflect::set(&opts, &"latest".into(), &true.into());
    let _ = js_sys::Reflect::set(&opts, &"wait".into(), &wait.into());
    let _ = js_sys::Reflect::set(&opts, &"first".into(), &first.into());
    // Kept until the search resolves (the runtime calls it only before), then freed: a
    // callback never called would otherwise stay allocated, one a keystroke.
    let on_first = Closure::once(move |v: JsValue| {
        if let Some(r) = lantern_search_wasm::results_of(&v) {
            on_first(r);
        }
    });
    let _ = js_sys::Reflect::set(&opts, &"onFirst".into(), on_first.as_ref());
    if !filter.is_empty() {
        let f = serde_wasm_bindgen::to_value(filter).map_err(|e| e.to_string())?;
        let _ = js_sys::Reflect::set(&opts, &"filters".into(), &f);
    }
    let p = runtime.search(query, &opts).map_err(message)?;
    let v = JsFuture::from(p).await.map_err(message);
    drop(on_first);
    let v = v?;
    if v.is_null() {
        return Ok(None);
    }
    // The runtime hands back what the search core linked into this module returned.
    lantern_search_wasm::results_of(&v)
        .map(Some)
        .ok_or_else(|| "the runtime's results do not come from this module's search core".into())
}
