//! Preparing the downloaded model once, under the contract of the committed manifest.
//!
//! Why prepare: the int8 model stores each embedding table as int8 weights turned back to f32
//! by Cast and Mul before the Gather. tract only folds constants up to max(input, 4 MiB), so it
//! would convert the whole 30522x384 table on every call. Moving the Gather in front of the
//! Cast and Mul looks up the few rows needed and converts only those; every output element is
//! still `f32(q) * scale`, so results are bit-identical.

use std::collections::HashSet;

use prost::Message;
use tract_onnx::pb::{self, attribute_proto::AttributeType, AttributeProto, NodeProto};

use crate::onnx::OnnxEmbedder;
use lantern_embedder::{sha256_hex, Embedder, Error, Result};
use lantern_engine::{Manifest, ModelFiles, PackedFile};

/// The packed model's file name in a prepared model folder.
pub const PACKED_FILE: &str = "model.pack";

/// Prepared files and the manifest that pins them.
pub struct Prepared {
    /// The rewritten ONNX file.
    pub onnx: Vec<u8>,
    /// The tokenizer set to the contract's truncation, without padding.
    pub tokenizer: Vec<u8>,
    /// The model packed small, when the contract asks for it (its `packed` entry).
    pub packed: Option<Vec<u8>>,
    /// `contract` with the prepared files' sha256 sums and default file names.
    pub manifest: Manifest,
}

/// Prepares downloaded model files under `contract` (the committed manifest: model id,
/// dimensions, token limit, pooling), and checks that the result embeds with those dimensions.
pub fn prepare(onnx: &[u8], tokenizer: &[u8], contract: &Manifest) -> Result<Prepared> {
    let (onnx, rewritten) = prepare_onnx(onnx)?;
    if rewritten == 0 {
        return Err(Error::Model(
            "no quantized embedding table found to prepare".into(),
        ));
    }
    let tokenizer = prepare_tokenizer(tokenizer, contract.max_tokens)?;
    let packed = match &contract.packed {
        Some(p) => Some(crate::pack(&onnx, &tokenizer, p.spec, contract.max_tokens)?),
        None => None,
    };
    let manifest = Manifest {
        sha256: sha256_hex(&onnx),
        tokenizer_sha256: sha256_hex(&tokenizer),
        files: ModelFiles::default(),
        packed: contract
            .packed
            .as_ref()
            .zip(packed.as_ref())
            .map(|(p, bytes)| PackedFile {
                file: PACKED_FILE.into(),
                sha256: sha256_hex(bytes),
                spec: p.spec,
            }),
        ..contract.clone()
    };
    // Loading probes one embedding and checks its dimensions against the contract.
    OnnxEmbedder::new(&manifest, &onnx, &tokenizer)?;
    if let Some(bytes) = &packed {
        Embedder::from_packed(&manifest, bytes)?;
    }
    Ok(Prepared {
        onnx,
        tokenizer,
        packed,
        manifest,
    })
}

/// Rewrites `Gather(Mul(Cast(q), scale), ids)` as `Mul(Cast(Gather(q, ids)), Gather(scale, ids))`
/// for every embedding table stored that way. Returns the new model and how many were rewritten.
pub fn prepare_onnx(onnx: &[u8]) -> Result<(Vec<u8>, usize)> {
    let mut model = pb::ModelProto::decode(onnx)
        .map_err(|e| Error::Model(format!("decoding the ONNX model: {e}")))?;
    let graph = model
        .graph
        .as_mut()
        .ok_or_else(|| Error::Model("the ONNX model has no graph".into()))?;
    let inits: HashSet<String> = graph.initializer.iter().map(|t| t.name.clone()).collect();
    let producer = |nodes: &[NodeProto], out: &str| {
        nodes.iter().position(|n| n.output.iter().any(|o| o == out))
    };

    let mut rewritten = 0;
    let mut nodes = std::mem::take(&mut graph.node);
    let mut i = 0;
    while i < nodes.len() {
        let node = &nodes[i];
        if node.op_type != "Gather" || axis(node) != 0 || node.input.len() != 2 {
            i += 1;
            continue;
        }
        let (data, ids) = (node.input[0].clone(), node.input[1].clone());
        let Some(mul) = producer(&nodes, &data).filter(|&m| nodes[m].op_type == "Mul") else {
            i += 1;
            continue;
        };
        let mul_in = nodes[mul].input.clone();
        let found = mul_in.iter().enumerate().find_map(|(k, name)| {
            let cast = producer(&nodes, name)?;
            let scale = &mul_in[1 - k];
            let c = &nodes[cast];
            (c.op_type == "Cast"
                && c.input.len() == 1
                && inits.contains(&c.input[0])
                && inits.contains(scale)
                && cast_to(c) == Some(1))
            .then(|| (c.input[0].clone(), scale.clone()))
        });
        let Some((q, scale)) = found else {
            i += 1;
            continue;
        };
        let out = node.output[0].clone();
        let base = node.name.clone();
        let gq = format!("{out}__q_rows");
        let gs = format!("{out}__scale_rows");
        let gf = format!("{out}__rows_f32");
        let replacement = vec![
            simple_node(
                &format!("{base}__gather_q"),
                "Gather",
                &[&q, &ids],
                &gq,
                vec![int_attr("axis", 0)],
            ),
            simple_node(
                &format!("{base}__gather_scale"),
                "Gather",
                &[&scale, &ids],
                &gs,
                vec![int_attr("axis", 0)],
            ),
            simple_node(
                &format!("{base}__cast"),
                "Cast",
                &[&gq],
                &gf,
                vec![int_attr("to", 1)],
            ),
            simple_node(&format!("{base}__mul"), "Mul", &[&gf, &gs], &out, vec![]),
        ];
        nodes.splice(i..=i, replacement);
        rewritten += 1;
        i += 4;
    }

    // Drop nodes whose outputs nobody reads any more (the old Cast and Mul).
    let graph_outputs: HashSet<String> = graph.output.iter().map(|o| o.name.clone()).collect();
    loop {
        let used: HashSet<String> = nodes.iter().flat_map(|n| n.input.iter().cloned()).collect();
        let before = nodes.len();
        nodes.retain(|n| {
            n.output
                .iter()
                .any(|o| used.contains(o) || graph_outputs.contains(o))
        });
        if nodes.len() == before {
            break;
        }
    }
    graph.node = nodes;
    Ok((model.encode_to_vec(), rewritten))
}

fn axis(node: &NodeProto) -> i64 {
    node.attribute
        .iter()
        .find(|a| a.name == "axis")
        .map(|a| a.i)
        .unwrap_or(0)
}

fn cast_to(node: &NodeProto) -> Option<i64> {
    node.attribute.iter().find(|a| a.name == "to").map(|a| a.i)
}

fn int_attr(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i: value,
        ..Default::default()
    }
}

fn simple_node(
    name: &str,
    op: &str,
    inputs: &[&str],
    output: &str,
    attribute: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        name: name.into(),
        op_type: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        attribute,
        ..Default::default()
    }
}

/// The shipped tokenizer.json pads and truncates at 128; Lantern embeds one text at a time, so
/// it needs no padding, and truncates at the contract's limit.
fn prepare_tokenizer(json: &[u8], max_tokens: usize) -> Result<Vec<u8>> {
    let bad = |m: &str| Error::Tokenizer(m.to_string());
    let mut v: serde_json::Value =
        serde_json::from_slice(json).map_err(|_| bad("tokenizer.json is not JSON"))?;
    let obj = v
        .as_object_mut()
        .ok_or_else(|| bad("tokenizer.json is not an object"))?;
    obj.insert("padding".into(), serde_json::Value::Null);
    obj.insert(
        "truncation".into(),
        serde_json::json!({"direction": "Right", "max_length": max_tokens, "strategy": "LongestFirst", "stride": 0}),
    );
    serde_json::to_vec(&v).map_err(|e| bad(&e.to_string()))
}
