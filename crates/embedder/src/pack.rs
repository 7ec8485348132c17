//! The model packed small for readers' browsers.
//!
//! The prepared ONNX stores its weights as int8 with an f32 scale per row or per column: 22 MB
//! that barely compress. Packed, every such tensor is quantized again to a few bits in groups
//! running along the axis its scale does not cover (down a column of a layer's weight, along
//! a row of an embedding table), with one f16 scale per group chosen to minimise the squared
//! error; the rest of the ONNX (graph, biases, norms) is kept as is, without those tensors'
//! bytes. Unpacking decodes each group and quantizes it back to int8 with the tensor's own
//! scale layout, so the embedder runs the prepared graph unchanged. What it costs in query
//! quality is measured in BENCHMARKS.md ("Model size").
//!
//! File layout: `magic "LANTERNM" | format version u32 LE | postcard payload`.

use std::collections::HashMap;

use prost::Message;
use serde::{Deserialize, Serialize};
use tract_onnx::pb;

use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"LANTERNM";
/// The packed-model format this build reads and writes.
pub const PACK_VERSION: u32 = 1;
/// ONNX data types used here.
const FLOAT: i32 = 1;
const INT8: i32 = 3;
/// Largest tensor accepted from a packed file: a damaged one cannot ask for absurd allocations.
const MAX_VALUES: usize = 64 << 20;
/// Scale factors tried per group, as fractions of the group's largest magnitude.
const CLIP: [f32; 7] = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7];

/// How a model is packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackSpec {
    /// Bits per value of the layers' weights (per-column scales), 2 to 8.
    pub bits: u8,
    /// Bits per value of the embedding tables (per-row scales), 2 to 8: they tolerate fewer.
    pub table_bits: u8,
    /// Values per group (one scale each).
    pub group: u32,
}

impl PackSpec {
    fn valid(&self) -> bool {
        (2..=8).contains(&self.bits) && (2..=8).contains(&self.table_bits) && self.group > 0
    }
}

#[derive(Serialize, Deserialize)]
struct Packed {
    spec: PackSpec,
    /// The ONNX model with the packed tensors' data left out.
    skeleton: Vec<u8>,
    tensors: Vec<PackedTensor>,
}

#[derive(Serialize, Deserialize)]
struct PackedTensor {
    /// The int8 initializer and its f32 scale initializer.
    q: String,
    scale: String,
    rows: u32,
    cols: u32,
    /// The int8 scale is per column, shape (1, cols): groups run down each column. Otherwise
    /// it is per row, (rows, 1), and groups run along each row.
    per_column: bool,
    /// Codes, `bits` each, little-endian bit order, in group order.
    codes: Vec<u8>,
    /// f16 bits, one per group.
    scales: Vec<u16>,
}

fn model_err(m: impl Into<String>) -> Error {
    Error::Model(m.into())
}

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

/// Packs a prepared ONNX model: every int8 tensor `X_q` with a per-row or per-column f32 scale
/// `X_scale` beside it.
pub fn pack(onnx: &[u8], spec: PackSpec) -> Result<Vec<u8>> {
    if !spec.valid() {
        return Err(model_err(format!("cannot pack with {spec:?}")));
    }
    let mut model = pb::ModelProto::decode(onnx)
        .map_err(|e| model_err(format!("decoding the ONNX model: {e}")))?;
    let graph = model
        .graph
        .as_mut()
        .ok_or_else(|| model_err("the ONNX model has no graph"))?;
    let index = initializers(graph);
    let mut tensors = Vec::new();
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
        let qmax = (1i32 << (nbits - 1)) - 1;
        let (q, scale) = (i8_data(t), f32_data(s));
        if q.len() != rows * cols || scale.len() != if per_column { cols } else { rows } {
            return Err(model_err(format!(
                "{}: data does not match its shape",
                t.name
            )));
        }
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
        for (start, step, n) in groups(rows, cols, per_column, spec.group as usize) {
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
        tensors.push((
            qi,
            si,
            PackedTensor {
                q: t.name.clone(),
                scale: s.name.clone(),
                rows: rows as u32,
                cols: cols as u32,
                per_column,
                codes: bits.finish(),
                scales,
            },
        ));
    }
    if tensors.is_empty() {
        return Err(model_err("no int8 weights with a scale found to pack"));
    }
    for (qi, si, _) in &tensors {
        clear(&mut graph.initializer[*qi]);
        clear(&mut graph.initializer[*si]);
    }
    let packed = Packed {
        spec,
        skeleton: model.encode_to_vec(),
        tensors: tensors.into_iter().map(|(_, _, t)| t).collect(),
    };
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&PACK_VERSION.to_le_bytes());
    out.extend(postcard::to_allocvec(&packed).map_err(|e| model_err(e.to_string()))?);
    Ok(out)
}

/// Decodes a packed model back into an ONNX model the embedder runs.
pub fn unpack(bytes: &[u8]) -> Result<Vec<u8>> {
    Ok(unpack_proto(bytes)?.encode_to_vec())
}

/// [`unpack`], without encoding the model again: what the embedder loads.
pub(crate) fn unpack_proto(bytes: &[u8]) -> Result<pb::ModelProto> {
    let bad = |m: String| Err(model_err(format!("packed model: {m}")));
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return bad("not a Lantern packed model".into());
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != PACK_VERSION {
        return bad(format!("format {version}, this build reads {PACK_VERSION}"));
    }
    let packed: Packed = match postcard::from_bytes(&bytes[12..]) {
        Ok(p) => p,
        Err(e) => return bad(format!("damaged or truncated ({e})")),
    };
    let spec = packed.spec;
    if !spec.valid() {
        return bad(format!("unsupported {spec:?}"));
    }
    let mut model = match pb::ModelProto::decode(packed.skeleton.as_slice()) {
        Ok(m) => m,
        Err(e) => return bad(format!("its ONNX graph does not decode ({e})")),
    };
    let Some(graph) = model.graph.as_mut() else {
        return bad("its ONNX model has no graph".into());
    };
    let index = initializers(graph);
    for t in &packed.tensors {
        let nbits = if t.per_column {
            spec.bits
        } else {
            spec.table_bits
        } as usize;
        let offset = 1i32 << (nbits - 1);
        let mask = (1u32 << nbits) - 1;
        let (rows, cols) = (t.rows as usize, t.cols as usize);
        let n = rows.checked_mul(cols).filter(|&n| n > 0 && n <= MAX_VALUES);
        let Some(n) = n else {
            return bad(format!("{}: {rows} x {cols} values", t.q));
        };
        let (Some(&qi), Some(&si)) = (index.get(&t.q), index.get(&t.scale)) else {
            return bad(format!("{} is not in its graph", t.q));
        };
        let dims_ok = graph.initializer[qi].dims == [rows as i64, cols as i64]
            && graph.initializer[si].dims
                == if t.per_column {
                    [1, cols as i64]
                } else {
                    [rows as i64, 1]
                };
        let (lines, len) = if t.per_column {
            (cols, rows)
        } else {
            (rows, cols)
        };
        let per_line = len.div_ceil(spec.group as usize);
        if !dims_ok
            || t.codes.len() != (n * nbits).div_ceil(8)
            || t.scales.len() != lines * per_line
        {
            return bad(format!("{}: sizes do not match its shape", t.q));
        }
        // Line by line (a column or a row: the groups of a line are consecutive), straight
        // back to int8 with the tensor's own scale layout: no tensor-sized f32 buffer.
        let mut q = vec![0u8; n];
        let mut scale = vec![0f32; lines];
        let mut line = vec![0f32; len];
        let mut bit = 0usize;
        let group = spec.group as usize;
        let mut line_scales = vec![0f32; per_line];
        for (l, group_scales) in t.scales.chunks(per_line).enumerate() {
            for (d, &h) in line_scales.iter_mut().zip(group_scales) {
                *d = half::f16::from_bits(h).to_f32();
            }
            if line_scales.iter().any(|s| !s.is_finite()) {
                return bad(format!("{}: a scale is not finite", t.q));
            }
            for (k, v) in line.iter_mut().enumerate() {
                let (byte, shift) = (bit / 8, bit % 8);
                let word = t.codes[byte] as u32
                    | (t.codes.get(byte + 1).copied().unwrap_or(0) as u32) << 8;
                *v = (((word >> shift) & mask) as i32 - offset) as f32 * line_scales[k / group];
                bit += nbits;
            }
            let amax = line.iter().fold(0f32, |m, v| m.max(v.abs()));
            let sc = if amax > 0.0 { amax / 127.0 } else { 1.0 };
            scale[l] = sc;
            // Rounding by a truncating cast: one instruction natively and in wasm, where
            // round() is a library call (a third of a second over the whole model).
            let inv = 1.0 / sc;
            for (k, v) in line.iter().enumerate() {
                let i = if t.per_column {
                    k * cols + l
                } else {
                    l * cols + k
                };
                let x = (v * inv).clamp(-127.0, 127.0);
                q[i] = (x + 0.5f32.copysign(x)) as i8 as u8;
            }
        }
        graph.initializer[qi].raw_data = q;
        graph.initializer[si].raw_data = scale.iter().flat_map(|s| s.to_le_bytes()).collect();
    }
    Ok(model)
}
