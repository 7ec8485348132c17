//! How hybrid mode combines keyword and vector evidence, and how a page's sections combine
//! into the page's rank.
//!
//! The default is a convex combination of normalized scores (Bruch, Gai and Ingber, "An
//! Analysis of Fusion Functions for Hybrid Retrieval", 2023): unlike reciprocal rank fusion it
//! sees how far apart two hits are, so a keyword #1 that matched one common word of the query
//! no longer outranks the vector #1 that shares no word with it. Its weights were chosen by
//! leave-one-corpus-out evaluation (`lantern tune`, see evaluation.md).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::results::Mode;

/// How cosines are brought to `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VectorNorm {
    /// The cosine itself (clamped at 0).
    Raw,
    /// Min-max over the query's vector candidates: the vector #1 scores 1.
    MinMax,
}

/// How hybrid mode fuses the two rankings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Fusion {
    /// `w * vector + (1 - w) * keyword`, both normalized to `[0, 1]`.
    ///
    /// The keyword side is `(bm25 / best) * strength^p`, where `strength` is the query's best
    /// BM25 over what a chunk matching every term strongly would score, or more when the best
    /// chunk holds most of the query's words (see keyword search). With
    /// `p = 0` the keyword #1 always scores 1; with `p > 0` a query whose words the docs barely
    /// share (a paraphrase) leans on meaning, while an identifier found verbatim keeps its
    /// weight.
    Convex {
        /// Weight of the vector side, 0 to 1.
        vector_weight: f32,
        /// How strongly the keyword side's weight follows its strength (`p` above).
        keyword_power: f32,
        /// Vector normalization.
        vector: VectorNorm,
    },
    /// A convex combination whose keyword weight follows the query: `λ * keyword + (1 - λ) *
    /// vector` with keyword scores divided by the query's best, and `λ = sigmoid(steepness *
    /// (strength - midpoint))`, `strength` being as in [`Fusion::Convex`]. A question the docs
    /// answer in other words (low strength) is ranked by meaning; an identifier or phrase
    /// found verbatim (high strength) by its words.
    Adaptive {
        /// Keyword strength at which both sides weigh the same.
        midpoint: f32,
        /// How sharply the weight moves from one side to the other around the midpoint.
        steepness: f32,
        /// Vector normalization.
        vector: VectorNorm,
    },
    /// Reciprocal rank fusion: `sum 1 / (k + rank)`; kept for comparison.
    Rrf {
        /// The rank offset (60 in the original paper).
        k: f32,
    },
}

impl Default for Fusion {
    /// The fusion chosen by `lantern tune` over three sites (evaluation.md).
    fn default() -> Self {
        Fusion::Convex {
            vector_weight: 0.2,
            keyword_power: 3.0,
            vector: VectorNorm::Raw,
        }
    }
}

impl Fusion {
    /// Reciprocal rank fusion with the paper's constant.
    pub const RRF: Fusion = Fusion::Rrf { k: 60.0 };
}

/// How a page's sections combine into the page's rank.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum PageScore {
    /// A page ranks at its best section's fused score plus this share of its second best's:
    /// with a share above 0, a page with two good sections edges out a page with one.
    Sections(f32),
    /// Each retriever's evidence is gathered per page first (the page's best section by words
    /// and its best section by meaning, which need not be the same section), then fused per
    /// page, so a page found by both sides ranks above pages found by either, even when the
    /// two sides found it in different sections.
    Fused,
}

impl Default for PageScore {
    /// Chosen with the fusion (evaluation.md).
    fn default() -> Self {
        PageScore::Sections(0.5)
    }
}

impl PageScore {
    /// Pages ranked at their best section alone.
    pub const BEST_SECTION: PageScore = PageScore::Sections(0.0);
}

/// The evidence fusion works from, for one query.
pub(crate) struct Evidence<'a> {
    /// Keyword hits, best first, with BM25 scores.
    pub keyword: &'a [(u32, f32)],
    /// How strong the keyword side's best match is, in `[0, 1]` (see [`Fusion::Convex`]).
    pub keyword_strength: f32,
    /// Vector hits, best first, with cosines.
    pub vector: &'a [(u32, f32)],
    /// Cosines of keyword hits outside the vector list, where the index can give them.
    pub extra_cosine: &'a HashMap<u32, f32>,
}

impl Evidence<'_> {
    /// Adds `kw_weight * bm25 / best + vec_weight * normalized cosine` for every candidate.
    fn combine(
        &self,
        kw_weight: f32,
        vec_weight: f32,
        norm: VectorNorm,
        scores: &mut HashMap<u32, f32>,
    ) {
        let best = self.keyword.first().map_or(0.0, |&(_, s)| s);
        let kw_div = if best > 0.0 { best } else { 1.0 };
        let hi = self.vector.first().map_or(1.0, |&(_, s)| s);
        // A candidate beyond the vector list is taken to be as far as its last entry.
        let lo = self.vector.last().map_or(0.0, |&(_, s)| s);
        let vnorm = |cos: f32| match norm {
            VectorNorm::Raw => cos.max(0.0),
            VectorNorm::MinMax if hi > lo => ((cos - lo) / (hi - lo)).clamp(0.0, 1.0),
            VectorNorm::MinMax => 1.0,
        };
        let cosines: HashMap<u32, f32> = self.vector.iter().copied().collect();
        for &(c, s) in self.keyword {
            let cos = cosines
                .get(&c)
                .or_else(|| self.extra_cosine.get(&c))
                .copied()
                .unwrap_or(lo);
            let kw = (s / kw_div).clamp(0.0, 1.0);
            scores.insert(c, kw_weight * kw + vec_weight * vnorm(cos));
        }
        for &(c, cos) in self.vector {
            scores.entry(c).or_insert(vec_weight * vnorm(cos));
        }
    }
}

impl Fusion {
    /// Fused scores of every candidate, best first (ties by chunk id).
    pub(crate) fn fuse(&self, e: &Evidence) -> Vec<(u32, f32)> {
        let mut scores: HashMap<u32, f32> = HashMap::new();
        match *self {
            Fusion::Rrf { k } => {
                for list in [e.keyword, e.vector] {
                    for (i, &(c, _)) in list.iter().enumerate() {
                        *scores.entry(c).or_default() += 1.0 / (k + i as f32 + 1.0);
                    }
                }
            }
            Fusion::Convex {
                vector_weight,
                keyword_power,
                vector,
            } => {
                let strength = e.keyword_strength;
                let w = vector_weight.clamp(0.0, 1.0);
                let kw_scale = (1.0 - w) * strength.powf(keyword_power.max(0.0));
                e.combine(kw_scale, w, vector, &mut scores);
            }
            Fusion::Adaptive {
                midpoint,
                steepness,
                vector,
            } => {
                let lambda = 1.0 / (1.0 + (-steepness * (e.keyword_strength - midpoint)).exp());
                e.combine(lambda, 1.0 - lambda, vector, &mut scores);
            }
        }
        let mut v: Vec<(u32, f32)> = scores.into_iter().collect();
        crate::order::rank(&mut v);
        v
    }
}

/// Sections of one page that agree on meaning: a page holding several of the vector search's
/// first [`AGREEMENT_DEPTH`] sections gains [`AGREEMENT_WEIGHT`] times their cosines, each
/// scaled between the list's last (0) and first (1) and divided by the depth. A page whose
/// sections answer the question from several sides is the answer more often than one whose
/// single section shares its words: without it, hybrid trailed vector search on the Rust book
/// (0.890 against 0.894) and barely led keywords on the Cargo book (0.691 against 0.686);
/// with it, hybrid leads both on every labelled set, each held out in turn (evaluation.md).
pub(crate) const AGREEMENT_DEPTH: usize = 20;
/// See [`AGREEMENT_DEPTH`].
pub(crate) const AGREEMENT_WEIGHT: f32 = 0.4;

/// Adds each page's vector agreement ([`AGREEMENT_DEPTH`]) to its score. `vector` is the
/// vector list, best first.
pub(crate) fn add_vector_agreement(
    page_scores: &mut HashMap<u32, f32>,
    vector: &[(u32, f32)],
    page_of: impl Fn(u32) -> u32,
) {
    let (Some(&(_, hi)), Some(&(_, lo))) = (vector.first(), vector.last()) else {
        return;
    };
    let span = (hi - lo).max(f32::EPSILON);
    for &(c, cos) in vector.iter().take(AGREEMENT_DEPTH) {
        if let Some(score) = page_scores.get_mut(&page_of(c)) {
            *score += AGREEMENT_WEIGHT * ((cos - lo) / span) / AGREEMENT_DEPTH as f32;
        }
    }
}

/// The worst place keyword search's best page may take among hybrid's pages. When the words
/// of a query are weakly matched, fusion leans on meaning; when meaning is wrong, the page that
/// holds the reader's words best could fall off the first screen. It stays within the first
/// five (measured in evaluation.md: FastAPI hit@5 .935 -> .961, no other set moved).
pub(crate) const KEYWORD_FIRST_WITHIN: usize = 5;

/// Lifts `page` to place `within` (counted from 1) when `page_scores` rank it lower: its score
/// becomes the next float above the score of the page now in that place. Other pages keep
/// their order.
pub(crate) fn keep_within(page_scores: &mut HashMap<u32, f32>, page: u32, within: usize) {
    let mut ranked: Vec<(u32, f32)> = page_scores.iter().map(|(&p, &s)| (p, s)).collect();
    crate::order::rank(&mut ranked);
    let Some(at) = ranked.iter().position(|&(p, _)| p == page) else {
        return;
    };
    if within == 0 || at < within {
        return;
    }
    page_scores.insert(page, ranked[within - 1].1.next_up());
}

/// Each page's score: from its fused sections, or with [`PageScore::Fused`] from each
/// retriever's best section of the page fused again; in hybrid mode, plus the agreement of its
/// sections on meaning, with keyword search's best page kept within the first few.
pub(crate) fn page_scores(
    mode: Mode,
    (fusion, page_score): (Fusion, PageScore),
    e: &Evidence,
    fused: &[(u32, f32)],
    page_of: impl Fn(u32) -> u32 + Copy,
) -> HashMap<u32, f32> {
    let mut scores: HashMap<u32, f32> = match (mode, page_score) {
        (_, PageScore::Sections(w)) => pooled_pages(w, fused, page_of),
        (Mode::Hybrid, PageScore::Fused) => {
            let mut extra_pages: HashMap<u32, f32> = HashMap::new();
            for (&c, &cos) in e.extra_cosine {
                let best = extra_pages.entry(page_of(c)).or_insert(cos);
                *best = best.max(cos);
            }
            fusion
                .fuse(&Evidence {
                    keyword: &best_per_page(e.keyword, page_of),
                    keyword_strength: e.keyword_strength,
                    vector: &best_per_page(e.vector, page_of),
                    extra_cosine: &extra_pages,
                })
                .into_iter()
                .collect()
        }
        // One retriever: a page's evidence is its best section's.
        (_, PageScore::Fused) => pooled_pages(0.0, fused, page_of),
    };
    if mode == Mode::Hybrid && !matches!(fusion, Fusion::Rrf { .. }) {
        add_vector_agreement(&mut scores, e.vector, page_of);
    }
    if let (Mode::Hybrid, Some(&(c, _))) = (mode, e.keyword.first()) {
        keep_within(&mut scores, page_of(c), KEYWORD_FIRST_WITHIN);
    }
    scores
}

/// The best score of each page in a list of chunk scores (best first), best page first.
pub(crate) fn best_per_page(list: &[(u32, f32)], page_of: impl Fn(u32) -> u32) -> Vec<(u32, f32)> {
    let mut seen = std::collections::HashSet::new();
    list.iter()
        .filter(|&&(c, _)| seen.insert(page_of(c)))
        .map(|&(c, s)| (page_of(c), s))
        .collect()
}

/// Page scores from chunk scores (best first): the best plus `second_weight` of the second.
pub(crate) fn pooled_pages(
    second_weight: f32,
    fused: &[(u32, f32)],
    page_of: impl Fn(u32) -> u32,
) -> HashMap<u32, f32> {
    {
        let mut best: HashMap<u32, (f32, Option<f32>)> = HashMap::new();
        for &(c, s) in fused {
            best.entry(page_of(c))
                .and_modify(|e| {
                    if e.1.is_none() {
                        e.1 = Some(s)
                    }
                })
                .or_insert((s, None));
        }
        best.into_iter()
            .map(|(p, (a, b))| (p, a + second_weight * b.unwrap_or(0.0)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bound`: what a chunk matching every query word strongly would score.
    fn fuse(f: Fusion, keyword: &[(u32, f32)], bound: f32, vector: &[(u32, f32)]) -> Vec<u32> {
        let extra = HashMap::new();
        let best = keyword.first().map_or(0.0, |&(_, s)| s);
        f.fuse(&Evidence {
            keyword,
            keyword_strength: (best / bound).clamp(0.0, 1.0),
            vector,
            extra_cosine: &extra,
        })
        .into_iter()
        .map(|(c, _)| c)
        .collect()
    }

    #[test]
    fn a_weak_keyword_match_does_not_beat_a_clear_vector_winner() {
        // Chunk 1 matched one common word (a fifth of what the query could score); chunk 2 is
        // far ahead on meaning. RRF puts the keyword #1 first, the convex fusion does not.
        let keyword = [(1, 2.0), (3, 1.9)];
        let vector = [(2, 0.70), (4, 0.52), (3, 0.50), (1, 0.40)];
        assert_eq!(fuse(Fusion::RRF, &keyword, 10.0, &vector)[0], 1);
        assert_eq!(fuse(Fusion::default(), &keyword, 10.0, &vector)[0], 2);
    }

    #[test]
    fn agreement_beats_either_side_alone() {
        let keyword = [(1, 9.0), (2, 8.0)];
        let vector = [(3, 0.70), (2, 0.69), (1, 0.30)];
        assert_eq!(fuse(Fusion::default(), &keyword, 10.0, &vector)[0], 2);
    }

    #[test]
    fn one_sided_evidence_keeps_its_order() {
        let vector = [(5, 0.9), (6, 0.8), (7, 0.7)];
        assert_eq!(fuse(Fusion::default(), &[], 0.0, &vector), vec![5, 6, 7]);
        let keyword = [(8, 3.0), (9, 2.0)];
        assert_eq!(fuse(Fusion::default(), &keyword, 4.0, &[]), vec![8, 9]);
    }

    #[test]
    fn a_page_below_its_floor_is_lifted_to_it_and_no_further() {
        let ranked = |scores: &HashMap<u32, f32>| {
            let mut v: Vec<(u32, f32)> = scores.iter().map(|(&p, &s)| (p, s)).collect();
            crate::order::rank(&mut v);
            v.into_iter().map(|(p, _)| p).collect::<Vec<_>>()
        };
        let mut scores: HashMap<u32, f32> = (1..=8).map(|p| (p, 1.0 - p as f32 / 10.0)).collect();
        keep_within(&mut scores, 8, 3);
        assert_eq!(ranked(&scores), vec![1, 2, 8, 3, 4, 5, 6, 7]);
        // Already within: nothing moves; an unknown page is not added.
        let before = scores.clone();
        keep_within(&mut scores, 2, 3);
        keep_within(&mut scores, 99, 3);
        assert_eq!(scores, before);
    }

    #[test]
    fn a_page_whose_sections_agree_on_meaning_gains_and_others_keep_their_score() {
        // Page 1's best section leads; page 2 holds four of the next sections by meaning.
        let mut scores: HashMap<u32, f32> = [(1, 0.50), (2, 0.47), (3, 0.40)].into();
        let vector = [
            (10, 0.70),
            (20, 0.68),
            (21, 0.66),
            (22, 0.64),
            (23, 0.62),
            (30, 0.30),
        ];
        add_vector_agreement(&mut scores, &vector, |c| c / 10);
        assert!(scores[&2] > scores[&1], "{scores:?}");
        // The list's last cosine adds nothing: page 3 is where it was.
        assert_eq!(scores[&3], 0.40);
        // Nothing to agree on: nothing moves.
        let before = scores.clone();
        add_vector_agreement(&mut scores, &[], |c| c / 10);
        assert_eq!(scores, before);
    }

    #[test]
    fn a_page_with_two_good_sections_can_outrank_one_with_one() {
        let fused = [(10, 1.0), (20, 0.9), (21, 0.8)];
        let page = |c: u32| c / 10;
        let flat = pooled_pages(0.0, &fused, page);
        assert!(flat[&1] > flat[&2]);
        let pooled = pooled_pages(0.25, &fused, page);
        assert!(pooled[&2] > pooled[&1]);
        assert_eq!(best_per_page(&fused, page), vec![(1, 1.0), (2, 0.9)]);
    }
}
