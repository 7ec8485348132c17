//! The embedder: WordPiece tokenization, the packed model run by [`crate::encoder`], mean
//! pooling over the attention mask and L2 normalization, as the model's manifest prescribes.

use tokenizers::{Tokenizer, TruncationParams};

use crate::digest::sha256_hex;
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::pack::WordRows;
use lantern_engine::Manifest;

fn tok_err(e: impl std::fmt::Display) -> Error {
    Error::Tokenizer(e.to_string())
}

/// A loaded tokenizer and encoder. Cheap to share between threads (embedding takes `&self`).
pub struct Embedder {
    /// Truncates at `max_tokens`, no padding: batch 1 needs none.
    tokenizer: Tokenizer,
    /// Same vocabulary without truncation, to count a text's full length.
    counter: Tokenizer,
    /// The packed model, run by Lantern's encoder.
    encoder: Encoder,
    /// The word rows it is fed: those held, and where the others are.
    words: WordRows,
    dim: usize,
    max_tokens: usize,
}

impl Embedder {
    /// Builds the embedder from the packed model ([`crate::pack`]), tokenizer included, checked
    /// against the manifest's `packed` entry.
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

    /// Checks the output's dimensions by a probe embedding when every word row it needs is
    /// held.
    fn finish(
        manifest: &Manifest,
        encoder: Encoder,
        words: WordRows,
        tokenizer: Tokenizer,
        counter: Tokenizer,
    ) -> Result<Self> {
        let embedder = Embedder {
            tokenizer,
            counter,
            encoder,
            words,
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

    /// The shards of word rows that embedding `text` needs and this embedder does not hold
    /// (a browser fetches them as queries come: [`Embedder::word_rows_file`],
    /// [`Embedder::add_word_rows`]). Always empty for a model read whole.
    pub fn rows_missing(&self, text: &str) -> Result<Vec<usize>> {
        Ok(self.words.missing(&self.token_ids(text)?))
    }

    /// Every shard of word rows not held (what a browser caches to embed any query offline).
    pub fn rows_absent(&self) -> Vec<usize> {
        self.words.absent()
    }

    /// The file name of a shard of word rows, relative to the published model's manifest.
    pub fn word_rows_file(&self, shard: usize) -> Option<String> {
        self.words.file_name(shard)
    }

    /// Adds a shard of word rows from its file, checked against the pack's sha256.
    pub fn add_word_rows(&mut self, shard: usize, file: &[u8]) -> Result<()> {
        self.words.add(shard, file)
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
        // Without offsets: the same ids, and counting is most of a cached rebuild's extraction.
        let enc = self.counter.encode_fast(text, true).map_err(tok_err)?;
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

    /// Unit-length embeddings of `texts`, run through the encoder together: the same vectors,
    /// bit for bit, as [`Embedder::embed`] of each, in a fraction of the time for short texts
    /// (the layers' weights are read once for all of them).
    pub fn embed_many(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut vectors = self.embed_raw_many(texts)?;
        vectors.iter_mut().for_each(|v| l2_normalize(v));
        Ok(vectors)
    }

    /// Mean-pooled, not yet normalized.
    fn embed_raw(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed_raw_many(&[text])?.remove(0))
    }

    fn embed_raw_many(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut encodings = Vec::with_capacity(texts.len());
        for text in texts {
            let enc = self.tokenizer.encode(*text, true).map_err(tok_err)?;
            // Each text alone, unpadded: every token counts in its mean.
            if enc.get_attention_mask().contains(&0) {
                return Err(Error::Model("the tokenizer padded a single text".into()));
            }
            let rows = self.words.lookup(enc.get_ids())?;
            encodings.push((rows, enc));
        }
        let seqs: Vec<(&[f32], &[u32])> = encodings
            .iter()
            .map(|(rows, enc)| (rows.as_slice(), enc.get_type_ids()))
            .collect();
        let hidden = self.encoder.run_many(&seqs)?;
        hidden
            .iter()
            .zip(&encodings)
            .map(|(states, (_, enc))| {
                if states.len() != enc.get_ids().len() * self.dim {
                    return Err(Error::Model(format!(
                        "the encoder gave {} values for {} tokens",
                        states.len(),
                        enc.get_ids().len()
                    )));
                }
                Ok(mean_pool(states, self.dim))
            })
            .collect()
    }
}

/// The mean of the rows of `hidden` (tokens x `dim`, row-major).
pub fn mean_pool(hidden: &[f32], dim: usize) -> Vec<f32> {
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
        Embedder::finish(&manifest, packed.encoder, packed.words, tokenizer, counter)
    }
}

/// The tokenizer, truncating at `max_tokens` without padding (batch 1 needs none), and the same
/// vocabulary without truncation, to count a text's full length.
pub fn tokenizers(json: &[u8], max_tokens: usize) -> Result<(Tokenizer, Tokenizer)> {
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
    let enc = tokenizer.encode_fast(text, true).map_err(tok_err)?;
    Ok(enc.get_ids().to_vec())
}

/// Checks `bytes` against the sha256 the manifest pins for `what`.
pub fn pinned(bytes: &[u8], sha256: &str, what: &str) -> Result<()> {
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

/// The engine's normalisation: vectors are made one way wherever they are made.
pub use lantern_engine::l2_normalize;
