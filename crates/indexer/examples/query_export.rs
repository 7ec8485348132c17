//! Exports what a query encoder is fitted and judged on, for studies outside Rust (#51):
//! the query table's training texts as index terms in word order with the model's vectors of
//! them, each term's word vector, the chunks' vectors and pages, and the labelled questions
//! as terms in order with the model's vectors.
//!
//!   cargo run --release -p lantern-indexer --example query_export -- MODEL_DIR BUNDLE GOLDEN OUT_DIR
//!
//! Text files hold one item a line; a line's words are `|`-separated, each word its terms as
//! `id:weight` pairs joined by `,`. `*.f32` files are row-major little-endian floats.

use std::io::Write;
use std::path::Path;

use lantern_embedder::Model;
use lantern_engine::{Bundle, Engine};
use lantern_indexer::chunk::embedding_text;
use lantern_indexer::query_fit::training_texts;
use rayon::prelude::*;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model_dir, bundle, golden, out] = args.as_slice() else {
        anyhow::bail!("usage: query_export MODEL_DIR BUNDLE GOLDEN OUT_DIR");
    };
    let out = Path::new(out);
    std::fs::create_dir_all(out)?;
    let model = Model::open(Path::new(model_dir))?;
    let embedder = model.embedder()?;
    let engine = Engine::new(Bundle::from_bytes(&std::fs::read(bundle)?)?);

    let words_of = |text: &str| -> String {
        text.split_whitespace()
            .filter_map(|w| {
                let terms = engine.query_terms(&format!("{w} "));
                (!terms.is_empty()).then(|| {
                    terms
                        .iter()
                        .map(|(id, wt)| format!("{id}:{wt}"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
            })
            .collect::<Vec<_>>()
            .join("|")
    };
    let embed_all = |texts: &[String]| -> anyhow::Result<Vec<Vec<f32>>> {
        let parts: Vec<Vec<Vec<f32>>> = texts
            .par_chunks(32)
            .map(|c| {
                let refs: Vec<&str> = c.iter().map(String::as_str).collect();
                embedder.embed_many(&refs)
            })
            .collect::<Result<_, _>>()?;
        Ok(parts.concat())
    };
    let write_f32 = |name: &str, rows: &[Vec<f32>]| -> anyhow::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(out.join(name))?);
        for r in rows {
            for x in r {
                f.write_all(&x.to_le_bytes())?;
            }
        }
        Ok(())
    };
    let write_lines = |name: &str, lines: &[String]| -> anyhow::Result<()> {
        std::fs::write(out.join(name), lines.join("\n") + "\n")?;
        Ok(())
    };

    let texts = training_texts(&engine);
    eprintln!("{} training texts", texts.len());
    write_lines("texts.raw", &texts)?;
    write_lines(
        "texts.txt",
        &texts.iter().map(|t| words_of(t)).collect::<Vec<_>>(),
    )?;
    write_f32("texts.f32", &embed_all(&texts)?)?;

    let words = engine.term_words();
    eprintln!("{} terms", words.len());
    write_lines("terms.txt", &words)?;
    write_f32("terms.f32", &embed_all(&words)?)?;

    let chunks = engine.bundle().chunks();
    let pages = engine.bundle().pages();
    let chunk_texts: Vec<String> = chunks
        .iter()
        .map(|c| embedding_text(&c.breadcrumb, &c.text))
        .collect();
    eprintln!("{} chunks", chunks.len());
    write_lines(
        "chunks.txt",
        &chunks
            .iter()
            .map(|c| pages[c.page as usize].source.clone())
            .collect::<Vec<_>>(),
    )?;
    write_f32("chunks.f32", &embed_all(&chunk_texts)?)?;

    let questions: Vec<String> = std::fs::read_to_string(golden)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)?;
            Ok(v["query"].as_str().unwrap_or_default().to_string())
        })
        .collect::<anyhow::Result<_>>()?;
    write_lines(
        "questions.txt",
        &questions.iter().map(|t| words_of(t)).collect::<Vec<_>>(),
    )?;
    write_f32("questions.f32", &embed_all(&questions)?)?;
    Ok(())
}
