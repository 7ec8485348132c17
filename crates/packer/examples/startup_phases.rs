//! Where the embedder's start-up goes (#11): times each step tract takes from the model file to a
//! runnable plan (the packer's path), then the browser's path, from the packed model
//! (`model.pack` beside it) to its encoder. Natively; the browser runs the same steps in wasm,
//! several times slower.
//!
//!   cargo run --release -p lantern-packer --example startup_phases -- models/minilm/model.onnx

use std::time::{Duration, Instant};
use tract_onnx::prelude::*;

fn timed<T>(label: &str, f: impl FnOnce() -> TractResult<T>) -> TractResult<(T, Duration)> {
    let start = Instant::now();
    let out = f()?;
    let took = start.elapsed();
    println!("{label:<40} {:>8.1} ms", took.as_secs_f64() * 1e3);
    Ok((out, took))
}

fn main() -> TractResult<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "models/minilm/model.onnx".into());
    let onnx = std::fs::read(&path)?;
    let (model, parse) = timed("parse ONNX", || Ok(lantern_packer::read_graph(&onnx)?))?;
    let (typed, analyse) = timed("analyse types", || model.into_typed())?;
    let (decluttered, declutter) = timed("declutter", || typed.into_decluttered())?;
    let (optimized, optimize) = timed("optimize", || decluttered.into_optimized())?;
    let (_, runnable) = timed("plan", || optimized.into_runnable())?;
    let onnx_total = parse + analyse + declutter + optimize + runnable;

    println!(
        "model file to plan: {:.1} ms",
        onnx_total.as_secs_f64() * 1e3
    );

    // The browser's path: the packed model (model.pack beside the ONNX file) to a plan.
    let pack_path = std::path::Path::new(&path).with_file_name("model.pack");
    if let Ok(pack) = std::fs::read(&pack_path) {
        let (_, read) = timed("read packed (parse, decode into the encoder)", || {
            Ok(lantern_embedder::read_packed(&pack)?)
        })?;
        let tok = std::fs::read(std::path::Path::new(&path).with_file_name("tokenizer.json"))?;
        let (_, tokenizer) = timed("tokenizer from JSON", || {
            tokenizers::Tokenizer::from_bytes(&tok).map_err(|e| TractError::msg(e.to_string()))
        })?;
        println!(
            "packed model to its encoder: {:.1} ms",
            (read + tokenizer).as_secs_f64() * 1e3
        );
    }
    Ok(())
}
