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

/// Does the answer decline? Only when it is [`NOT_IN_PASSAGES`] or begins with it (after
/// markup such as `**`): a model that quotes the phrase inside an answer, or echoes the
/// verifier's note, has not declined.
fn declines(answer: &str) -> bool {
    answer
        .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '_')
        .starts_with(NOT_IN_PASSAGES)
}

/// Has `text` a word (a letter or a digit) once citation markers are taken out?
fn has_words(text: &str) -> bool {
    segments(text).iter().any(|s| match s {
        Segment::Text(t) => t.chars().any(char::is_alphanumeric),
        Segment::Cite(_) => false,
    })
}

/// The terms a claim or a passage is compared on: index terms (stemmed, stop words out) and
/// numbers, with the same analysis on both sides whatever the language.
/// "Yes [1]" is a claim about the question, not about a word of the passage.
fn key_terms(text: &str) -> std::collections::HashSet<String> {
    crate::analyze::Analyzer::default()
        .terms(text, crate::analyze::Lang::English)
        .into_iter()
        .filter(|t| !matches!(t.as_str(), "yes" | "true" | "fals"))
        .collect()
}

/// Citations whose passage shares no key term or number with the words that cite it: the
/// text since the previous citation in the same paragraph (a run like `[1][2]` shares one).
/// A real 1.5B model wrote "the version is 8 [1]" citing a passage with neither.
fn unsupported(answer: &str, passages: &[Passage]) -> Vec<u32> {
    let mut out = Vec::new();
    for paragraph in answer.split("\n\n") {
        let mut claim = String::new();
        let mut after_cite = false;
        for s in segments(paragraph) {
            match s {
                Segment::Text(t) => {
                    if after_cite {
                        claim.clear();
                    }
                    claim.push_str(&t);
                    after_cite = false;
                }
                Segment::Cite(n) => {
                    after_cite = true;
                    let claimed = key_terms(&claim);
                    let Some(p) = passages.iter().find(|p| p.n == n) else {
                        continue; // out of range: named by its own rule
                    };
                    if claimed.is_empty() || out.contains(&n) {
                        continue;
                    }
                    let held = key_terms(&format!("{} {}", p.breadcrumb, p.text));
                    if claimed.is_disjoint(&held) {
                        out.push(n);
                    }
                }
            }
        }
    }
    out
}

/// Checks an answer against the passages sent. `retried` says whether this was the retry.
///
/// An answer passes when it cites, every paragraph has words and a citation, every citation
/// names a passage that was sent, and every cited passage shares a key term or number with
/// the words citing it. Real small models broke each of these (#57): whole answers of
/// "[1][2]", numbers cited to passages that never state them.
pub fn verify(answer: &str, passages: &[Passage], retried: bool) -> Verdict {
    let trimmed = answer.trim();
    let sent = passages.len();
    if declines(trimmed) {
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
    let paragraphs: Vec<&str> = trimmed
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if !has_words(trimmed) {
        problems.push("the answer has no words besides its citations".to_string());
    } else if all.is_empty() {
        problems.push("the answer cites no passage".to_string());
    } else {
        let uncited = paragraphs
            .iter()
            .filter(|p| citations(p).is_empty())
            .count();
        if uncited > 0 {
            problems.push(format!("{uncited} paragraph(s) carry no citation"));
        }
        let bare = paragraphs.iter().filter(|p| !has_words(p)).count();
        if bare > 0 {
            problems.push(format!("{bare} paragraph(s) are only citations"));
        }
        let unsupported = unsupported(trimmed, passages);
        if !unsupported.is_empty() {
            let list: Vec<String> = unsupported.iter().map(|n| format!("[{n}]")).collect();
            problems.push(format!(
                "passage {} shares no word or number with the sentence citing it",
                list.join(", ")
            ));
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
                "{CORRECTION_PREFIX} {}. Answer again in a sentence or two using only the passages, with the numbers of the passages that state each claim after it, like [1], or reply {NOT_IN_PASSAGES}.",
                problems.join("; ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` passages; passage i says "Passage i covers topic{i} and the cache keeps vectors."
    fn sent(n: u32) -> Vec<Passage> {
        (1..=n)
            .map(|i| Passage {
                n: i,
                chunk: i,
                url: format!("/p{i}.html"),
                breadcrumb: format!("Page {i}"),
                text: format!(
                    "Passage {i} covers topic{i}; run the build twice and the cache keeps vectors."
                ),
            })
            .collect()
    }

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
            &sent(3),
            false,
        );
        assert_eq!(v, Verdict::Accept { cited: vec![1, 2] });
    }

    #[test]
    fn out_of_range_citations_retry_then_abstain() {
        let Verdict::Retry { correction } = verify("It works [4].", &sent(3), false) else {
            panic!("expected a retry")
        };
        assert!(
            correction.contains("[4]") && correction.contains("[1] to [3]"),
            "{correction}"
        );
        assert_eq!(
            verify("It works [4].", &sent(3), true),
            Verdict::Abstain(Abstention::UnverifiableCitations)
        );
    }

    #[test]
    fn missing_citations_are_named() {
        let Verdict::Retry { correction } = verify("Just trust me.", &sent(2), false) else {
            panic!()
        };
        assert!(correction.contains("cites no passage"));
        let Verdict::Retry { correction } = verify("Cited [1].\n\nUncited claim.", &sent(2), false)
        else {
            panic!()
        };
        assert!(correction.contains("1 paragraph(s)"));
    }

    #[test]
    fn not_in_passages_abstains_without_retry() {
        assert_eq!(
            verify("NOT_IN_PASSAGES", &sent(3), false),
            Verdict::Abstain(Abstention::NotInContext)
        );
    }

    /// Whole answers a real model gave (Qwen2.5-Coder-1.5B-Instruct Q4_K_M through llama.cpp,
    /// recorded in #57): only markers. They were shown as verified answers.
    #[test]
    fn answers_made_only_of_citations_are_withheld() {
        for recorded in [
            "[1][2]",
            "[1] [2] [3] [4] [5] [6]",
            " [1]\n\n[2]. ",
            "**[1]**",
        ] {
            let Verdict::Retry { correction } = verify(recorded, &sent(6), false) else {
                panic!("{recorded:?} passed")
            };
            assert!(correction.contains("no words"), "{correction}");
            assert_eq!(
                verify(recorded, &sent(6), true),
                Verdict::Abstain(Abstention::UnverifiableCitations)
            );
        }
        let Verdict::Retry { correction } =
            verify("The cache keeps vectors [1].\n\n[2][3]", &sent(3), false)
        else {
            panic!()
        };
        assert!(correction.contains("only citations"), "{correction}");
    }

    #[test]
    fn declining_counts_only_as_the_whole_answer_or_its_start() {
        for declined in [
            "NOT_IN_PASSAGES",
            "**NOT_IN_PASSAGES**",
            "NOT_IN_PASSAGES. The passages...",
        ] {
            assert_eq!(
                verify(declined, &sent(2), false),
                Verdict::Abstain(Abstention::NotInContext),
                "{declined}"
            );
        }
        // An answer that echoes the phrase (or the verifier's note) has not declined.
        let echoed = "The cache keeps vectors [1]. (Not NOT_IN_PASSAGES.)";
        assert_eq!(
            verify(echoed, &sent(2), false),
            Verdict::Accept { cited: vec![1] }
        );
    }

    #[test]
    fn a_cited_passage_must_share_a_word_or_number_with_its_claim() {
        // "version is 8 [1]": passage 1 states neither.
        let Verdict::Retry { correction } = verify(
            "The version is 8 [1]. The cache keeps vectors [2].",
            &sent(2),
            false,
        ) else {
            panic!()
        };
        assert!(
            correction.contains("passage [1] shares no word"),
            "{correction}"
        );
        assert!(!correction.contains("[2] shares"), "{correction}");
        // SmolLM2-135M-Instruct's whole answer to a question on Lantern's docs
        // (bench/answers.sh, 2026-12-06): markers with words around them, none the passages'.
        let recorded = "The answer is [1]. The passage that states it is [2]. The passage that does not answer it is [3].";
        let docs: Vec<Passage> = [
            "The header records the model id and the sha256 of the prepared model file.",
            "Shards are named by the hash of their bytes.",
            "The meta part lists every shard.",
        ]
        .iter()
        .zip(1..)
        .map(|(text, n)| Passage {
            n,
            chunk: n,
            url: format!("/bundle-format.html#s{n}"),
            breadcrumb: "Bundle format".into(),
            text: (*text).into(),
        })
        .collect();
        let Verdict::Retry { correction } = verify(recorded, &docs, false) else {
            panic!("{recorded} passed")
        };
        assert!(
            correction.contains("[1], [2], [3] shares no word"),
            "{correction}"
        );
        // Stems and numbers match: "caching ... topic2" is held by passage 2.
        assert_eq!(
            verify(
                "Caching keeps the vectors of topic2 [2][1].",
                &sent(2),
                false
            ),
            Verdict::Accept { cited: vec![2, 1] }
        );
    }
}
