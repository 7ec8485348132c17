//! Keyword retrieval: BM25 over chunks with compact postings.
//!
//! Each chunk is scored as one document. Its breadcrumb (page title and headings) is counted
//! `heading_weight` times, because a question's words that name a section are stronger evidence
//! than the same words in passing. Postings are delta-coded chunk ids and term frequencies in
//! LEB128 varints: small enough to ship, fast enough to decode per query.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::analyze::{fold, is_cjk, Analyzer, Lang};

/// BM25 settings, stored in the bundle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    /// Term-frequency saturation; 1.2 is the classic default and suits short chunks.
    pub k1: f32,
    /// Length normalization; 0.75 is the classic default.
    pub b: f32,
    /// How many times breadcrumb terms count.
    pub heading_weight: u32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            b: 0.75,
            heading_weight: 3,
        }
    }
}

/// The inverted index over chunks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LexicalIndex {
    pub params: Bm25Params,
    /// Sorted, so prefix lookups are a binary search.
    pub(crate) terms: Vec<String>,
    /// One varint-coded list per term: (chunk id delta, weighted frequency) pairs.
    pub(crate) postings: Vec<Vec<u8>>,
    /// Weighted length of each chunk in terms.
    pub(crate) doc_len: Vec<u32>,
    /// Words as written (lowercase, accents folded) whose term differs, with that term's id,
    /// sorted: a typed prefix is matched against what readers type, not against stems.
    pub(crate) surfaces: Vec<(String, u32)>,
}

/// A chunk as the lexical index sees it.
pub struct LexicalDoc<'a> {
    pub heading: &'a str,
    pub body: &'a str,
    /// The page's language, which picks the stemmer.
    pub lang: Lang,
}

impl LexicalIndex {
    pub fn build<'a>(
        docs: impl IntoIterator<Item = LexicalDoc<'a>>,
        analyzer: &Analyzer,
        params: Bm25Params,
    ) -> Self {
        let mut lists: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
        let mut doc_len = Vec::new();
        let mut surface_terms: BTreeMap<(String, String), ()> = BTreeMap::new();
        for (id, doc) in docs.into_iter().enumerate() {
            let mut tf: HashMap<String, u32> = HashMap::new();
            for (text, weight) in [(doc.heading, params.heading_weight), (doc.body, 1)] {
                for t in analyzer.tokens(text, doc.lang) {
                    let Some(term) = t.term else { continue };
                    let word = &text[t.start..t.end];
                    if !word.chars().any(is_cjk) {
                        let surface = fold(word);
                        if surface != term {
                            surface_terms.insert((surface, term.clone()), ());
                        }
                    }
                    *tf.entry(term).or_default() += weight;
                }
            }
            doc_len.push(tf.values().sum());
            for (term, f) in tf {
                lists.entry(term).or_default().push((id as u32, f));
            }
        }
        let mut terms = Vec::with_capacity(lists.len());
        let mut postings = Vec::with_capacity(lists.len());
        for (term, mut list) in lists {
            list.sort_unstable();
            terms.push(term);
            postings.push(encode_postings(&list));
        }
        let surfaces = surface_terms
            .into_keys()
            .filter_map(|(surface, term)| {
                let id = terms.binary_search(&term).ok()?;
                Some((surface, id as u32))
            })
            .collect();
        LexicalIndex {
            params,
            terms,
            postings,
            doc_len,
            surfaces,
        }
    }

    /// Checks what decoding cannot: one postings list per term, terms sorted and distinct,
    /// one length per chunk, every posting naming a chunk that exists.
    pub fn validate(&self, chunks: usize) -> crate::error::Result<()> {
        let bad = |m: &str| Err(crate::error::Error::Inconsistent(m.into()));
        if self.terms.len() != self.postings.len() {
            return bad("the number of postings lists differs from the number of terms");
        }
        if self.doc_len.len() != chunks {
            return bad("chunk lengths differ from the chunk count");
        }
        if !self.terms.windows(2).all(|w| w[0] < w[1]) {
            return bad("terms are not sorted");
        }
        if !self.surfaces.windows(2).all(|w| w[0] < w[1]) {
            return bad("surface forms are not sorted");
        }
        if self
            .surfaces
            .iter()
            .any(|&(_, id)| id as usize >= self.terms.len())
        {
            return bad("a surface form names a missing term");
        }
        for list in &self.postings {
            let mut prev: Option<u32> = None;
            let mut pos = 0;
            while pos < list.len() {
                let (Some(delta), Some(_)) =
                    (read_varint(list, &mut pos), read_varint(list, &mut pos))
                else {
                    return bad("a postings list is malformed");
                };
                let id = match prev {
                    None => delta,
                    Some(p) if delta > 0 => match p.checked_add(delta) {
                        Some(id) => id,
                        None => return bad("a postings list overflows"),
                    },
                    Some(_) => return bad("a postings list repeats a chunk"),
                };
                if id as usize >= chunks {
                    return bad("a posting names a missing chunk");
                }
                prev = Some(id);
            }
        }
        Ok(())
    }

    pub fn num_terms(&self) -> usize {
        self.terms.len()
    }

    pub fn num_docs(&self) -> usize {
        self.doc_len.len()
    }

    /// Term id of an exact term.
    pub fn term_id(&self, term: &str) -> Option<usize> {
        self.terms.binary_search_by(|t| t.as_str().cmp(term)).ok()
    }

    #[cfg(test)]
    pub fn term(&self, id: usize) -> &str {
        &self.terms[id]
    }

    /// Ids of the terms that start with `prefix`.
    pub fn prefix_ids(&self, prefix: &str) -> std::ops::Range<usize> {
        let start = self.terms.partition_point(|t| t.as_str() < prefix);
        let end = start
            + self.terms[start..]
                .iter()
                .take_while(|t| t.starts_with(prefix))
                .count();
        start..end
    }

    /// Ids of the terms of the words (as written) that start with `prefix`.
    pub fn surface_prefix_ids<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = usize> + 'a {
        let start = self.surfaces.partition_point(|(s, _)| s.as_str() < prefix);
        self.surfaces[start..]
            .iter()
            .take_while(move |(s, _)| s.starts_with(prefix))
            .map(|&(_, id)| id as usize)
    }

    /// All terms, in sorted order (for typo lookups).
    pub fn terms(&self) -> &[String] {
        &self.terms
    }

    /// Decoded postings of one term.
    pub fn postings(&self, id: usize) -> Vec<(u32, u32)> {
        decode_postings(&self.postings[id])
    }

    /// Number of chunks a term occurs in.
    pub fn doc_freq(&self, id: usize) -> usize {
        decode_postings(&self.postings[id]).len()
    }

    /// BM25 inverse document frequency (the non-negative Lucene form).
    pub fn idf(&self, df: usize) -> f32 {
        let n = self.num_docs() as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    fn avg_len(&self) -> f32 {
        if self.doc_len.is_empty() {
            return 1.0;
        }
        (self.doc_len.iter().map(|&l| l as f64).sum::<f64>() / self.doc_len.len() as f64) as f32
    }

    /// Adds `weight * BM25(term)` for every chunk containing term `id` into `scores`.
    pub fn accumulate(&self, id: usize, weight: f32, scores: &mut HashMap<u32, f32>) {
        let list = self.postings(id);
        let idf = self.idf(list.len());
        let avg = self.avg_len().max(1.0);
        let Bm25Params { k1, b, .. } = self.params;
        for (chunk, tf) in list {
            let len = self.doc_len[chunk as usize] as f32;
            let tf = tf as f32;
            let s = idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avg));
            *scores.entry(chunk).or_default() += weight * s;
        }
    }
}

/// Highest scores first; ties broken by chunk id so results are stable.
pub fn top_k(scores: HashMap<u32, f32>, k: usize) -> Vec<(u32, f32)> {
    let mut hits: Vec<(u32, f32)> = scores.into_iter().collect();
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(k);
    hits
}

fn encode_postings(list: &[(u32, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(list.len() * 2);
    let mut prev = 0u32;
    for &(chunk, tf) in list {
        write_varint(&mut out, chunk - prev);
        write_varint(&mut out, tf);
        prev = chunk;
    }
    out
}

/// Decodes a postings list; a malformed tail (impossible after the bundle checksum) just ends it.
fn decode_postings(bytes: &[u8]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut chunk = 0u32;
    while pos < bytes.len() {
        let (Some(delta), Some(tf)) = (read_varint(bytes, &mut pos), read_varint(bytes, &mut pos))
        else {
            break;
        };
        chunk = chunk.saturating_add(delta);
        out.push((chunk, tf));
    }
    out
}

fn write_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= ((b & 0x7f) as u32).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let list = vec![(0, 1), (5, 300), (70_000, 2), (u32::MAX - 1, 7)];
        assert_eq!(decode_postings(&encode_postings(&list)), list);
    }

    #[test]
    fn heading_terms_outrank_body_mentions() {
        let a = Analyzer::default();
        let docs = [
            ("Installing", "Run the installer. Mentions caching once."),
            ("Caching", "How results are kept between builds."),
            ("Other", "Nothing relevant here at all."),
        ];
        let idx = LexicalIndex::build(
            docs.iter().map(|(h, b)| LexicalDoc {
                heading: h,
                body: b,
                lang: Lang::English,
            }),
            &a,
            Bm25Params::default(),
        );
        let id = idx.term_id("cach").expect("stemmed term");
        let mut scores = HashMap::new();
        idx.accumulate(id, 1.0, &mut scores);
        let hits = top_k(scores, 10);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].0, 1);
        assert!(
            a.terms("the of", Lang::English).is_empty(),
            "stop words make no terms"
        );
    }

    #[test]
    fn prefix_range_finds_all_and_only_prefixed_terms() {
        let a = Analyzer::default();
        let idx = LexicalIndex::build(
            [LexicalDoc {
                heading: "",
                body: "config configure zebra conf configuration",
                lang: Lang::English,
            }],
            &a,
            Bm25Params::default(),
        );
        let got: Vec<&str> = idx.prefix_ids("conf").map(|i| idx.term(i)).collect();
        assert!(got.iter().all(|t| t.starts_with("conf")));
        assert_eq!(got.len(), 3, "{got:?}");
        // "configurat" is no prefix of the stem "configur", but it is of the word as written.
        let typed: Vec<&str> = idx
            .surface_prefix_ids("configurat")
            .map(|i| idx.term(i))
            .collect();
        assert_eq!(typed, vec!["configur"]);
    }
}
