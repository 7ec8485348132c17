//! `lantern build`: docs folder -> chunks -> embeddings -> bundle.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rayon::prelude::*;

use lantern_embedder::{Embedder, Model};
use lantern_engine::{BundleWriter, Engine, Lang, ModelInfo, PartSizes};

use crate::abstain::{self, Threshold};
use crate::cache::{text_key, EmbeddingCache};
use crate::chunk::{embedding_text, split_sections, ChunkText};
use crate::config::Config;
use crate::extract::{chrome_keys, extract_source, repeated_sections, Chrome, ParsedPage};
use crate::progress::Progress;
use crate::query_fit::{self, FitReport};
use crate::source::{self, SkipReason, Skipped};

/// What to build, and where.
pub struct BuildOptions {
    /// The docs folder.
    pub docs: PathBuf,
    /// The bundle file to write.
    pub out: PathBuf,
    /// Scope, URLs and thresholds.
    pub config: Config,
    /// Where embeddings are cached between builds; `None` disables the cache.
    pub cache: Option<PathBuf>,
    /// Show a progress bar while embedding.
    pub progress: bool,
    /// Also write the bundle as one file at `out`, beside its split form (`out.d/`). Every
    /// reader opens the split form as well (the browser prefers it; native readers and
    /// `lantern mcp` join its shards), so a published site carries one form only.
    pub whole_file: bool,
    /// `--part K/N`: embed this job's share of the texts into the cache, write no bundle.
    pub part: Option<crate::part::Part>,
    /// `--cache-from`: other jobs' caches, whose vectors this build reuses.
    pub cache_from: Vec<PathBuf>,
}

/// What a build did, for the summary and for tests.
#[derive(Debug)]
pub struct BuildReport {
    /// The bundle written.
    pub out: PathBuf,
    /// Pages indexed.
    pub pages: usize,
    /// Chunks indexed.
    pub chunks: usize,
    /// Files left out, each with its reason.
    pub skipped: Vec<Skipped>,
    /// Distinct chunk texts run through the model in this build.
    pub embedded: usize,
    /// Chunks whose vectors came from the cache.
    pub reused: usize,
    /// Every text run through the model in this build: chunks, the query table's texts and
    /// words, the probe questions (0: everything came from caches).
    pub embedded_texts: usize,
    /// What the owner should know (damaged cache entries, folded sections, no query table).
    pub warnings: Vec<String>,
    /// Bytes by part of the bundle.
    pub sizes: PartSizes,
    /// The bundle's size in bytes.
    pub bytes: usize,
    /// What the site's chrome took out.
    pub chrome: ChromeReport,
    /// Time spent embedding.
    pub embed_time: Duration,
    /// Time of the whole build.
    pub total_time: Duration,
    /// The query table's fit, when one was written.
    pub query_table: Option<FitReport>,
    /// The languages of the pages indexed (which stemmers search needs).
    pub langs: Vec<Lang>,
    /// The "no good match" threshold written, and where it came from.
    pub abstain: Threshold,
}

/// A source file read: its page and the page's chunks.
type Extracted<'a> = (&'a source::SourceFile, ParsedPage, Vec<ChunkText>);

/// The page a built folder's `index.html` repeats, if it does: mdBook writes its first chapter
/// twice, as itself and as `index.html`. Only a sibling with the same sections counts, so
/// versioned copies of a page in other folders are kept.
fn repeated_index<'a>(
    file: &source::SourceFile,
    page: &ParsedPage,
    all: &'a [Extracted<'_>],
) -> Option<&'a str> {
    let (dir, name) = file.rel.rsplit_once('/').unwrap_or(("", &file.rel));
    if !name.eq_ignore_ascii_case("index.html") {
        return None;
    }
    all.iter()
        .find(|(other, p, _)| {
            let other_dir = other.rel.rsplit_once('/').map_or("", |(d, _)| d);
            other.rel != file.rel
                && other_dir == dir
                && p.sections == page.sections
                && p.title == page.title
        })
        .map(|(other, _, _)| other.rel.as_str())
}

/// What the site's chrome took out of its pages.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChromeReport {
    /// Block fingerprints found on enough built pages to be the site's chrome.
    pub blocks: usize,
    /// Copies left out of sections whose heading and words are on many built pages.
    pub sections: usize,
}

/// Every file read into its page and chunks: built pages without the site's chrome (learnt
/// from all of them first), then sections repeated across pages left out. A file that cannot
/// be read is named in `skipped`.
fn extract_pages<'a>(
    files: &'a [source::SourceFile],
    slugs: crate::config::SlugStyle,
    skipped: &mut Vec<Skipped>,
    split: impl Fn(&ParsedPage) -> Vec<ChunkText> + Sync,
) -> (Vec<Extracted<'a>>, ChromeReport) {
    // Each pass reads pages independently, on all cores; results keep the files' order.
    let html: Vec<Vec<u64>> = files
        .par_iter()
        .filter(|f| crate::config::is_html_path(&f.rel))
        .filter_map(|f| std::panic::catch_unwind(|| chrome_keys(&f.text)).ok()?.ok())
        .collect();
    let chrome = Chrome::learn(html.iter().map(Vec::as_slice));
    let parsed: Vec<_> = files
        .par_iter()
        .map(|file| {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                extract_source(&file.rel, &file.text, slugs, &chrome)
            }))
        })
        .collect();
    let mut pages: Vec<(&source::SourceFile, ParsedPage)> = Vec::new();
    for (file, parsed) in files.iter().zip(parsed) {
        match parsed {
            Err(_) => skipped.push(Skipped {
                path: file.rel.clone(),
                reason: SkipReason::Unparsable,
            }),
            Ok(Err(skip)) => skipped.push(Skipped {
                path: file.rel.clone(),
                reason: skip.into(),
            }),
            Ok(Ok(page)) => pages.push((file, page)),
        }
    }
    // Built pages only: markdown repeats a section on purpose (an include), a theme by habit.
    let sections = repeated_sections(
        &mut pages
            .iter_mut()
            .filter(|(f, _)| crate::config::is_html_path(&f.rel))
            .map(|(_, p)| p)
            .collect::<Vec<_>>(),
    );
    let split: Vec<_> = pages
        .par_iter()
        .map(|(_, page)| std::panic::catch_unwind(AssertUnwindSafe(|| split(page))))
        .collect();
    let mut extracted = Vec::new();
    for ((file, page), pieces) in pages.into_iter().zip(split) {
        match pieces {
            Err(_) => skipped.push(Skipped {
                path: file.rel.clone(),
                reason: SkipReason::Unparsable,
            }),
            Ok(pieces) if pieces.is_empty() => skipped.push(Skipped {
                path: file.rel.clone(),
                reason: SkipReason::NoText,
            }),
            Ok(pieces) => extracted.push((file, page, pieces)),
        }
    }
    let report = ChromeReport {
        blocks: chrome.len(),
        sections,
    };
    (extracted, report)
}

/// Fits the query table for `engine`'s bundle: short texts of the site, and each term's
/// word, embedded by the model (through the cache), then the least-squares fit.
fn fit_query_table(
    engine: &Engine,
    embedder: &Embedder,
    cache: &mut EmbeddingCache,
    progress: bool,
    rank: usize,
    embedded: &mut usize,
) -> Result<(lantern_engine::QueryTable, FitReport)> {
    let started = Instant::now();
    let texts = query_fit::training_texts(engine);
    let (vectors, texts_embedded, _) = embed_cached(
        embedder,
        cache,
        &texts,
        progress.then_some("query texts"),
        |_| "embedding a query-table text".to_string(),
    )?;
    // The model's vector of each term's word, for the most frequent terms: a row the texts
    // say little about is pulled towards it. Past the cap (a hostile page of 180,000 made-up
    // words spent most of its build here) a term has no prior, and its row is what the texts
    // make of it.
    let words = engine.term_words();
    let by_freq = term_words_to_embed(engine);
    let chosen: Vec<String> = by_freq.iter().map(|&id| words[id].clone()).collect();
    *embedded += texts_embedded;
    let (chosen_vectors, words_embedded, _) = embed_cached(
        embedder,
        cache,
        &chosen,
        progress.then_some("terms"),
        |_| "embedding a term".to_string(),
    )?;
    *embedded += words_embedded;
    let mut word_vectors = vec![vec![0f32; embedder.dim()]; words.len()];
    for (id, v) in by_freq.into_iter().zip(chosen_vectors) {
        word_vectors[id] = v;
    }
    let (table, mut report) = query_fit::fit(engine, &texts, &vectors, &word_vectors, rank)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok((table, report))
}

/// The terms whose word the query table's fit embeds: the most frequent, most first.
pub(crate) fn term_words_to_embed(engine: &Engine) -> Vec<usize> {
    let freqs = engine.term_doc_freqs();
    let mut by_freq: Vec<usize> = (0..engine.term_words().len()).collect();
    by_freq.sort_by_key(|&id| (std::cmp::Reverse(freqs.get(id).copied().unwrap_or(0)), id));
    by_freq.truncate(MAX_TERM_WORDS);
    by_freq
}

/// Declared synonyms that add nothing: a value no page uses (a typo, or a word the docs do not
/// have either), named so the owner can fix it.
fn idle_synonyms(engine: &Engine, config: &crate::Config) -> Vec<String> {
    let mut out = Vec::new();
    let mut more = 0usize;
    for (key, values) in &config.synonyms {
        for value in values {
            // A trailing space: the value's last word is whole, not a prefix being typed.
            if engine.query_terms(&format!("{value} ")).is_empty() {
                if out.len() < MAX_IDLE_SYNONYMS_NAMED {
                    out.push(format!(
                        "[synonyms] {key:?}: no page uses {value:?}, so it finds nothing"
                    ));
                } else {
                    more += 1;
                }
            }
        }
    }
    if more > 0 {
        out.push(format!("[synonyms]: {more} more values that no page uses"));
    }
    out
}

/// Idle synonym values named one by one; past this a count says how many more (a list of
/// 10,000 made 160,000 lines of warnings).
const MAX_IDLE_SYNONYMS_NAMED: usize = 20;

/// Terms whose word the model embeds for the query table's fit, most frequent first: the
/// shared corpora have 1,456 to 9,624 terms.
const MAX_TERM_WORDS: usize = 20_000;

/// The query table beside a bundle: `site.lantern` -> `site.lantern.query`.
pub fn query_table_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(lantern_engine::QUERY_TABLE_SUFFIX);
    PathBuf::from(s)
}

/// Texts in one batch through the encoder at most, and their bytes: a batch of short texts
/// reads the weights once, while a long section goes alone (its tokens already make the
/// weights' reading worth it, and batches of them ran 10% slower out of cache).
const BATCH_TEXTS: usize = 64;
const BATCH_BYTES: usize = 1_024;

/// Unit vectors for `texts`: cached ones reused, identical texts embedded once, the rest on
/// all cores (with a progress bar named `progress`). Returns the vectors, how many texts were
/// embedded and how many came from the cache.
pub(crate) fn embed_cached(
    embedder: &Embedder,
    cache: &mut EmbeddingCache,
    texts: &[String],
    progress: Option<&str>,
    what: impl Fn(usize) -> String + Sync,
) -> Result<(Vec<Vec<f32>>, usize, usize)> {
    let dim = embedder.dim();
    let keys: Vec<[u8; 32]> = texts.iter().map(|t| text_key(t)).collect();
    let mut vectors: Vec<Option<Vec<f32>>> = keys.iter().map(|k| cache.get(k, dim)).collect();
    let mut seen = std::collections::HashSet::new();
    let todo: Vec<usize> = (0..texts.len())
        .filter(|&i| vectors[i].is_none() && seen.insert(keys[i]))
        .collect();
    let reused = texts.len() - vectors.iter().filter(|v| v.is_none()).count();
    let bar = Progress::new(progress, todo.len());
    // Texts of like length together, a batch through the encoder at once (the same vectors
    // as one at a time, `Embedder::embed_many`): short texts spend their time reading the
    // weights, which a batch reads once.
    let mut by_length = todo.clone();
    by_length.sort_by_key(|&i| (texts[i].len(), i));
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut bytes = 0;
    for i in by_length {
        match batches.last_mut() {
            Some(b) if b.len() < BATCH_TEXTS && bytes + texts[i].len() <= BATCH_BYTES => {
                bytes += texts[i].len();
                b.push(i);
            }
            _ => {
                bytes = texts[i].len();
                batches.push(vec![i]);
            }
        }
    }
    let computed: Vec<(usize, Vec<f32>)> = batches
        .par_iter()
        .map(|batch| {
            let many: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
            let vectors = match embedder.embed_many(&many) {
                Ok(v) => v,
                // Which text failed: one at a time names it.
                Err(_) => batch
                    .iter()
                    .map(|&i| embedder.embed(&texts[i]).with_context(|| what(i)))
                    .collect::<Result<_>>()?,
            };
            bar.inc(batch.len() as u64);
            Ok(batch.iter().copied().zip(vectors).collect::<Vec<_>>())
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    bar.finish();
    for (i, v) in computed {
        cache.insert(keys[i], v);
    }
    for (i, slot) in vectors.iter_mut().enumerate() {
        if slot.is_none() {
            *slot = cache.get(&keys[i], dim);
        }
    }
    let vectors = vectors
        .into_iter()
        .map(|v| v.context("a text's vector went missing from the cache"))
        .collect::<Result<Vec<_>>>()?;
    Ok((vectors, todo.len(), reused))
}

/// The default cache file for a bundle: `site.lantern` -> `site.lantern.cache`.
pub fn default_cache_path(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".cache");
    PathBuf::from(s)
}

/// The site read into a bundle writer: its pages and chunks, in path order, before any
/// embedding.
pub(crate) struct Indexed<'a> {
    /// Pages and chunks, vectors to come.
    pub(crate) writer: BundleWriter,
    /// Each page's source path, by page id.
    pub(crate) page_sources: Vec<&'a str>,
    /// The pages' languages.
    pub(crate) langs: Vec<Lang>,
    /// Files left out.
    pub(crate) skipped: Vec<Skipped>,
    /// What the owner should know so far.
    pub(crate) warnings: Vec<String>,
    /// What the site's chrome took out.
    pub(crate) chrome: ChromeReport,
}

/// Reads the site's files into pages and chunks (refused when nothing is left to index).
pub(crate) fn index<'a>(
    opts: &BuildOptions,
    model: &Model,
    embedder: &Embedder,
    collected: &'a source::Collected,
) -> Result<Indexed<'a>> {
    let manifest = &model.manifest;
    let source::Collected {
        files,
        skipped,
        input,
    } = collected;
    let (files, input) = (files.as_slice(), *input);
    let mut skipped = skipped.clone();
    let mut warnings = Vec::new();
    let budget = embedder.max_tokens();
    let count = |s: &str| {
        embedder
            .count_tokens(s)
            .map(|n| n.saturating_sub(2))
            .unwrap_or(s.len())
    };
    let model_info = ModelInfo::new(
        &manifest.model_id,
        &manifest.sha256,
        manifest.dimensions as u32,
        manifest.max_tokens as u32,
    );
    // The model's threshold until the site's is measured (below).
    let abstain = opts
        .config
        .abstain_cosine
        .unwrap_or(manifest.abstain_cosine);
    let mut writer = BundleWriter::new(model_info, abstain)
        .vector_partitions(opts.config.vector_partitions, opts.config.vector_probe)
        .synonyms(opts.config.synonym_list());
    let mut page_sources: Vec<&str> = Vec::new();
    let mut langs: Vec<Lang> = Vec::new();
    let (extracted, chrome_report) =
        extract_pages(files, opts.config.slugs, &mut skipped, |page| {
            split_sections(&page.sections, budget, 2, &count)
        });
    for (file, page, pieces) in &extracted {
        if let Some(original) = repeated_index(file, page, &extracted) {
            skipped.push(Skipped {
                path: file.rel.clone(),
                reason: SkipReason::Duplicate(original.to_string()),
            });
            continue;
        }
        if !page.duplicate_ids.is_empty() {
            warnings.push(format!(
                "{}: several elements carry the id {}; links to those sections land on the first of them",
                file.rel,
                page.duplicate_ids
                    .iter()
                    .map(|i| format!("{i:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if page.cut_headings > 0 {
            warnings.push(format!(
                "{}: {} headings longer than {} characters were cut to that length",
                file.rel,
                page.cut_headings,
                crate::extract::MAX_HEADING_CHARS
            ));
        }
        if page.folded_sections > 0 {
            warnings.push(format!(
                "{}: {} headings past the first {} sections of the page were folded into its last section (searchable, without links of their own)",
                file.rel,
                page.folded_sections,
                crate::extract::MAX_SECTIONS
            ));
        }
        let lang = Lang::from_tag(page.lang.as_deref().unwrap_or(&opts.config.language));
        let page_id = writer.add_page(
            &opts.config.page_url(&file.rel),
            &page.title,
            &file.rel,
            lang,
        );
        writer.set_page_facets(page_id, page.meta.clone(), page.filters.clone());
        page_sources.push(&file.rel);
        if !langs.contains(&lang) {
            langs.push(lang);
        }
        for piece in pieces {
            let s = &page.sections[piece.section];
            writer.add_chunk(page_id, s.breadcrumb.clone(), &s.anchor, &piece.text);
        }
    }
    if writer.chunks().is_empty() {
        let named: Vec<String> = skipped
            .iter()
            .take(20)
            .map(|s| format!("\n  {}: {}", s.path, s.reason))
            .collect();
        bail!(
            "nothing to index under {}: {} file(s) in scope, {} skipped (read as {input:?}; include globs: {:?}){}{}",
            opts.docs.display(),
            files.len(),
            skipped.len(),
            if opts.config.include.is_empty() {
                input.default_include()
            } else {
                opts.config.include.clone()
            },
            named.concat(),
            if skipped.len() > 20 { "\n  ..." } else { "" }
        );
    }
    Ok(Indexed {
        writer,
        page_sources,
        langs,
        skipped,
        warnings,
        chrome: chrome_report,
    })
}

/// The embedding cache for `opts` (`--cache`), with the vectors of other jobs' caches
/// (`--cache-from`) added to it.
pub(crate) fn open_cache(
    opts: &BuildOptions,
    vectors_id: &str,
    warnings: &mut Vec<String>,
) -> Result<EmbeddingCache> {
    let mut cache = match &opts.cache {
        Some(path) => {
            let (c, warning) = EmbeddingCache::load(path, vectors_id);
            warnings.extend(warning);
            c
        }
        None => EmbeddingCache::empty(vectors_id),
    };
    for path in &opts.cache_from {
        if !path.is_file() {
            bail!("--cache-from {}: no such file", path.display());
        }
        let (other, warning) = EmbeddingCache::load(path, vectors_id);
        if let Some(w) = warning {
            warnings.push(format!("--cache-from {}: {w}", path.display()));
        }
        cache.absorb(other);
    }
    Ok(cache)
}

/// The text each chunk is embedded as.
pub(crate) fn chunk_texts(writer: &BundleWriter) -> Vec<String> {
    writer
        .chunks()
        .iter()
        .map(|c| embedding_text(&c.breadcrumb, &c.text))
        .collect()
}

/// Builds the bundle (and its query table) for `opts` with `embedder`, the model's runtime; returns what was built.
pub fn build(opts: &BuildOptions, model: &Model, embedder: &Embedder) -> Result<BuildReport> {
    let manifest = &model.manifest;
    // Cached vectors are named by the encoder that made them, not only the model's name.
    let vectors_id = model.vectors_id()?;
    let started = Instant::now();
    opts.config.validate()?;
    let collected = source::collect(&opts.docs, &opts.config)?;
    let Indexed {
        writer,
        page_sources,
        langs,
        skipped,
        mut warnings,
        chrome: chrome_report,
    } = index(opts, model, embedder, &collected)?;

    // Embeddings: cached ones reused, the rest computed on all cores.
    let mut cache = open_cache(opts, &vectors_id, &mut warnings)?;
    let texts = chunk_texts(&writer);
    let sources: Vec<&str> = writer
        .chunks()
        .iter()
        .map(|c| page_sources[c.page as usize])
        .collect();
    let embed_start = Instant::now();
    let (vectors, embedded, reused) = embed_cached(
        embedder,
        &mut cache,
        &texts,
        opts.progress.then_some("chunks"),
        |i| format!("embedding a chunk of {}", sources[i]),
    )?;
    if cache.dropped() > 0 {
        warnings.push(format!(
            "dropped {} damaged cache entries (checksum, length or non-finite values); embedding them again",
            cache.dropped()
        ));
    }
    let embed_time = embed_start.elapsed();

    // Every text the model ran on, chunks or not.
    let mut embedded_texts = embedded;
    // Indexes (deterministic: the same chunks and vectors give the same bytes).
    let bundle = writer.finish(vectors)?;
    // "No good match" measured on this site, unless its owner set the threshold.
    let engine = Engine::new(bundle);
    let abstain = match opts.config.abstain_cosine {
        Some(c) => Threshold::Configured(c),
        None => {
            let probes = abstain::probe_questions();
            let (vectors, n, _) = embed_cached(embedder, &mut cache, &probes, None, |i| {
                format!("embedding the probe question {:?}", probes[i])
            })?;
            embedded_texts += n;
            abstain::calibrate(&engine, &vectors, manifest.abstain_cosine)
        }
    };
    let mut bundle = engine.into_bundle();
    bundle.set_abstain_cosine(abstain.cosine())?;
    let bytes = bundle.to_bytes()?;
    // The query table: fitted to this bundle's terms, written beside it.
    let rank = opts.config.query_table_rank;
    let engine = Engine::new(bundle);
    warnings.extend(idle_synonyms(&engine, &opts.config));
    let fitted = (rank > 0).then(|| {
        fit_query_table(
            &engine,
            embedder,
            &mut cache,
            opts.progress,
            rank,
            &mut embedded_texts,
        )
    });
    let (bundle, query_table) = (engine.into_bundle(), fitted);
    // The split form, for readers that fetch only what a query needs (written first: a
    // whole file an earlier build left goes only once its replacement is in place).
    crate::write_split(&crate::split_dir(&opts.out), &bundle.to_split()?)?;
    if opts.whole_file {
        crate::write_atomic(&opts.out, &bytes)?;
    } else {
        crate::remove_stale(&opts.out)?;
    }
    let table_path = query_table_path(&opts.out);
    let query_table = match query_table {
        Some(Ok((table, report))) => {
            crate::write_atomic(&table_path, &table.to_bytes()?)?;
            Some(report)
        }
        Some(Err(e)) => {
            warnings.push(format!("no query table: {e:#}"));
            crate::remove_stale(&table_path)?;
            None
        }
        None => {
            crate::remove_stale(&table_path)?;
            None
        }
    };
    if let Some(path) = &opts.cache {
        if let Err(e) = cache.save(path) {
            warnings.push(format!("could not save the embedding cache: {e:#}"));
        }
    }
    Ok(BuildReport {
        // What was written: the file, or the split form's folder alone.
        out: if opts.whole_file {
            opts.out.clone()
        } else {
            crate::split_dir(&opts.out)
        },
        pages: bundle.header().pages as usize,
        chunks: bundle.header().chunks as usize,
        skipped,
        embedded,
        reused,
        embedded_texts,
        query_table,
        langs,
        warnings,
        abstain,
        sizes: bundle.part_sizes(),
        bytes: bytes.len(),
        chrome: chrome_report,
        embed_time,
        total_time: started.elapsed(),
    })
}

impl std::fmt::Display for BuildReport {
    /// The summary `lantern build` prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let per_chunk = if self.embedded > 0 {
            format!(
                ", {:.1} ms/chunk",
                self.embed_time.as_secs_f64() * 1000.0 / self.embedded as f64
            )
        } else {
            String::new()
        };
        writeln!(
            f,
            "built {}: {} pages, {} chunks ({} embedded, {} from cache{}), {} skipped, {} in {:.1}s",
            self.out.display(),
            self.pages,
            self.chunks,
            self.embedded,
            self.reused,
            per_chunk,
            self.skipped.len(),
            human_bytes(self.bytes),
            self.total_time.as_secs_f64()
        )?;
        write!(
            f,
            "  parts: text {}, postings {}, vectors {}, header {}, meta {} ({} per chunk; split into {} shards)",
            human_bytes(self.sizes.text),
            human_bytes(self.sizes.postings),
            human_bytes(self.sizes.vectors),
            human_bytes(self.sizes.header),
            human_bytes(self.sizes.meta),
            human_bytes(self.bytes / self.chunks.max(1)),
            self.sizes.shards,
        )?;
        if self.chrome.blocks + self.chrome.sections > 0 {
            write!(
                f,
                "\n  site chrome left out: {} kinds of block repeated across pages, {} copies of repeated sections",
                self.chrome.blocks, self.chrome.sections
            )?;
        }
        write!(f, "\n  no good match: {}", self.abstain)?;
        if let Some(q) = &self.query_table {
            write!(
                f,
                "\n  query table: {} terms x {} fitted on {} texts in {:.1}s (ridge {}, held-out cosine {:.3})",
                q.terms, q.rank, q.texts, q.seconds, q.ridge, q.held_out_cosine
            )?;
            if let Some((table, model)) = q.median_cosines {
                write!(
                    f,
                    "; its cosines calibrated to the model's ({table:.3} -> {model:.3} at the median)"
                )?;
            }
        }
        Ok(())
    }
}

/// Bytes as B, KiB or MiB.
pub fn human_bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.2} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
