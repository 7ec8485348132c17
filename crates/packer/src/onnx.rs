//! The ONNX model run by tract: the reference the packed model is made from and checked
//! against (and, in the model studies, compared with).

use std::sync::Arc;

use tokenizers::Tokenizer;
use tract_onnx::prelude::*;

use lantern_embedder::{l2_normalize, mean_pool, pinned, tokenizers, Error, Manifest, Result};

fn model_err(e: impl std::fmt::Display) -> Error {
    Error::Model(format!("{e:#}"))
}

/// The ONNX model, optimised for batch 1, and its tokenizer.
pub struct OnnxEmbedder {
    plan: Arc<TypedRunnableModel>,
    tokenizer: Tokenizer,
    dim: usize,
}

impl OnnxEmbedder {
    /// Builds it from the prepared ONNX file and `tokenizer.json`, after checking both against
    /// the manifest's sha256 sums and the output's width against its dimensions.
    pub fn new(manifest: &Manifest, onnx: &[u8], tokenizer_json: &[u8]) -> Result<Self> {
        manifest.validate()?;
        pinned(onnx, &manifest.sha256, "the model file")?;
        pinned(
            tokenizer_json,
            &manifest.tokenizer_sha256,
            "the tokenizer file",
        )?;
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
        let (tokenizer, _) = tokenizers(tokenizer_json, manifest.max_tokens)?;
        Ok(OnnxEmbedder {
            plan,
            tokenizer,
            dim: manifest.dimensions,
        })
    }

    fn encode(&self, text: &str) -> Result<tokenizers::Encoding> {
        self.tokenizer
            .encode(text, true)
            .map_err(|e| Error::Tokenizer(e.to_string()))
    }

    /// A unit-length embedding of `text`.
    pub fn embed(&self, text: &str) -> Result<Vec<f32>> {
        let hidden = self.hidden_states(&self.encode(text)?)?;
        let mut v = mean_pool(&hidden, self.dim);
        l2_normalize(&mut v);
        Ok(v)
    }

    /// The graph's hidden states for one encoded text (tokens x dimensions).
    pub fn hidden_states(&self, enc: &tokenizers::Encoding) -> Result<Vec<f32>> {
        run(&self.plan, enc)
    }
}

/// Runs `plan` on one encoded text: its hidden states (tokens x width).
pub(crate) fn run(plan: &Arc<TypedRunnableModel>, enc: &tokenizers::Encoding) -> Result<Vec<f32>> {
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

pub(crate) fn onnx_loader() -> tract_onnx::Onnx {
    // The file's value_info names a symbolic batch; Lantern always runs batch 1.
    tract_onnx::onnx().with_ignore_value_info(true)
}

/// The prepared model file as tract reads it, its inputs fixed to one sequence of any length.
pub fn read_graph(onnx: &[u8]) -> Result<InferenceModel> {
    let mut model = onnx_loader()
        .model_for_read(&mut std::io::Cursor::new(onnx))
        .map_err(model_err)?;
    fix_inputs(&mut model)?;
    Ok(model)
}

/// Batch 1, any length, for the three inputs.
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
