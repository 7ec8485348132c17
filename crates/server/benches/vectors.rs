//! Partitioned vector search against an exact scan, on a bundle's real vectors and on larger
//! sets made from them: for several partition sizes and probe counts, recall@10 against the
//! exact top 10, the bytes a query reads (centroids plus its partitions, as a browser fetches
//! them), scan latency and build time. This measurement is what decides the partition size and
//! the default probe count in the engine (bench/scale.sh runs it).
//!
//! Sizes past the bundle's are made by copying its vectors with seeded noise (each copy at
//! cosine about 0.95 to its original, then renormalized): embedding 64 distinct copies of the
//! Rust book with the real model takes about three hours on two cores. FACTORS (default
//! "1 16 64"), SIZES (vectors per partition, default "64 128"), PROBES (default "12 16 20")
//! and RANKS (directions queries are routed on, default "64 96") choose what is measured.
//!
//! cargo bench -p lantern-server --bench vectors -- BUNDLE [GOLDEN.jsonl...]   (absolute paths:
//! cargo runs benches from the crate folder; the model from --model-dir's default rules, so set
//! LANTERN_MODEL_DIR)

use std::time::Instant;

use lantern_embedder::{model_dir, Model};
use lantern_engine::{Bundle, VectorIndex};
use lantern_server::eval::load_golden;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(bundle_path) = args.first() else {
        eprintln!(
            "usage: cargo bench -p lantern-server --bench vectors -- BUNDLE [GOLDEN.jsonl...]"
        );
        return Ok(());
    };
    let bundle = Bundle::from_bytes(&std::fs::read(bundle_path)?)?;
    let model = Model::open(&model_dir(None))?;
    let embedder = model.embedder()?;
    let mut queries: Vec<String> = Vec::new();
    for g in &args[1..] {
        queries.extend(
            load_golden(std::path::Path::new(g))?
                .into_iter()
                .map(|q| q.query),
        );
    }
    // Chunk openings as further queries: realistic text, spread over the corpus.
    let chunks = bundle.chunks();
    let step = (chunks.len() / 100).max(1);
    queries.extend(
        chunks
            .iter()
            .step_by(step)
            .map(|c| c.text.chars().take(80).collect::<String>()),
    );
    let qvecs: Vec<Vec<f32>> = queries
        .iter()
        .map(|q| embedder.embed(q))
        .collect::<Result<_, _>>()?;

    let index = bundle.vectors();
    let scale = index.quantization.scale;
    let dim = index.dim as usize;
    let vecs: Vec<Vec<f32>> = index
        .vectors()
        .into_iter()
        .map(|(_, v)| v.0.iter().map(|&x| x as f32 / scale).collect())
        .collect();
    let factors: Vec<usize> = std::env::var("FACTORS")
        .unwrap_or_else(|_| "1 16 64".into())
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    for factor in factors {
        measure(&replicate(&vecs, factor), dim, &qvecs, factor)?;
    }
    Ok(())
}

fn measure(vecs: &[Vec<f32>], dim: usize, qvecs: &[Vec<f32>], factor: usize) -> anyhow::Result<()> {
    let n = vecs.len();
    println!();
    let exact_index = VectorIndex::with_partitions(vecs, dim, 1);
    let mut exact_ms = Vec::new();
    let exact: Vec<Vec<u32>> = qvecs
        .iter()
        .map(|q| {
            let t = Instant::now();
            let hits = exact_index.search_exact(q, 10);
            exact_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            hits.iter().map(|h| h.chunk).collect()
        })
        .collect();
    println!(
        "{factor}x: {} vectors, dim {dim}, {} queries; exact scan p50 {:.3} ms, {:.0} KiB",
        n,
        qvecs.len(),
        p50(exact_ms),
        (n * dim) as f64 / 1024.0
    );
    println!("| vectors per partition | partitions | routing rank | build s | probe | recall@10 | KiB read p50 / max | p50 ms |");
    println!("|---|---|---|---|---|---|---|---|");
    let list = |var: &str, default: &str| -> Vec<usize> {
        std::env::var(var)
            .unwrap_or_else(|_| default.into())
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect()
    };
    for (per, rank) in list("SIZES", "64 128")
        .into_iter()
        .flat_map(|per| list("RANKS", "64 96").into_iter().map(move |r| (per, r)))
    {
        let k = n.div_ceil(per);
        let t = Instant::now();
        let mut idx = VectorIndex::with_routing(vecs, dim, k, rank);
        let build = t.elapsed().as_secs_f64();
        let sizes = idx.partition_sizes();
        let routing = idx.routing_bytes();
        for probe in list("PROBES", "12 16 20") {
            idx.set_probe(probe as u32);
            let (mut ms, mut bytes, mut recall) = (Vec::new(), Vec::new(), 0.0);
            for (q, want) in qvecs.iter().zip(&exact) {
                let t = Instant::now();
                let got = idx.search(q, 10);
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
                let hit = got.iter().filter(|g| want.contains(&g.chunk)).count();
                recall += hit as f64 / want.len().max(1) as f64;
                let read: usize = idx.probed(q).iter().map(|&p| sizes[p]).sum();
                bytes.push((routing + read * (dim + 2)) as f64 / 1024.0);
            }
            let max = bytes.iter().copied().fold(0.0, f64::max);
            println!(
                "| {per} | {} | {rank} | {build:.1} | {probe} | {:.3} | {:.0} / {max:.0} | {:.3} |",
                sizes.len(),
                recall / qvecs.len() as f64,
                p50(bytes),
                p50(ms),
            );
        }
    }
    Ok(())
}

/// `factor` copies of every vector; copies after the first get seeded noise (uniform, +-0.03 a
/// component: cosine about 0.95 to the original), then are renormalized.
fn replicate(base: &[Vec<f32>], factor: usize) -> Vec<Vec<f32>> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = Vec::with_capacity(base.len() * factor);
    for copy in 0..factor {
        for v in base {
            let mut w: Vec<f32> = v
                .iter()
                .map(|&x| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let noise = ((seed % 2001) as f32 / 1000.0 - 1.0) * 0.03;
                    if copy == 0 {
                        x
                    } else {
                        x + noise
                    }
                })
                .collect();
            let norm = w.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            w.iter_mut().for_each(|x| *x /= norm);
            out.push(w);
        }
    }
    out
}

fn p50(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
