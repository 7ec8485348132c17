//! Keyword retrieval: BM25F over chunks with compact postings.
//!
//! A chunk is scored as one document of four fields: the page title (on the page's top chunk
//! only, so a query naming a page lands on its top), the section's own heading, the headings
//! above it (counted once, not as body words) and the body. Each field is scored by BM25 with
//! its own length normalisation and saturation, and the fields' scores are added with weights:
//! unlike BM25F's single saturation, where a body that repeats a word soon scores as much as a
//! title made of it, a match in the title or a heading stays ahead of the same words in
//! passing, and a long body does not dilute its heading. A term's weighted field scores are
//! summed when the index is written (the title's kept apart, as a query weighs it by its
//! length), so a posting is a delta-coded chunk id and one or two scores in LEB128 varints:
//! small enough to ship, fast enough to decode per query.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::analyze::{fold, is_cjk, Analyzer, Lang};
use crate::postings::{decode_postings, encode_postings, read_posting, Posting};
use crate::want::Want;

/// One field's weight and length normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FieldParams {
    /// How much one occurrence counts, relative to one in the body.
    pub weight: f32,
    /// Length normalisation in `[0, 1]` against the field's mean length (0: none).
    pub b: f32,
}

/// Keyword scoring settings, stored in the bundle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    /// Term-frequency saturation; 1.2 is the classic default and suits short chunks.
    pub k1: f32,
    /// The page title, on the page's top chunk.
    pub title: FieldParams,
    /// The section's own heading.
    pub heading: FieldParams,
    /// The headings above the section (the page title first), once per chunk.
    pub path: FieldParams,
    /// The chunk's text.
    pub body: FieldParams,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            title: FieldParams {
                weight: 4.0,
                b: 0.5,
            },
            heading: FieldParams {
                weight: 2.0,
                b: 0.5,
            },
            path: FieldParams {
                weight: 0.5,
                b: 0.0,
            },
            body: FieldParams {
                weight: 1.0,
                b: 0.75,
            },
        }
    }
}

/// A strong match scores this many times a saturated body match (see `strong_match`); chosen
/// with the fusion on the three labelled sets, checked on the Cargo book's navigational set.
const STRONG_MATCH: f32 = 1.2;

/// A term's summed field scores are stored in units of 1/`SCORE_SCALE`.
const SCORE_SCALE: f32 = 16.0;

/// The inverted index over chunks, cut into blocks by key range (a key is a term or a word as
/// written), so that a query fetches only the blocks its words fall in. A block that is not
/// loaded yet answers nothing and is named in the query's [`Want`].
#[derive(Debug, Clone)]
pub struct LexicalIndex {
    pub params: Bm25Params,
    pub(crate) num_docs: usize,
    pub(crate) num_terms: usize,
    /// Each block's first key (the first is empty) and first term id, ascending.
    pub(crate) blocks: Vec<(String, u32)>,
    pub(crate) shards: Vec<Option<TermShard>>,
}

/// One block of the term dictionary: its terms with their postings, and the words as written
/// (lowercase, accents folded) whose key falls in the block and whose term differs, with that
/// term's global id, so a typed prefix is matched against what readers type, not against stems.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TermShard {
    pub(crate) terms: Vec<String>,
    /// One varint-coded list of [`Posting`]s per term (see `encode_postings`). The fields' weights and lengths are folded in when
    /// the index is written, so no per-chunk table is needed.
    pub(crate) postings: Vec<Vec<u8>>,
    pub(crate) surfaces: Vec<(String, u32)>,
}

/// A chunk as the lexical index sees it: its fields' text.
pub struct LexicalDoc<'a> {
    /// The page title, for the page's top chunk; empty for the others.
    pub title: &'a str,
    /// The section's own heading (empty for text under the title alone).
    pub heading: &'a str,
    /// The headings above the section, joined.
    pub path: &'a str,
    pub body: &'a str,
    /// The page's language, which picks the stemmer.
    pub lang: Lang,
}

/// Encoded postings and dictionary bytes per block: about what Pagefind puts in an index chunk
/// (it cuts at 20,000 words, ~30 KB), smaller because a query usually touches one block a word.
const BLOCK_BYTES: usize = 12 * 1024;

impl LexicalIndex {
    pub fn build<'a>(
        docs: impl IntoIterator<Item = LexicalDoc<'a>>,
        analyzer: &Analyzer,
        params: Bm25Params,
    ) -> Self {
        // Per chunk and field: each term's frequency, and the field's length in terms.
        type Fields = [(HashMap<String, u32>, u32); 4];
        let mut surface_terms: BTreeMap<(String, String), ()> = BTreeMap::new();
        let mut per_doc: Vec<Fields> = Vec::new();
        let mut total = [0f64; 4];
        let mut present = [0usize; 4];
        for doc in docs {
            let mut fields: Fields = Default::default();
            for (f, text) in [doc.title, doc.heading, doc.path, doc.body]
                .iter()
                .enumerate()
            {
                for t in analyzer.tokens(text, doc.lang) {
                    let Some(term) = t.term else { continue };
                    let word = &text[t.start..t.end];
                    if !word.chars().any(is_cjk) {
                        let surface = fold(word);
                        if surface != term {
                            surface_terms.insert((surface, term.clone()), ());
                        }
                    }
                    *fields[f].0.entry(term).or_default() += 1;
                    fields[f].1 += 1;
                }
                if fields[f].1 > 0 {
                    total[f] += fields[f].1 as f64;
                    present[f] += 1;
                }
            }
            per_doc.push(fields);
        }
        // A field's mean length over the chunks that have it.
        let avg: [f32; 4] =
            std::array::from_fn(|f| (total[f] / present[f].max(1) as f64).max(1.0) as f32);
        let field_params = [params.title, params.heading, params.path, params.body];
        let mut lists: BTreeMap<String, Vec<Posting>> = BTreeMap::new();
        let k1 = params.k1;
        for (id, fields) in per_doc.iter().enumerate() {
            // Per term: the title's score, and the other fields' summed.
            let mut sum: HashMap<&str, [f32; 2]> = HashMap::new();
            for (f, (freqs, len)) in fields.iter().enumerate() {
                let FieldParams { weight, b } = field_params[f];
                let norm = 1.0 - b + b * *len as f32 / avg[f];
                for (term, &n) in freqs {
                    let tf = n as f32;
                    sum.entry(term.as_str()).or_default()[(f > 0) as usize] +=
                        weight * tf * (k1 + 1.0) / (tf + k1 * norm);
                }
            }
            for (term, [title, section]) in sum {
                let q = |v: f32| (v * SCORE_SCALE).round() as u32;
                let title = q(title);
                lists.entry(term.to_string()).or_default().push(Posting {
                    chunk: id as u32,
                    section: if title > 0 {
                        q(section)
                    } else {
                        q(section).max(1)
                    },
                    title,
                });
            }
        }
        let num_docs = per_doc.len();
        let terms: Vec<String> = lists.keys().cloned().collect();
        let surfaces: Vec<(String, u32)> = surface_terms
            .into_keys()
            .filter_map(|(surface, term)| {
                let id = terms.binary_search(&term).ok()?;
                Some((surface, id as u32))
            })
            .collect();
        let postings: Vec<Vec<u8>> = lists
            .into_values()
            .map(|mut list| {
                list.sort_unstable_by_key(|p| p.chunk);
                encode_postings(&list)
            })
            .collect();

        // Walk terms and surfaces in key order, cutting a block once it is full, never between
        // equal keys.
        let mut blocks: Vec<(String, u32)> = vec![(String::new(), 0)];
        let mut shards: Vec<TermShard> = vec![TermShard::default()];
        let (mut ti, mut si, mut size) = (0usize, 0usize, 0usize);
        let mut last_key: Option<String> = None;
        while ti < terms.len() || si < surfaces.len() {
            let take_term =
                si >= surfaces.len() || (ti < terms.len() && terms[ti] <= surfaces[si].0);
            let key = if take_term {
                &terms[ti]
            } else {
                &surfaces[si].0
            };
            if size >= BLOCK_BYTES && last_key.as_deref() != Some(key.as_str()) {
                blocks.push((key.clone(), ti as u32));
                shards.push(TermShard::default());
                size = 0;
            }
            last_key = Some(key.clone());
            let shard = shards.last_mut().expect("one block at least");
            if take_term {
                size += terms[ti].len() + postings[ti].len() + 2;
                shard.terms.push(terms[ti].clone());
                shard.postings.push(postings[ti].clone());
                ti += 1;
            } else {
                size += surfaces[si].0.len() + 3;
                shard.surfaces.push(surfaces[si].clone());
                si += 1;
            }
        }
        LexicalIndex {
            params,
            num_docs,
            num_terms: terms.len(),
            blocks,
            shards: shards.into_iter().map(Some).collect(),
        }
    }

    /// An index whose blocks are described but not loaded.
    pub(crate) fn unloaded(
        params: Bm25Params,
        num_docs: usize,
        num_terms: usize,
        blocks: Vec<(String, u32)>,
    ) -> Self {
        let shards = vec![None; blocks.len()];
        LexicalIndex {
            params,
            num_docs,
            num_terms,
            blocks,
            shards,
        }
    }

    /// Checks the block table: keys and term ids ascending, the first block starting at the
    /// empty key and term 0.
    pub(crate) fn validate_blocks(&self) -> crate::error::Result<()> {
        let bad = |m: &str| Err(crate::error::Error::Inconsistent(m.into()));
        if !(self.params.k1.is_finite() && self.params.k1 > 0.0) {
            return bad("invalid BM25 saturation");
        }
        match self.blocks.first() {
            Some((k, 0)) if k.is_empty() => {}
            _ => return bad("the term blocks do not start at the empty key"),
        }
        if !self
            .blocks
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
            || self
                .blocks
                .last()
                .is_some_and(|b| b.1 as usize > self.num_terms)
        {
            return bad("term blocks are not in order");
        }
        Ok(())
    }

    /// The term ids block `b` holds.
    pub(crate) fn block_terms(&self, b: usize) -> std::ops::Range<usize> {
        let start = self.blocks[b].1 as usize;
        let end = self
            .blocks
            .get(b + 1)
            .map_or(self.num_terms, |n| n.1 as usize);
        start..end
    }

    /// Checks a block before it is used: its size matches the table, its keys fall in its
    /// range and are sorted, every posting names a chunk that exists.
    pub(crate) fn validate_shard(&self, b: usize, s: &TermShard) -> crate::error::Result<()> {
        let bad = |m: &str| Err(crate::error::Error::Inconsistent(m.into()));
        if s.terms.len() != self.block_terms(b).len() || s.terms.len() != s.postings.len() {
            return bad("a term block's size differs from the block table");
        }
        let lo = &self.blocks[b].0;
        let hi = self.blocks.get(b + 1).map(|n| &n.0);
        let in_range = |k: &String| k >= lo && hi.is_none_or(|h| k < h);
        if !s.terms.windows(2).all(|w| w[0] < w[1]) || !s.terms.iter().all(in_range) {
            return bad("terms are not sorted in their block");
        }
        if !s.surfaces.windows(2).all(|w| w[0] < w[1])
            || !s.surfaces.iter().all(|(k, _)| in_range(k))
        {
            return bad("surface forms are not sorted in their block");
        }
        if s.surfaces
            .iter()
            .any(|&(_, id)| id as usize >= self.num_terms)
        {
            return bad("a surface form names a missing term");
        }
        for list in &s.postings {
            let mut prev: Option<u32> = None;
            let mut pos = 0;
            while pos < list.len() {
                let Some((delta, _)) = read_posting(list, &mut pos) else {
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
                if id as usize >= self.num_docs {
                    return bad("a posting names a missing chunk");
                }
                prev = Some(id);
            }
        }
        Ok(())
    }

    pub fn num_terms(&self) -> usize {
        self.num_terms
    }

    #[cfg(test)]
    pub fn term(&self, id: usize) -> &str {
        self.terms().nth(id).map_or("", String::as_str)
    }

    pub fn num_docs(&self) -> usize {
        self.num_docs
    }

    /// Every block loaded.
    pub(crate) fn is_complete(&self) -> bool {
        self.shards.iter().all(Option::is_some)
    }

    /// The block whose key range holds `key`.
    fn block_of_key(&self, key: &str) -> usize {
        self.blocks
            .partition_point(|(k, _)| k.as_str() <= key)
            .saturating_sub(1)
    }

    /// The block holding term `id`.
    fn block_of_term(&self, id: usize) -> usize {
        self.blocks
            .partition_point(|&(_, t)| t as usize <= id)
            .saturating_sub(1)
    }

    fn shard(&self, b: usize, want: &Want) -> Option<&TermShard> {
        let s = self.shards.get(b)?.as_ref();
        if s.is_none() {
            want.term_block(b);
        }
        s
    }

    /// Term id of an exact term.
    pub fn term_id(&self, term: &str, want: &Want) -> Option<usize> {
        let b = self.block_of_key(term);
        let s = self.shard(b, want)?;
        let i = s.terms.binary_search_by(|t| t.as_str().cmp(term)).ok()?;
        Some(self.blocks[b].1 as usize + i)
    }

    /// Whether `term` is known not to be a term: its block is loaded and lacks it. While the
    /// block is not loaded the answer is no, and the block is wanted.
    pub fn lacks(&self, term: &str, want: &Want) -> bool {
        let b = self.block_of_key(term);
        self.shard(b, want)
            .is_some_and(|s| s.terms.binary_search_by(|t| t.as_str().cmp(term)).is_err())
    }

    /// The blocks a prefix's keys can fall in: where it would sort, and the following ones
    /// while their first key still has the prefix (at most `MAX_PREFIX_BLOCKS`).
    fn prefix_blocks(&self, prefix: &str) -> std::ops::Range<usize> {
        let start = self.block_of_key(prefix);
        let mut end = start + 1;
        while end < self.blocks.len()
            && end - start < MAX_PREFIX_BLOCKS
            && self.blocks[end].0.starts_with(prefix)
        {
            end += 1;
        }
        start..end
    }

    /// Ids of the terms that start with `prefix`, in term order.
    pub fn prefix_ids(&self, prefix: &str, want: &Want) -> Vec<usize> {
        let mut out = Vec::new();
        for b in self.prefix_blocks(prefix) {
            let Some(s) = self.shard(b, want) else {
                continue;
            };
            let start = s.terms.partition_point(|t| t.as_str() < prefix);
            let first = self.blocks[b].1 as usize;
            out.extend(
                s.terms[start..]
                    .iter()
                    .take_while(|t| t.starts_with(prefix))
                    .enumerate()
                    .map(|(i, _)| first + start + i),
            );
        }
        out
    }

    /// Ids of the terms of the words (as written) that start with `prefix`.
    pub fn surface_prefix_ids(&self, prefix: &str, want: &Want) -> Vec<usize> {
        let mut out = Vec::new();
        for b in self.prefix_blocks(prefix) {
            let Some(s) = self.shard(b, want) else {
                continue;
            };
            let start = s.surfaces.partition_point(|(k, _)| k.as_str() < prefix);
            out.extend(
                s.surfaces[start..]
                    .iter()
                    .take_while(|(k, _)| k.starts_with(prefix))
                    .map(|&(_, id)| id as usize),
            );
        }
        out
    }

    /// Terms one edit away from `term` among those of the block it would sort in: a typo is
    /// looked for where the word is, without fetching the whole dictionary.
    pub fn typo_ids(&self, term: &str, want: &Want) -> Vec<usize> {
        let b = self.block_of_key(term);
        let Some(s) = self.shard(b, want) else {
            return Vec::new();
        };
        let first = self.blocks[b].1 as usize;
        let t: Vec<char> = term.chars().collect();
        s.terms
            .iter()
            .enumerate()
            .filter(|(_, cand)| {
                let c: Vec<char> = cand.chars().collect();
                c.len().abs_diff(t.len()) <= 1 && c.len() >= 4 && within_one_edit(&t, &c)
            })
            .map(|(i, _)| first + i)
            .collect()
    }

    fn encoded_postings(&self, id: usize, want: &Want) -> Option<&[u8]> {
        let b = self.block_of_term(id);
        let s = self.shard(b, want)?;
        s.postings
            .get(id - self.blocks[b].1 as usize)
            .map(Vec::as_slice)
    }

    /// Decoded postings of one term.
    pub(crate) fn postings(&self, id: usize, want: &Want) -> Vec<Posting> {
        self.encoded_postings(id, want)
            .map(decode_postings)
            .unwrap_or_default()
    }

    /// Number of chunks a term occurs in (0 while its block is not loaded).
    pub fn doc_freq(&self, id: usize, want: &Want) -> usize {
        self.postings(id, want).len()
    }

    /// Every term, in sorted order (complete indexes only: the query table is fitted on them).
    pub fn terms(&self) -> impl Iterator<Item = &String> {
        self.shards.iter().flatten().flat_map(|s| s.terms.iter())
    }

    /// Every (surface word, term id) pair of the loaded blocks.
    pub fn surfaces(&self) -> impl Iterator<Item = &(String, u32)> {
        self.shards.iter().flatten().flat_map(|s| s.surfaces.iter())
    }

    /// BM25 inverse document frequency (the non-negative Lucene form).
    pub fn idf(&self, df: usize) -> f32 {
        let n = self.num_docs() as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Adds `weight * idf * (section fields' score + title * title's score)` for every chunk
    /// containing term `id` into `scores`; the chunks whose page title holds it into `titled`.
    pub(crate) fn accumulate(
        &self,
        id: usize,
        weight: f32,
        title: f32,
        scores: &mut HashMap<u32, f32>,
        titled: &mut HashSet<u32>,
        want: &Want,
    ) {
        let list = self.postings(id, want);
        let idf = self.idf(list.len());
        for p in list {
            let q = p.section as f32 + title * p.title as f32;
            *scores.entry(p.chunk).or_default() += weight * idf * q / SCORE_SCALE;
            if p.title > 0 {
                titled.insert(p.chunk);
            }
        }
    }

    /// What one term scores per unit of idf in a chunk that matches it strongly: a little over
    /// a saturated body match. Keyword strength (how much hybrid mode trusts the words) is the
    /// best chunk's score over this bound summed over the query's terms, clamped at 1, so a
    /// heading or title match reaches full strength and a word in passing does not.
    pub(crate) fn strong_match(&self) -> f32 {
        (self.params.k1 + 1.0) * STRONG_MATCH
    }
}

/// A typed prefix looks at this many blocks at most: a one-letter prefix would otherwise
/// fetch a large share of the dictionary.
const MAX_PREFIX_BLOCKS: usize = 3;

/// Insert, delete, substitute or swap of neighbours.
pub(crate) fn within_one_edit(a: &[char], b: &[char]) -> bool {
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

/// Highest scores first; ties broken by chunk id so results are stable.
pub fn top_k(scores: HashMap<u32, f32>, k: usize) -> Vec<(u32, f32)> {
    let mut hits: Vec<(u32, f32)> = scores.into_iter().collect();
    crate::order::rank(&mut hits);
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

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
                title: "",
                heading: h,
                path: "",
                body: b,
                lang: Lang::English,
            }),
            &a,
            Bm25Params::default(),
        );
        let want = Want::default();
        let id = idx.term_id("cach", &want).expect("stemmed term");
        let mut scores = HashMap::new();
        idx.accumulate(id, 1.0, 1.0, &mut scores, &mut HashSet::new(), &want);
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
                title: "",
                heading: "",
                path: "",
                body: "config configure zebra conf configuration",
                lang: Lang::English,
            }],
            &a,
            Bm25Params::default(),
        );
        let want = Want::default();
        let got: Vec<&str> = idx
            .prefix_ids("conf", &want)
            .into_iter()
            .map(|i| idx.term(i))
            .collect();
        assert!(got.iter().all(|t| t.starts_with("conf")));
        assert_eq!(got.len(), 3, "{got:?}");
        // "configurat" is no prefix of the stem "configur", but it is of the word as written.
        let typed: Vec<&str> = idx
            .surface_prefix_ids("configurat", &want)
            .into_iter()
            .map(|i| idx.term(i))
            .collect();
        assert_eq!(typed, vec!["configur"]);
    }

    #[test]
    fn blocks_cut_the_dictionary_and_name_what_is_missing() {
        let a = Analyzer::default();
        let words: Vec<String> = (0..4000).map(|i| format!("word{i:05}x")).collect();
        let body = words.join(" ");
        let idx = LexicalIndex::build(
            [LexicalDoc {
                title: "",
                heading: "",
                path: "",
                body: &body,
                lang: Lang::None,
            }],
            &a,
            Bm25Params::default(),
        );
        assert!(idx.blocks.len() > 2, "{} blocks", idx.blocks.len());
        idx.validate_blocks().unwrap();
        for (b, s) in idx.shards.iter().enumerate() {
            idx.validate_shard(b, s.as_ref().unwrap()).unwrap();
        }
        let want = Want::default();
        let id = idx.term_id("word03999x", &want).unwrap();
        assert_eq!(idx.term(id), "word03999x");
        assert!(want.is_empty());
        // Unload the last block: the term is missing and its block is wanted.
        let mut partial = idx.clone();
        let last = partial.shards.len() - 1;
        partial.shards[last] = None;
        assert_eq!(partial.term_id("word03999x", &want), None);
        assert_eq!(
            want.take().terms.into_iter().collect::<Vec<_>>(),
            vec![last]
        );
        assert!(partial.term_id("word00000x", &want).is_some() && want.is_empty());
    }
}
