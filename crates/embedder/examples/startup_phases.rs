//! Where the embedder's start-up goes (#11): times each step tract takes from the model file to a
//! runnable plan, and the same model saved after decluttering as NNEF and loaded back, which is
//! what serializing the prepared graph would save; then the browser's path, from the packed
//! model (`model.pack` beside it) to a plan. Natively; the browser runs the same steps in wasm,
//! several times slower.
//!
//!   cargo run --release -p lantern-embedder --example startup_phases -- models/minilm/model.onnx

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
    let (model, parse) = timed("parse ONNX", || Ok(lantern_embedder::read_graph(&onnx)?))?;
    let (typed, analyse) = timed("analyse types", || model.into_typed())?;
    let (decluttered, declutter) = timed("declutter", || typed.into_decluttered())?;
    let (optimized, optimize) = timed("optimize", || decluttered.clone().into_optimized())?;
    let (_, runnable) = timed("plan", || optimized.into_runnable())?;
    let onnx_total = parse + analyse + declutter + optimize + runnable;

    let nnef = tract_nnef::nnef().with_onnx();
    let mut tar = vec![];
    nnef.write_to_tar(&decluttered, &mut tar)?;
    println!("decluttered model as NNEF: {} bytes", tar.len());
    let (back, read) = timed("read NNEF", || {
        nnef.model_for_read(&mut std::io::Cursor::new(&tar))
    })?;
    let (_, rest) = timed("optimize + plan from NNEF", || {
        back.into_optimized()?.into_runnable()
    })?;
    let nnef_total = read + rest;
    println!(
        "model file to plan: {:.1} ms; NNEF to plan: {:.1} ms ({:.2}x)",
        onnx_total.as_secs_f64() * 1e3,
        nnef_total.as_secs_f64() * 1e3,
        nnef_total.as_secs_f64() / onnx_total.as_secs_f64()
    );

    // The browser's path: the packed model (model.pack beside the ONNX file) to a plan.
    let pack_path = std::path::Path::new(&path).with_file_name("model.pack");
    if let Ok(pack) = std::fs::read(&pack_path) {
        let (packed, read) = timed("read packed (parse, decode, graph)", || {
            Ok(lantern_embedder::read_packed(&pack)?)
        })?;
        let mut graph = packed.graph;
        let (_, optimize) = timed("optimize packed graph", || graph.optimize())?;
        let (_, plan) = timed("plan packed graph", || graph.into_runnable())?;
        let tok = std::fs::read(std::path::Path::new(&path).with_file_name("tokenizer.json"))?;
        let (_, tokenizer) = timed("tokenizer from JSON", || {
            tokenizers::Tokenizer::from_bytes(&tok).map_err(|e| TractError::msg(e.to_string()))
        })?;
        println!(
            "packed model to plan: {:.1} ms",
            (read + optimize + plan + tokenizer).as_secs_f64() * 1e3
        );
    }
    Ok(())
}
