//! Asking natively (`lantern ask`, the opt-in answer evaluation): drives the engine's
//! [`AskSession`] exactly as the browser does, posting with an HTTP client.

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

/// Posts the session's requests and feeds it the streamed responses until it ends.
pub async fn run(mut session: AskSession, proxy: &str) -> Result<AskOutcome> {
    let client = reqwest::Client::new();
    let url = format!("{}/answer", proxy.trim_end_matches('/'));
    while let Some(request) = session.request() {
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
        while let Some(chunk) = body.next().await {
            session.feed(&chunk.context("reading the answer stream")?)?;
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
