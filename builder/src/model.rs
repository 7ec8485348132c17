//! The embedding model on disk: preparing the downloaded ONNX file once, the manifest that
//! pins it, and loading it for embedding.
//!
//! Why prepare: the int8 model stores each embedding table as int8 weights turned back to f32
//! by Cast and Mul before the Gather. tract only folds constants up to max(input, 4 MiB), so it
//! would convert the whole 30522x384 table on every call. Moving the Gather in front of the
//! Cast and Mul looks up the few rows needed and converts only those; every output element is
//! still `f32(q) * scale`, so results are bit-identical.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use prost::Message;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tract_onnx::pb::{self, attribute_proto::AttributeType, AttributeProto, NodeProto};

use lantern_embedder::Embedder;
use lantern_engine::bundle::ModelInfo;

pub const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2 (int8 weights)";
pub const DIM: usize = 384;
pub const MAX_TOKENS: usize = 256;
pub const MODEL_FILE: &str = "model.onnx";
pub const TOKENIZER_FILE: &str = "tokenizer.json";
pub const MANIFEST_FILE: &str = "manifest.json";

/// Pins the prepared model; committed next to the (uncommitted) weight files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub model_id: String,
    /// sha256 of the prepared `model.onnx`.
    pub sha256: String,
    /// sha256 of the prepared `tokenizer.json`.
    pub tokenizer_sha256: String,
    pub dimensions: usize,
    pub pooling: String,
    pub normalize: String,
    pub max_tokens: usize,
}

impl Manifest {
    pub fn info(&self) -> ModelInfo {
        ModelInfo {
            id: self.model_id.clone(),
            sha256: self.sha256.clone(),
            dim: self.dimensions as u32,
            max_tokens: self.max_tokens as u32,
        }
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The model folder: `$LANTERN_MODEL_DIR`, else `models/minilm` under the workspace.
pub fn default_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LANTERN_MODEL_DIR") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/minilm")
}

/// A verified model folder, ready to embed with.
pub struct Model {
    pub manifest: Manifest,
    pub onnx: Vec<u8>,
    pub tokenizer: Vec<u8>,
}

impl Model {
    /// Reads the folder and checks both files against the manifest.
    pub fn open(dir: &Path) -> Result<Model> {
        let hint = "run `bash models/fetch.sh` to fetch and prepare the model";
        let manifest: Manifest = serde_json::from_slice(
            &std::fs::read(dir.join(MANIFEST_FILE))
                .with_context(|| format!("reading {}/{MANIFEST_FILE}", dir.display()))?,
        )
        .context("parsing the model manifest")?;
        let onnx = std::fs::read(dir.join(MODEL_FILE))
            .with_context(|| format!("reading {}/{MODEL_FILE} ({hint})", dir.display()))?;
        let tokenizer = std::fs::read(dir.join(TOKENIZER_FILE))
            .with_context(|| format!("reading {}/{TOKENIZER_FILE} ({hint})", dir.display()))?;
        if sha256_hex(&onnx) != manifest.sha256 {
            bail!(
                "{}/{MODEL_FILE} does not match the manifest's sha256 ({hint})",
                dir.display()
            );
        }
        if sha256_hex(&tokenizer) != manifest.tokenizer_sha256 {
            bail!(
                "{}/{TOKENIZER_FILE} does not match the manifest's sha256 ({hint})",
                dir.display()
            );
        }
        Ok(Model {
            manifest,
            onnx,
            tokenizer,
        })
    }

    pub fn embedder(&self) -> Result<Embedder> {
        Ok(Embedder::from_bytes(
            &self.onnx,
            &self.tokenizer,
            self.manifest.dimensions,
            self.manifest.max_tokens,
        )?)
    }
}

/// Rewrites `Gather(Mul(Cast(q), scale), ids)` as `Mul(Cast(Gather(q, ids)), Gather(scale, ids))`
/// for every embedding table stored that way. Returns the new model and how many were rewritten.
pub fn prepare_onnx(onnx: &[u8]) -> Result<(Vec<u8>, usize)> {
    let mut model = pb::ModelProto::decode(onnx).context("decoding the ONNX model")?;
    let graph = model.graph.as_mut().context("ONNX model has no graph")?;
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
/// it needs no padding, and truncates at the model's 256.
pub fn prepare_tokenizer(json: &[u8]) -> Result<Vec<u8>> {
    let mut v: serde_json::Value =
        serde_json::from_slice(json).context("parsing tokenizer.json")?;
    let obj = v
        .as_object_mut()
        .context("tokenizer.json is not an object")?;
    obj.insert("padding".into(), serde_json::Value::Null);
    obj.insert(
        "truncation".into(),
        serde_json::json!({"direction": "Right", "max_length": MAX_TOKENS, "strategy": "LongestFirst", "stride": 0}),
    );
    Ok(serde_json::to_vec(&v)?)
}

/// Prepares both files into `out_dir` and writes the manifest. With `expect`, refuses to write a
/// model that differs from the pinned one.
pub fn prepare(
    onnx_in: &Path,
    tokenizer_in: &Path,
    out_dir: &Path,
    expect: Option<&Manifest>,
) -> Result<Manifest> {
    let onnx = std::fs::read(onnx_in).with_context(|| format!("reading {}", onnx_in.display()))?;
    let tok = std::fs::read(tokenizer_in)
        .with_context(|| format!("reading {}", tokenizer_in.display()))?;
    let (prepared, rewritten) = prepare_onnx(&onnx)?;
    if rewritten == 0 {
        bail!(
            "no quantized embedding table found to prepare in {}",
            onnx_in.display()
        );
    }
    let tok = prepare_tokenizer(&tok)?;
    let manifest = Manifest {
        model_id: MODEL_ID.into(),
        sha256: sha256_hex(&prepared),
        tokenizer_sha256: sha256_hex(&tok),
        dimensions: DIM,
        pooling: "mean".into(),
        normalize: "l2".into(),
        max_tokens: MAX_TOKENS,
    };
    if let Some(expect) = expect {
        if expect != &manifest {
            bail!(
                "prepared model differs from the pinned manifest (got sha256 {}, pinned {})",
                manifest.sha256,
                expect.sha256
            );
        }
    }
    std::fs::create_dir_all(out_dir)?;
    crate::write_atomic(&out_dir.join(MODEL_FILE), &prepared)?;
    crate::write_atomic(&out_dir.join(TOKENIZER_FILE), &tok)?;
    let mut json = serde_json::to_vec_pretty(&manifest)?;
    json.push(b'\n');
    crate::write_atomic(&out_dir.join(MANIFEST_FILE), &json)?;
    Ok(manifest)
}
