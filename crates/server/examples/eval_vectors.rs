//! Judges query vectors made outside Lantern (a study's encoder, #51) as the product would
//! use them: hybrid and vector search on a bundle with its query table attached, the vectors'
//! cosines calibrated as the table's are, page level, with "no good match" counted.
//!
//!   cargo run --release -p lantern-server --example eval_vectors -- BUNDLE GOLDEN [VECTORS [PAIRS]]
//!
//! VECTORS: one row of the model's dimension per question (little-endian f32; a row of zeros
//! means no vector). PAIRS: calibration samples, rows of ten of the encoder's best cosines and
//! then the model's ten for the same text. Without VECTORS, the bundle's table embeds the
//! questions (what `lantern eval --query-encoder table` measures).

use std::path::Path;

use lantern_engine::{Bundle, Engine, Mode, QueryTable};
use lantern_server::eval::{load_golden, metrics, page_matches, Outcome};

fn read_f32(path: &str) -> anyhow::Result<Vec<f32>> {
    Ok(std::fs::read(path)?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(bundle), Some(golden)) = (args.first(), args.get(1)) else {
        anyhow::bail!("usage: eval_vectors BUNDLE GOLDEN [VECTORS [PAIRS]]");
    };
    let mut engine = Engine::new(Bundle::from_bytes(&std::fs::read(bundle)?)?);
    let dim = engine.bundle().header().model.dim as usize;
    let mut table = QueryTable::from_bytes(&std::fs::read(format!("{bundle}.query"))?)?;
    if let Some(pairs) = args.get(3) {
        let p = read_f32(pairs)?;
        let (mut ours, mut model) = (Vec::new(), Vec::new());
        for row in p.chunks_exact(20) {
            ours.extend_from_slice(&row[..10]);
            model.extend_from_slice(&row[10..]);
        }
        table.calibrate(&ours, &model);
    }
    engine.set_query_table(table)?;
    let questions = load_golden(Path::new(golden))?;
    let vectors: Vec<Option<Vec<f32>>> = match args.get(2) {
        Some(path) => read_f32(path)?
            .chunks_exact(dim)
            .map(|v| v.iter().any(|x| *x != 0.0).then(|| v.to_vec()))
            .collect(),
        None => questions
            .iter()
            .map(|q| engine.table_vector(&q.query))
            .collect(),
    };
    anyhow::ensure!(vectors.len() == questions.len(), "one vector per question");
    let bundle = engine.bundle();
    let source = |page: u32| {
        bundle
            .pages()
            .get(page as usize)
            .map_or("", |p| p.source.as_str())
    };
    for (name, mode) in [("vector", Mode::Vector), ("hybrid", Mode::Hybrid)] {
        let outcomes: Vec<Outcome> = questions
            .iter()
            .zip(&vectors)
            .map(|(q, v)| {
                let r = engine.search_approximate_with(
                    &q.query,
                    v.as_deref(),
                    mode,
                    10,
                    engine.fusion(),
                );
                Outcome {
                    id: q.id.clone(),
                    group: q.group(),
                    answerable: q.answerable(),
                    page_rank: r
                        .pages
                        .iter()
                        .position(|g| q.expected.iter().any(|e| page_matches(source(g.page), e)))
                        .map(|i| i + 1),
                    section_hit5: None,
                    lands_top: None,
                    no_good_match: r.no_good_match,
                    best_cosine: r.best_cosine,
                    all_words: r.all_words,
                    keyword_strength: r.keyword_strength,
                    unread_script: r.unread_script,
                    ms: 0.0,
                }
            })
            .collect();
        let all: Vec<&Outcome> = outcomes.iter().collect();
        let m = metrics(&all);
        let declined = outcomes
            .iter()
            .filter(|o| !o.answerable && o.no_good_match)
            .count();
        let ood = outcomes.iter().filter(|o| !o.answerable).count();
        let flagged = outcomes
            .iter()
            .filter(|o| o.answerable && o.no_good_match)
            .count();
        println!(
            "{name}: hit@1 {:.3} hit@5 {:.3} MRR@10 {:.3}; out of scope declined {declined}/{ood}, answerable flagged {flagged}/{}",
            m.hit1, m.hit5, m.mrr10, m.n
        );
    }
    Ok(())
}
