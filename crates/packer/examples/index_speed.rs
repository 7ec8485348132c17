//! Index speed, in chunks per second, of the two encoders in one run: Lantern's own (the packed
//! model, as `lantern build` embeds chunks) against tract running the ONNX model (how chunks
//! were embedded before). Both on every core, over the same chunk texts taken from a bundle,
//! each breadcrumb and text as the indexer feeds them.
//!
//!   cargo run --release -p lantern-packer --example index_speed -- BUNDLE [N]

use std::time::Instant;

use lantern_embedder::Model;
use lantern_engine::Bundle;
use lantern_packer::OnnxEmbedder;
use rayon::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: index_speed BUNDLE [N]")?;
    let n: usize = args.get(2).map_or(Ok(400), |s| s.parse())?;
    let bundle = Bundle::from_bytes(&std::fs::read(path)?)?;
    let texts: Vec<String> = bundle
        .chunks()
        .iter()
        .take(n)
        .map(|c| format!("{}\n{}", c.breadcrumb.join(" > "), c.text))
        .collect();
    let dir = std::path::Path::new("models/minilm");
    let model = Model::open(dir)?;
    let packed = model.embedder()?;
    let onnx = std::fs::read(dir.join(&model.manifest.files.model))?;
    let tract = OnnxEmbedder::new(&model.manifest, &onnx, &model.tokenizer)?;
    let tokens: usize = texts
        .iter()
        .map(|t| packed.token_ids(t).map_or(0, |v| v.len()))
        .sum();
    println!(
        "{} chunks, {:.0} tokens each on average, {} threads",
        texts.len(),
        tokens as f64 / texts.len() as f64,
        rayon::current_num_threads()
    );
    let time = |name: &str, f: &(dyn Fn(&str) -> lantern_embedder::Result<Vec<f32>> + Sync)| {
        let start = Instant::now();
        let vectors: Vec<Vec<f32>> = texts.par_iter().map(|t| f(t).expect("embeds")).collect();
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name:<28} {:>8.1} chunks/s ({secs:.1} s)",
            texts.len() as f64 / secs
        );
        (vectors, secs)
    };
    let (a, own) = time("Lantern's encoder (pack)", &|t| packed.embed(t));
    let (b, reference) = time("tract (ONNX)", &|t| tract.embed(t));
    let cos: f32 = a
        .iter()
        .zip(&b)
        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>())
        .sum::<f32>()
        / a.len() as f32;
    println!(
        "own / tract speed {:.2}x; mean cosine between their vectors {cos:.4}",
        reference / own
    );
    Ok(())
}
