//! Asking natively (`lantern ask`, the opt-in answer evaluation): drives the engine's
//! [`AskSession`] exactly as the browser does, posting with an HTTP client.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use futures_util::StreamExt;

use lantern_engine::{AskOutcome, AskSession};

use crate::searcher::Searcher;

/// Asks `question` through the proxy at `proxy`; hybrid when the searcher has the model.
pub async fn ask(searcher: &Searcher, proxy: &str, question: &str) -> Result<AskOutcome> {
    let vector = searcher.embed(question)?;
    let session = AskSession::start(searcher.engine(), question, vector.as_deref());
    run(session, proxy).await
}

/// How long and how much one answer may take: a proxy that sends keep-alive comments for
/// ever, or a valid stream that never ends, stops here instead of holding the command.
#[derive(Debug, Clone, Copy)]
pub struct AskLimits {
    /// No byte for this long: the proxy has stalled.
    pub idle: Duration,
    /// One attempt's whole stream, from the request on.
    pub total: Duration,
    /// Bytes of one attempt's stream.
    pub max_bytes: usize,
}

impl Default for AskLimits {
    /// Generous for a model on a CPU (20-40 s to a first token), finite for anything.
    fn default() -> Self {
        AskLimits {
            idle: Duration::from_secs(120),
            total: Duration::from_secs(600),
            max_bytes: 4 << 20,
        }
    }
}

/// Posts the session's requests and feeds it the streamed responses until it ends.
pub async fn run(session: AskSession, proxy: &str) -> Result<AskOutcome> {
    run_with(session, proxy, AskLimits::default()).await
}

/// [`run`] within `limits`.
pub async fn run_with(
    mut session: AskSession,
    proxy: &str,
    limits: AskLimits,
) -> Result<AskOutcome> {
    let client = reqwest::Client::new();
    let url = format!("{}/answer", proxy.trim_end_matches('/'));
    while let Some(request) = session.request() {
        let deadline = tokio::time::Instant::now() + limits.total;
        let res = client
            .post(&url)
            .json(request)
            .send()
            .await
            .with_context(|| format!("calling {url}"))?;
        let status = res.status();
        if !status.is_success() {
            let body = res.text().await.unwrap_or_default();
            bail!("the proxy answered {status}: {body}");
        }
        let mut body = res.bytes_stream();
        let mut read = 0usize;
        loop {
            let next = tokio::time::timeout_at(
                deadline.min(tokio::time::Instant::now() + limits.idle),
                body.next(),
            )
            .await;
            let chunk = match next {
                Ok(Some(chunk)) => chunk.context("reading the answer stream")?,
                Ok(None) => break,
                Err(_) if tokio::time::Instant::now() >= deadline => bail!(
                    "the answer took longer than {} s; stopped",
                    limits.total.as_secs()
                ),
                Err(_) => bail!(
                    "the proxy sent nothing for {} s; stopped",
                    limits.idle.as_secs()
                ),
            };
            read += chunk.len();
            if read > limits.max_bytes {
                bail!(
                    "the answer stream passed {} bytes; stopped",
                    limits.max_bytes
                );
            }
            session.feed(&chunk)?;
        }
        session.end_attempt()?;
    }
    session
        .outcome()
        .cloned()
        .context("the ask ended without an outcome")
}

/// The opt-in answer evaluation: asks every golden question through the proxy and reports
/// coverage (answerable questions answered), citation validity (model answers that passed
/// verification) and abstention (unanswerable questions withheld).
pub async fn evaluate_answers(
    searcher: &Searcher,
    proxy: &str,
    golden: &std::path::Path,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    use lantern_engine::Abstention;
    let questions = crate::eval::load_golden(golden)?;
    let (mut answerable, mut answered, mut unanswerable, mut abstained) = (0, 0, 0, 0);
    let (mut model_answers, mut verified) = (0, 0);
    for q in &questions {
        let outcome = ask(searcher, proxy, &q.query).await?;
        let ok = matches!(outcome, AskOutcome::Answered { .. });
        match &outcome {
            AskOutcome::Answered { .. } => {
                model_answers += 1;
                verified += 1;
            }
            AskOutcome::Abstained {
                reason,
                model_calls,
                ..
            } => {
                if *model_calls > 0 && *reason != Abstention::NotInContext {
                    model_answers += 1;
                }
            }
        }
        if q.answerable() {
            answerable += 1;
            answered += ok as usize;
        } else {
            unanswerable += 1;
            abstained += (!ok) as usize;
        }
        writeln!(
            out,
            "{:<10} {}",
            q.id,
            if ok { "answered" } else { "abstained" }
        )?;
    }
    let pct = |a: usize, b: usize| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    writeln!(
        out,
        "coverage {:.0}% of answerable; citation validity {:.0}% of model answers; abstention {:.0}% of unanswerable",
        pct(answered, answerable),
        pct(verified, model_answers),
        pct(abstained, unanswerable)
    )?;
    Ok(())
}
