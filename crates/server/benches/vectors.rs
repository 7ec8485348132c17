//! Exact int8 scan against the HNSW graph: recall@10, latency and graph build time on real
//! embeddings, at the bundle's size and at 4x and 16x (vectors replicated with small noise),
//! the graph built single-threaded as `lantern build` builds it. This measurement is what
//! decides `EXACT_SCAN_MAX` in the engine.
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
    let base: Vec<Vec<f32>> = index
        .vectors()
        .into_iter()
        .map(|(_, v)| v.0.iter().map(|&x| x as f32 / scale).collect())
        .collect();
    println!("{} queries; dim {}", qvecs.len(), index.dim);
    println!("| vectors | build s | exact p50 ms | graph p50 ms | exact/graph | graph recall@10 |");
    println!("|---|---|---|---|---|---|");
    for factor in [1usize, 4, 16] {
        let vecs = replicate(&base, factor);
        let t = Instant::now();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
        let idx = pool.install(|| VectorIndex::with_graph(&vecs, index.dim as usize));
        let build = t.elapsed().as_secs_f64();
        let (mut te, mut tg, mut recall) = (Vec::new(), Vec::new(), 0.0);
        for q in &qvecs {
            let t = Instant::now();
            let exact = idx.search_exact(q, 10);
            te.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = Instant::now();
            let graph = idx.search_graph(q, 10);
            tg.push(t.elapsed().as_secs_f64() * 1000.0);
            let hit = graph
                .iter()
                .filter(|g| exact.iter().any(|e| e.chunk == g.chunk))
                .count();
            recall += hit as f64 / exact.len().max(1) as f64;
        }
        let (pe, pg) = (p50(te), p50(tg));
        println!(
            "| {} | {build:.1} | {pe:.3} | {pg:.3} | {:.1}x | {:.3} |",
            vecs.len(),
            pe / pg,
            recall / qvecs.len() as f64
        );
    }
    Ok(())
}

/// `factor` copies of every vector; copies after the first get small deterministic noise so
/// the graph sees distinct points, then are renormalized.
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
                    let noise = ((seed % 2001) as f32 / 1000.0 - 1.0) * 0.02;
                    if copy == 0 {
                        x
                    } else {
                        x + noise
                    }
                })
                .collect();
            let n = w.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            w.iter_mut().for_each(|x| *x /= n);
            out.push(w);
        }
    }
    out
}

fn p50(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
