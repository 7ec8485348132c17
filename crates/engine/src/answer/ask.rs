//! The ask state machine: search, send the best passages, read the streamed answer, verify its
//! citations, retry once with the problems named, else abstain. Clients only move bytes: the
//! CLI posts with an HTTP client, the browser with `fetch`, and both feed what arrives here.

use serde::{Deserialize, Serialize};

use super::stream::AnswerStream;
use super::{verify, Abstention, AnswerRequest, Passage, Verdict, MAX_PASSAGES};
use crate::error::Result;
use crate::results::Mode;
use crate::search::Engine;

/// How an ask ended. Serialized as `{"status": "answered", ...}` or
/// `{"status": "abstained", ...}` for the browser.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "status",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AskOutcome {
    /// A verified answer.
    Answered {
        /// The answer text (plain text with `[n]` citations).
        text: String,
        /// Passage numbers cited, in order of first use.
        cited: Vec<u32>,
        /// The passages that were sent.
        passages: Vec<Passage>,
    },
    /// No answer is shown.
    Abstained {
        /// Why.
        reason: Abstention,
        /// The passages that were sent (none when no model was asked).
        passages: Vec<Passage>,
        /// How many times the model was called.
        model_calls: u32,
    },
}

/// The same JSON read as one flat record: a tagged enum's derived reader buffers every field
/// before it sees the tag, code the widget's first download would carry (6 KB brotli).
impl<'de> Deserialize<'de> for AskOutcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let fields = OutcomeFields::deserialize(d)?;
        AskOutcome::try_from(fields).map_err(serde::de::Error::custom)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OutcomeFields {
    status: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    cited: Option<Vec<u32>>,
    passages: Vec<Passage>,
    #[serde(default)]
    reason: Option<Abstention>,
    #[serde(default)]
    model_calls: Option<u32>,
}

impl TryFrom<OutcomeFields> for AskOutcome {
    type Error = String;
    fn try_from(f: OutcomeFields) -> std::result::Result<Self, String> {
        let missing = |field: &str| format!("a {:?} outcome without {field:?}", f.status);
        match f.status.as_str() {
            "answered" => Ok(AskOutcome::Answered {
                text: f.text.ok_or_else(|| missing("text"))?,
                cited: f.cited.ok_or_else(|| missing("cited"))?,
                passages: f.passages,
            }),
            "abstained" => Ok(AskOutcome::Abstained {
                reason: f.reason.ok_or_else(|| missing("reason"))?,
                model_calls: f.model_calls.ok_or_else(|| missing("modelCalls"))?,
                passages: f.passages,
            }),
            other => Err(format!("unknown outcome status {other:?}")),
        }
    }
}

/// One question's way through the protocol.
///
/// ```text
/// start ──no good match──▶ outcome (no model call)
///   │
///   ▼
/// request() ─▶ post it, feed() the response bytes ─▶ end_attempt()
///   ▲                                                   │
///   └──────────── citations failed once ◀───────────────┤
///                                        outcome ◀──────┘
/// ```
#[derive(Debug)]
pub struct AskSession {
    request: AnswerRequest,
    model_calls: u32,
    stream: AnswerStream,
    outcome: Option<AskOutcome>,
}

impl AskSession {
    /// The shards of a split bundle [`AskSession::start`] needs that are not loaded (see
    /// [`crate::Results::missing`]); empty once it can start.
    pub fn missing_shards(engine: &Engine, question: &str, vector: Option<&[f32]>) -> Vec<String> {
        engine
            .search(question, vector, Mode::Hybrid, MAX_PASSAGES)
            .missing
    }

    /// Searches for `question` (hybrid when `vector` is given) and prepares the first request,
    /// or ends at once when search found no good match.
    pub fn start(engine: &Engine, question: &str, vector: Option<&[f32]>) -> AskSession {
        AskSession::from_request(AnswerRequest::search(engine, question, vector))
    }

    /// A session over passages chosen elsewhere (a client that searched itself, or tests of
    /// the protocol); with no passages it ends at once with "no good match".
    pub fn from_request(request: AnswerRequest) -> AskSession {
        let outcome = request.passages.is_empty().then(|| AskOutcome::Abstained {
            reason: Abstention::NoGoodMatch,
            passages: Vec::new(),
            model_calls: 0,
        });
        AskSession {
            request: AnswerRequest {
                correction: None,
                ..request
            },
            model_calls: 0,
            stream: AnswerStream::new(),
            outcome,
        }
    }

    /// How it ended, once it has.
    pub fn outcome(&self) -> Option<&AskOutcome> {
        self.outcome.as_ref()
    }

    /// The body to post to the proxy next; `None` once the session has ended.
    pub fn request(&self) -> Option<&AnswerRequest> {
        self.outcome.is_none().then_some(&self.request)
    }

    /// Which attempt is under way: 0 for the first answer, 1 for the corrective retry.
    pub fn attempt(&self) -> u32 {
        self.model_calls
    }

    /// Reads response bytes of the current attempt; returns whether the text grew. Errors when
    /// the stream reports a failure or breaks the protocol: the ask is then over.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<bool> {
        self.stream.feed(bytes)
    }

    /// The current attempt's answer text so far, for showing it while it streams.
    pub fn text(&self) -> &str {
        self.stream.text()
    }

    /// The response ended: verify it. Returns the outcome when the session is over, `None` when
    /// a corrective retry is to be posted (see [`Self::request`]).
    pub fn end_attempt(&mut self) -> Result<Option<&AskOutcome>> {
        let text = std::mem::take(&mut self.stream).finish()?;
        let retried = self.model_calls > 0;
        self.model_calls += 1;
        self.outcome = match verify(&text, &self.request.passages, retried) {
            Verdict::Accept { cited } => Some(AskOutcome::Answered {
                text,
                cited,
                passages: self.request.passages.clone(),
            }),
            Verdict::Retry { correction } => {
                self.request.correction = Some(correction);
                None
            }
            Verdict::Abstain(reason) => Some(AskOutcome::Abstained {
                reason,
                passages: self.request.passages.clone(),
                model_calls: self.model_calls,
            }),
        };
        Ok(self.outcome.as_ref())
    }
}

impl AnswerRequest {
    /// The first request for `question`: the best passages of a search (hybrid when `vector`
    /// is given), none when search found no good match. The browser's search module makes it
    /// and hands it to the answer module, which loads only when a reader asks.
    pub fn search(engine: &Engine, question: &str, vector: Option<&[f32]>) -> AnswerRequest {
        let results = engine.search(question, vector, Mode::Hybrid, MAX_PASSAGES);
        let passages: Vec<Passage> = if results.no_good_match {
            Vec::new()
        } else {
            results
                .hits
                .iter()
                .take(MAX_PASSAGES)
                .zip(1..)
                .filter_map(|(h, n)| {
                    Some(Passage {
                        n,
                        chunk: h.chunk,
                        url: h.url.clone(),
                        breadcrumb: h.breadcrumb.clone(),
                        text: engine.bundle().chunk(h.chunk)?.text.clone(),
                    })
                })
                .collect()
        };
        AnswerRequest {
            question: question.to_string(),
            passages,
            correction: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(n: u32) -> Passage {
        Passage {
            n,
            chunk: n + 10,
            url: format!("/p{n}.html#s"),
            breadcrumb: "Page > Section".into(),
            text: "Some text.".into(),
        }
    }

    #[test]
    fn outcomes_read_back_as_written() {
        let outcomes = [
            AskOutcome::Answered {
                text: "It does [1].".into(),
                cited: vec![1],
                passages: vec![passage(1), passage(2)],
            },
            AskOutcome::Abstained {
                reason: Abstention::UnverifiableCitations,
                passages: vec![passage(1)],
                model_calls: 2,
            },
            AskOutcome::Abstained {
                reason: Abstention::NoGoodMatch,
                passages: vec![],
                model_calls: 0,
            },
        ];
        for o in outcomes {
            let json = serde_json::to_string(&o).unwrap();
            assert!(json.starts_with(r#"{"status":"#), "{json}");
            assert_eq!(
                serde_json::from_str::<AskOutcome>(&json).unwrap(),
                o,
                "{json}"
            );
        }
    }

    #[test]
    fn an_outcome_missing_what_its_status_needs_is_refused() {
        for bad in [
            r#"{"status":"answered","passages":[],"cited":[1]}"#,
            r#"{"status":"abstained","passages":[],"modelCalls":1}"#,
            r#"{"status":"maybe","passages":[]}"#,
            r#"{"text":"no status","passages":[]}"#,
        ] {
            let err = serde_json::from_str::<AskOutcome>(bad)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("status") || err.contains("without"),
                "{bad}: {err}"
            );
        }
    }
}
