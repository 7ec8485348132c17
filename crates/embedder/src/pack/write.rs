//! Packing (at the site's build, from the prepared ONNX model): the weights quantized in
//! groups, the graph prepared by tract and its tensors matched bit for bit to those weights.

use std::collections::HashMap;

use prost::Message;
use tract_onnx::pb;
use tract_onnx::prelude::*;

use tract_nnef::tract_core::internal::{bail, ensure};
use tract_nnef::tract_core::ops::array::{Gather, Slice};
use tract_nnef::tract_core::ops::konst::Const;

use super::{
    decode, model_err, serialize, words, Decoded, Dtype, Form, GraphTensor, PackSpec, Packed,
    PackedTokenizer, TensorData, Weights,
};
use crate::error::Result;

/// ONNX data types used here.
const FLOAT: i32 = 1;
const INT8: i32 = 3;
/// Scale factors tried per group, as fractions of the group's largest magnitude.
const CLIP: [f32; 7] = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7];

/// The groups of a tensor in order: each a list of flat (row-major) indices' start and stride.
fn groups(rows: usize, cols: usize, per_column: bool, group: usize) -> Vec<(usize, usize, usize)> {
    let (lines, len, line_stride, step) = if per_column {
        (cols, rows, 1, cols)
    } else {
        (rows, cols, cols, 1)
    };
    let mut out = Vec::with_capacity(lines * len.div_ceil(group));
    for line in 0..lines {
        let mut at = 0;
        while at < len {
            let n = group.min(len - at);
            out.push((line * line_stride + at * step, step, n));
            at += n;
        }
    }
    out
}

/// The graph's initializers by name.
fn initializers(graph: &pb::GraphProto) -> HashMap<String, usize> {
    graph
        .initializer
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect()
}

fn f32_data(t: &pb::TensorProto) -> Vec<f32> {
    if t.raw_data.is_empty() {
        t.float_data.clone()
    } else {
        t.raw_data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }
}

fn i8_data(t: &pb::TensorProto) -> Vec<i8> {
    if t.raw_data.is_empty() {
        t.int32_data.iter().map(|&x| x as i8).collect()
    } else {
        t.raw_data.iter().map(|&b| b as i8).collect()
    }
}

fn clear(t: &mut pb::TensorProto) {
    t.raw_data.clear();
    t.float_data.clear();
    t.int32_data.clear();
}

struct Bits {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl Bits {
    fn push(&mut self, code: u32, bits: u32) {
        self.acc |= code << self.n;
        self.n += bits;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// Quantizes one int8 tensor (its values times its scales) into groups of `nbits` codes.
pub(super) fn quantize(
    q: &[i8],
    scale: &[f32],
    rows: usize,
    cols: usize,
    per_column: bool,
    nbits: u8,
    group: usize,
) -> Weights {
    let qmax = (1i32 << (nbits - 1)) - 1;
    let value = |i: usize| {
        let line = if per_column { i % cols } else { i / cols };
        q[i] as f32 * scale[line]
    };
    let mut bits = Bits {
        out: Vec::new(),
        acc: 0,
        n: 0,
    };
    let mut scales = Vec::new();
    for (start, step, n) in groups(rows, cols, per_column, group) {
        let xs: Vec<f32> = (0..n).map(|k| value(start + k * step)).collect();
        let amax = xs.iter().fold(0f32, |m, x| m.max(x.abs()));
        let mut best = (f32::INFINITY, half::f16::ZERO);
        for f in CLIP {
            let s16 = half::f16::from_f32(amax * f / qmax as f32);
            let s = s16.to_f32();
            let err: f32 = xs
                .iter()
                .map(|&x| {
                    let c = if s > 0.0 {
                        (x / s).round().clamp(-(qmax + 1) as f32, qmax as f32)
                    } else {
                        0.0
                    };
                    (c * s - x).powi(2)
                })
                .sum();
            if err < best.0 {
                best = (err, s16);
            }
        }
        let s = best.1.to_f32();
        for &x in &xs {
            let c = if s > 0.0 {
                (x / s).round().clamp(-(qmax + 1) as f32, qmax as f32) as i32
            } else {
                0
            };
            bits.push((c + qmax + 1) as u32, nbits as u32);
        }
        scales.push(best.1.to_bits());
    }
    Weights {
        rows: rows as u32,
        cols: cols as u32,
        per_column,
        codes: bits.finish(),
        scales,
    }
}

/// A tensor's values in memory.
fn slice<T: Datum>(t: &Tensor) -> TractResult<&[T]> {
    t.try_as_plain_ram()?.as_slice::<T>()
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Which decoded weight, in which form, a tensor of the decluttered graph is, bit for bit.
fn find(t: &Tensor, decoded: &[Decoded], values: &mut [Option<Vec<f32>>]) -> Option<(u32, Form)> {
    let n = t.len();
    for (i, d) in decoded.iter().enumerate() {
        let hit = match t.datum_type() {
            DatumType::I8 => {
                (d.q.len() == n && slice::<i8>(t).ok()? == d.q.as_slice()).then_some(Form::Int8)
            }
            DatumType::F32 => {
                let x = slice::<f32>(t).ok()?;
                if same_bits(x, &d.scale) {
                    Some(Form::Scales)
                } else if d.q.len() == n
                    && same_bits(x, values[i].get_or_insert_with(|| d.values()))
                {
                    Some(Form::Values)
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(form) = hit {
            return Some((i as u32, form));
        }
    }
    None
}

fn literal(label: &str, t: &Tensor) -> Result<TensorData> {
    let dtype = Dtype::of(t.datum_type()).ok_or_else(|| {
        model_err(format!(
            "tensor {label} of type {:?} cannot be packed",
            t.datum_type()
        ))
    })?;
    let bytes = match dtype {
        Dtype::F32 => slice::<f32>(t).map(|x| x.iter().flat_map(|v| v.to_le_bytes()).collect()),
        Dtype::I64 => slice::<i64>(t).map(|x| x.iter().flat_map(|v| v.to_le_bytes()).collect()),
        Dtype::I32 => slice::<i32>(t).map(|x| x.iter().flat_map(|v| v.to_le_bytes()).collect()),
        Dtype::I8 => slice::<i8>(t).map(|x| x.iter().map(|&v| v as u8).collect()),
        Dtype::U8 => slice::<u8>(t).map(|x| x.to_vec()),
        Dtype::Bool => slice::<bool>(t).map(|x| x.iter().map(|&v| v as u8).collect()),
    }
    .map_err(|e| model_err(format!("tensor {label}: {e}")))?;
    Ok(TensorData::Literal { dtype, bytes })
}

/// Packs a prepared ONNX model: every int8 tensor `X_q` with a per-row or per-column f32 scale
/// `X_scale` beside it is quantized; the graph, with those weights decoded, is analysed and
/// decluttered by tract and stored in that form. Tables looked up by position keep only the
/// rows of the first `max_tokens` positions (the most the embedder feeds the model). The
/// tokenizer (`tokenizer.json`, as prepared) is packed with it.
pub fn pack(
    onnx: &[u8],
    tokenizer_json: &[u8],
    spec: PackSpec,
    max_tokens: usize,
) -> Result<Vec<u8>> {
    if !spec.is_supported() {
        return Err(model_err(format!("cannot pack with {spec:?}")));
    }
    let tokenizer = PackedTokenizer::new(tokenizer_json)?;
    let mut model = pb::ModelProto::decode(onnx)
        .map_err(|e| model_err(format!("decoding the ONNX model: {e}")))?;
    let graph = model
        .graph
        .as_mut()
        .ok_or_else(|| model_err("the ONNX model has no graph"))?;
    let index = initializers(graph);
    let mut weights = Vec::new();
    for qi in 0..graph.initializer.len() {
        let t = &graph.initializer[qi];
        let Some(base) = t.name.strip_suffix("_q") else {
            continue;
        };
        let Some(&si) = index.get(&format!("{base}_scale")) else {
            continue;
        };
        let s = &graph.initializer[si];
        if t.data_type != INT8 || s.data_type != FLOAT || t.dims.len() != 2 || s.dims.len() != 2 {
            continue;
        }
        let (rows, cols) = (t.dims[0] as usize, t.dims[1] as usize);
        let per_column = match (s.dims[0], s.dims[1]) {
            (1, c) if c as usize == cols => true,
            (r, 1) if r as usize == rows => false,
            _ => continue,
        };
        let nbits = if per_column {
            spec.bits
        } else {
            spec.table_bits
        };
        let (q, scale) = (i8_data(t), f32_data(s));
        if q.len() != rows * cols || scale.len() != if per_column { cols } else { rows } {
            return Err(model_err(format!(
                "{}: data does not match its shape",
                t.name
            )));
        }
        let w = quantize(
            &q,
            &scale,
            rows,
            cols,
            per_column,
            nbits,
            spec.group as usize,
        );
        weights.push((qi, si, w));
    }
    if weights.is_empty() {
        return Err(model_err("no int8 weights with a scale found to pack"));
    }
    // The word-embedding table: the tallest table looked up by row.
    let words_at = weights
        .iter()
        .enumerate()
        .filter(|(_, (_, _, w))| !w.per_column)
        .max_by_key(|(_, (_, _, w))| w.rows)
        .map(|(i, _)| i)
        .ok_or_else(|| model_err("no word-embedding table found to pack"))?;
    // The graph with the weights as readers will decode them, prepared by tract.
    let mut decoded = Vec::with_capacity(weights.len());
    for (qi, si, w) in &weights {
        let d = decode(w, spec)?;
        let (q, s) = (
            &mut graph.initializer[*qi],
            d.q.iter().map(|&v| v as u8).collect(),
        );
        clear(q);
        q.raw_data = s;
        let s = &mut graph.initializer[*si];
        clear(s);
        s.raw_data = d.scale.iter().flat_map(|v| v.to_le_bytes()).collect();
        decoded.push(d);
    }
    let mut net = crate::embed::onnx_loader()
        .model_for_proto_model(&model)
        .map_err(|e| model_err(format!("{e:#}")))?;
    crate::embed::fix_inputs(&mut net)?;
    let mut typed = net
        .into_typed()
        .and_then(|m| m.into_decluttered())
        .map_err(|e| model_err(format!("{e:#}")))?;
    cut_word_lookup(&mut typed, &decoded[words_at])
        .map_err(|e| model_err(format!("cutting the word lookup out of the graph: {e:#}")))?;
    trim_positions(&mut typed, &mut weights, &mut decoded, spec, max_tokens)
        .map_err(|e| model_err(format!("trimming the position tables: {e:#}")))?;
    let words = words::shard(&weights.remove(words_at).2, spec)?;
    decoded.remove(words_at);
    let nnef = tract_nnef::nnef();
    let proto = tract_nnef::ser::to_proto_model(&nnef, &typed)
        .map_err(|e| model_err(format!("the prepared graph as NNEF: {e:#}")))?;
    if proto.quantization.as_ref().is_some_and(|q| !q.is_empty()) || !proto.resources.is_empty() {
        return Err(model_err(
            "the prepared graph has parts packing does not keep",
        ));
    }
    let mut text = Vec::new();
    tract_nnef::ast::dump::Dumper::new(&nnef, &mut text)
        .document(&proto.doc)
        .map_err(|e| model_err(format!("{e:#}")))?;
    let graph = String::from_utf8(text).map_err(|e| model_err(e.to_string()))?;
    let mut labels: Vec<_> = proto.tensors.keys().collect();
    labels.sort();
    let mut values = vec![None; decoded.len()];
    let mut tensors = Vec::with_capacity(labels.len());
    for label in labels {
        let t = &proto.tensors[label];
        let data = match find(t, &decoded, &mut values) {
            Some((index, form)) => TensorData::Weights { index, form },
            None => literal(&label.0, t)?,
        };
        tensors.push(GraphTensor {
            label: label.0.clone(),
            shape: t.shape().iter().map(|&d| d as u32).collect(),
            data,
        });
    }
    let packed = Packed {
        spec,
        graph,
        weights: weights.into_iter().map(|(_, _, w)| w).collect(),
        tensors,
        words,
        tokenizer,
    };
    serialize(&packed)
}

/// Position tables keep the rows the model can read. The graph slices a constant of position
/// ids (0, 1, ..., N-1) from 0 to the sequence length and gathers table rows by them; the
/// tokenizer stops at `max_tokens`, so ids and table rows from there on are never read (for
/// MiniLM, 256 of 512). Each is cut to `max_tokens` rows, with its packed weight: exact, as a
/// weight's rows are quantized independently. A graph of another shape is left as it is.
fn trim_positions(
    model: &mut TypedModel,
    weights: &mut [(usize, usize, Weights)],
    decoded: &mut [Decoded],
    spec: PackSpec,
    max_tokens: usize,
) -> TractResult<()> {
    let ids: Vec<usize> = model
        .nodes()
        .iter()
        .filter(|n| {
            n.op_as::<Const>().is_some_and(|c| {
                let v = c.val();
                v.datum_type() == DatumType::I64
                    && v.rank() == 2
                    && v.shape()[0] == 1
                    && v.shape()[1] > max_tokens
                    && slice::<i64>(v)
                        .is_ok_and(|x| x.iter().enumerate().all(|(i, &p)| p == i as i64))
            })
        })
        .map(|n| n.id)
        .collect();
    for id in ids {
        let n = model.node(id).outputs[0].fact.shape[1].to_i64()? as usize;
        // Every reader of the ids slices them from 0 along the positions; every reader of a
        // slice gathers rows of a constant table with N rows.
        let mut tables = Vec::new();
        let mut ok = true;
        for s in model.outlet_successors(OutletId::new(id, 0)).to_vec() {
            let node = model.node(s.node);
            ok &= node
                .op_as::<Slice>()
                .is_some_and(|op| op.axis == 1 && op.start == TDim::Val(0));
            for g in model.outlet_successors(OutletId::new(s.node, 0)) {
                let gather = model.node(g.node);
                let table = gather.inputs.first().map(|o| model.node(o.node));
                let rows = table
                    .and_then(|t| t.op_as::<Const>())
                    .map(|c| c.val().shape().first().copied());
                ok &= g.slot == 1
                    && gather.op_as::<Gather>().is_some_and(|op| op.axis == 0)
                    && rows == Some(Some(n));
                if let Some(t) = table {
                    tables.push(t.id);
                }
            }
        }
        if !ok || tables.is_empty() {
            continue;
        }
        tables.sort_unstable();
        tables.dedup();
        let mut cut = |node: usize| -> TractResult<Arc<Tensor>> {
            let v = model
                .node(node)
                .op_as::<Const>()
                .expect("a constant")
                .val()
                .clone();
            let axis = if v.rank() == 2 && v.shape()[0] == 1 {
                1
            } else {
                0
            };
            let t = Arc::new(v.slice(axis, 0, max_tokens)?);
            model.node_mut(node).op = Box::new(Const::new(t.clone())?);
            model.node_mut(node).outputs[0].fact = TypedFact::try_from(t.clone())?;
            Ok(v)
        };
        cut(id)?;
        for table in tables {
            let before = cut(table)?;
            // Its packed weight, cut the same way (rows are lines of their own).
            let Some(i) = decoded.iter().position(|d| {
                !d.per_column
                    && match before.datum_type() {
                        DatumType::I8 => slice::<i8>(&before).is_ok_and(|x| x == d.q.as_slice()),
                        DatumType::F32 => {
                            slice::<f32>(&before).is_ok_and(|x| same_bits(x, &d.scale))
                        }
                        _ => false,
                    }
            }) else {
                continue;
            };
            let w = &mut weights[i].2;
            if w.rows as usize != n {
                continue;
            }
            let bits = spec.table_bits as usize;
            let cols = w.cols as usize;
            if !(cols * bits).is_multiple_of(8) {
                // Rows do not end on bytes: the cut table is kept as it is, unpacked.
                continue;
            }
            let per_line = cols.div_ceil(spec.group as usize);
            w.codes.truncate(max_tokens * cols * bits / 8);
            w.scales.truncate(max_tokens * per_line);
            w.rows = max_tokens as u32;
            let d = &mut decoded[i];
            d.q.truncate(max_tokens * cols);
            d.scale.truncate(max_tokens);
        }
    }
    Ok(())
}

/// Cuts the word-embedding lookup (`Gather` of the int8 table, `Cast`, `Mul` by the gathered
/// row scales) out of the decluttered graph: what it computed becomes the graph's fourth
/// input, `word_rows`, which the embedder fills from the table's shards.
fn cut_word_lookup(model: &mut TypedModel, table: &Decoded) -> TractResult<()> {
    let rows = table.q.len() / table.cols;
    let is_table = |n: &TypedNode| {
        n.op_as::<Const>().is_some_and(|c| {
            c.val().datum_type() == DatumType::I8 && c.val().shape() == [rows, table.cols]
        })
    };
    let Some(konst) = model.nodes().iter().find(|n| is_table(n)).map(|n| n.id) else {
        bail!("the table is not a constant of the graph");
    };
    let next = |model: &TypedModel, node: usize, op: &str| -> TractResult<usize> {
        let succ = model.outlet_successors(OutletId::new(node, 0));
        match succ {
            [one] if model.node(one.node).op.name() == op => Ok(one.node),
            _ => bail!("{} is not followed by one {op}", model.node(node).name),
        }
    };
    let gather = next(model, konst, "Gather")?;
    let cast = next(model, gather, "Cast")?;
    let mul = next(model, cast, "Mul")?;
    let out = OutletId::new(mul, 0);
    let fact = model.outlet_fact(out)?.clone();
    ensure!(
        fact.datum_type == DatumType::F32 && fact.rank() == 3,
        "the looked-up rows are {fact:?}"
    );
    let src = model.add_source("word_rows", fact)?;
    for inlet in model.outlet_successors(out).to_vec() {
        model.add_edge(src, inlet)?;
    }
    model.compact()
}
