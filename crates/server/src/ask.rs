//! Asking natively (`lantern ask`, the opt-in answer evaluation): drives the engine's
//! [`AskSession`] exactly as the browser does, posting with an HTTP client.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use futures_util::StreamExt;

use lantern_engine::{AskOutcome, AskSession};

use crate::searcher::Searcher;

/// Asks `question` through the proxy at `proxy`; hybrid when the searcher has the model.
pub async fn ask(searcher: &Searcher, proxy: &str, question: &str) -> Result<AskOutcome> {
    ask_observed(searcher, proxy, question, &mut |_| {}).await
}

/// [`ask`], telling `observe` about every attempt (`lantern ask --verbose`).
pub async fn ask_observed(
    searcher: &Searcher,
    proxy: &str,
    question: &str,
    observe: &mut (dyn FnMut(Attempt) + Send),
) -> Result<AskOutcome> {
    let vector = searcher.embed(question)?;
    let session = AskSession::start(searcher.engine(), question, vector.as_deref());
    run_observed(session, proxy, AskLimits::default(), observe).await
}

/// One call of the model as it went: what it wrote, and what became of it.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// 1 for the first answer, 2 for the corrective retry.
    pub number: u32,
    /// The raw answer text (as far as it came, when the stream failed).
    pub text: String,
    /// "verified", "retry: <the verifier's note>", "withheld: <reason>" or "failed: <error>".
    pub result: String,
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
pub async fn run_with(session: AskSession, proxy: &str, limits: AskLimits) -> Result<AskOutcome> {
    run_observed(session, proxy, limits, &mut |_| {}).await
}

/// [`run_with`], telling `observe` about every attempt, a failed one included.
pub async fn run_observed(
    mut session: AskSession,
    proxy: &str,
    limits: AskLimits,
    observe: &mut (dyn FnMut(Attempt) + Send),
) -> Result<AskOutcome> {
    let client = reqwest::Client::new();
    let url = format!("{}/answer", proxy.trim_end_matches('/'));
    while session.request().is_some() {
        let number = session.attempt() + 1;
        match attempt(&client, &url, &mut session, limits).await {
            Ok(text) => {
                let result = match session.end_attempt()? {
                    Some(AskOutcome::Answered { cited, .. }) => {
                        format!("verified, citing {cited:?}")
                    }
                    Some(AskOutcome::Abstained { reason, .. }) => format!("withheld: {reason:?}"),
                    None => format!(
                        "retry: {}",
                        session
                            .request()
                            .and_then(|r| r.correction.as_deref())
                            .unwrap_or("")
                    ),
                };
                observe(Attempt {
                    number,
                    text,
                    result,
                });
            }
            Err(e) => {
                observe(Attempt {
                    number,
                    text: session.text().to_string(),
                    result: format!("failed: {e:#}"),
                });
                return Err(e);
            }
        }
    }
    session
        .outcome()
        .cloned()
        .context("the ask ended without an outcome")
}

/// The most of an error response's body shown: a proxy's errors are a line of JSON, and a
/// broken one's 100 MB page must not reach the terminal.
const MAX_ERROR_BODY: usize = 2048;

/// The start of an error response's body, read under [`MAX_ERROR_BODY`] and `by`, with
/// control characters replaced so that no terminal sequence in it runs.
async fn error_body(res: reqwest::Response, by: tokio::time::Instant) -> String {
    let mut stream = res.bytes_stream();
    let mut bytes = Vec::new();
    while bytes.len() < MAX_ERROR_BODY {
        match tokio::time::timeout_at(by, stream.next()).await {
            Ok(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
            _ => break,
        }
    }
    let cut = bytes.len() > MAX_ERROR_BODY;
    bytes.truncate(MAX_ERROR_BODY);
    let mut shown = crate::report::terminal_safe(&String::from_utf8_lossy(&bytes));
    if cut {
        shown.push_str(" [...]");
    }
    shown
}

/// A URL as printed: without a user name or password.
fn shown_url(url: &str) -> String {
    reqwest::Url::parse(url)
        .map(|u| crate::mcp::remote::without_credentials(&u).to_string())
        .unwrap_or_else(|_| crate::report::terminal_safe(url))
}

/// Posts the session's current request and feeds it the response; returns the text read.
async fn attempt(
    client: &reqwest::Client,
    url: &str,
    session: &mut AskSession,
    limits: AskLimits,
) -> Result<String> {
    let request = session.request().context("the ask has ended")?;
    let deadline = tokio::time::Instant::now() + limits.total;
    // A proxy that accepts the connection and says nothing is given up on like a silent
    // stream: the idle deadline runs from the request, not from the response's headers.
    let headers_by = deadline.min(tokio::time::Instant::now() + limits.idle);
    let res = match tokio::time::timeout_at(headers_by, client.post(url).json(request).send()).await
    {
        // reqwest's error names the URL, credentials and all.
        Ok(res) => res
            .map_err(reqwest::Error::without_url)
            .with_context(|| format!("calling {}", shown_url(url)))?,
        Err(_) => bail!(
            "{} did not answer within {} s; stopped",
            shown_url(url),
            limits.idle.as_secs()
        ),
    };
    let status = res.status();
    if !status.is_success() {
        let body = error_body(res, headers_by).await;
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
    Ok(session.text().to_string())
}

/// The opt-in answer evaluation: asks every golden question through the proxy and prints
/// each outcome (verified, withheld and why, declined before any model call, failed and
/// why), whether a verified answer cites a page the question is labelled with, and totals:
/// coverage (answerable questions answered), citation validity (model answers that passed
/// verification) and abstention (unanswerable questions withheld). With `verbose`, every
/// attempt's raw text too. A failed ask is counted, not fatal.
pub async fn evaluate_answers(
    searcher: &Searcher,
    proxy: &str,
    golden: &std::path::Path,
    verbose: bool,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    use lantern_engine::Abstention;
    let questions = crate::eval::load_golden(golden)?;
    let bundle = searcher.engine().bundle();
    let source_of = |chunk: u32| {
        bundle
            .chunk(chunk)
            .map_or("", |c| bundle.page_of(c).source.as_str())
    };
    let (mut answerable, mut answered, mut unanswerable, mut abstained) = (0, 0, 0, 0);
    let (mut model_answers, mut verified, mut gold_cited, mut failed) = (0, 0, 0, 0);
    for q in &questions {
        let mut attempts = Vec::new();
        let started = std::time::Instant::now();
        let result = ask_observed(searcher, proxy, &q.query, &mut |a| attempts.push(a)).await;
        let secs = started.elapsed().as_secs_f64();
        let line = match &result {
            Ok(AskOutcome::Answered {
                cited, passages, ..
            }) => {
                model_answers += 1;
                verified += 1;
                let gold = cited.iter().any(|&n| {
                    passages.iter().any(|p| {
                        p.n == n
                            && q.expected
                                .iter()
                                .any(|e| crate::eval::page_matches(source_of(p.chunk), e))
                    })
                });
                gold_cited += gold as usize;
                format!(
                    "verified{}",
                    if gold {
                        ", cites the labelled page"
                    } else {
                        ", cites no labelled page"
                    }
                )
            }
            Ok(AskOutcome::Abstained {
                reason,
                model_calls,
                ..
            }) => {
                if *model_calls > 0 && *reason != Abstention::NotInContext {
                    model_answers += 1;
                }
                match reason {
                    Abstention::NoGoodMatch => "declined before any model call".to_string(),
                    Abstention::NotInContext => "withheld: the model said not in passages".into(),
                    Abstention::UnverifiableCitations => {
                        "withheld: citations failed verification twice".into()
                    }
                }
            }
            Err(e) => {
                failed += 1;
                format!("failed: {e:#}")
            }
        };
        let ok = matches!(result, Ok(AskOutcome::Answered { .. }));
        if q.answerable() {
            answerable += 1;
            answered += ok as usize;
        } else {
            unanswerable += 1;
            abstained += (!ok) as usize;
        }
        writeln!(out, "{:<10} {line} ({secs:.1} s)", q.id)?;
        if verbose {
            for a in &attempts {
                writeln!(
                    out,
                    "    attempt {}: {:?}\n      -> {}",
                    a.number, a.text, a.result
                )?;
            }
        }
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
        "coverage {:.0}% of answerable; citation validity {:.0}% of model answers; abstention {:.0}% of unanswerable; {gold_cited} of {verified} verified answers cite a labelled page; {failed} failed",
        pct(answered, answerable),
        pct(verified, model_answers),
        pct(abstained, unanswerable)
    )?;
    Ok(())
}
