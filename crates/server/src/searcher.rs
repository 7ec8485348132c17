//! The one open-and-search type under every native command: a bundle read from disk, checked,
//! and searched with the model that made it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use lantern_embedder::{Embedder, Model};

use crate::files::{read_bounded, Links, MAX_BUNDLE_FILE_BYTES};
use lantern_engine::{Bundle, Engine, Filter, Mode, QueryTable, Results};

/// The file to read and, for a split bundle, the folder of its shards.
fn split_paths(path: &Path) -> (PathBuf, Option<PathBuf>) {
    // `site.lantern` names a bundle in either form: a published site has only `site.lantern.d`.
    let folder = lantern_engine::split_dir(path);
    if !path.exists() && folder.is_dir() {
        return (folder.join(lantern_engine::SPLIT_META), Some(folder));
    }
    if path.is_dir() {
        return (
            path.join(lantern_engine::SPLIT_META),
            Some(path.to_path_buf()),
        );
    }
    let is_meta = path
        .file_name()
        .is_some_and(|n| n == lantern_engine::SPLIT_META);
    match path.parent() {
        Some(dir) if is_meta => (path.to_path_buf(), Some(dir.to_path_buf())),
        _ => (path.to_path_buf(), None),
    }
}

/// An opened bundle and, when vectors are wanted, the embedder of its model.
pub struct Searcher {
    engine: Engine,
    embedder: Option<Embedder>,
    path: PathBuf,
    bytes: usize,
    encoder: QueryEncoder,
    /// Why the query table beside the bundle could not be used.
    table_error: Option<String>,
    /// Query vectors made elsewhere, by text: they replace the encoder (studies of other
    /// query-side encoders, `lantern eval --query-vectors`).
    given: Option<std::collections::HashMap<String, Option<Vec<f32>>>>,
}

/// What embeds a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum QueryEncoder {
    /// The model (the same that embedded the chunks, as readers' browsers run it).
    #[default]
    Model,
    /// The bundle's query table (`BUNDLE.query`), no transformer.
    Table,
}

impl Searcher {
    /// Opens the bundle at `path` with `model` (checked against the bundle), or keyword-only
    /// when `model` is `None`.
    ///
    /// `path` may also be a split bundle: its folder (`site.lantern.d`), its meta file, or the
    /// whole file's name when only the split form is there; every shard the meta lists is then
    /// read from that folder.
    pub fn open(path: &Path, model: Option<&Model>) -> Result<Searcher> {
        let (file, split_dir) = split_paths(path);
        let bytes = read_bounded(&file, MAX_BUNDLE_FILE_BYTES, Links::Follow)?;
        let mut searcher = Searcher::from_bytes(&bytes, &path.display().to_string(), model)?;
        if let Some(dir) = &split_dir {
            for name in searcher.engine.bundle().shard_files() {
                let shard = dir.join(&name);
                // In the folder itself, and no longer than its group declares.
                let max = searcher.engine.bundle().shard_max_len(&name).unwrap_or(0);
                let bytes = read_bounded(&shard, max, Links::Refuse)
                    .with_context(|| format!("the shard {name}"))?;
                searcher.bytes += bytes.len();
                searcher.engine.add_shard(&name, &bytes)?;
            }
        }
        if !searcher.engine.bundle().is_complete() {
            bail!(
                "{} is the meta file of a split bundle: open its folder ({}.d) or the bundle file",
                path.display(),
                path.display()
            );
        }
        // The query table sits beside the bundle file: `site.lantern.query`.
        let path = match &split_dir {
            Some(dir) => {
                let d = dir.as_os_str().to_string_lossy();
                PathBuf::from(
                    d.strip_suffix(lantern_engine::SPLIT_DIR_SUFFIX)
                        .unwrap_or(&d)
                        .to_string(),
                )
            }
            None => path.to_path_buf(),
        };
        let path = path.as_path();
        let mut table = path.as_os_str().to_owned();
        table.push(lantern_engine::QUERY_TABLE_SUFFIX);
        let table = PathBuf::from(table);
        if table.exists() {
            // Optional: a bad table only matters to whoever asks for it.
            let attached = read_bounded(&table, MAX_BUNDLE_FILE_BYTES, Links::Follow)
                .and_then(|b| Ok(QueryTable::from_bytes(&b)?))
                .and_then(|t| Ok(searcher.engine.set_query_table(t)?));
            if let Err(e) = attached {
                searcher.table_error = Some(format!("{}: {e:#}", table.display()));
            }
        }
        Ok(searcher)
    }

    /// Embeds queries with `encoder` from now on; the table must have been found beside the
    /// bundle, and sound.
    pub fn set_encoder(&mut self, encoder: QueryEncoder) -> Result<()> {
        if encoder == QueryEncoder::Table && !self.engine.has_query_table() {
            match &self.table_error {
                Some(e) => bail!("{e}"),
                None => bail!("{} has no query table beside it", self.path.display()),
            }
        }
        self.encoder = encoder;
        Ok(())
    }

    /// Takes query vectors from `path` from now on: a JSON object from query text to a vector
    /// of the bundle's dimensions made by another encoder, or to `null` where it gives none
    /// (keyword search alone).
    pub fn use_query_vectors(&mut self, path: &Path) -> Result<()> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let given: std::collections::HashMap<String, Option<Vec<f32>>> =
            serde_json::from_str(&text).with_context(|| {
                format!("{}: not a JSON object of query vectors", path.display())
            })?;
        let dim = self.engine.bundle().header().model.dim as usize;
        let wrong = given
            .iter()
            .find_map(|(q, v)| v.as_ref().filter(|v| v.len() != dim).map(|v| (q, v)));
        if let Some((q, v)) = wrong {
            bail!(
                "{}: the vector of {q:?} has {} values, the bundle's have {dim}",
                path.display(),
                v.len()
            );
        }
        self.given = Some(given);
        Ok(())
    }

    /// What embeds queries.
    pub fn encoder(&self) -> QueryEncoder {
        self.encoder
    }

    /// Opens a bundle already in memory (fetched from a site, say); `source` names it in
    /// messages and reports.
    pub fn from_bytes(bytes: &[u8], source: &str, model: Option<&Model>) -> Result<Searcher> {
        let bundle = Bundle::from_bytes(bytes).with_context(|| format!("loading {source}"))?;
        let mut engine = Engine::new(bundle);
        let embedder = match model {
            None => None,
            Some(model) => {
                engine.accept_model(&model.manifest)?;
                Some(model.embedder()?)
            }
        };
        Ok(Searcher {
            engine,
            embedder,
            path: PathBuf::from(source),
            bytes: bytes.len(),
            encoder: QueryEncoder::Model,
            table_error: None,
            given: None,
        })
    }

    /// The shards of the bundle's split form a search reads, in the order it asks for them:
    /// `(file name, bytes)`, the meta file first. Runs the search on a bundle that starts with
    /// only its meta part, as a browser does, and feeds it the shards each round names.
    pub fn shards_read(
        &self,
        text: &str,
        mode: Mode,
        k: usize,
        filter: &Filter,
    ) -> Result<Vec<(String, usize)>> {
        let split = self.engine.bundle().to_split()?;
        let shards: std::collections::HashMap<&str, &[u8]> = split
            .shards
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let (fusion, pages) = self.engine.fusion();
        let mut partial = Engine::new(Bundle::from_bytes(&split.meta)?).with_fusion(fusion, pages);
        let vector = match mode {
            Mode::Keyword => None,
            _ => self.embed(text)?,
        };
        let mut read = vec![(lantern_engine::SPLIT_META.to_string(), split.meta.len())];
        // Each round names what the next step lacks; a query needs at most a few.
        for _ in 0..8 {
            let r = partial.search_filtered(text, vector.as_deref(), mode, k, filter)?;
            if r.missing.is_empty() {
                return Ok(read);
            }
            for name in r.missing {
                let bytes = shards
                    .get(name.as_str())
                    .with_context(|| format!("the search asked for an unknown shard {name}"))?;
                partial.add_shard(&name, bytes)?;
                read.push((name, bytes.len()));
            }
        }
        bail!("the search still lacked shards after 8 rounds")
    }

    /// The engine (and through it the bundle).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, for callers that keep only the bundle.
    pub fn into_engine(self) -> Engine {
        self.engine
    }

    /// Where the bundle was read from, and its size in bytes.
    pub fn source(&self) -> (&Path, usize) {
        (&self.path, self.bytes)
    }

    /// The query vector for `text`; `None` when opened keyword-only.
    pub fn embed(&self, text: &str) -> Result<Option<Vec<f32>>> {
        if let Some(given) = &self.given {
            return match given.get(text) {
                Some(v) => Ok(v.clone()),
                None => bail!("no query vector was given for {text:?}"),
            };
        }
        match (&self.embedder, self.encoder) {
            (_, QueryEncoder::Table) => Ok(self.engine.table_vector(text)),
            (Some(e), QueryEncoder::Model) => Ok(Some(e.embed(text)?)),
            (None, QueryEncoder::Model) => Ok(None),
        }
    }

    /// Searches in `mode`; modes that need vectors need the model.
    pub fn search(&self, text: &str, mode: Mode, k: usize) -> Result<Results> {
        self.search_filtered(text, mode, k, &Filter::default())
    }

    /// [`Searcher::search`] over the pages `filter` accepts; an unknown filter key is an error.
    pub fn search_filtered(
        &self,
        text: &str,
        mode: Mode,
        k: usize,
        filter: &Filter,
    ) -> Result<Results> {
        if self.encoder == QueryEncoder::Table && mode != Mode::Keyword {
            return Ok(self.engine.search_table(text, mode, k, filter)?);
        }
        let vector = match mode {
            Mode::Keyword => None,
            _ if self.embedder.is_none() => bail!("{mode} search needs the model"),
            _ => self.embed(text)?,
        };
        Ok(self
            .engine
            .search_filtered(text, vector.as_deref(), mode, k, filter)?)
    }
}
