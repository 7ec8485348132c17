//! Packing (at the site's build, from the prepared ONNX model): the weights quantized in
//! groups, the encoder's parts found by role in the ONNX graph, and the result checked
//! against tract's run of the same weights.

use std::collections::HashMap;

use prost::Message;
use tract_onnx::pb;
use tract_onnx::prelude::*;

use lantern_embedder::pack_format::{
    decode, quantize, serialize, shard_words, EncoderSpec, LayerSpec, LinearSpec, NormSpec,
    PackSpec, Packed, PackedTokenizer, Weights,
};
use lantern_embedder::{l2_normalize, mean_pool, read_packed, tokenizers, Error, Result};

fn model_err(m: impl Into<String>) -> Error {
    Error::Model(m.into())
}

/// Texts the packed encoder is checked on against tract (short questions to a long passage).
const PROBES: [&str; 4] = [
    "how do I keep search working offline?",
    "Ownership rules: each value has an owner, and there can only be one owner at a time.",
    "ValueError raised when the request body is not valid JSON, with a 422 status code",
    "A long passage, to reach far positions: the indexer reads markdown and built HTML, cuts \
     chunks at headings so none straddles two sections, embeds each chunk, and writes a \
     bundle of vectors, postings and text that browsers search without any server at all; \
     rebuilds only embed what changed since the last build, which CI runs on every deploy.",
];
/// Least cosine between the packed encoder's vector and tract's, per probe. What the integer
/// products cost is far below it (measured in BENCHMARKS.md); a part read in the wrong role
/// is far above it.
const MIN_COSINE: f32 = 0.9999;

/// ONNX data types used here.
const FLOAT: i32 = 1;
const INT8: i32 = 3;
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

/// Packs a prepared ONNX model: every int8 tensor `X_q` with a per-row or per-column f32 scale
/// `X_scale` beside it is quantized; the encoder's parts are found by their role in the graph
/// (a BERT encoder: named biases and norms, the products that feed them). Position tables
/// keep the rows of the first `max_tokens` positions (the most the embedder feeds the model).
/// The tokenizer (`tokenizer.json`, as prepared) is packed with it. The packed encoder is
/// checked against tract's run of the ONNX graph with the same (decoded) weights.
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
    // Quantized weights by base name (`X` of `X_q`).
    let mut weights: HashMap<String, Weights> = HashMap::new();
    for qi in 0..graph.initializer.len() {
        let t = &graph.initializer[qi];
        let Some(base) = t.name.strip_suffix("_q").map(str::to_string) else {
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
        // The graph as readers will decode it, for the check against tract.
        let d = decode(&w, spec)?;
        let t = &mut graph.initializer[qi];
        clear(t);
        t.raw_data = d.q.iter().map(|&v| v as u8).collect();
        let s = &mut graph.initializer[si];
        clear(s);
        s.raw_data = d.scale.iter().flat_map(|v| v.to_le_bytes()).collect();
        weights.insert(base, w);
    }
    if weights.is_empty() {
        return Err(model_err("no int8 weights with a scale found to pack"));
    }
    let found = find_encoder(graph).map_err(|m| model_err(format!("packing the encoder: {m}")))?;
    let words = weights
        .get(&found.words)
        .ok_or_else(|| model_err("the word-embedding table is not quantized"))?;
    let words = shard_words(words, spec)?;
    // The weights in the order the encoder names them.
    let mut kept = Vec::new();
    let mut take = |base: &str| -> Result<u32> {
        let w = weights
            .remove(base)
            .ok_or_else(|| model_err(format!("{base} is not a quantized weight, or used twice")))?;
        kept.push(w);
        Ok(kept.len() as u32 - 1)
    };
    let mut linear = |(base, bias): &Product| -> Result<LinearSpec> {
        Ok(LinearSpec {
            weight: take(base)?,
            bias: bias.clone(),
        })
    };
    let mut layers = Vec::with_capacity(found.layers.len());
    for l in &found.layers {
        layers.push(LayerSpec {
            query: linear(&l.linears[0])?,
            key: linear(&l.linears[1])?,
            value: linear(&l.linears[2])?,
            output: linear(&l.linears[3])?,
            norm1: l.norm1.clone(),
            up: linear(&l.linears[4])?,
            down: linear(&l.linears[5])?,
            norm2: l.norm2.clone(),
        });
    }
    let positions = take(&found.positions)?;
    trim_rows(&mut kept[positions as usize], spec, max_tokens);
    let packed = Packed {
        spec,
        weights: kept,
        encoder: EncoderSpec {
            heads: found.heads,
            eps: found.eps,
            positions,
            token_types: found.token_types,
            norm: found.norm,
            layers,
        },
        words,
        tokenizer,
    };
    let bytes = serialize(&packed)?;
    check_encoder(&model, &bytes, tokenizer_json, max_tokens)?;
    Ok(bytes)
}

/// A position table keeps the rows the model can read: the tokenizer stops at `max_tokens`
/// (for MiniLM, 256 of 512). Exact, as a table's rows are quantized independently; a table
/// whose rows do not end on whole bytes is kept as it is.
fn trim_rows(w: &mut Weights, spec: PackSpec, max_tokens: usize) {
    let (bits, cols) = (spec.table_bits as usize, w.cols as usize);
    if w.per_column || w.rows as usize <= max_tokens || !(cols * bits).is_multiple_of(8) {
        return;
    }
    let per_line = cols.div_ceil(spec.group as usize);
    w.codes.truncate(max_tokens * cols * bits / 8);
    w.scales.truncate(max_tokens * per_line);
    w.rows = max_tokens as u32;
}

/// A product found in the graph: its weight's base name and its bias.
type Product = (String, Vec<f32>);

/// An encoder layer found in the graph: its six products (query, key, value, attention
/// output, up, down) as (weight base name, bias), and its two norms.
struct FoundLayer {
    linears: Vec<Product>,
    norm1: NormSpec,
    norm2: NormSpec,
}

/// A BERT encoder found in an ONNX graph, by its parameters' names (as Hugging Face's exports
/// name them) and the products that feed the named biases.
struct FoundEncoder {
    words: String,
    positions: String,
    token_types: Vec<f32>,
    norm: NormSpec,
    eps: f32,
    heads: u32,
    layers: Vec<FoundLayer>,
}

const ROLES: [&str; 6] = [
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
];

/// The attention heads' size: the first layer's query (`query_out`) is reshaped to (batch,
/// tokens, heads, head size), the size a constant of the shape's Concat.
fn head_size(
    graph: &pb::GraphProto,
    producer: &HashMap<&str, &pb::NodeProto>,
    inits: &HashMap<&str, &pb::TensorProto>,
    query_out: Option<&String>,
) -> Option<i64> {
    graph
        .node
        .iter()
        .find(|n| n.op_type == "Reshape" && n.input.first() == query_out)
        .and_then(|r| producer.get(r.input.get(1)?.as_str()))
        .filter(|c| c.op_type == "Concat")
        .and_then(|c| inits.get(c.input.last()?.as_str()))
        .and_then(|t| {
            if t.raw_data.len() == 8 {
                Some(i64::from_le_bytes(t.raw_data[..8].try_into().ok()?))
            } else {
                t.int64_data.first().copied()
            }
        })
        .filter(|&d| d > 0)
}

fn find_encoder(graph: &pb::GraphProto) -> std::result::Result<FoundEncoder, String> {
    let inits: HashMap<&str, &pb::TensorProto> = graph
        .initializer
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let producer: HashMap<&str, &pb::NodeProto> = graph
        .node
        .iter()
        .flat_map(|n| n.output.iter().map(move |o| (o.as_str(), n)))
        .collect();
    let floats = |name: &str| -> Option<Vec<f32>> {
        inits
            .get(name)
            .filter(|t| t.data_type == FLOAT)
            .map(|t| f32_data(t))
    };
    let ending = |suffix: &str| -> Option<&str> {
        graph
            .initializer
            .iter()
            .map(|t| t.name.as_str())
            .find(|n| n.ends_with(suffix))
    };
    // The quantized weight a MatMul multiplies by: Mul(Cast(X_q), X_scale).
    let weight_of = |out: &str| -> Option<String> {
        let mm = producer.get(out).filter(|n| n.op_type == "MatMul")?;
        let mul = producer.get(mm.input.get(1)?.as_str())?;
        mul.input
            .iter()
            .find_map(|i| {
                i.strip_suffix("_scale")
                    .filter(|_| inits.contains_key(i.as_str()))
            })
            .map(str::to_string)
    };
    let mut layers: Vec<[Option<Product>; 6]> = Vec::new();
    let mut norms: Vec<[Option<NormSpec>; 2]> = Vec::new();
    let layer_of = |name: &str| -> Option<(usize, String)> {
        let rest = &name[name.find("encoder.layer.")? + "encoder.layer.".len()..];
        let (l, role) = rest.split_once('.')?;
        // A bound, so a hostile name cannot ask for a huge table of layers.
        let l: usize = l.parse().ok().filter(|&l| l < 1000)?;
        Some((l, role.to_string()))
    };
    let mut query_out = None;
    let (mut norm, mut eps) = (None, None);
    for n in &graph.node {
        if n.op_type == "Add" && n.input.len() == 2 {
            for (b, other) in [(0, 1), (1, 0)] {
                let Some((l, role)) = layer_of(&n.input[b]) else {
                    continue;
                };
                let Some(role) = role.strip_suffix(".bias") else {
                    continue;
                };
                let Some(r) = ROLES.iter().position(|x| *x == role) else {
                    continue;
                };
                let bias = floats(&n.input[b]).ok_or("a bias is not f32")?;
                let w = weight_of(&n.input[other])
                    .ok_or_else(|| format!("{} is not added to a quantized product", n.input[b]))?;
                if l >= layers.len() {
                    layers.resize_with(l + 1, Default::default);
                }
                if l == 0 && r == 0 {
                    query_out = n.output.first().cloned();
                }
                layers[l][r] = Some((w, bias));
            }
        }
        if n.op_type == "LayerNormalization" && n.input.len() == 3 {
            let gamma = floats(&n.input[1]).ok_or("a norm's gain is not f32")?;
            let beta = floats(&n.input[2]).ok_or("a norm's bias is not f32")?;
            let e = n
                .attribute
                .iter()
                .find(|a| a.name == "epsilon")
                .map(|a| a.f)
                .unwrap_or(1e-5);
            if eps.is_some_and(|x| x != e) {
                return Err("its layer norms differ in epsilon".into());
            }
            eps = Some(e);
            let spec = NormSpec { gamma, beta };
            if n.input[1].contains("embeddings.LayerNorm") {
                norm = Some(spec);
            } else if let Some((l, role)) = layer_of(&n.input[1]) {
                let slot = match role.as_str() {
                    "attention.output.LayerNorm.weight" => 0,
                    "output.LayerNorm.weight" => 1,
                    _ => return Err(format!("an unknown norm {}", n.input[1])),
                };
                if l >= norms.len() {
                    norms.resize_with(l + 1, Default::default);
                }
                norms[l][slot] = Some(spec);
            }
        }
    }
    if layers.is_empty() || norms.len() != layers.len() {
        return Err("no BERT encoder layers found".into());
    }
    let erfs = graph.node.iter().filter(|n| n.op_type == "Erf").count();
    if erfs != layers.len() {
        return Err("its activation is not the exact GELU (one Erf a layer)".into());
    }
    let head_size = head_size(graph, &producer, &inits, query_out.as_ref())
        .ok_or("the attention heads' size is not found")?;
    let hidden = norm.as_ref().ok_or("no embedding norm")?.gamma.len() as i64;
    if hidden % head_size != 0 {
        return Err("heads do not divide the width".into());
    }
    let mut found = Vec::with_capacity(layers.len());
    for (l, (parts, [n1, n2])) in layers.into_iter().zip(norms).enumerate() {
        let linears: Option<Vec<_>> = parts.into_iter().collect();
        let (Some(linears), Some(norm1), Some(norm2)) = (linears, n1, n2) else {
            return Err(format!("layer {l} is missing a part"));
        };
        found.push(FoundLayer {
            linears,
            norm1,
            norm2,
        });
    }
    let base = |suffix: &str| {
        ending(&format!("{suffix}_q"))
            .and_then(|n| n.strip_suffix("_q"))
            .map(str::to_string)
            .ok_or_else(|| format!("no quantized {suffix}"))
    };
    Ok(FoundEncoder {
        words: base("embeddings.word_embeddings.weight")?,
        positions: base("embeddings.position_embeddings.weight")?,
        token_types: ending("embeddings.token_type_embeddings.weight")
            .and_then(floats)
            .ok_or("no token type table")?,
        norm: norm.ok_or("no embedding norm")?,
        eps: eps.ok_or("no layer norm")?,
        heads: (hidden / head_size) as u32,
        layers: found,
    })
}

/// Runs the probes through the packed encoder and through tract on the ONNX graph with the
/// same weights; a vector further than [`MIN_COSINE`] from tract's is an error.
fn check_encoder(
    model: &pb::ModelProto,
    packed: &[u8],
    tokenizer_json: &[u8],
    max_tokens: usize,
) -> Result<()> {
    let err = |e: TractError| model_err(format!("{e:#}"));
    let mut net = crate::onnx::onnx_loader()
        .model_for_proto_model(model)
        .map_err(err)?;
    crate::onnx::fix_inputs(&mut net)?;
    let plan = net
        .into_optimized()
        .and_then(|m| m.into_runnable())
        .map_err(err)?;
    let packed = read_packed(packed)?;
    let (tokenizer, _) = tokenizers(tokenizer_json, max_tokens)?;
    for text in PROBES {
        let enc = tokenizer
            .encode(text, true)
            .map_err(|e| model_err(e.to_string()))?;
        let n = enc.get_ids().len();
        let reference = crate::onnx::run(&plan, &enc)?;
        let hidden = packed.hidden_states(enc.get_ids(), enc.get_type_ids())?;
        let dim = packed.width();
        let (mut a, mut b) = (mean_pool(&reference, dim), mean_pool(&hidden, dim));
        l2_normalize(&mut a);
        l2_normalize(&mut b);
        let cosine: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        if std::env::var_os("LANTERN_PACK_VERBOSE").is_some() {
            eprintln!("pack check: cosine {cosine:.7} over {n} tokens");
        }
        // NaN fails too.
        if cosine.is_nan() || cosine < MIN_COSINE {
            return Err(model_err(format!(
                "the packed encoder's vector for a probe is {cosine} from tract's (at least \
                 {MIN_COSINE} expected): the graph is not the BERT encoder this packer reads"
            )));
        }
    }
    Ok(())
}
