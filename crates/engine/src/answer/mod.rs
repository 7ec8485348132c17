//! Cited answers: what is sent to the language model, and how its answer is checked.
//!
//! The model's claims are not trusted: every `[n]` must name a passage that was actually sent,
//! an answer must cite at least one passage, and every paragraph must carry a citation. A
//! failed answer gets one corrective retry naming the exact problems; a second failure
//! abstains. The checks live here, not in the model or the proxy, so the browser and the CLI
//! apply the same rules.
//!
//! The whole protocol is in this module: [`AskSession`] is the state machine every client
//! drives (the CLI natively, the browser through wasm), [`stream`] reads and writes the proxy's
//! event stream, and [`verify`] and [`segments`] read citations.

mod ask;
pub mod stream;

use serde::{Deserialize, Serialize};

pub use ask::{AskOutcome, AskSession};

/// Passages sent with a question.
pub const MAX_PASSAGES: usize = 6;

/// One passage as the model sees it, numbered from 1.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passage {
    /// Its number in the prompt, from 1.
    pub n: u32,
    /// Chunk id in the bundle.
    pub chunk: u32,
    /// Section URL.
    pub url: String,
    /// "Page > Section".
    pub breadcrumb: String,
    /// The chunk's whole text.
    pub text: String,
}

/// The body posted to the proxy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerRequest {
    /// The reader's question.
    pub question: String,
    /// Numbered passages, best first.
    pub passages: Vec<Passage>,
    /// On the corrective retry: what was wrong with the previous answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correction: Option<String>,
}

/// Why no answer is shown.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Abstention {
    /// Search found no good match: no model was asked.
    NoGoodMatch,
    /// The model said the passages do not contain the answer.
    NotInContext,
    /// The answer's citations failed verification twice.
    UnverifiableCitations,
}

/// What to do after reading an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Show it; `cited` lists the passage numbers used, in order of first use.
    Accept {
        /// Passage numbers, in order of first use.
        cited: Vec<u32>,
    },
    /// Ask again with this correction.
    Retry {
        /// What was wrong, addressed to the model.
        correction: String,
    },
    /// Show no answer, for this reason.
    Abstain(Abstention),
}

/// How every corrective note begins; the proxy accepts no other `correction`.
pub const CORRECTION_PREFIX: &str = "Your previous answer failed verification:";

/// The phrase the system prompt asks the model to use when the passages do not answer.
pub const NOT_IN_PASSAGES: &str = "NOT_IN_PASSAGES";

/// Every `[n]` (or `[n, m]`) marker in `text`, in order.
pub fn citations(text: &str) -> Vec<u32> {
    segments(text)
        .into_iter()
        .filter_map(|s| match s {
            Segment::Cite(n) => Some(n),
            Segment::Text(_) => None,
        })
        .collect()
}

/// A piece of answer text: plain text, or one cited passage number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// Text shown as it is.
    Text(String),
    /// A citation of passage `n`; `[2, 3]` yields one for each number.
    Cite(u32),
}

/// Splits answer text into plain text and citations, with the same reading of `[n]` and
/// `[n, m]` that [`verify`] applies, so whatever was verified is also what gets linked.
pub fn segments(text: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('[') {
        let after = &rest[i + 1..];
        let nums: Option<Vec<u32>> = after.find(']').and_then(|j| {
            after[..j]
                .split(',')
                .map(|p| p.trim().parse::<u32>().ok())
                .collect()
        });
        match nums {
            Some(nums) => {
                plain.push_str(&rest[..i]);
                if !plain.is_empty() {
                    out.push(Segment::Text(std::mem::take(&mut plain)));
                }
                out.extend(nums.into_iter().map(Segment::Cite));
                let j = after.find(']').unwrap_or(after.len());
                rest = &after[(j + 1).min(after.len())..];
            }
            None => {
                plain.push_str(&rest[..=i]);
                rest = after;
            }
        }
    }
    plain.push_str(rest);
    if !plain.is_empty() {
        out.push(Segment::Text(plain));
    }
    out
}

/// Checks an answer against the passages sent. `retried` says whether this was the retry.
pub fn verify(answer: &str, sent: usize, retried: bool) -> Verdict {
    let trimmed = answer.trim();
    if trimmed.contains(NOT_IN_PASSAGES) {
        return Verdict::Abstain(Abstention::NotInContext);
    }
    let mut problems = Vec::new();
    let all = citations(trimmed);
    let bad: Vec<u32> = all
        .iter()
        .copied()
        .filter(|&n| n == 0 || n as usize > sent)
        .collect();
    if !bad.is_empty() {
        let list: Vec<String> = bad.iter().map(|n| format!("[{n}]")).collect();
        problems.push(format!(
            "citation {} does not refer to a passage; only [1] to [{sent}] exist",
            list.join(", ")
        ));
    }
    if all.is_empty() {
        problems.push("the answer cites no passage".to_string());
    } else {
        let uncited = trimmed
            .split("\n\n")
            .map(str::trim)
            .filter(|p| !p.is_empty() && citations(p).is_empty())
            .count();
        if uncited > 0 {
            problems.push(format!("{uncited} paragraph(s) carry no citation"));
        }
    }
    if problems.is_empty() {
        let mut cited = Vec::new();
        for n in all {
            if !cited.contains(&n) {
                cited.push(n);
            }
        }
        return Verdict::Accept { cited };
    }
    if retried {
        Verdict::Abstain(Abstention::UnverifiableCitations)
    } else {
        Verdict::Retry {
            correction: format!(
                "{CORRECTION_PREFIX} {}. Answer again using only the passages, ending every paragraph with citations like [1], or reply {NOT_IN_PASSAGES}.",
                problems.join("; ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_citation_markers() {
        assert_eq!(
            citations("A [1]. B [2, 3]. Not [x] nor [] but [4]"),
            vec![1, 2, 3, 4]
        );
    }

    #[test]
    fn segments_link_every_number_and_keep_the_text() {
        use Segment::*;
        assert_eq!(
            segments("Yes [2, 3]. See [a] and [1]"),
            vec![
                Text("Yes ".into()),
                Cite(2),
                Cite(3),
                Text(". See [a] and ".into()),
                Cite(1)
            ]
        );
        assert_eq!(segments("[x"), vec![Text("[x".into())]);
    }

    #[test]
    fn good_answers_pass() {
        let v = verify(
            "Run the build twice [1].\n\nThe cache keeps vectors [2][1].",
            3,
            false,
        );
        assert_eq!(v, Verdict::Accept { cited: vec![1, 2] });
    }

    #[test]
    fn out_of_range_citations_retry_then_abstain() {
        let Verdict::Retry { correction } = verify("It works [4].", 3, false) else {
            panic!("expected a retry")
        };
        assert!(
            correction.contains("[4]") && correction.contains("[1] to [3]"),
            "{correction}"
        );
        assert_eq!(
            verify("It works [4].", 3, true),
            Verdict::Abstain(Abstention::UnverifiableCitations)
        );
    }

    #[test]
    fn missing_citations_are_named() {
        let Verdict::Retry { correction } = verify("Just trust me.", 2, false) else {
            panic!()
        };
        assert!(correction.contains("cites no passage"));
        let Verdict::Retry { correction } = verify("Cited [1].\n\nUncited claim.", 2, false) else {
            panic!()
        };
        assert!(correction.contains("1 paragraph(s)"));
    }

    #[test]
    fn not_in_passages_abstains_without_retry() {
        assert_eq!(
            verify("NOT_IN_PASSAGES", 3, false),
            Verdict::Abstain(Abstention::NotInContext)
        );
    }
}
