//! The embedder: WordPiece tokenization, the encoder (the ONNX model run by tract, or the
//! packed model run by [`crate::encoder`]), mean pooling over the attention mask and L2
//! normalization, as the model's manifest prescribes.

#[cfg(feature = "onnx")]
use std::sync::Arc;

use tokenizers::{Tokenizer, TruncationParams};
#[cfg(feature = "onnx")]
use tract_onnx::prelude::*;

use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::manifest::sha256_hex;
use crate::pack::WordRows;
use lantern_engine::Manifest;

#[cfg(feature = "onnx")]
fn model_err(e: impl std::fmt::Display) -> Error {
    Error::Model(format!("{e:#}"))
}

fn tok_err(e: impl std::fmt::Display) -> Error {
    Error::Tokenizer(e.to_string())
}

/// A loaded tokenizer and encoder. Cheap to share between threads (embedding takes `&self`).
pub struct Embedder {
    /// Truncates at `max_tokens`, no padding: batch 1 needs none.
    tokenizer: Tokenizer,
    /// Same vocabulary without truncation, to count a text's full length.
    counter: Tokenizer,
    backend: Backend,
    dim: usize,
    max_tokens: usize,
}

/// What turns token ids into hidden states.
enum Backend {
    /// The ONNX model, run by tract (the indexer's documents).
    #[cfg(feature = "onnx")]
    Onnx(Arc<TypedRunnableModel>),
    /// The packed model, run by Lantern's encoder, and the word rows it is fed.
    Packed { encoder: Encoder, words: WordRows },
}

impl Embedder {
    /// Builds the embedder from the prepared ONNX file and `tokenizer.json`, after checking
    /// both against the manifest's sha256 sums and the manifest against what this embedder
    /// implements.
    #[cfg(feature = "onnx")]
    pub fn new(manifest: &Manifest, onnx: &[u8], tokenizer_json: &[u8]) -> Result<Self> {
        manifest.validate()?;
        pinned(onnx, &manifest.sha256, "the model file")?;
        pinned(
            tokenizer_json,
            &manifest.tokenizer_sha256,
            "the tokenizer file",
        )?;
        Self::build(manifest, onnx, tokenizer_json)
    }

    /// Builds the embedder from the model packed small ([`crate::pack`]), tokenizer included,
    /// checked against the manifest's `packed` entry: approximate vectors of the same model,
    /// for queries.
    pub fn from_packed(manifest: &Manifest, packed: &[u8]) -> Result<Self> {
        Self::from_packed_hashed(manifest, packed, &sha256_hex(packed))
    }

    /// [`Embedder::from_packed`] given the packed file's sha256, computed by the caller: a
    /// browser's own SHA-256 takes a few milliseconds where this code compiled to wasm takes
    /// over half a second at start-up. It is compared with the manifest's here.
    pub fn from_packed_hashed(
        manifest: &Manifest,
        packed: &[u8],
        packed_sha256: &str,
    ) -> Result<Self> {
        Self::open_packed(manifest, packed, packed_sha256)?.build()
    }

    /// The first, quick half of [`Embedder::from_packed_hashed`]: the file checked, the
    /// tokenizer read and the word table known, the weights not decoded yet. A browser fetches
    /// the word rows of the question waiting while [`PendingEmbedder::build`] runs.
    pub fn open_packed(
        manifest: &Manifest,
        packed: &[u8],
        packed_sha256: &str,
    ) -> Result<PendingEmbedder> {
        manifest.validate()?;
        let Some(entry) = &manifest.packed else {
            return Err(Error::Manifest("the manifest names no packed model".into()));
        };
        same_sum(packed_sha256, &entry.sha256, "the packed model")?;
        let pack = crate::pack::open_packed(packed)?;
        // The packed tokenizer, put back together, is the manifest's, byte for byte.
        pinned(
            &pack.tokenizer_json,
            &manifest.tokenizer_sha256,
            "the packed model's tokenizer",
        )?;
        if pack.words.cols() != manifest.dimensions {
            return Err(Error::Model(
                "the packed graph does not take the manifest's word rows".into(),
            ));
        }
        let (tokenizer, counter) = tokenizers(&pack.tokenizer_json, manifest.max_tokens)?;
        Ok(PendingEmbedder {
            manifest: manifest.clone(),
            pack,
            tokenizer,
            counter,
        })
    }

    /// Loads files already checked.
    #[cfg(feature = "onnx")]
    fn build(manifest: &Manifest, onnx: &[u8], tokenizer_json: &[u8]) -> Result<Self> {
        let model = read_graph(onnx)?.into_optimized().map_err(model_err)?;
        let out = model.output_fact(0).map_err(model_err)?.shape.clone();
        let got = out.last().and_then(|d| d.as_i64()).map(|d| d as usize);
        if got != Some(manifest.dimensions) {
            return Err(Error::Dimensions {
                got: got.unwrap_or(0),
                expected: manifest.dimensions,
            });
        }
        let plan = model.into_runnable().map_err(model_err)?;
        let (tokenizer, counter) = tokenizers(tokenizer_json, manifest.max_tokens)?;
        Self::finish(manifest, Backend::Onnx(plan), tokenizer, counter)
    }

    /// Checks the output's dimensions by a probe embedding when every word row it needs is
    /// held.
    fn finish(
        manifest: &Manifest,
        backend: Backend,
        tokenizer: Tokenizer,
        counter: Tokenizer,
    ) -> Result<Self> {
        let embedder = Embedder {
            tokenizer,
            counter,
            backend,
            dim: manifest.dimensions,
            max_tokens: manifest.max_tokens,
        };
        if embedder.rows_missing("probe")?.is_empty() {
            let probe = embedder.embed_raw("probe")?;
            if probe.len() != embedder.dim {
                return Err(Error::Dimensions {
                    got: probe.len(),
                    expected: embedder.dim,
                });
            }
        }
        Ok(embedder)
    }

    fn words(&self) -> Option<&WordRows> {
        match &self.backend {
            Backend::Packed { words, .. } => Some(words),
            #[cfg(feature = "onnx")]
            Backend::Onnx(_) => None,
        }
    }

    /// The shards of word rows that embedding `text` needs and this embedder does not hold
    /// (a browser fetches them as queries come: [`Embedder::word_rows_file`],
    /// [`Embedder::add_word_rows`]). Always empty for a model read whole.
    pub fn rows_missing(&self, text: &str) -> Result<Vec<usize>> {
        let Some(words) = self.words() else {
            return Ok(Vec::new());
        };
        Ok(words.missing(&self.token_ids(text)?))
    }

    /// Every shard of word rows not held (what a browser caches to embed any query offline).
    pub fn rows_absent(&self) -> Vec<usize> {
        self.words().map(WordRows::absent).unwrap_or_default()
    }

    /// The file name of a shard of word rows, relative to the published model's manifest.
    pub fn word_rows_file(&self, shard: usize) -> Option<String> {
        self.words()?.file_name(shard)
    }

    /// Adds a shard of word rows from its file, checked against the pack's sha256.
    pub fn add_word_rows(&mut self, shard: usize, file: &[u8]) -> Result<()> {
        match &mut self.backend {
            Backend::Packed { words, .. } => words.add(shard, file),
            #[cfg(feature = "onnx")]
            Backend::Onnx(_) => Err(Error::Model("this model holds its word rows".into())),
        }
    }

    /// Vector dimensions.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Tokens the model reads, special tokens included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Tokens the model would see for `text` without truncation, special tokens included.
    pub fn count_tokens(&self, text: &str) -> Result<usize> {
        let enc = self.counter.encode(text, true).map_err(tok_err)?;
        Ok(enc.get_ids().len())
    }

    /// The token ids the model sees for `text` (truncated at `max_tokens`).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>> {
        token_ids(&self.tokenizer, text)
    }

    /// A unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = self.embed_raw(text)?;
        l2_normalize(&mut v);
        Ok(v)
    }

    /// Mean-pooled, not yet normalized.
    fn embed_raw(&self, text: &str) -> Result<Vec<f32>> {
        let enc = self.tokenizer.encode(text, true).map_err(tok_err)?;
        // With batch 1 and no padding every token counts in the mean.
        if enc.get_attention_mask().contains(&0) {
            return Err(Error::Model("the tokenizer padded a single text".into()));
        }
        let hidden = match &self.backend {
            #[cfg(feature = "onnx")]
            Backend::Onnx(plan) => run_onnx(plan, &enc)?,
            Backend::Packed { encoder, words } => {
                encoder.run(&words.lookup(enc.get_ids())?, enc.get_type_ids())?
            }
        };
        if hidden.len() != enc.get_ids().len() * self.dim {
            return Err(Error::Model(format!(
                "the encoder gave {} values for {} tokens",
                hidden.len(),
                enc.get_ids().len()
            )));
        }
        Ok(mean_pool(&hidden, self.dim))
    }
}

/// The ONNX graph's hidden states for one encoded text (tokens x dimensions).
#[cfg(feature = "onnx")]
fn run_onnx(plan: &Arc<TypedRunnableModel>, enc: &tokenizers::Encoding) -> Result<Vec<f32>> {
    let n = enc.get_ids().len();
    let as_tensor = |xs: &[u32]| -> Result<TValue> {
        let v: Vec<i64> = xs.iter().map(|&x| x as i64).collect();
        Ok(tract_ndarray::Array2::from_shape_vec((1, n), v)
            .map_err(model_err)?
            .into_tensor()
            .into())
    };
    let inputs = tvec!(
        as_tensor(enc.get_ids())?,
        as_tensor(enc.get_attention_mask())?,
        as_tensor(enc.get_type_ids())?
    );
    let out = plan.run(inputs).map_err(model_err)?;
    let hidden = out[0].to_plain_array_view::<f32>().map_err(model_err)?;
    let shape = hidden.shape();
    if shape.len() != 3 || shape[1] != n {
        return Err(Error::Model(format!("unexpected output shape {shape:?}")));
    }
    Ok(hidden.iter().copied().collect())
}

/// The mean of the rows of `hidden` (tokens x `dim`, row-major).
pub(crate) fn mean_pool(hidden: &[f32], dim: usize) -> Vec<f32> {
    let mut pooled = vec![0f32; dim];
    let mut count = 0f32;
    for row in hidden.chunks_exact(dim) {
        count += 1.0;
        pooled.iter_mut().zip(row).for_each(|(p, &x)| *p += x);
    }
    if count > 0.0 {
        pooled.iter_mut().for_each(|p| *p /= count);
    }
    pooled
}

/// A packed model opened by [`Embedder::open_packed`], to be built. It knows which word rows a
/// text needs and which files hold them.
pub struct PendingEmbedder {
    manifest: Manifest,
    pack: crate::pack::OpenedPack,
    tokenizer: Tokenizer,
    counter: Tokenizer,
}

impl PendingEmbedder {
    /// As [`Embedder::rows_missing`].
    pub fn rows_missing(&self, text: &str) -> Result<Vec<usize>> {
        Ok(self.pack.words.missing(&token_ids(&self.tokenizer, text)?))
    }

    /// As [`Embedder::word_rows_file`].
    pub fn word_rows_file(&self, shard: usize) -> Option<String> {
        self.pack.words.file_name(shard)
    }

    /// Decodes the weights into the encoder: the slow part of start-up.
    pub fn build(self) -> Result<Embedder> {
        let PendingEmbedder {
            manifest,
            pack,
            tokenizer,
            counter,
        } = self;
        let packed = pack.into_model()?;
        if packed.encoder.hidden != manifest.dimensions {
            return Err(Error::Dimensions {
                got: packed.encoder.hidden,
                expected: manifest.dimensions,
            });
        }
        if packed.encoder.max_positions() < manifest.max_tokens {
            return Err(Error::Model(format!(
                "the packed model reads {} tokens, the manifest says {}",
                packed.encoder.max_positions(),
                manifest.max_tokens
            )));
        }
        let backend = Backend::Packed {
            encoder: packed.encoder,
            words: packed.words,
        };
        Embedder::finish(&manifest, backend, tokenizer, counter)
    }
}

/// The tokenizer, truncating at `max_tokens` without padding (batch 1 needs none), and the same
/// vocabulary without truncation, to count a text's full length.
pub(crate) fn tokenizers(json: &[u8], max_tokens: usize) -> Result<(Tokenizer, Tokenizer)> {
    let mut counter = Tokenizer::from_bytes(json).map_err(tok_err)?;
    counter.with_padding(None);
    counter.with_truncation(None).map_err(tok_err)?;
    let mut tokenizer = counter.clone();
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..Default::default()
        }))
        .map_err(tok_err)?;
    Ok((tokenizer, counter))
}

fn token_ids(tokenizer: &Tokenizer, text: &str) -> Result<Vec<u32>> {
    let enc = tokenizer.encode(text, true).map_err(tok_err)?;
    Ok(enc.get_ids().to_vec())
}

/// Checks `bytes` against the sha256 the manifest pins for `what`.
fn pinned(bytes: &[u8], sha256: &str, what: &str) -> Result<()> {
    same_sum(&sha256_hex(bytes), sha256, what)
}

fn same_sum(got: &str, sha256: &str, what: &str) -> Result<()> {
    if !got.eq_ignore_ascii_case(sha256) {
        return Err(Error::Mismatch(format!(
            "{what} does not match the manifest's sha256 {sha256}"
        )));
    }
    Ok(())
}

#[cfg(feature = "onnx")]
pub(crate) fn onnx_loader() -> tract_onnx::Onnx {
    // The file's value_info names a symbolic batch; Lantern always runs batch 1.
    tract_onnx::onnx().with_ignore_value_info(true)
}

/// The prepared model file as tract reads it, its inputs fixed to one sequence of any length:
/// the graph the embedder optimises (public for the start-up measurement, `startup_phases`).
#[cfg(feature = "onnx")]
pub fn read_graph(onnx: &[u8]) -> Result<InferenceModel> {
    let mut model = onnx_loader()
        .model_for_read(&mut std::io::Cursor::new(onnx))
        .map_err(model_err)?;
    fix_inputs(&mut model)?;
    Ok(model)
}

/// Batch 1, any length, for the three inputs.
#[cfg(feature = "onnx")]
pub(crate) fn fix_inputs(model: &mut InferenceModel) -> Result<()> {
    // The graph names its own length symbol; reuse it so shapes unify.
    let seq = model.sym("sequence");
    for input in 0..3 {
        model
            .set_input_fact(
                input,
                InferenceFact::dt_shape(i64::datum_type(), tvec!(1.to_dim(), seq.to_dim())),
            )
            .map_err(model_err)?;
    }
    Ok(())
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
