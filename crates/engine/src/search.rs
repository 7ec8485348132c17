//! Hybrid search over a loaded bundle: keyword (BM25 with phrases, prefix and typo tolerance),
//! vector, and reciprocal rank fusion of the two, grouped by page with excerpts.
//!
//! The query vector comes from outside (the embedder), so this module stays free of the model:
//! in the browser keyword results can be shown before the model has loaded.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::analyze::Analyzer;
use crate::bundle::Bundle;
use crate::error::Error;
use crate::query::Query;
use crate::vector::VectorHit;

/// Reciprocal rank fusion constant, as in the original RRF paper.
const RRF_K: f32 = 60.0;
/// How many hits of each retriever take part in fusion.
const FUSION_DEPTH: usize = 50;

/// Which retrievers run. The one place mode names are spelled: parsing, display and serde.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Keyword and vector results fused.
    #[default]
    Hybrid,
    /// Vector search only ("semantic" in the UI).
    Vector,
    /// BM25 only; needs no model.
    Keyword,
}

impl Mode {
    /// Every mode, in the order reports list them.
    pub const ALL: [Mode; 3] = [Mode::Keyword, Mode::Vector, Mode::Hybrid];

    /// The mode's name as parsed and serialized: `hybrid`, `vector` or `keyword`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Vector => "vector",
            Mode::Keyword => "keyword",
        }
    }

    /// What a reader sees: `Hybrid`, `Semantic` or `Keyword`.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Hybrid => "Hybrid",
            Mode::Vector => "Semantic",
            Mode::Keyword => "Keyword",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "hybrid" => Ok(Mode::Hybrid),
            "vector" | "semantic" => Ok(Mode::Vector),
            "keyword" => Ok(Mode::Keyword),
            _ => Err(Error::UnknownMode(s.to_string())),
        }
    }
}

/// One retriever's view of a hit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    /// 1-based rank in that retriever's list.
    pub rank: u32,
    /// The retriever's own score (BM25, or cosine).
    pub score: f32,
}

/// One matching chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Chunk id.
    pub chunk: u32,
    /// Page id.
    pub page: u32,
    /// Page title.
    pub title: String,
    /// "Page > Section > Subsection".
    pub breadcrumb: String,
    /// Page URL with the section anchor.
    pub url: String,
    /// Fused score (RRF in hybrid mode, the retriever's own score otherwise).
    pub score: f32,
    /// The keyword retriever's rank and score, if it found the chunk.
    pub keyword: Option<Signal>,
    /// The vector retriever's rank and score, if the chunk was in its top list.
    pub vector: Option<Signal>,
    /// Plain text around the matched words: escape before display.
    pub excerpt: String,
    /// `[start, end)` of matched words in `excerpt`, in UTF-16 code units (see
    /// [`crate::highlight_segments`]).
    pub highlights: Vec<(u32, u32)>,
}

/// Hits of one page, best section first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageGroup {
    /// Page id.
    pub page: u32,
    /// Page title.
    pub title: String,
    /// Page URL without anchor.
    pub url: String,
    /// The page's hits, best first.
    pub hits: Vec<Hit>,
}

/// What a search returns.
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
    /// Cosine of the best vector hit, when vectors were searched.
    pub best_cosine: Option<f32>,
}

/// A bundle ready to search.
pub struct Engine {
    pub(crate) bundle: Bundle,
    pub(crate) analyzer: Analyzer,
}

impl Engine {
    /// Wraps a loaded bundle.
    pub fn new(bundle: Bundle) -> Self {
        Engine {
            bundle,
            analyzer: Analyzer::default(),
        }
    }

    /// The bundle being searched.
    pub fn bundle(&self) -> &Bundle {
        &self.bundle
    }

    /// The bundle, giving up the engine.
    pub fn into_bundle(self) -> Bundle {
        self.bundle
    }

    /// Dense hits for a query vector: a scan for bundles up to
    /// [`EXACT_SCAN_MAX`](crate::EXACT_SCAN_MAX) chunks, the HNSW graph beyond.
    fn vector(&self, query_vector: &[f32], k: usize) -> Vec<VectorHit> {
        let v = self.bundle.vectors();
        if query_vector.len() != v.dim as usize {
            return Vec::new();
        }
        v.search(query_vector, k)
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
        let c = &self.bundle.chunks()[chunk as usize];
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

    fn hit(
        &self,
        chunk: u32,
        score: f32,
        keyword: Option<Signal>,
        vector: Option<Signal>,
        highlight: &crate::excerpt::HighlightTerms,
    ) -> Hit {
        let c = &self.bundle.chunks()[chunk as usize];
        let page = self.bundle.page_of(c);
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
