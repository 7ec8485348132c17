//! The model packed small for readers' browsers, ready to run.
//!
//! The prepared ONNX stores its weights as int8 with an f32 scale per row or per column: 22 MB
//! that barely compress. Packed, every such tensor is quantized again to a few bits in groups
//! running along the axis its scale does not cover (down a column of a layer's weight, along
//! a row of an embedding table), with one f16 scale per group chosen to minimise the squared
//! error. What it costs in query quality is measured in BENCHMARKS.md ("Model size").
//!
//! The file holds the encoder's parameters by role (`EncoderSpec`: which weight is layer 3's
//! query, its bias, its norms), which Lantern's own code runs ([`crate::encoder`]), and the
//! few small tensors as they are. The word-embedding table is apart: the embedder looks its
//! rows up, and the table is stored in shards of rows (`words`), which a website publishes as
//! files of their own ([`split_packed`]). The tokenizer travels in the pack too, compact
//! ([`PackedTokenizer`]): a browser fetches one file fewer, and a third fewer bytes than
//! `tokenizer.json`.
//!
//! File layout: `magic "LANTERNM" | format version u32 LE | postcard payload`.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

pub use lantern_engine::PackSpec;

use crate::encoder::{Encoder, Layer, Linear, Norm};
use crate::error::{Error, Result};

mod quantize;
mod words;
pub use quantize::quantize;
pub use words::{shard as shard_words, WordRows, WordTable};

const MAGIC: &[u8; 8] = b"LANTERNM";
/// The packed-model format this build reads and writes.
pub const PACK_VERSION: u32 = 5;
/// Largest tensor accepted from a packed file: a damaged one cannot ask for absurd allocations.
const MAX_VALUES: usize = 64 << 20;

/// A packed model as its file stores it.
#[derive(Serialize, Deserialize)]
pub struct Packed {
    /// Bits and group size.
    pub spec: PackSpec,
    /// The quantized weights of the encoder's layers and position table.
    pub weights: Vec<Weights>,
    /// What each weight is, and the small tensors.
    pub encoder: EncoderSpec,
    /// The word-embedding table, looked up by the embedder.
    pub words: words::WordTable,
    /// The tokenizer the model reads with.
    pub tokenizer: PackedTokenizer,
}

/// `tokenizer.json` in two parts: its configuration with an empty vocabulary, and the
/// vocabulary as one token a line in id order (the JSON map repeats every id, which
/// compresses badly). Put back together, it is the same tokenizer.
#[derive(Serialize, Deserialize)]
pub struct PackedTokenizer {
    /// `tokenizer.json` with an empty vocabulary.
    pub config: String,
    /// The vocabulary, one token a line in id order.
    pub vocab: String,
}

impl PackedTokenizer {
    /// Splits a WordPiece `tokenizer.json`; its ids must run from 0 with no gap.
    pub fn new(json: &[u8]) -> Result<Self> {
        let bad = |m: &str| model_err(format!("the tokenizer cannot be packed: {m}"));
        let mut v: serde_json::Value =
            serde_json::from_slice(json).map_err(|_| bad("it is not JSON"))?;
        let vocab = v
            .pointer_mut("/model/vocab")
            .and_then(|x| x.as_object_mut())
            .ok_or_else(|| bad("it has no vocabulary map"))?;
        let mut by_id: Vec<Option<&str>> = vec![None; vocab.len()];
        for (token, id) in vocab.iter() {
            let slot = id.as_u64().and_then(|i| by_id.get_mut(i as usize));
            match slot {
                Some(s @ None) if !token.contains('\n') => *s = Some(token),
                _ => {
                    return Err(bad(
                        "its ids are not 0 to n-1, once each, or a token has a newline",
                    ))
                }
            }
        }
        let lines: Vec<&str> = by_id.into_iter().map(|t| t.unwrap_or_default()).collect();
        let vocab = lines.join("\n");
        *v.pointer_mut("/model/vocab").expect("checked above") = serde_json::json!({});
        Ok(PackedTokenizer {
            config: v.to_string(),
            vocab,
        })
    }

    /// `tokenizer.json` again, for the tokenizers crate to read.
    fn json(&self) -> Result<Vec<u8>> {
        let bad = || model_err("packed model: its tokenizer is damaged");
        let mut v: serde_json::Value = serde_json::from_str(&self.config).map_err(|_| bad())?;
        let vocab: serde_json::Map<String, serde_json::Value> = self
            .vocab
            .split('\n')
            .enumerate()
            .map(|(i, t)| (t.to_string(), i.into()))
            .collect();
        *v.pointer_mut("/model/vocab").ok_or_else(bad)? = vocab.into();
        serde_json::to_vec(&v).map_err(|_| bad())
    }
}

/// A file to publish: its name and bytes.
pub type NamedFile = (String, Vec<u8>);

/// A packed model read: its encoder and the word rows it is fed.
pub struct PackedModel {
    pub(crate) encoder: Encoder,
    /// The word-embedding rows held, and where the others are.
    pub words: WordRows,
}

impl PackedModel {
    /// The encoder's hidden states (tokens x width, row-major) for a sequence of token ids:
    /// what the packer compares with the ONNX model's.
    pub fn hidden_states(&self, ids: &[u32], type_ids: &[u32]) -> Result<Vec<f32>> {
        self.encoder.run(&self.words.lookup(ids)?, type_ids)
    }

    /// The hidden states' width.
    pub fn width(&self) -> usize {
        self.encoder.hidden
    }
}

/// A BERT encoder's parameters, by role.
#[derive(Serialize, Deserialize)]
pub struct EncoderSpec {
    /// Attention heads.
    pub heads: u32,
    /// The layer norms' epsilon.
    pub eps: f32,
    /// The position table: a weight with one scale per row.
    pub positions: u32,
    /// One row per token type.
    pub token_types: Vec<f32>,
    /// The norm applied to the embeddings.
    pub norm: NormSpec,
    /// The layers, in order.
    pub layers: Vec<LayerSpec>,
}

/// A layer norm's gain and bias.
#[derive(Serialize, Deserialize, Clone)]
pub struct NormSpec {
    /// Gain.
    pub gamma: Vec<f32>,
    /// Bias.
    pub beta: Vec<f32>,
}

/// A product: its weight and bias.
#[derive(Serialize, Deserialize)]
pub struct LinearSpec {
    /// A weight with one scale per column: inputs are its rows, outputs its columns.
    pub weight: u32,
    /// One per output.
    pub bias: Vec<f32>,
}

/// One encoder layer's parts.
#[derive(Serialize, Deserialize)]
pub struct LayerSpec {
    /// Attention's query product.
    pub query: LinearSpec,
    /// Attention's key product.
    pub key: LinearSpec,
    /// Attention's value product.
    pub value: LinearSpec,
    /// Attention's output product.
    pub output: LinearSpec,
    /// The norm after attention.
    pub norm1: NormSpec,
    /// The feed-forward block's first product.
    pub up: LinearSpec,
    /// The feed-forward block's second product.
    pub down: LinearSpec,
    /// The norm after the feed-forward block.
    pub norm2: NormSpec,
}

/// A weight quantized in groups.
#[derive(Serialize, Deserialize)]
pub struct Weights {
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// The int8 scale is per column, shape (1, cols): groups run down each column. Otherwise
    /// it is per row, (rows, 1), and groups run along each row.
    pub per_column: bool,
    /// Codes, `bits` each, little-endian bit order, in group order.
    #[serde(with = "serde_bytes")]
    pub codes: Vec<u8>,
    /// f16 bits, one per group.
    pub scales: Vec<u16>,
}

/// A weight decoded back to int8 with one f32 scale per row or column.
pub struct Decoded {
    /// The int8 values, row-major.
    pub q: Vec<i8>,
    /// One per row, or per column.
    pub scale: Vec<f32>,
    /// Columns.
    pub cols: usize,
    /// Whether `scale` is per column.
    pub per_column: bool,
}

impl Decoded {
    /// int8 times its line's scale, computed as the graph computes it.
    pub fn values(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.q.len());
        for (r, row) in self.q.chunks(self.cols).enumerate() {
            if self.per_column {
                out.extend(row.iter().zip(&self.scale).map(|(&q, &s)| q as f32 * s));
            } else {
                let s = self.scale[r];
                out.extend(row.iter().map(|&q| q as f32 * s));
            }
        }
        out
    }
}

fn model_err(m: impl Into<String>) -> Error {
    Error::Model(m.into())
}

/// Decodes a weight's groups and quantizes them back to int8 with the tensor's own scale
/// layout (one scale per row or column), as readers decode it.
pub fn decode(w: &Weights, spec: PackSpec) -> Result<Decoded> {
    let bad = |m: &str| Err(model_err(format!("packed model: a weight's {m}")));
    let nbits = if w.per_column {
        spec.bits
    } else {
        spec.table_bits
    } as usize;
    let offset = 1i32 << (nbits - 1);
    let mask = (1u32 << nbits) - 1;
    let (rows, cols) = (w.rows as usize, w.cols as usize);
    let Some(n) = rows.checked_mul(cols).filter(|&n| n > 0 && n <= MAX_VALUES) else {
        return bad("shape is out of bounds");
    };
    let (lines, len) = if w.per_column {
        (cols, rows)
    } else {
        (rows, cols)
    };
    let group = spec.group as usize;
    let per_line = len.div_ceil(group);
    if w.codes.len() != (n * nbits).div_ceil(8) || w.scales.len() != lines * per_line {
        return bad("sizes do not match its shape");
    }
    // Line by line (a column or a row: the groups of a line are consecutive). A group's codes
    // take at most 2^bits values, so each is worked out once per group (its value, then its
    // int8 code once the line's scale is known) and the values are looked up: the loop over
    // every value is a table lookup, several times faster in a browser's first-tier wasm.
    let levels = 1usize << nbits;
    let mut q = vec![0i8; n];
    let mut scale = vec![0f32; lines];
    let mut line_codes = vec![0u8; len];
    let mut value_of = vec![0f32; per_line * levels];
    let mut int8_of = vec![0i8; per_line * levels];
    // Codes are read through a 64-bit window refilled a byte at a time.
    let (mut window, mut held, mut next) = (0u64, 0usize, 0usize);
    for (l, group_scales) in w.scales.chunks(per_line).enumerate() {
        for c in line_codes.iter_mut() {
            if held < nbits {
                window |= (w.codes[next] as u64) << held;
                next += 1;
                held += 8;
            }
            *c = (window as u32 & mask) as u8;
            window >>= nbits;
            held -= nbits;
        }
        let mut amax = 0f32;
        for (g, &h) in group_scales.iter().enumerate() {
            let s = half::f16::from_bits(h).to_f32();
            if !s.is_finite() {
                return bad("scale is not finite");
            }
            let table = &mut value_of[g * levels..(g + 1) * levels];
            for (c, v) in table.iter_mut().enumerate() {
                *v = (c as i32 - offset) as f32 * s;
            }
            // The largest magnitude among the codes present (a comparison, not f32::max,
            // which wasm calls as a function).
            let codes = &line_codes[g * group..len.min((g + 1) * group)];
            for &c in codes {
                let a = table[c as usize].abs();
                if a > amax {
                    amax = a;
                }
            }
        }
        let sc = if amax > 0.0 { amax / 127.0 } else { 1.0 };
        scale[l] = sc;
        // Rounding by a truncating cast: one instruction natively and in wasm, where
        // round() is a library call.
        let inv = 1.0 / sc;
        for (d, &v) in int8_of.iter_mut().zip(&value_of) {
            let x = (v * inv).clamp(-127.0, 127.0);
            *d = (x + 0.5f32.copysign(x)) as i8;
        }
        let (first, step) = if w.per_column {
            (l, cols)
        } else {
            (l * cols, 1)
        };
        for (g, codes) in line_codes.chunks(group).enumerate() {
            let table = &int8_of[g * levels..(g + 1) * levels];
            let at = first + g * group * step;
            for (j, &c) in codes.iter().enumerate() {
                q[at + j * step] = table[c as usize];
            }
        }
    }
    Ok(Decoded {
        q,
        scale,
        cols,
        per_column: w.per_column,
    })
}

fn parse(bytes: &[u8]) -> Result<Packed> {
    let bad = |m: String| Err(model_err(format!("packed model: {m}")));
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return bad("not a Lantern packed model".into());
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != PACK_VERSION {
        return bad(format!("format {version}, this build reads {PACK_VERSION}"));
    }
    match postcard::from_bytes(&bytes[12..]) {
        Ok(p) => Ok(p),
        Err(e) => bad(format!("damaged or truncated ({e})")),
    }
}

/// A packed model's file.
pub fn serialize(p: &Packed) -> Result<Vec<u8>> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&PACK_VERSION.to_le_bytes());
    out.extend(postcard::to_allocvec(p).map_err(|e| model_err(e.to_string()))?);
    Ok(out)
}

/// Splits a whole packed model for a website: the pack without its word rows, and the files
/// of the rows' shards (name, bytes), which the pack names and checks by their sha256.
pub fn split_packed(bytes: &[u8]) -> Result<(Vec<u8>, Vec<NamedFile>)> {
    let mut packed = parse(bytes)?;
    let files = WordRows::strip(&mut packed.words);
    Ok((serialize(&packed)?, files))
}

/// A packed model parsed and its word table checked, its weights not decoded yet: what a
/// question's word rows are, and which files hold them, is known before the slow part of
/// start-up ([`OpenedPack::into_model`]), so a browser fetches them meanwhile.
pub struct OpenedPack {
    packed: Packed,
    /// The word-embedding rows held, and where the others are.
    pub words: WordRows,
    /// The tokenizer, as `tokenizer.json`.
    pub tokenizer_json: Vec<u8>,
}

/// Parses a packed model and checks its word table (see [`OpenedPack`]).
pub fn open_packed(bytes: &[u8]) -> Result<OpenedPack> {
    let mut packed = parse(bytes)?;
    if !packed.spec.is_supported() {
        return Err(model_err(format!(
            "packed model: unsupported {:?}",
            packed.spec
        )));
    }
    let table = std::mem::replace(
        &mut packed.words,
        words::WordTable {
            rows: 0,
            cols: 0,
            rows_per_shard: 0,
            shards: Vec::new(),
        },
    );
    let words = WordRows::new(table, packed.spec)?;
    let tokenizer_json = packed.tokenizer.json()?;
    Ok(OpenedPack {
        packed,
        words,
        tokenizer_json,
    })
}

/// Reads a packed model: its encoder, ready to run, and the word rows it holds.
pub fn read_packed(bytes: &[u8]) -> Result<PackedModel> {
    open_packed(bytes)?.into_model()
}

impl OpenedPack {
    /// Decodes the weights into the encoder.
    pub fn into_model(self) -> Result<PackedModel> {
        let OpenedPack { packed, words, .. } = self;
        let (spec, e) = (packed.spec, &packed.encoder);
        // Each weight serves one role at most: what is decoded stays in proportion to the
        // file, however many roles a damaged one names.
        let mut used = HashSet::new();
        let mut weight = |i: u32, per_column: bool| -> Result<Decoded> {
            let w = packed
                .weights
                .get(i as usize)
                .ok_or_else(|| model_err(format!("packed model: no weight {i}")))?;
            if !used.insert(i) {
                return Err(model_err(format!("packed model: weight {i} is used twice")));
            }
            if w.per_column != per_column {
                return Err(model_err(format!(
                    "packed model: weight {i} is not scaled as its role needs"
                )));
            }
            decode(w, spec)
        };
        let mut linear = |l: &LinearSpec| -> Result<Linear> {
            let d = weight(l.weight, true)?;
            let rows = d.q.len() / d.cols;
            Linear::new(&d.q, d.scale, l.bias.clone(), rows)
        };
        let norm = |n: &NormSpec| Norm {
            gamma: n.gamma.clone(),
            beta: n.beta.clone(),
        };
        let mut layers = Vec::with_capacity(e.layers.len());
        for l in &e.layers {
            layers.push(Layer {
                query: linear(&l.query)?,
                key: linear(&l.key)?,
                value: linear(&l.value)?,
                output: linear(&l.output)?,
                norm1: norm(&l.norm1),
                up: linear(&l.up)?,
                down: linear(&l.down)?,
                norm2: norm(&l.norm2),
            });
        }
        let positions = weight(e.positions, false)?.values();
        let encoder = Encoder {
            hidden: e.norm.gamma.len(),
            heads: e.heads as usize,
            eps: e.eps,
            positions,
            token_types: e.token_types.clone(),
            norm: norm(&e.norm),
            layers,
        };
        encoder.check()?;
        if words.cols() != encoder.hidden {
            return Err(model_err(
                "packed model: its word rows are not as wide as its encoder",
            ));
        }
        Ok(PackedModel { encoder, words })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: PackSpec = PackSpec {
        bits: 4,
        table_bits: 3,
        group: 32,
    };

    fn file(p: &Packed) -> Vec<u8> {
        serialize(p).unwrap()
    }

    /// A word table of 400 rows of 64 values, row `r` all `r % 100 - 50`, scale 0.25 a row.
    fn table() -> words::WordTable {
        let q: Vec<i8> = (0..400).flat_map(|r| [(r % 100 - 50) as i8; 64]).collect();
        let w = quantize(&q, &[0.25; 400], 400, 64, false, 3, 32);
        words::shard(&w, SPEC).unwrap()
    }

    /// A weight of `rows` x `cols`, scaled per column, values small and varied.
    fn weight(rows: usize, cols: usize, seed: usize) -> Weights {
        let q: Vec<i8> = (0..rows * cols)
            .map(|i| (((i + seed) * 37 % 255) as i32 - 127) as i8)
            .collect();
        quantize(&q, &vec![0.002; cols], rows, cols, true, 4, 32)
    }

    fn norm(h: usize) -> NormSpec {
        NormSpec {
            gamma: vec![1.0; h],
            beta: vec![0.0; h],
        }
    }

    /// A one-layer encoder 64 wide (two heads), eight positions, over the word table above.
    fn tiny() -> Packed {
        let h = 64;
        let linear = |weight, bias: f32| LinearSpec {
            weight,
            bias: vec![bias; if weight == 4 { 2 * h } else { h }],
        };
        let mut weights: Vec<Weights> = (0..4).map(|i| weight(h, h, i)).collect();
        weights.push(weight(h, 2 * h, 4));
        weights.push(weight(2 * h, h, 5));
        let positions: Vec<i8> = (0..8 * h).map(|i| (i % 7) as i8).collect();
        weights.push(quantize(&positions, &[0.1; 8], 8, h, false, 3, 32));
        Packed {
            spec: SPEC,
            weights,
            encoder: EncoderSpec {
                heads: 2,
                eps: 1e-12,
                positions: 6,
                token_types: vec![0.01; 2 * h],
                norm: norm(h),
                layers: vec![LayerSpec {
                    query: linear(0, 0.1),
                    key: linear(1, -0.1),
                    value: linear(2, 0.0),
                    output: linear(3, 0.2),
                    norm1: norm(h),
                    up: linear(4, 0.0),
                    down: linear(5, 0.0),
                    norm2: norm(h),
                }],
            },
            words: table(),
            tokenizer: PackedTokenizer::new(TOKENIZER).unwrap(),
        }
    }

    const TOKENIZER: &[u8] =
        br#"{"truncation":null,"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"b":2,"[UNK]":0,"a":1}}}"#;

    #[test]
    fn the_tokenizer_packs_compact_and_comes_back_the_same() {
        let t = PackedTokenizer::new(TOKENIZER).unwrap();
        assert_eq!(t.vocab, "[UNK]\na\nb");
        let back: serde_json::Value = serde_json::from_slice(&t.json().unwrap()).unwrap();
        let original: serde_json::Value = serde_json::from_slice(TOKENIZER).unwrap();
        assert_eq!(back, original);
        for bad in [
            &br#"{"model":{"vocab":{"a":0,"b":2}}}"#[..],
            br#"{"model":{"vocab":{"a":0,"b":0}}}"#,
            br#"{"model":{"vocab":{"a\nb":0}}}"#,
            br#"{"model":{}}"#,
            b"not json",
        ] {
            assert!(
                PackedTokenizer::new(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn word_rows_come_from_their_shards_checked_and_decoded_as_the_whole_table() {
        let whole = file(&tiny());
        let full = read_packed(&whole).unwrap().words;
        let (head, files) = split_packed(&whole).unwrap();
        assert!(head.len() + 1000 < whole.len(), "the rows left the pack");
        assert_eq!(files.len(), 2, "400 rows in shards of 256");
        let mut words = read_packed(&head).unwrap().words;
        let ids = [1u32, 270, 399];
        assert!(words
            .lookup(&ids)
            .unwrap_err()
            .to_string()
            .contains("not loaded"));
        assert_eq!(words.missing(&ids), vec![0, 1]);
        assert_eq!(full.missing(&ids), Vec::<usize>::new());
        for s in words.missing(&ids) {
            let name = words.file_name(s).unwrap();
            let (_, bytes) = files.iter().find(|(n, _)| *n == name).unwrap();
            // A shard's file is checked by its sha256: the other shard's is refused.
            let other = &files.iter().find(|(n, _)| *n != name).unwrap().1;
            assert!(words
                .add(s, other)
                .unwrap_err()
                .to_string()
                .contains("sha256"));
            words.add(s, bytes).unwrap();
        }
        let rows = words.lookup(&ids).unwrap();
        assert_eq!(rows, full.lookup(&ids).unwrap());
        // Row 270 holds 20 x 0.25, within 3 bits' reach of its group's scale.
        assert!((rows[64] - 5.0).abs() < 0.5, "{}", rows[64]);
        assert!(words
            .lookup(&[400])
            .unwrap_err()
            .to_string()
            .contains("outside"));
        assert!(words.add(9, &files[0].1).is_err());
    }

    fn err(p: &Packed) -> String {
        match read_packed(&file(p)) {
            Ok(_) => panic!("read"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_small_packed_encoder_reads_and_runs() {
        let model = read_packed(&file(&tiny())).unwrap();
        assert_eq!(model.encoder.max_positions(), 8);
        let rows = model.words.lookup(&[1, 70, 99]).unwrap();
        let out = model.encoder.run(&rows, &[0, 0, 0]).unwrap();
        assert_eq!(out.len(), 3 * 64);
        assert!(out.iter().all(|v| v.is_finite()));
        // The last step is a layer norm with unit gain and no bias: each row has mean 0.
        for row in out.chunks(64) {
            assert!(row.iter().sum::<f32>().abs() < 1e-3, "{row:?}");
        }
        // Different words, different states; more tokens than positions, a clear error.
        assert_ne!(out[..64], out[64..128]);
        let nine = model.words.lookup(&[1; 9]).unwrap();
        assert!(model
            .encoder
            .run(&nine, &[0; 9])
            .unwrap_err()
            .to_string()
            .contains("reads 8"));
        assert!(model.encoder.run(&rows, &[0, 5, 0]).is_err());
    }

    #[test]
    fn inconsistent_packed_files_are_clear_errors() {
        let mut p = tiny();
        p.encoder.layers[0].key.weight = 9;
        assert!(err(&p).contains("no weight 9"));
        let mut p = tiny();
        p.encoder.layers[0].key.weight = 0;
        assert!(err(&p).contains("used twice"));
        let mut p = tiny();
        p.encoder.positions = 5;
        assert!(err(&p).contains("used twice") || err(&p).contains("scaled"));
        let mut p = tiny();
        p.encoder.layers[0].up.bias.pop();
        assert!(err(&p).contains("cannot run"));
        let mut p = tiny();
        p.encoder.layers[0].norm2.beta.pop();
        assert!(err(&p).contains("do not chain"));
        let mut p = tiny();
        p.encoder.norm.beta.push(1.0);
        assert!(err(&p).contains("norm"));
        let mut p = tiny();
        p.encoder.heads = 5;
        assert!(err(&p).contains("heads"));
        let mut p = tiny();
        p.encoder.layers[0].down.weight = 4;
        p.encoder.layers[0].up.weight = 5;
        assert!(err(&p).contains("cannot run") || err(&p).contains("chain"));
        // An absurd shape is refused before anything is allocated for it.
        let mut p = tiny();
        p.weights[0].rows = 1 << 31;
        p.weights[0].cols = 1 << 31;
        assert!(err(&p).contains("out of bounds"));
        let mut p = tiny();
        p.weights[0].codes.truncate(5);
        assert!(err(&p).contains("sizes do not match"));
        let mut p = tiny();
        p.weights[0].scales[0] = half::f16::INFINITY.to_bits();
        assert!(err(&p).contains("not finite"));
        // Truncated anywhere: an error, never a panic.
        let whole = file(&tiny());
        for cut in [12, 100, whole.len() / 2, whole.len() - 1] {
            assert!(read_packed(&whole[..cut]).is_err(), "cut at {cut}");
        }
    }
}
