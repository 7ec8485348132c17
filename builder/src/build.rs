//! `lantern build`: docs folder -> chunks -> embeddings -> bundle.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use lantern_embedder::Embedder;
use lantern_engine::analyze::{Analyzer, ANALYZER_VERSION};
use lantern_engine::bm25::{Bm25Params, LexicalDoc, LexicalIndex};
use lantern_engine::bundle::{Bundle, Chunk, Header, Page, PartSizes, Payload};
use lantern_engine::vector::VectorIndex;

use crate::cache::{text_key, EmbeddingCache};
use crate::chunk::{self, embedding_text, split_sections, title_from_path};
use crate::config::Config;
use crate::model::Manifest;
use crate::source::{self, Skipped};

pub struct BuildOptions {
    pub docs: PathBuf,
    pub out: PathBuf,
    pub config: Config,
    /// Where embeddings are cached between builds; `None` disables the cache.
    pub cache: Option<PathBuf>,
    pub progress: bool,
}

/// What a build did, for the summary and for tests.
#[derive(Debug)]
pub struct BuildReport {
    pub pages: usize,
    pub chunks: usize,
    pub skipped: Vec<Skipped>,
    /// Distinct chunk texts run through the model in this build.
    pub embedded: usize,
    /// Chunks whose vectors came from the cache.
    pub reused: usize,
    pub warnings: Vec<String>,
    pub sizes: PartSizes,
    pub bytes: usize,
    pub embed_time: Duration,
    pub total_time: Duration,
}

/// The default cache file for a bundle: `site.lantern` -> `site.lantern.cache`.
pub fn default_cache_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".cache");
    PathBuf::from(s)
}

pub fn build(opts: &BuildOptions, manifest: &Manifest, embedder: &Embedder) -> Result<BuildReport> {
    let started = Instant::now();
    let (files, mut skipped) = source::collect(&opts.docs, &opts.config)?;
    let mut warnings = Vec::new();

    // Pages and chunks, in path order.
    let budget = embedder.max_tokens();
    let count = |s: &str| {
        embedder
            .count_tokens(s)
            .map(|n| n.saturating_sub(2))
            .unwrap_or(s.len())
    };
    let mut pages = Vec::new();
    let mut chunks = Vec::new();
    for file in &files {
        let parsed = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let page =
                chunk::parse_markdown(&file.text, &title_from_path(&file.rel), opts.config.slugs);
            let pieces = split_sections(&page.sections, budget, 2, &count);
            (page, pieces)
        }));
        let Ok((page, pieces)) = parsed else {
            skipped.push(Skipped {
                path: file.rel.clone(),
                reason: "could not be parsed as markdown".into(),
            });
            continue;
        };
        if pieces.is_empty() {
            skipped.push(Skipped {
                path: file.rel.clone(),
                reason: "no text to index".into(),
            });
            continue;
        }
        let page_id = pages.len() as u32;
        pages.push(Page {
            url: opts.config.page_url(&file.rel),
            title: page.title.clone(),
            source: file.rel.clone(),
        });
        for piece in pieces {
            let s = &page.sections[piece.section];
            chunks.push(Chunk {
                page: page_id,
                breadcrumb: s.breadcrumb.clone(),
                anchor: s.anchor.clone(),
                text: piece.text,
            });
        }
    }
    if chunks.is_empty() {
        bail!(
            "nothing to index under {}: {} file(s) in scope, {} skipped (include globs: {:?})",
            opts.docs.display(),
            files.len(),
            skipped.len(),
            opts.config.include
        );
    }

    // Embeddings: cached ones reused, the rest computed on all cores.
    let mut cache = match &opts.cache {
        Some(path) => {
            let (c, warning) = EmbeddingCache::load(path, &manifest.sha256);
            warnings.extend(warning);
            c
        }
        None => EmbeddingCache::empty(&manifest.sha256),
    };
    let texts: Vec<String> = chunks
        .iter()
        .map(|c| embedding_text(&c.breadcrumb, &c.text))
        .collect();
    let keys: Vec<[u8; 32]> = texts.iter().map(|t| text_key(t)).collect();
    let mut vectors: Vec<Option<Vec<f32>>> = keys.iter().map(|k| cache.get(k)).collect();
    // Identical texts (repeated sections, versioned copies of a page) are embedded once.
    let mut seen = std::collections::HashSet::new();
    let todo: Vec<usize> = (0..texts.len())
        .filter(|&i| vectors[i].is_none() && seen.insert(keys[i]))
        .collect();
    let reused = texts.len() - vectors.iter().filter(|v| v.is_none()).count();

    let embed_start = Instant::now();
    let bar = if opts.progress && !todo.is_empty() {
        let bar = ProgressBar::new(todo.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "embedding {bar:30} {pos}/{len} chunks ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let computed: Vec<(usize, Vec<f32>)> = todo
        .par_iter()
        .map(|&i| {
            let v = embedder.embed(&texts[i]).with_context(|| {
                format!(
                    "embedding a chunk of {}",
                    pages[chunks[i].page as usize].source
                )
            })?;
            bar.inc(1);
            Ok((i, v))
        })
        .collect::<Result<_>>()?;
    bar.finish_and_clear();
    let embed_time = embed_start.elapsed();
    for (i, v) in computed {
        cache.insert(keys[i], v);
    }
    for (i, slot) in vectors.iter_mut().enumerate() {
        if slot.is_none() {
            *slot = cache.get(&keys[i]);
        }
    }
    let vectors: Vec<Vec<f32>> = vectors
        .into_iter()
        .map(|v| v.expect("every chunk embedded"))
        .collect();

    // Indexes. The graph is built on one thread: parallel insertion would make the bytes depend
    // on thread timing, and bundles must be reproducible.
    let analyzer = Analyzer::default();
    let bm25 = Bm25Params::default();
    let crumbs: Vec<String> = chunks.iter().map(|c| c.breadcrumb.join(" ")).collect();
    let lexical = LexicalIndex::build(
        chunks.iter().zip(&crumbs).map(|(c, h)| LexicalDoc {
            heading: h,
            body: &c.text,
        }),
        &analyzer,
        bm25,
    );
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let vector_index = pool.install(|| VectorIndex::build(&vectors, manifest.dimensions));

    let bundle = Bundle {
        header: Header {
            model: manifest.info(),
            quantization: vector_index.quantization,
            bm25,
            analyzer_version: ANALYZER_VERSION,
            abstain_cosine: opts.config.abstain_cosine,
            pages: pages.len() as u32,
            chunks: chunks.len() as u32,
            terms: lexical.num_terms() as u32,
        },
        payload: Payload {
            pages,
            chunks,
            lexical,
            vectors: vector_index,
        },
    };
    let bytes = bundle.to_bytes()?;
    crate::write_atomic(&opts.out, &bytes)?;
    if let Some(path) = &opts.cache {
        if let Err(e) = cache.save(path) {
            warnings.push(format!("could not save the embedding cache: {e:#}"));
        }
    }
    Ok(BuildReport {
        pages: bundle.header.pages as usize,
        chunks: bundle.header.chunks as usize,
        skipped,
        embedded: todo.len(),
        reused,
        warnings,
        sizes: bundle.part_sizes(),
        bytes: bytes.len(),
        embed_time,
        total_time: started.elapsed(),
    })
}
