//! The model packed small for readers' browsers, ready to run.
//!
//! The prepared ONNX stores its weights as int8 with an f32 scale per row or per column: 22 MB
//! that barely compress. Packed, every such tensor is quantized again to a few bits in groups
//! running along the axis its scale does not cover (down a column of a layer's weight, along
//! a row of an embedding table), with one f16 scale per group chosen to minimise the squared
//! error. What it costs in query quality is measured in BENCHMARKS.md ("Model size").
//!
//! The file holds the graph as tract leaves it after type analysis and decluttering, in
//! NNEF's text form, so loading skips those steps (most of the start-up in a browser); its
//! tensors are the packed weights' codes (decoded to int8, to their scales, or to the f32
//! values the decluttered graph folded them into, each checked bit for bit when packing) and
//! the few small others as they are. The word-embedding table is not in the graph: the graph
//! starts after its lookup, and the table is stored in shards of rows (`words`), which a
//! website publishes as files of their own ([`split_packed`]). The tokenizer travels in the
//! pack too, compact ([`PackedTokenizer`]): a browser fetches one file fewer, and a third
//! fewer bytes than `tokenizer.json`.
//!
//! File layout: `magic "LANTERNM" | format version u32 LE | postcard payload`.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tract_nnef::ast::parse::parse_document;
use tract_nnef::ast::{Identifier, ProtoModel};
use tract_nnef::prelude::*;

pub use lantern_engine::PackSpec;

use crate::error::{Error, Result};

mod words;
#[cfg(feature = "onnx")]
mod write;
pub use words::WordRows;
#[cfg(feature = "onnx")]
pub use write::pack;

const MAGIC: &[u8; 8] = b"LANTERNM";
/// The packed-model format this build reads and writes.
pub const PACK_VERSION: u32 = 4;
/// Largest tensor accepted from a packed file: a damaged one cannot ask for absurd allocations.
const MAX_VALUES: usize = 64 << 20;

#[derive(Serialize, Deserialize)]
struct Packed {
    spec: PackSpec,
    /// The decluttered graph in NNEF's text form (`graph.nnef`).
    graph: String,
    /// The quantized weights the graph's tensors are decoded from.
    weights: Vec<Weights>,
    /// The graph's tensors, in label order.
    tensors: Vec<GraphTensor>,
    /// The word-embedding table the graph's `word_rows` input is looked up in.
    words: words::WordTable,
    /// The tokenizer the model reads with.
    tokenizer: PackedTokenizer,
}

/// `tokenizer.json` in two parts: its configuration with an empty vocabulary, and the
/// vocabulary as one token a line in id order (the JSON map repeats every id, which
/// compresses badly). Put back together, it is the same tokenizer.
#[derive(Serialize, Deserialize)]
struct PackedTokenizer {
    config: String,
    vocab: String,
}

impl PackedTokenizer {
    /// Splits a WordPiece `tokenizer.json`; its ids must run from 0 with no gap.
    #[cfg(feature = "onnx")]
    fn new(json: &[u8]) -> Result<Self> {
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

/// A packed model read: the graph and the word rows it is fed.
#[derive(Debug)]
pub struct PackedModel {
    /// The decluttered graph; its inputs are the token ids, the attention mask, the token
    /// types and the ids' word-embedding rows.
    pub graph: TypedModel,
    /// The word-embedding rows held, and where the others are.
    pub words: WordRows,
}

#[derive(Serialize, Deserialize)]
struct Weights {
    rows: u32,
    cols: u32,
    /// The int8 scale is per column, shape (1, cols): groups run down each column. Otherwise
    /// it is per row, (rows, 1), and groups run along each row.
    per_column: bool,
    /// Codes, `bits` each, little-endian bit order, in group order.
    #[serde(with = "serde_bytes")]
    codes: Vec<u8>,
    /// f16 bits, one per group.
    scales: Vec<u16>,
}

#[derive(Serialize, Deserialize)]
struct GraphTensor {
    /// The label the graph names it by.
    label: String,
    shape: Vec<u32>,
    data: TensorData,
}

#[derive(Serialize, Deserialize)]
enum TensorData {
    /// Decoded from `Packed::weights[index]`.
    Weights { index: u32, form: Form },
    /// Kept as is: the values, little-endian.
    Literal {
        dtype: Dtype,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
}

/// What of a decoded weight a tensor is.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Form {
    /// The int8 values (an embedding table, looked up before it is scaled).
    Int8,
    /// The f32 scale of each row or column.
    Scales,
    /// int8 times scale, as f32: what decluttering folds a layer's weights into.
    Values,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
enum Dtype {
    F32,
    I64,
    I32,
    I8,
    U8,
    Bool,
}

impl Dtype {
    #[cfg(feature = "onnx")]
    fn of(dt: DatumType) -> Option<Dtype> {
        Some(match dt {
            DatumType::F32 => Dtype::F32,
            DatumType::I64 => Dtype::I64,
            DatumType::I32 => Dtype::I32,
            DatumType::I8 => Dtype::I8,
            DatumType::U8 => Dtype::U8,
            DatumType::Bool => Dtype::Bool,
            _ => return None,
        })
    }
    fn size(self) -> usize {
        match self {
            Dtype::F32 | Dtype::I32 => 4,
            Dtype::I64 => 8,
            Dtype::I8 | Dtype::U8 | Dtype::Bool => 1,
        }
    }
}

/// A weight decoded back to int8 with one f32 scale per row or column.
struct Decoded {
    q: Vec<i8>,
    scale: Vec<f32>,
    cols: usize,
    per_column: bool,
}

impl Decoded {
    /// int8 times its line's scale, computed as the graph computes it.
    fn values(&self) -> Vec<f32> {
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
/// layout (one scale per row or column).
fn decode(w: &Weights, spec: PackSpec) -> Result<Decoded> {
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

fn serialize(p: &Packed) -> Result<Vec<u8>> {
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

/// Reads a packed model into the graph the embedder optimises (decluttered, inputs fixed) and
/// the word rows it holds.
pub fn read_packed(bytes: &[u8]) -> Result<PackedModel> {
    open_packed(bytes)?.into_model()
}

impl OpenedPack {
    /// Decodes the weights and reads the graph.
    pub fn into_model(self) -> Result<PackedModel> {
        let bad = |m: String| Err(model_err(format!("packed model: {m}")));
        let OpenedPack { packed, words, .. } = self;
        let spec = packed.spec;
        let mut decoded: Vec<Option<Decoded>> = packed.weights.iter().map(|_| None).collect();
        let mut tensors = HashMap::with_capacity(packed.tensors.len());
        // Each weight gives each form to one tensor at most: what is allocated stays in
        // proportion to the file, however many tensors a damaged one names.
        let mut given = std::collections::HashSet::new();
        for t in &packed.tensors {
            let shape: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
            let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
            let Some(n) = n.filter(|&n| n <= MAX_VALUES) else {
                return bad(format!("{}: shape {:?} is out of bounds", t.label, t.shape));
            };
            let tensor = match &t.data {
                TensorData::Weights { index, form } => {
                    let i = *index as usize;
                    let Some(w) = packed.weights.get(i) else {
                        return bad(format!("{}: no weight {i}", t.label));
                    };
                    if !given.insert((i, *form)) {
                        return bad(format!("{}: weight {i} is used twice", t.label));
                    }
                    if decoded[i].is_none() {
                        decoded[i] = Some(decode(w, spec)?);
                    }
                    let d = decoded[i].as_ref().expect("decoded above");
                    let len = if *form == Form::Scales {
                        d.scale.len()
                    } else {
                        d.q.len()
                    };
                    if len != n {
                        return bad(format!(
                            "{}: shape {:?} does not match its weight",
                            t.label, t.shape
                        ));
                    }
                    match form {
                        Form::Int8 => tensor_of(&shape, d.q.clone()),
                        Form::Scales => tensor_of(&shape, d.scale.clone()),
                        Form::Values => tensor_of(&shape, d.values()),
                    }
                }
                TensorData::Literal { dtype, bytes } => {
                    if bytes.len() != n * dtype.size() {
                        return bad(format!(
                            "{}: {} bytes for shape {:?}",
                            t.label,
                            bytes.len(),
                            t.shape
                        ));
                    }
                    literal_tensor(&shape, *dtype, bytes)
                }
            }?;
            tensors.insert(Identifier(t.label.clone()), Arc::new(tensor));
        }
        drop(decoded);
        let doc = match parse_document(&packed.graph) {
            Ok(d) => d,
            Err(e) => return bad(format!("its graph does not parse ({e})")),
        };
        let proto = ProtoModel {
            doc,
            tensors,
            quantization: None,
            resources: HashMap::new(),
        };
        let graph = tract_nnef::nnef()
            .model_for_proto_model(&proto)
            .map_err(|e| model_err(format!("packed model: {e:#}")))?;
        Ok(PackedModel { graph, words })
    }
}

fn tensor_of<T: Datum>(shape: &[usize], data: Vec<T>) -> Result<Tensor> {
    tract_ndarray::ArrayD::from_shape_vec(shape, data)
        .map(Tensor::from)
        .map_err(|e| model_err(format!("packed model: {e}")))
}

fn literal_tensor(shape: &[usize], dtype: Dtype, bytes: &[u8]) -> Result<Tensor> {
    fn le<const N: usize, T>(bytes: &[u8], f: fn([u8; N]) -> T) -> Vec<T> {
        bytes
            .chunks_exact(N)
            .map(|c| f(c.try_into().expect("chunks of N")))
            .collect()
    }
    match dtype {
        Dtype::F32 => tensor_of(shape, le(bytes, f32::from_le_bytes)),
        Dtype::I64 => tensor_of(shape, le(bytes, i64::from_le_bytes)),
        Dtype::I32 => tensor_of(shape, le(bytes, i32::from_le_bytes)),
        Dtype::I8 => tensor_of(shape, bytes.iter().map(|&b| b as i8).collect()),
        Dtype::U8 => tensor_of(shape, bytes.to_vec()),
        Dtype::Bool => tensor_of(shape, bytes.iter().map(|&b| b != 0).collect()),
    }
}

#[cfg(all(test, feature = "onnx"))]
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

    /// A word table of 100 rows of 64 values, row `r` all `r - 50`, scale 0.25 a row.
    fn table() -> words::WordTable {
        let q: Vec<i8> = (0..100).flat_map(|r| [(r - 50) as i8; 64]).collect();
        let w = write::quantize(&q, &[0.25; 100], 100, 64, false, 3, 32);
        words::shard(&w, SPEC).unwrap()
    }

    /// One 4 x 64 weight (per column) and a graph that names one tensor.
    fn small(data: TensorData, shape: Vec<u32>, graph: &str) -> Packed {
        let w = write::quantize(&[3; 256], &[0.5; 64], 4, 64, true, 4, 32);
        Packed {
            spec: SPEC,
            graph: graph.into(),
            weights: vec![w],
            tensors: vec![GraphTensor {
                label: "w".into(),
                shape,
                data,
            }],
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
        let values = TensorData::Weights {
            index: 0,
            form: Form::Values,
        };
        let whole = file(&small(values, vec![4, 64], GRAPH));
        let full = read_packed(&whole).unwrap().words;
        let (head, files) = split_packed(&whole).unwrap();
        assert!(head.len() + 1000 < whole.len(), "the rows left the pack");
        assert_eq!(files.len(), 2, "100 rows in shards of 64");
        let mut words = read_packed(&head).unwrap().words;
        let ids = [1u32, 70, 99];
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
        // Row 70 holds 20 x 0.25, within 3 bits' reach of its group's scale.
        assert!((rows[64] - 5.0).abs() < 0.5, "{}", rows[64]);
        assert!(words
            .lookup(&[100])
            .unwrap_err()
            .to_string()
            .contains("outside"));
        assert!(words.add(9, &files[0].1).is_err());
    }

    const GRAPH: &str = "version 1.0;\ngraph g(x) -> (y) {\n  x = external<scalar>(shape = [4, 64]);\n  w = variable<scalar>(label = \"w\", shape = [4, 64]);\n  y = add(x, w);\n}\n";

    fn err(p: &Packed) -> String {
        read_packed(&file(p)).unwrap_err().to_string()
    }

    #[test]
    fn a_small_packed_graph_reads_and_runs() {
        let values = TensorData::Weights {
            index: 0,
            form: Form::Values,
        };
        let model = read_packed(&file(&small(values, vec![4, 64], GRAPH))).unwrap();
        let plan = model
            .graph
            .into_optimized()
            .unwrap()
            .into_runnable()
            .unwrap();
        let x = Tensor::from(tract_ndarray::Array2::<f32>::zeros((4, 64)));
        let y = plan.run(tvec!(x.into())).unwrap();
        // 3 x 0.5 packed in 4 bits with an f16 scale per group, back through int8.
        let y = y[0].to_plain_array_view::<f32>().unwrap();
        assert!(y.iter().all(|&v| (v - 1.5).abs() < 2e-3), "{y:?}");
    }

    #[test]
    fn inconsistent_packed_files_are_clear_errors() {
        let values = |index| TensorData::Weights {
            index,
            form: Form::Values,
        };
        assert!(err(&small(values(1), vec![4, 64], GRAPH)).contains("no weight 1"));
        let mut twice = small(values(0), vec![4, 64], GRAPH);
        twice.tensors.push(GraphTensor {
            label: "v".into(),
            shape: vec![4, 64],
            data: values(0),
        });
        assert!(err(&twice).contains("used twice"));
        assert!(err(&small(values(0), vec![4, 65], GRAPH)).contains("does not match its weight"));
        // An absurd shape is refused before anything is allocated for it.
        let huge = vec![1 << 31, 1 << 31, 1 << 31];
        assert!(err(&small(values(0), huge, GRAPH)).contains("out of bounds"));
        let short = TensorData::Literal {
            dtype: Dtype::F32,
            bytes: vec![0; 10],
        };
        assert!(err(&small(short, vec![4, 64], GRAPH)).contains("10 bytes"));
        assert!(err(&small(values(0), vec![4, 64], "graph {")).contains("does not parse"));
        let mut p = small(values(0), vec![4, 64], GRAPH);
        p.weights[0].codes.truncate(5);
        assert!(err(&p).contains("sizes do not match"));
        let mut p = small(values(0), vec![4, 64], GRAPH);
        p.weights[0].scales[0] = half::f16::INFINITY.to_bits();
        assert!(err(&p).contains("not finite"));
    }
}
