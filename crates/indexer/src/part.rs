//! A build split across CI jobs. `lantern build --part K/N` embeds the K-th of N shares of
//! what a build embeds (the chunks, the query table's texts and words, the probe questions of
//! "no good match") into its cache and writes no bundle; a last job reads every part's cache
//! with `--cache-from` and writes the bundle without embedding again. A text's share follows
//! from its cache key alone, so the jobs agree on nothing but the site and N, and the bundle
//! is the one a single job writes, byte for byte.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use lantern_embedder::{Embedder, Model};
use lantern_engine::Engine;

use crate::build::{chunk_texts, embed_cached, index, open_cache, term_words_to_embed, Indexed};
use crate::cache::text_key;
use crate::source::{self, Skipped};
use crate::{abstain, query_fit, BuildOptions};

/// Most parts a build may be split into.
pub const MAX_PARTS: usize = 256;

/// One share of a split build: part `index` (from 1) of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Which part, from 1.
    pub index: usize,
    /// How many parts.
    pub of: usize,
}

impl std::str::FromStr for Part {
    type Err = anyhow::Error;
    /// `K/N`, as `--part 2/4`.
    fn from_str(s: &str) -> Result<Self> {
        let (k, n) = s
            .split_once('/')
            .with_context(|| format!("--part is K/N (this job's part of N), not {s:?}"))?;
        let (index, of): (usize, usize) = (
            k.trim()
                .parse()
                .with_context(|| format!("--part {s:?}: K"))?,
            n.trim()
                .parse()
                .with_context(|| format!("--part {s:?}: N"))?,
        );
        if of == 0 || of > MAX_PARTS || index == 0 || index > of {
            bail!("--part {s}: K must be 1 to N and N 1 to {MAX_PARTS}");
        }
        Ok(Part { index, of })
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

impl Part {
    /// Is the text whose cache key is `key` this part's to embed?
    pub fn holds(&self, key: &[u8; 32]) -> bool {
        let n = u64::from_le_bytes(key[..8].try_into().expect("8 bytes of 32"));
        n % self.of as u64 == (self.index - 1) as u64
    }
}

/// What one part did.
#[derive(Debug)]
pub struct PartReport {
    /// Which part.
    pub part: Part,
    /// Texts the whole build embeds (or finds cached).
    pub texts: usize,
    /// This part's share of them.
    pub share: usize,
    /// Of the share, embedded in this job.
    pub embedded: usize,
    /// Of the share, found in a cache.
    pub reused: usize,
    /// The cache written, holding the share.
    pub cache: PathBuf,
    /// Files left out.
    pub skipped: Vec<Skipped>,
    /// What the owner should know.
    pub warnings: Vec<String>,
    /// Wall time.
    pub seconds: f64,
}

impl std::fmt::Display for PartReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "part {} of the build: {} of {} texts are this part's ({} embedded, {} from cache), written to {} in {:.1}s; no bundle written: the last job passes every part's cache with --cache-from",
            self.part,
            self.share,
            self.texts,
            self.embedded,
            self.reused,
            self.cache.display(),
            self.seconds
        )
    }
}

/// Embeds `part`'s share of what `opts`'s build embeds into its cache (`--cache`).
pub fn build_part(
    opts: &BuildOptions,
    model: &Model,
    embedder: &Embedder,
    part: Part,
) -> Result<PartReport> {
    let started = Instant::now();
    let Some(cache_path) = &opts.cache else {
        bail!(
            "--part writes its share into the embedding cache: give --cache PATH, not --no-cache"
        );
    };
    let vectors_id = model.vectors_id()?;
    opts.config.validate()?;
    let collected = source::collect(&opts.docs, &opts.config)?;
    let Indexed {
        writer,
        skipped,
        mut warnings,
        ..
    } = index(opts, model, embedder, &collected)?;
    let mut cache = open_cache(opts, &vectors_id, &mut warnings)?;
    let mut texts = chunk_texts(&writer);
    // What the last job embeds once its bundle is indexed follows from the chunks' words
    // alone, so a bundle with stand-in vectors gives the same texts.
    let mut unit = vec![0f32; embedder.dim()];
    unit[0] = 1.0;
    let chunks = writer.chunks().len();
    let engine = Engine::new(writer.vector_partitions(1, 0).finish(vec![unit; chunks])?);
    if opts.config.abstain_cosine.is_none() {
        texts.extend(abstain::probe_questions());
    }
    if opts.config.query_table_rank > 0 {
        texts.extend(query_fit::training_texts(&engine));
        let words = engine.term_words();
        texts.extend(
            term_words_to_embed(&engine)
                .into_iter()
                .map(|id| words[id].clone()),
        );
    }
    // Each text once, as the build embeds it once.
    let mut seen = std::collections::HashSet::new();
    texts.retain(|t| seen.insert(text_key(t)));
    let total = texts.len();
    let share: Vec<String> = texts
        .into_iter()
        .filter(|t| part.holds(&text_key(t)))
        .collect();
    let (_, embedded, reused) = embed_cached(
        embedder,
        &mut cache,
        &share,
        opts.progress.then_some("this part's texts"),
        |i| {
            format!(
                "embedding {:?}",
                share[i].chars().take(60).collect::<String>()
            )
        },
    )?;
    cache
        .save(cache_path)
        .with_context(|| format!("writing this part's cache {}", cache_path.display()))?;
    Ok(PartReport {
        part,
        texts: total,
        share: share.len(),
        embedded,
        reused,
        cache: cache_path.clone(),
        skipped,
        warnings,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_as_k_of_n_and_nonsense_is_refused() {
        assert_eq!("2/4".parse::<Part>().unwrap(), Part { index: 2, of: 4 });
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "1/257", "-1/2", ""] {
            assert!(bad.parse::<Part>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_text_belongs_to_exactly_one_part() {
        let parts: Vec<Part> = (1..=3).map(|index| Part { index, of: 3 }).collect();
        let mut sizes = [0usize; 3];
        for i in 0..3000 {
            let key = text_key(&format!("text {i}"));
            let owners: Vec<usize> = (0..3).filter(|&p| parts[p].holds(&key)).collect();
            assert_eq!(owners.len(), 1);
            sizes[owners[0]] += 1;
        }
        // Shares by hash: near a third each.
        assert!(sizes.iter().all(|&n| (900..1100).contains(&n)), "{sizes:?}");
    }
}
