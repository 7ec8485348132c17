//! Chunks a second: Lantern's packed encoder against tract running the ONNX model it is made
//! from, on the same chunks of a built bundle, in one run, one chunk at a time on one thread
//! each (`lantern build` embeds a chunk over 1 KB alone, and runs a thread per core), with the
//! processor's SIMD features; and how closely their vectors agree. `bash bench/encoder.sh`.
//!
//!   cargo run --release -p lantern-packer --example encoder_speed -- MODEL_DIR BUNDLE [N]

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use lantern_embedder::Model;
use lantern_engine::Bundle;
use lantern_indexer::chunk::embedding_text;
use lantern_packer::OnnxEmbedder;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(model_dir), Some(bundle)) = (args.first(), args.get(1)) else {
        eprintln!("usage: encoder_speed MODEL_DIR BUNDLE [N]");
        return ExitCode::from(2);
    };
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    match run(Path::new(model_dir), Path::new(bundle), n) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(model_dir: &Path, bundle: &Path, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let model = Model::open(model_dir)?;
    let packed = model.embedder()?;
    let onnx = std::fs::read(model_dir.join(&model.manifest.files.model))?;
    let tract = OnnxEmbedder::new(&model.manifest, &onnx, &model.tokenizer)?;
    let bundle = Bundle::from_bytes(&std::fs::read(bundle)?)?;
    // An even sample of the site's chunks, as `lantern build` gives them to the model.
    let chunks = bundle.chunks();
    let step = (chunks.len() / n.max(1)).max(1);
    let texts: Vec<String> = chunks
        .iter()
        .step_by(step)
        .take(n)
        .map(|c| embedding_text(&c.breadcrumb, &c.text))
        .collect();

    let timed = |f: &dyn Fn() -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>>| {
        let start = Instant::now();
        f().map(|v| (v, start.elapsed().as_secs_f64()))
    };
    let (ours, ours_s) = timed(&|| {
        Ok(texts
            .iter()
            .map(|t| packed.embed(t))
            .collect::<Result<_, _>>()?)
    })?;
    let (theirs, tract_s) = timed(&|| {
        Ok(texts
            .iter()
            .map(|t| tract.embed(t))
            .collect::<Result<_, _>>()?)
    })?;

    let cosines: Vec<f32> = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum())
        .collect();
    let lowest = cosines.iter().copied().fold(f32::INFINITY, f32::min);
    let mean = cosines.iter().sum::<f32>() / cosines.len().max(1) as f32;

    let per_s = |s: f64| texts.len() as f64 / s;
    println!("processor: {}", features().join(" "));
    println!(
        "{} chunks of {} (every {step}th), one thread each\n",
        texts.len(),
        chunks.len()
    );
    println!("| encoder | chunks/s | ms/chunk | against tract |");
    println!("|---|---|---|---|");
    for (name, s) in [
        ("tract, ONNX model (f32)", tract_s),
        ("packed, int8 weights (Lantern's)", ours_s),
    ] {
        println!(
            "| {name} | {:.1} | {:.1} | {:.2}x |",
            per_s(s),
            1000.0 * s / texts.len() as f64,
            tract_s / s
        );
    }
    println!("\ncosine of the packed vector with tract's: mean {mean:.4}, lowest {lowest:.4}");
    Ok(())
}

/// The SIMD features the encoders can use on this processor.
fn features() -> Vec<&'static str> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        let has = [
            ("sse2", std::arch::is_x86_feature_detected!("sse2")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            (
                "avx512vnni",
                std::arch::is_x86_feature_detected!("avx512vnni"),
            ),
            ("avxvnni", std::arch::is_x86_feature_detected!("avxvnni")),
        ];
        out.extend(has.iter().filter(|(_, on)| *on).map(|(name, _)| *name));
    }
    if out.is_empty() {
        out.push(std::env::consts::ARCH);
    }
    out
}
