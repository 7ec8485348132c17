//! `lantern eval`: retrieval quality on labelled questions, per search mode, with the real model.
//!
//! Metrics are page-level (a page ranks at its best chunk), because a reader lands on a page;
//! section-level hit@5 is reported where questions name the answering anchor.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use lantern_embedder::Embedder;
use lantern_engine::{Engine, Mode};

pub const MODES: [Mode; 3] = [Mode::Keyword, Mode::Vector, Mode::Hybrid];

/// One labelled question. Accepts Lantern's golden format and the shared Rust book set
/// (`family` instead of `type`, `expected` as one path).
#[derive(Debug, Clone, Deserialize)]
pub struct Question {
    pub id: String,
    pub query: String,
    /// Source paths of the answering page(s); empty for unanswerable questions.
    #[serde(default, deserialize_with = "one_or_many")]
    pub expected: Vec<String>,
    /// Expected section anchor, when labelled.
    #[serde(default)]
    pub anchor: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub family: Option<String>,
}

impl Question {
    pub fn group(&self) -> String {
        self.kind
            .clone()
            .or_else(|| self.family.clone())
            .unwrap_or_else(|| "all".into())
    }

    pub fn answerable(&self) -> bool {
        !self.expected.is_empty() && self.kind.as_deref() != Some("unanswerable")
    }
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

pub const TYPES: [&str; 4] = ["lexical", "paraphrase", "exact", "unanswerable"];

/// Reads a JSONL golden file; blank lines and `//` comment lines are allowed.
pub fn load_golden(path: &Path) -> Result<Vec<Question>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let q: Question =
            serde_json::from_str(line).with_context(|| format!("{}:{}", path.display(), i + 1))?;
        out.push(q);
    }
    if out.is_empty() {
        bail!("{} holds no questions", path.display());
    }
    Ok(out)
}

/// Does a page's source path match an expected path? Expected paths may carry a prefix
/// (`docs/book/ch01.md` matches `ch01.md`).
pub fn page_matches(source: &str, expected: &str) -> bool {
    expected == source || expected.ends_with(&format!("/{source}"))
}

/// Outcome of one question in one mode.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub id: String,
    pub group: String,
    pub answerable: bool,
    /// 1-based page rank of the first expected page, if in the top 10.
    pub page_rank: Option<usize>,
    /// The expected section was among the top 5 chunks (None when not labelled).
    pub section_hit5: Option<bool>,
    pub no_good_match: bool,
    pub best_cosine: Option<f32>,
    pub ms: f64,
}

/// Aggregates over a set of outcomes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Metrics {
    pub n: usize,
    pub hit1: f64,
    pub hit3: f64,
    pub hit5: f64,
    pub mrr10: f64,
    pub ndcg10: f64,
    pub section_hit5: Option<f64>,
}

pub fn metrics(outcomes: &[&Outcome]) -> Metrics {
    let answerable: Vec<&&Outcome> = outcomes.iter().filter(|o| o.answerable).collect();
    let n = answerable.len();
    if n == 0 {
        return Metrics::default();
    }
    let frac =
        |f: &dyn Fn(&Outcome) -> f64| answerable.iter().map(|o| f(o)).sum::<f64>() / n as f64;
    let within = |k: usize| move |o: &Outcome| o.page_rank.is_some_and(|r| r <= k) as u8 as f64;
    let sections: Vec<bool> = answerable.iter().filter_map(|o| o.section_hit5).collect();
    Metrics {
        n,
        hit1: frac(&within(1)),
        hit3: frac(&within(3)),
        hit5: frac(&within(5)),
        mrr10: frac(&|o| o.page_rank.map(|r| 1.0 / r as f64).unwrap_or(0.0)),
        // One relevant page per question in practice: nDCG is 1/log2(rank+1).
        ndcg10: frac(&|o| {
            o.page_rank
                .map(|r| 1.0 / ((r + 1) as f64).log2())
                .unwrap_or(0.0)
        }),
        section_hit5: (!sections.is_empty())
            .then(|| sections.iter().filter(|&&b| b).count() as f64 / sections.len() as f64),
    }
}

/// Runs every question in every mode.
pub fn run(
    engine: &Engine,
    embedder: &Embedder,
    questions: &[Question],
) -> Result<BTreeMap<&'static str, Vec<Outcome>>> {
    let pages = &engine.bundle().payload.pages;
    let mut by_mode: BTreeMap<&'static str, Vec<Outcome>> = BTreeMap::new();
    for q in questions {
        let t0 = Instant::now();
        let vector = embedder.embed(&q.query)?;
        let embed_ms = t0.elapsed().as_secs_f64() * 1000.0;
        for mode in MODES {
            let t = Instant::now();
            let r = engine.search(&q.query, Some(&vector), mode, 10);
            let mut ms = t.elapsed().as_secs_f64() * 1000.0;
            if mode != Mode::Keyword {
                ms += embed_ms;
            }
            let page_rank = r
                .pages
                .iter()
                .position(|g| {
                    q.expected
                        .iter()
                        .any(|e| page_matches(&pages[g.page as usize].source, e))
                })
                .map(|i| i + 1);
            let section_hit5 = q.anchor.as_ref().map(|a| {
                r.hits.iter().take(5).any(|h| {
                    let c = &engine.bundle().payload.chunks[h.chunk as usize];
                    &c.anchor == a
                        && q.expected
                            .iter()
                            .any(|e| page_matches(&pages[c.page as usize].source, e))
                })
            });
            by_mode.entry(mode_name(mode)).or_default().push(Outcome {
                id: q.id.clone(),
                group: q.group(),
                answerable: q.answerable(),
                page_rank,
                section_hit5,
                no_good_match: r.no_good_match,
                best_cosine: r.best_cosine,
                ms,
            });
        }
    }
    Ok(by_mode)
}

pub fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Keyword => "keyword",
        Mode::Vector => "vector",
        Mode::Hybrid => "hybrid",
    }
}

/// Area under the ROC curve of `best_cosine` as a score for "answerable".
pub fn auroc(outcomes: &[Outcome]) -> Option<f64> {
    let pos: Vec<f32> = outcomes
        .iter()
        .filter(|o| o.answerable)
        .filter_map(|o| o.best_cosine)
        .collect();
    let neg: Vec<f32> = outcomes
        .iter()
        .filter(|o| !o.answerable)
        .filter_map(|o| o.best_cosine)
        .collect();
    if pos.is_empty() || neg.is_empty() {
        return None;
    }
    let mut wins = 0.0;
    for p in &pos {
        for n in &neg {
            wins += if p > n {
                1.0
            } else if p == n {
                0.5
            } else {
                0.0
            };
        }
    }
    Some(wins / (pos.len() * neg.len()) as f64)
}

/// The cosine threshold that best separates answerable from unanswerable questions (highest
/// balanced accuracy; ties go to the lower threshold, which abstains less).
pub fn calibrate(outcomes: &[Outcome]) -> Option<(f32, f64)> {
    let mut cands: Vec<f32> = outcomes.iter().filter_map(|o| o.best_cosine).collect();
    cands.sort_by(f32::total_cmp);
    cands.dedup();
    let pos = outcomes.iter().filter(|o| o.answerable).count() as f64;
    let neg = outcomes.iter().filter(|o| !o.answerable).count() as f64;
    if pos == 0.0 || neg == 0.0 {
        return None;
    }
    let mut best: Option<(f32, f64)> = None;
    for w in cands.windows(2) {
        let t = (w[0] + w[1]) / 2.0;
        let tp = outcomes
            .iter()
            .filter(|o| o.answerable && o.best_cosine.is_some_and(|c| c >= t))
            .count() as f64;
        let tn = outcomes
            .iter()
            .filter(|o| !o.answerable && o.best_cosine.is_some_and(|c| c < t))
            .count() as f64;
        let bal = (tp / pos + tn / neg) / 2.0;
        if best.is_none_or(|(_, b)| bal > b) {
            best = Some((t, bal));
        }
    }
    best
}

/// Abstention accuracy on unanswerable questions and answered rate on answerable ones.
pub fn abstention(outcomes: &[Outcome]) -> (Option<f64>, Option<f64>) {
    let un: Vec<&Outcome> = outcomes.iter().filter(|o| !o.answerable).collect();
    let an: Vec<&Outcome> = outcomes.iter().filter(|o| o.answerable).collect();
    let rate = |v: &[&Outcome], f: &dyn Fn(&Outcome) -> bool| {
        (!v.is_empty()).then(|| v.iter().filter(|o| f(o)).count() as f64 / v.len() as f64)
    };
    (
        rate(&un, &|o| o.no_good_match),
        rate(&an, &|o| !o.no_good_match),
    )
}

pub fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let i = ((xs.len() - 1) as f64 * p).round() as usize;
    xs[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(answerable: bool, rank: Option<usize>, cos: f32) -> Outcome {
        Outcome {
            id: String::new(),
            group: "g".into(),
            answerable,
            page_rank: rank,
            section_hit5: None,
            no_good_match: false,
            best_cosine: Some(cos),
            ms: 0.0,
        }
    }

    #[test]
    fn metrics_from_ranks() {
        let v = [
            o(true, Some(1), 0.5),
            o(true, Some(2), 0.5),
            o(true, None, 0.5),
            o(false, None, 0.1),
        ];
        let m = metrics(&v.iter().collect::<Vec<_>>());
        assert_eq!(m.n, 3);
        assert!((m.hit1 - 1.0 / 3.0).abs() < 1e-9);
        assert!((m.hit3 - 2.0 / 3.0).abs() < 1e-9);
        assert!((m.mrr10 - 0.5).abs() < 1e-9);
        assert!((m.ndcg10 - (1.0 + 1.0 / 3f64.log2()) / 3.0).abs() < 1e-9);
    }

    #[test]
    fn auroc_and_calibration_separate_scores() {
        let v = [
            o(true, None, 0.6),
            o(true, None, 0.5),
            o(false, None, 0.2),
            o(false, None, 0.3),
        ];
        assert_eq!(auroc(&v), Some(1.0));
        let (t, bal) = calibrate(&v).unwrap();
        assert!(t > 0.3 && t < 0.5, "{t}");
        assert_eq!(bal, 1.0);
    }

    #[test]
    fn expected_paths_match_with_prefixes() {
        assert!(page_matches("ch01.md", "docs/book/ch01.md"));
        assert!(page_matches("ch01.md", "ch01.md"));
        assert!(!page_matches("h01.md", "docs/book/ch01.md"));
    }
}
