#![warn(missing_docs)]
//! The answer protocol for the browser: a thin wasm-bindgen layer over
//! `lantern_engine::AskSession`. The search module picks the passages
//! (`SearchIndex.answerRequest`); this module, fetched only when a reader asks, reads the
//! proxy's stream and verifies the citations. No protocol logic of its own.

use lantern_engine::{AnswerRequest, AskSession};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// One question's way through the answer protocol; JavaScript only posts `request` and feeds
/// back the response bytes.
#[wasm_bindgen]
pub struct Ask {
    session: AskSession,
}

#[wasm_bindgen]
impl Ask {
    /// Starts from the request `SearchIndex.answerRequest` made; throws on anything else. With
    /// no passages it has ended at once ("no good match", no model call).
    #[wasm_bindgen(constructor)]
    pub fn new(request: JsValue) -> Result<Ask, JsError> {
        let request: AnswerRequest = serde_wasm_bindgen::from_value(request)
            .map_err(|e| js(format!("not an answer request: {e}")))?;
        Ok(Ask {
            session: AskSession::from_request(request),
        })
    }

    /// The body to post next, or `undefined` once the ask has ended.
    #[wasm_bindgen(getter)]
    pub fn request(&self) -> Result<JsValue, JsError> {
        match self.session.request() {
            Some(r) => to_js(r),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// 0 for the first answer, 1 for the corrective retry.
    #[wasm_bindgen(getter)]
    pub fn attempt(&self) -> u32 {
        self.session.attempt()
    }

    /// Reads response bytes; returns whether the answer text grew. Throws when the stream
    /// reports a failure or breaks the protocol.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<bool, JsError> {
        self.session.feed(bytes).map_err(js)
    }

    /// The current attempt's text so far.
    #[wasm_bindgen(getter)]
    pub fn text(&self) -> String {
        self.session.text().to_string()
    }

    /// The response ended: returns the outcome, or `undefined` when a retry is to be posted.
    #[wasm_bindgen(js_name = endAttempt)]
    pub fn end_attempt(&mut self) -> Result<JsValue, JsError> {
        match self.session.end_attempt().map_err(js)? {
            Some(o) => to_js(o),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// How the ask ended, or `undefined` while it goes on.
    #[wasm_bindgen(getter)]
    pub fn outcome(&self) -> Result<JsValue, JsError> {
        match self.session.outcome() {
            Some(o) => to_js(o),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

fn js(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(js)
}
