//! Asking natively (`lantern ask`, the opt-in answer evaluation): the same steps as the browser's
//! `Lantern.ask`: retrieve, post the fenced passages to the proxy, verify the citations with the
//! engine's rules, retry once with the problems named, else abstain.

use anyhow::{bail, Context, Result};

use lantern_engine::answer::{request, verify, Abstention, AnswerRequest, Passage, Verdict};
use lantern_engine::{Engine, Mode};

/// How an ask ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AskOutcome {
    Answered {
        text: String,
        cited: Vec<u32>,
        passages: Vec<Passage>,
    },
    Abstained {
        reason: Abstention,
        model_calls: usize,
    },
}

/// Posts one request to the proxy and returns the streamed answer text.
pub async fn post(client: &reqwest::Client, proxy: &str, req: &AnswerRequest) -> Result<String> {
    let url = format!("{}/answer", proxy.trim_end_matches('/'));
    let res = client
        .post(&url)
        .json(req)
        .send()
        .await
        .with_context(|| format!("calling {url}"))?;
    let status = res.status();
    let body = res.text().await?;
    if !status.is_success() {
        bail!("the proxy answered {status}: {body}");
    }
    let mut text = String::new();
    for line in body.lines() {
        if let Some(data) = line.strip_prefix("data: ") {
            if let Some(d) = serde_json::from_str::<serde_json::Value>(data)
                .ok()
                .and_then(|v| v["delta"].as_str().map(str::to_owned))
            {
                text.push_str(&d);
            }
        }
    }
    Ok(text)
}

pub async fn ask(
    engine: &Engine,
    vector: Option<&[f32]>,
    proxy: &str,
    question: &str,
) -> Result<AskOutcome> {
    let results = engine.search(
        question,
        vector,
        Mode::Hybrid,
        lantern_engine::answer::MAX_PASSAGES,
    );
    match request(engine, question, &results) {
        Ok(req) => ask_with(proxy, req).await,
        Err(reason) => Ok(AskOutcome::Abstained {
            reason,
            model_calls: 0,
        }),
    }
}

/// The verify-and-retry loop for a prepared request.
pub async fn ask_with(proxy: &str, mut req: AnswerRequest) -> Result<AskOutcome> {
    let client = reqwest::Client::new();
    for attempt in 0..2 {
        let text = post(&client, proxy, &req).await?;
        match verify(&text, req.passages.len(), attempt == 1) {
            Verdict::Accept { cited } => {
                return Ok(AskOutcome::Answered {
                    text,
                    cited,
                    passages: req.passages,
                });
            }
            Verdict::Retry { correction } => req.correction = Some(correction),
            Verdict::Abstain(reason) => {
                return Ok(AskOutcome::Abstained {
                    reason,
                    model_calls: attempt + 1,
                })
            }
        }
    }
    Ok(AskOutcome::Abstained {
        reason: Abstention::UnverifiableCitations,
        model_calls: 2,
    })
}
