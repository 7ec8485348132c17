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

/// The inverted index over chunks, cut into blocks by key range (a key is a term or a word as
/// written), so that a query fetches only the blocks its words fall in. A block that is not
/// loaded yet answers nothing and is named in the query's [`Want`].
#[derive(Debug, Clone)]
pub struct LexicalIndex {
    pub params: Bm25Params,
    /// Mean weighted chunk length.
    pub(crate) avg_len: f32,
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
    /// One varint-coded list per term: (chunk id delta, weighted frequency, weighted chunk
    /// length) triples. The length travels with the posting so no per-chunk table is needed.
    pub(crate) postings: Vec<Vec<u8>>,
    pub(crate) surfaces: Vec<(String, u32)>,
}

/// Shards a query needs that are not loaded yet, by kind and block index.
#[derive(Debug, Default)]
pub(crate) struct Want {
    inner: std::cell::RefCell<WantSet>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct WantSet {
    pub(crate) terms: std::collections::BTreeSet<usize>,
    pub(crate) text: std::collections::BTreeSet<usize>,
    pub(crate) centroids: bool,
    pub(crate) vectors: std::collections::BTreeSet<usize>,
}

impl Want {
    pub(crate) fn term_block(&self, b: usize) {
        self.inner.borrow_mut().terms.insert(b);
    }
    pub(crate) fn text_block(&self, b: usize) {
        self.inner.borrow_mut().text.insert(b);
    }
    pub(crate) fn centroids(&self) {
        self.inner.borrow_mut().centroids = true;
    }
    pub(crate) fn vector_part(&self, p: usize) {
        self.inner.borrow_mut().vectors.insert(p);
    }
    pub(crate) fn is_empty(&self) -> bool {
        let w = self.inner.borrow();
        w.terms.is_empty() && w.text.is_empty() && !w.centroids && w.vectors.is_empty()
    }
    pub(crate) fn take(&self) -> WantSet {
        std::mem::take(&mut *self.inner.borrow_mut())
    }
}

/// A chunk as the lexical index sees it.
pub struct LexicalDoc<'a> {
    pub heading: &'a str,
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
            doc_len.push(tf.values().sum::<u32>());
            for (term, f) in tf {
                lists.entry(term).or_default().push((id as u32, f));
            }
        }
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
                list.sort_unstable();
                encode_postings(&list, &doc_len)
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
        let total: f64 = doc_len.iter().map(|&l| l as f64).sum();
        let avg_len = if doc_len.is_empty() {
            1.0
        } else {
            (total / doc_len.len() as f64) as f32
        };
        LexicalIndex {
            params,
            avg_len,
            num_docs: doc_len.len(),
            num_terms: terms.len(),
            blocks,
            shards: shards.into_iter().map(Some).collect(),
        }
    }

    /// An index whose blocks are described but not loaded.
    pub(crate) fn unloaded(
        params: Bm25Params,
        avg_len: f32,
        num_docs: usize,
        num_terms: usize,
        blocks: Vec<(String, u32)>,
    ) -> Self {
        let shards = vec![None; blocks.len()];
        LexicalIndex {
            params,
            avg_len,
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
        if !(self.avg_len.is_finite() && self.avg_len > 0.0) {
            return bad("invalid mean chunk length");
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
                let (Some(delta), Some(_), Some(_)) = (
                    read_varint(list, &mut pos),
                    read_varint(list, &mut pos),
                    read_varint(list, &mut pos),
                ) else {
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

    /// Decoded postings of one term: (chunk, weighted frequency, weighted chunk length).
    pub fn postings(&self, id: usize, want: &Want) -> Vec<(u32, u32, u32)> {
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

    /// Adds `weight * BM25(term)` for every chunk containing term `id` into `scores`.
    pub fn accumulate(&self, id: usize, weight: f32, scores: &mut HashMap<u32, f32>, want: &Want) {
        let list = self.postings(id, want);
        let idf = self.idf(list.len());
        let avg = self.avg_len.max(1.0);
        let Bm25Params { k1, b, .. } = self.params;
        for (chunk, tf, len) in list {
            let (tf, len) = (tf as f32, len as f32);
            let s = idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avg));
            *scores.entry(chunk).or_default() += weight * s;
        }
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
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(k);
    hits
}

fn encode_postings(list: &[(u32, u32)], doc_len: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(list.len() * 3);
    let mut prev = 0u32;
    for &(chunk, tf) in list {
        write_varint(&mut out, chunk - prev);
        write_varint(&mut out, tf);
        write_varint(&mut out, doc_len.get(chunk as usize).copied().unwrap_or(1));
        prev = chunk;
    }
    out
}

/// Decodes a postings list; a malformed tail (impossible after the bundle checksum) just ends it.
fn decode_postings(bytes: &[u8]) -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut chunk = 0u32;
    while pos < bytes.len() {
        let (Some(delta), Some(tf), Some(len)) = (
            read_varint(bytes, &mut pos),
            read_varint(bytes, &mut pos),
            read_varint(bytes, &mut pos),
        ) else {
            break;
        };
        chunk = chunk.saturating_add(delta);
        out.push((chunk, tf, len));
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
        let list = vec![(0, 1), (5, 300), (70_000, 2)];
        let mut lens = vec![0u32; 70_001];
        lens[5] = 9;
        lens[70_000] = 300_000;
        let got = decode_postings(&encode_postings(&list, &lens));
        assert_eq!(got, vec![(0, 1, 0), (5, 300, 9), (70_000, 2, 300_000)]);
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
        let want = Want::default();
        let id = idx.term_id("cach", &want).expect("stemmed term");
        let mut scores = HashMap::new();
        idx.accumulate(id, 1.0, &mut scores, &want);
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
                heading: "",
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
