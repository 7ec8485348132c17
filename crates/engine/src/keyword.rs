//! Keyword retrieval: BM25 over the query's words with quoted phrases, a prefix for the word
//! being typed, and one-edit typo tolerance for longer words.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::analyze::{fold, identifier_parts, surface_words};
use crate::analyze::{Analyzer, Lang};
use crate::bm25::top_k;
use crate::bundle::Bundle;
use crate::query::Query;
use crate::want::Want;

/// Typo matches count this much of an exact match, so exact hits rank first.
const TYPO_WEIGHT: f32 = 0.4;
/// Prefix expansions of the word being typed count this much.
const PREFIX_WEIGHT: f32 = 0.7;
/// At most this many expansions per typed prefix (most frequent first).
const MAX_PREFIX_TERMS: usize = 12;
/// Prefix candidates looked at, in term order, before choosing the most frequent: keeps a
/// one-letter prefix from costing a pass over the whole vocabulary's postings.
const MAX_PREFIX_CANDIDATES: usize = 512;
/// At most this many typo matches per word (most frequent first).
const MAX_TYPO_TERMS: usize = 8;
/// A section holding every word of the query (weighted by rarity) is at least this strong a
/// keyword match, however long it is: length normalisation orders sections, it does not make
/// a long section's exact match of an identifier or a quoted setting weak evidence. Chosen on
/// the labelled sets of Lantern's docs, FastAPI and the Rust book (hybrid MRR@10 0.860 ->
/// 0.883, 0.844 -> 0.854, 0.890 unchanged); the navigational sets did not move.
const COVERED_STRENGTH: f32 = 0.7;
/// A page top whose title holds every word of the query scores this many times its fields'
/// sum: the query names the page ("cargo build" for "cargo-build(1)"), which outranks sections
/// whose heading holds one of the words and whose text holds the rest. Chosen on the
/// navigational sets of Lantern's docs, the Rust book and FastAPI (1.5 and 2 within one
/// question of each other; labelled sets unchanged but FastAPI's hybrid MRR@10, 0.854 ->
/// 0.847); the Cargo book's set was held out (hit@1 0.878 -> 0.939 keyword, 0.898 -> 0.949
/// hybrid).
const NAMED_PAGE: f32 = 2.0;
/// Consecutive query words tried as one identifier ("get element by id"). Two words join
/// into everyday compounds too often ("set up", "lock file", "my package": Cargo book keyword
/// MRR@10 .699 -> .649 with pairs).
const MIN_JOINED_WORDS: usize = 3;
const MAX_JOINED_WORDS: usize = 4;
/// Distinct query terms that are searched; later ones are ignored, so a pasted page costs no
/// more than a long question.
pub const MAX_QUERY_TERMS: usize = 64;

/// A query term after expansion: which index terms it matches and with what weight.
pub(crate) struct Expanded {
    pub(crate) ids: Vec<(usize, f32)>,
}

/// What keyword search reads: the bundle's index and text, and how words become terms.
pub(crate) struct Keywords<'a> {
    pub(crate) bundle: &'a Bundle,
    pub(crate) analyzer: &'a Analyzer,
    /// The languages of the bundle's pages: a query word may mean any of them.
    pub(crate) langs: &'a [Lang],
}

impl Keywords<'_> {
    /// Keyword hits, best first. Quoted phrases must appear as written; other terms are OR-ed,
    /// with chunks matching more of them ranked higher; the last word, while typed, also matches
    /// as a prefix; words of five letters or more also match one edit away.
    ///
    /// Also returns the keyword strength in `[0, 1]`, so fusion can tell a strong match from the
    /// best of weak ones: the best chunk's score over what a chunk matching every term strongly
    /// would score, and at least [`COVERED_STRENGTH`] times the share of the query's idf that
    /// the best chunk holds.
    ///
    /// Only chunks `keep` accepts are returned (filters). Term and text blocks that are not
    /// loaded are added to `want`; the result is then incomplete.
    pub(crate) fn keyword(
        &self,
        query: &Query,
        k: usize,
        keep: &dyn Fn(u32) -> bool,
        want: &Want,
    ) -> (Vec<(u32, f32)>, f32) {
        let lex = self.bundle.lexical();
        let (expanded, missing) = self.expand(query, want);
        if !want.is_empty() {
            return (Vec::new(), 0.0);
        }

        // Each word's idf (its best-weighted term's), and what all the query's words weigh,
        // counting a word the docs never use in full.
        let term_idf: Vec<f32> = expanded
            .iter()
            .map(|e| {
                e.ids
                    .iter()
                    .map(|&(id, w)| w * lex.idf(lex.doc_freq(id, want)))
                    .fold(0.0, f32::max)
            })
            .collect();
        let total_idf = term_idf.iter().sum::<f32>() + missing as f32 * lex.idf(0);
        let bound = total_idf * lex.strong_match();
        // A query of a few words may be a page's name: the title counts in full. A longer one
        // is a question, whose words in a title say less than the same words in a heading.
        let title = title_weight(expanded.len() + missing);
        let mut scores: HashMap<u32, f32> = HashMap::new();
        // How many of the query's words each chunk holds, and their idf (for the strength).
        let mut matched: HashMap<u32, (u32, f32)> = HashMap::new();
        // How many of the query's words each page top's title holds.
        let mut in_title: HashMap<u32, u32> = HashMap::new();
        for (e, &idf) in expanded.iter().zip(&term_idf) {
            let mut titled = HashSet::new();
            let mut per_term: HashMap<u32, f32> = HashMap::new();
            for &(id, w) in &e.ids {
                let mut s = HashMap::new();
                lex.accumulate(id, w, title, &mut s, &mut titled, want);
                for (c, v) in s {
                    let slot = per_term.entry(c).or_default();
                    *slot = slot.max(v);
                }
            }
            for (c, v) in per_term {
                *scores.entry(c).or_default() += v;
                let m = matched.entry(c).or_default();
                m.0 += 1;
                m.1 += idf;
            }
            for c in titled {
                *in_title.entry(c).or_default() += 1;
            }
        }
        // The page the query names: its title holds every word.
        if missing == 0 && !expanded.is_empty() {
            for (c, s) in scores.iter_mut() {
                if in_title
                    .get(c)
                    .is_some_and(|&t| t as usize == expanded.len())
                {
                    *s *= NAMED_PAGE;
                }
            }
        }
        // Coordination: a chunk with all the words beats one that repeats a single word.
        let n = expanded.len().max(1) as f32;
        for (c, s) in scores.iter_mut() {
            let m = matched.get(c).map_or(0, |m| m.0) as f32;
            *s *= 0.5 + 0.5 * (m / n);
        }
        if !query.phrases.is_empty() {
            // Phrases are checked on the text of the chunks that have the words, which a split
            // bundle fetches for them.
            // Only chunks holding every word of every phrase are read.
            let mut need: Vec<HashSet<u32>> = Vec::new();
            for phrase in &query.phrases {
                for unit in self.analyzer.query_units(phrase) {
                    let alts = self.analyzer.alternatives(&unit, self.langs);
                    if alts.is_empty() {
                        continue; // a stop word
                    }
                    let ids = alts.iter().filter_map(|t| lex.term_id(t, want));
                    need.push(
                        ids.flat_map(|id| lex.postings(id, want))
                            .map(|p| p.chunk)
                            .collect(),
                    );
                }
            }
            scores.retain(|&c, _| {
                need.iter().all(|set| set.contains(&c))
                    && keep(c)
                    && self.has_phrases(c, &query.phrases, want)
            });
            if expanded.is_empty() {
                // A query of only phrases: keep phrase matches, scored equally; the chunks
                // holding the rarest phrase word are read, or every chunk for stop words only.
                let candidates: Vec<u32> = match need.iter().min_by_key(|s| s.len()) {
                    Some(rarest) => {
                        let mut v: Vec<u32> = rarest
                            .iter()
                            .copied()
                            .filter(|c| need.iter().all(|s| s.contains(c)))
                            .collect();
                        crate::order::sort_dedup(&mut v);
                        v
                    }
                    None => (0..self.bundle.header.chunks).collect(),
                };
                for c in candidates {
                    if keep(c) && self.has_phrases(c, &query.phrases, want) {
                        scores.insert(c, 1.0);
                    }
                }
            }
            if !want.is_empty() {
                return (Vec::new(), 0.0);
            }
        }
        scores.retain(|&c, _| keep(c));
        let hits = top_k(scores, k);
        let strength = match hits.first() {
            Some(&(c, best)) if bound > 0.0 => {
                let coverage = matched.get(&c).map_or(0.0, |m| m.1) / total_idf;
                (best / bound)
                    .max(COVERED_STRENGTH * coverage)
                    .clamp(0.0, 1.0)
            }
            _ => 0.0,
        };
        (hits, strength)
    }

    /// The query's words as index terms: for each distinct word, the terms it matches (its
    /// own, and while typed its prefix expansions, or else its typo neighbours) with weights,
    /// and how many words match nothing. Keyword search and the query table share this.
    pub(crate) fn expand(&self, query: &Query, want: &Want) -> (Vec<Expanded>, usize) {
        let lex = self.bundle.lexical();
        let mut expanded = Vec::new();
        let mut missing = 0usize;
        let mut seen = std::collections::HashSet::new();
        let units = self.analyzer.query_units(&query.words);
        // The words still to look up, in order, each with whether the reader is still typing it.
        let mut queue: VecDeque<(String, bool)> = units
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let typing = query.last_is_prefix
                    && i + 1 == units.len()
                    && !w.chars().any(crate::analyze::is_cjk);
                (w.clone(), typing)
            })
            .collect();
        while let Some((word, typing)) = queue.pop_front() {
            let word = word.as_str();
            // A word may mean a different term in each of the bundle's languages.
            let alts = self.analyzer.alternatives(word, self.langs);
            if alts.is_empty() {
                continue;
            }
            // Repeated words count once; only the first MAX_QUERY_TERMS distinct ones count.
            if (!seen.insert(alts.join("\u{1}")) && !typing) || seen.len() > MAX_QUERY_TERMS {
                continue;
            }
            let mut ids: Vec<(usize, f32)> = alts
                .iter()
                .filter_map(|t| lex.term_id(t, want))
                .map(|id| (id, 1.0))
                .collect();
            // The site's declared synonyms of the word.
            let synonyms = &self.bundle.header().synonyms;
            for t in &alts {
                let Ok(at) = synonyms.binary_search_by(|(k, _)| k.as_str().cmp(t)) else {
                    continue;
                };
                for (term, weight) in &synonyms[at].1 {
                    if let Some(id) = lex.term_id(term, want) {
                        if !ids.iter().any(|(x, _)| *x == id) {
                            ids.push((id, *weight));
                        }
                    }
                }
            }
            if typing {
                // What was typed is compared with the words as written and with the terms.
                let prefix = fold(word);
                let mut more: Vec<usize> = lex
                    .surface_prefix_ids(&prefix, want)
                    .into_iter()
                    .chain(lex.prefix_ids(&prefix, want))
                    .take(MAX_PREFIX_CANDIDATES)
                    .filter(|&id| !ids.iter().any(|(x, _)| *x == id))
                    .collect();
                most_used_first(&mut more, |id| lex.doc_freq(id, want));
                ids.extend(
                    more.into_iter()
                        .take(MAX_PREFIX_TERMS)
                        .map(|id| (id, PREFIX_WEIGHT)),
                );
            }
            // An identifier the docs never write whole stands for its parts, which the index
            // holds for every identifier it has: `status.HTTP_201_CREATED`, shown only in code
            // the docs import, still finds the page on `status` and `created`.
            let parts = identifier_parts(word);
            if ids.is_empty() && !parts.is_empty() && alts.iter().all(|t| lex.lacks(t, want)) {
                let last = parts.len() - 1;
                for (k, p) in parts.into_iter().enumerate().rev() {
                    queue.push_front((p.to_string(), typing && k == last));
                }
                continue;
            }
            if ids.is_empty() && word.chars().count() >= 5 {
                let mut typos: Vec<usize> =
                    alts.iter().flat_map(|t| lex.typo_ids(t, want)).collect();
                most_used_first(&mut typos, |id| lex.doc_freq(id, want));
                ids.extend(
                    typos
                        .into_iter()
                        .take(MAX_TYPO_TERMS)
                        .map(|id| (id, TYPO_WEIGHT)),
                );
            }
            if ids.is_empty() {
                // A word the docs never use still counts toward what the query asks for: a
                // question phrased in other words than the docs' shows up as low strength.
                missing += 1;
            } else {
                expanded.push(Expanded { ids });
            }
        }
        // An identifier asked in words ("get element by id"): consecutive words that, written
        // together, are a term of the docs count as one more word, weighing as the words it
        // joins, which only the sections holding the identifier match. The first word is one
        // that was looked up (not a stop word): the joined key sorts next to it, so its block
        // is almost always loaded already ("how do I read a file" fetched two more blocks
        // when "howdoi" was tried).
        for start in 0..units.len() {
            if self
                .analyzer
                .alternatives(&units[start], self.langs)
                .is_empty()
            {
                continue;
            }
            for len in MIN_JOINED_WORDS..=MAX_JOINED_WORDS.min(units.len() - start) {
                let joined: String = units[start..start + len].concat();
                if joined.chars().any(crate::analyze::is_cjk) || expanded.len() >= MAX_QUERY_TERMS {
                    continue;
                }
                let ids: Vec<(usize, f32)> = self
                    .analyzer
                    .alternatives(&joined, self.langs)
                    .iter()
                    .filter_map(|t| lex.term_id(t, want))
                    .map(|id| (id, len as f32))
                    .collect();
                if !ids.is_empty() {
                    expanded.push(Expanded { ids });
                }
            }
        }
        (expanded, missing)
    }

    /// Does the chunk (breadcrumb or text) contain every phrase, word for word? False, and
    /// its text block wanted, while its text is not loaded.
    fn has_phrases(&self, chunk: u32, phrases: &[Vec<String>], want: &Want) -> bool {
        let Some(c) = self.bundle.chunk_or_want(chunk, want) else {
            return false;
        };
        let body = surface_words(&c.text);
        let head = surface_words(&c.breadcrumb.join(" "));
        phrases.iter().all(|p| {
            let p: Vec<String> = p.iter().map(|w| fold(w)).collect();
            contains_seq(&body, &p) || contains_seq(&head, &p)
        })
    }
}

/// How much a page title's match counts for a query of `terms` words: in full up to
/// [`NAME_WORDS`], then less the longer the query.
fn title_weight(terms: usize) -> f32 {
    (NAME_WORDS as f32 / terms.max(1) as f32).min(1.0)
}

/// Page names are rarely longer than this many words (stop words aside).
const NAME_WORDS: usize = 3;

fn contains_seq(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Term ids once each, the ones most chunks use first (ties: the smaller id).
fn most_used_first(ids: &mut Vec<usize>, doc_freq: impl Fn(usize) -> usize) {
    let clamp =
        |n: usize| u64::try_from(n).map_or(u64::from(u32::MAX), |n| n.min(u64::from(u32::MAX)));
    // Equal ids get equal keys, so they end up side by side for `dedup`.
    crate::order::sort_by_key(ids, |&id| {
        ((u64::from(u32::MAX) - clamp(doc_freq(id))) << 32) | clamp(id)
    });
    ids.dedup();
}

#[cfg(test)]
mod tests {
    use crate::bm25::within_one_edit;

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
