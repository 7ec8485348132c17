//! Hybrid search over a loaded bundle: keyword (BM25 with phrases, prefix and typo tolerance),
//! vector, and reciprocal rank fusion of the two, grouped by page with excerpts.
//!
//! The query vector comes from outside (the embedder), so this module stays free of the model:
//! in the browser keyword results can be shown before the model has loaded.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::analyze::Analyzer;
use crate::bm25::top_k;
use crate::bundle::Bundle;
use crate::query::Query;
use crate::vector::VectorHit;

/// Reciprocal rank fusion constant, as in the original RRF paper.
pub const RRF_K: f32 = 60.0;
/// How many hits of each retriever take part in fusion.
pub const FUSION_DEPTH: usize = 50;
/// Up to this many chunks the vector search scans every vector: measured natively on real
/// MiniLM vectors (BENCHMARKS.md), a scan costs about 0.3 ms at 1.4k chunks and 1.1 ms at 5.4k,
/// with perfect recall, while the graph's recall@10 was 0.98-0.99; past ~10k the scan's cost
/// grows faster than the graph's, so larger bundles walk the HNSW graph.
pub const EXACT_SCAN_MAX: usize = 10_000;
/// Typo matches count this much of an exact match, so exact hits rank first.
const TYPO_WEIGHT: f32 = 0.4;
/// Prefix expansions of the word being typed count this much.
const PREFIX_WEIGHT: f32 = 0.7;
/// At most this many expansions per typed prefix (most frequent first).
const MAX_PREFIX_TERMS: usize = 12;
const EXCERPT_CHARS: usize = 220;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Hybrid,
    Vector,
    Keyword,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hybrid" => Ok(Mode::Hybrid),
            "vector" | "semantic" => Ok(Mode::Vector),
            "keyword" => Ok(Mode::Keyword),
            _ => Err(format!("unknown mode {s:?} (hybrid, vector or keyword)")),
        }
    }
}

/// One retriever's view of a hit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    /// 1-based rank in that retriever's list.
    pub rank: u32,
    pub score: f32,
}

/// One matching chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub chunk: u32,
    pub page: u32,
    pub title: String,
    pub breadcrumb: String,
    /// Page URL with the section anchor.
    pub url: String,
    /// Fused score (RRF in hybrid mode, the retriever's own score otherwise).
    pub score: f32,
    pub keyword: Option<Signal>,
    pub vector: Option<Signal>,
    pub excerpt: String,
    /// Byte ranges of matched words in `excerpt`.
    pub highlights: Vec<(u32, u32)>,
}

/// Hits of one page, best section first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageGroup {
    pub page: u32,
    pub title: String,
    pub url: String,
    pub hits: Vec<Hit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Results {
    /// The mode actually used (hybrid falls back to keyword without a query vector).
    pub mode: Mode,
    /// Chunk-level ranking.
    pub hits: Vec<Hit>,
    /// The same hits grouped by page, in order of each page's best hit.
    pub pages: Vec<PageGroup>,
    /// True when the evidence is weak; `hits` then holds the closest sources.
    pub no_good_match: bool,
    pub best_cosine: Option<f32>,
}

/// A bundle ready to search.
pub struct Engine {
    bundle: Bundle,
    analyzer: Analyzer,
}

/// A query term after expansion: which index terms it matches and with what weight.
struct Expanded {
    ids: Vec<(usize, f32)>,
}

impl Engine {
    pub fn new(bundle: Bundle) -> Self {
        Engine {
            bundle,
            analyzer: Analyzer::default(),
        }
    }

    pub fn bundle(&self) -> &Bundle {
        &self.bundle
    }

    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// Keyword hits, best first. Quoted phrases must appear as written; other terms are OR-ed,
    /// with chunks matching more of them ranked higher; the last word, while typed, also matches
    /// as a prefix; words of five letters or more also match one edit away.
    pub fn keyword(&self, query: &Query, k: usize) -> Vec<(u32, f32)> {
        let lex = &self.bundle.payload.lexical;
        let mut expanded = Vec::new();
        for (i, word) in query.words.iter().enumerate() {
            let Some(term) = self.analyzer.term(word) else {
                continue;
            };
            let mut ids = Vec::new();
            if let Some(id) = lex.term_id(&term) {
                ids.push((id, 1.0));
            }
            let typing = query.last_is_prefix && i + 1 == query.words.len();
            if typing {
                let prefix = word.to_lowercase();
                let mut more: Vec<usize> = lex
                    .prefix_ids(&prefix)
                    .filter(|&id| !ids.iter().any(|(x, _)| *x == id))
                    .collect();
                more.sort_by_key(|&id| std::cmp::Reverse(lex.doc_freq(id)));
                ids.extend(
                    more.into_iter()
                        .take(MAX_PREFIX_TERMS)
                        .map(|id| (id, PREFIX_WEIGHT)),
                );
            }
            if ids.is_empty() && word.chars().count() >= 5 {
                ids.extend(
                    typo_ids(lex.terms(), &term)
                        .into_iter()
                        .map(|id| (id, TYPO_WEIGHT)),
                );
            }
            if !ids.is_empty() {
                expanded.push(Expanded { ids });
            }
        }

        let mut scores: HashMap<u32, f32> = HashMap::new();
        let mut matched: HashMap<u32, u32> = HashMap::new();
        for e in &expanded {
            let mut per_term: HashMap<u32, f32> = HashMap::new();
            for &(id, w) in &e.ids {
                let mut s = HashMap::new();
                lex.accumulate(id, w, &mut s);
                for (c, v) in s {
                    let slot = per_term.entry(c).or_default();
                    *slot = slot.max(v);
                }
            }
            for (c, v) in per_term {
                *scores.entry(c).or_default() += v;
                *matched.entry(c).or_default() += 1;
            }
        }
        // Coordination: a chunk with all the words beats one that repeats a single word.
        let n = expanded.len().max(1) as f32;
        for (c, s) in scores.iter_mut() {
            let m = matched.get(c).copied().unwrap_or(0) as f32;
            *s *= 0.5 + 0.5 * (m / n);
        }
        if !query.phrases.is_empty() {
            scores.retain(|&c, _| self.has_phrases(c, &query.phrases));
            if expanded.is_empty() {
                // A query of only stop-word phrases: keep phrase matches, scored equally.
                for c in 0..self.bundle.payload.chunks.len() as u32 {
                    if self.has_phrases(c, &query.phrases) {
                        scores.insert(c, 1.0);
                    }
                }
            }
        }
        top_k(scores, k)
            .into_iter()
            .map(|h| (h.chunk, h.score))
            .collect()
    }

    /// Does the chunk (breadcrumb or text) contain every phrase, word for word?
    fn has_phrases(&self, chunk: u32, phrases: &[Vec<String>]) -> bool {
        let c = &self.bundle.payload.chunks[chunk as usize];
        let words = |text: &str| -> Vec<String> {
            self.analyzer
                .tokens(text)
                .into_iter()
                .filter(|t| t.end - t.start > 0)
                .map(|t| text[t.start..t.end].to_lowercase())
                .collect()
        };
        let body = words(&c.text);
        let head = words(&c.breadcrumb.join(" "));
        phrases.iter().all(|p| {
            let p: Vec<String> = p.iter().map(|w| w.to_lowercase()).collect();
            contains_seq(&body, &p) || contains_seq(&head, &p)
        })
    }

    /// Dense hits for a query vector: exact scan for bundles up to [`EXACT_SCAN_MAX`] chunks,
    /// the HNSW graph beyond.
    pub fn vector(&self, query_vector: &[f32], k: usize) -> Vec<VectorHit> {
        let v = &self.bundle.payload.vectors;
        if query_vector.len() != v.dim as usize {
            return Vec::new();
        }
        if v.len() <= EXACT_SCAN_MAX {
            v.search_exact(query_vector, k)
        } else {
            v.search_graph(query_vector, k)
        }
    }

    /// Runs a search. Without a query vector, hybrid and vector modes fall back to keyword.
    pub fn search(
        &self,
        text: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        k: usize,
    ) -> Results {
        let query = Query::parse(text);
        let mode = match (mode, query_vector) {
            (Mode::Hybrid | Mode::Vector, None) => Mode::Keyword,
            (m, _) => m,
        };
        let keyword = if mode != Mode::Vector {
            self.keyword(&query, FUSION_DEPTH.max(k))
        } else {
            Vec::new()
        };
        let dense = match (mode, query_vector) {
            (Mode::Keyword, _) | (_, None) => Vec::new(),
            (_, Some(q)) => self.vector(q, FUSION_DEPTH.max(k)),
        };
        let best_cosine = dense.first().map(|h| h.cosine);

        let kw: HashMap<u32, Signal> = keyword
            .iter()
            .enumerate()
            .map(|(i, &(c, s))| {
                (
                    c,
                    Signal {
                        rank: i as u32 + 1,
                        score: s,
                    },
                )
            })
            .collect();
        let vs: HashMap<u32, Signal> = dense
            .iter()
            .enumerate()
            .map(|(i, h)| {
                (
                    h.chunk,
                    Signal {
                        rank: i as u32 + 1,
                        score: h.cosine,
                    },
                )
            })
            .collect();

        let mut fused: Vec<(u32, f32)> = match mode {
            Mode::Keyword => keyword.clone(),
            Mode::Vector => dense.iter().map(|h| (h.chunk, h.cosine)).collect(),
            Mode::Hybrid => {
                let mut s: HashMap<u32, f32> = HashMap::new();
                for (c, sig) in kw.iter().chain(vs.iter()) {
                    *s.entry(*c).or_default() += 1.0 / (RRF_K + sig.rank as f32);
                }
                let mut v: Vec<(u32, f32)> = s.into_iter().collect();
                v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                v
            }
        };
        fused.truncate(k);

        let no_good_match = self.weak_evidence(&query, &keyword, best_cosine, mode);
        let highlight_terms = self.highlight_terms(&query);
        let hits: Vec<Hit> = fused
            .iter()
            .map(|&(c, score)| {
                self.hit(
                    c,
                    score,
                    kw.get(&c).copied(),
                    vs.get(&c).copied(),
                    &highlight_terms,
                )
            })
            .collect();
        let pages = group_by_page(&hits);
        Results {
            mode,
            hits,
            pages,
            no_good_match,
            best_cosine,
        }
    }

    /// "No good match": the best dense cosine is under the bundle's threshold and no chunk
    /// matches all the query's words. In keyword mode, only an empty result is weak.
    fn weak_evidence(
        &self,
        query: &Query,
        keyword: &[(u32, f32)],
        best_cosine: Option<f32>,
        mode: Mode,
    ) -> bool {
        let strong_lexical = keyword
            .first()
            .is_some_and(|&(c, _)| self.matches_all_words(c, query));
        match (mode, best_cosine) {
            (Mode::Keyword, _) | (_, None) => keyword.is_empty(),
            (_, Some(cos)) => cos < self.bundle.header.abstain_cosine && !strong_lexical,
        }
    }

    fn matches_all_words(&self, chunk: u32, query: &Query) -> bool {
        let c = &self.bundle.payload.chunks[chunk as usize];
        let terms: HashSet<String> = self
            .analyzer
            .terms(&format!("{} {}", c.breadcrumb.join(" "), c.text))
            .into_iter()
            .collect();
        let wanted: Vec<String> = query
            .words
            .iter()
            .filter_map(|w| self.analyzer.term(w))
            .collect();
        !wanted.is_empty() && wanted.iter().all(|t| terms.contains(t))
    }

    /// Terms whose words get highlighted: the query's terms and, for the typed word, its prefix.
    fn highlight_terms(&self, query: &Query) -> (HashSet<String>, Option<String>) {
        let terms = query
            .words
            .iter()
            .filter_map(|w| self.analyzer.term(w))
            .chain(
                query
                    .phrases
                    .iter()
                    .flatten()
                    .filter_map(|w| self.analyzer.term(w)),
            );
        let prefix = query
            .last_is_prefix
            .then(|| query.words.last().map(|w| w.to_lowercase()))
            .flatten();
        (terms.collect(), prefix)
    }

    fn hit(
        &self,
        chunk: u32,
        score: f32,
        keyword: Option<Signal>,
        vector: Option<Signal>,
        highlight: &(HashSet<String>, Option<String>),
    ) -> Hit {
        let p = &self.bundle.payload;
        let c = &p.chunks[chunk as usize];
        let page = &p.pages[c.page as usize];
        let url = if c.anchor.is_empty() {
            page.url.clone()
        } else {
            format!("{}#{}", page.url, c.anchor)
        };
        let (excerpt, highlights) = self.excerpt(&c.text, highlight);
        Hit {
            chunk,
            page: c.page,
            title: page.title.clone(),
            breadcrumb: c.breadcrumb_text(),
            url,
            score,
            keyword,
            vector,
            excerpt,
            highlights,
        }
    }

    /// A window of the chunk text around its densest cluster of matched words, with the byte
    /// ranges of those words.
    fn excerpt(
        &self,
        text: &str,
        (terms, prefix): &(HashSet<String>, Option<String>),
    ) -> (String, Vec<(u32, u32)>) {
        let tokens = self.analyzer.tokens(text);
        let is_match = |t: &crate::analyze::Token| {
            let word = text[t.start..t.end].to_lowercase();
            t.term.as_ref().is_some_and(|term| terms.contains(term))
                || prefix
                    .as_ref()
                    .is_some_and(|p| word.starts_with(p.as_str()))
        };
        let matches: Vec<(usize, usize)> = tokens
            .iter()
            .filter(|t| is_match(t))
            .map(|t| (t.start, t.end))
            .collect();
        // Start at the match whose window holds the most matches.
        let mut start = 0;
        let mut best = 0;
        for &(s, _) in &matches {
            let n = matches
                .iter()
                .filter(|&&(m, _)| m >= s && m < s + EXCERPT_CHARS)
                .count();
            if n > best {
                best = n;
                start = s;
            }
        }
        // Back up a little for context, to a char and word boundary.
        let mut from = start.saturating_sub(40);
        while from > 0 && !text.is_char_boundary(from) {
            from -= 1;
        }
        if from > 0 {
            if let Some(sp) = text[from..start].find(char::is_whitespace) {
                from += sp + 1;
            }
        }
        let mut to = (from + EXCERPT_CHARS).min(text.len());
        while to < text.len() && !text.is_char_boundary(to) {
            to += 1;
        }
        if to < text.len() {
            if let Some(sp) = text[from..to].rfind(char::is_whitespace) {
                if sp > 0 {
                    to = from + sp;
                }
            }
        }
        let lead = if from > 0 { "…" } else { "" };
        let tail = if to < text.len() { "…" } else { "" };
        let body = &text[from..to];
        let excerpt = format!("{lead}{body}{tail}");
        let shift = lead.len();
        let highlights = matches
            .iter()
            .filter(|&&(s, e)| s >= from && e <= to)
            .map(|&(s, e)| ((s - from + shift) as u32, (e - from + shift) as u32))
            .collect();
        (excerpt, highlights)
    }
}

fn contains_seq(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Terms one edit (insert, delete, substitute or swap of neighbours) away from `term`.
fn typo_ids(terms: &[String], term: &str) -> Vec<usize> {
    let t: Vec<char> = term.chars().collect();
    terms
        .iter()
        .enumerate()
        .filter(|(_, cand)| {
            let c: Vec<char> = cand.chars().collect();
            c.len().abs_diff(t.len()) <= 1 && c.len() >= 4 && within_one_edit(&t, &c)
        })
        .map(|(i, _)| i)
        .collect()
}

fn within_one_edit(a: &[char], b: &[char]) -> bool {
    if a == b {
        return false;
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() && a[i] == b[j] {
        i += 1;
        j += 1;
    }
    let (ra, rb) = (&a[i..], &b[j..]);
    match ra.len() as isize - rb.len() as isize {
        0 => {
            ra[1..] == rb[1..]
                || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        1 => ra[1..] == *rb,
        -1 => *ra == rb[1..],
        _ => false,
    }
}

fn group_by_page(hits: &[Hit]) -> Vec<PageGroup> {
    let mut order: Vec<u32> = Vec::new();
    let mut groups: HashMap<u32, Vec<Hit>> = HashMap::new();
    for h in hits {
        if !groups.contains_key(&h.page) {
            order.push(h.page);
        }
        groups.entry(h.page).or_default().push(h.clone());
    }
    order
        .into_iter()
        .map(|p| {
            let hits = groups.remove(&p).unwrap_or_default();
            let first = &hits[0];
            PageGroup {
                page: p,
                title: first.title.clone(),
                url: first.url.split('#').next().unwrap_or_default().to_string(),
                hits,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_edit_distance() {
        let c = |s: &str| s.chars().collect::<Vec<_>>();
        assert!(within_one_edit(&c("configur"), &c("confgur")));
        assert!(within_one_edit(&c("cache"), &c("cahce")));
        assert!(within_one_edit(&c("cache"), &c("caches")));
        assert!(within_one_edit(&c("cache"), &c("cachx")));
        assert!(!within_one_edit(&c("cache"), &c("cache")));
        assert!(!within_one_edit(&c("cache"), &c("chace")));
        assert!(within_one_edit(&c("cache"), &c("cach")));
    }
}
