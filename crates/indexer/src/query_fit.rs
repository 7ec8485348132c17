//! Fitting a bundle's query table (the static query encoder, `lantern_engine::QueryTable`).
//!
//! Short texts are cut from the site's own chunks (headings, sentences, word windows: what
//! readers type is short), embedded by the full model, and analysed into index terms exactly
//! as a query is. The table's rows are then the ridge least-squares solution of
//! `pooled terms x rows = embedding`, in the top principal directions of those embeddings, so
//! that pooling a query's rows approximates what the model would have said. The ridge weight
//! is chosen on a held-out tenth of the texts, never on labelled questions.

use anyhow::{bail, Result};
use nalgebra::{DMatrix, SymmetricEigen};
use rayon::prelude::*;

use lantern_engine::{Engine, QueryTable};

/// Texts cut per chunk at most, and overall: bounds the build time on large sites.
const MAX_TEXTS_PER_CHUNK: usize = 24;
const MAX_TEXTS: usize = 60_000;
/// Fewer texts than this and shorter windows are added.
const MIN_TEXTS: usize = 12_000;
/// A text is kept only while one of its terms is in fewer kept texts than this: past it, more
/// texts about the same words cost embedding time and taught the table nothing measurable
/// (bench/studies/2026-12-07-query-texts.md: 59-68% of the texts' bytes, no set worse).
const TEXTS_PER_TERM: usize = 16;
/// Words in a training text.
const MIN_WORDS: usize = 2;
const MAX_WORDS: usize = 24;
/// Ridge weights tried, relative to the mean diagonal of the normal matrix.
const RIDGES: [f32; 5] = [0.03, 0.1, 0.3, 1.0, 3.0];
const CG_ITERATIONS: usize = 60;
/// Steps of each solve while choosing the ridge weight: each starts from the last weight's
/// rows, and the held-out cosine that chooses needs three digits, not float precision.
const CG_SWEEP_ITERATIONS: usize = 20;
/// The residual, relative to the right-hand side, at which a solve has converged.
const CG_TOLERANCE: f64 = 1e-5;
/// Texts summed into the covariance at once.
const COVARIANCE_BLOCK: usize = 1_024;
/// Held-out texts the cosine calibration is measured on, and the best cosines taken from each
/// (fusion weighs the first few dozen vector hits; "no good match" the best).
const CALIBRATION_TEXTS: usize = 2_000;
const CALIBRATION_DEPTH: usize = 10;

/// A text's index terms with their pooling weights.
type WeightedTerms = Vec<(usize, f32)>;

/// What the fit measured, for the build summary.
#[derive(Debug, Clone, Copy)]
pub struct FitReport {
    /// Texts fitted on.
    pub texts: usize,
    /// Rows fitted (the bundle's terms).
    pub terms: usize,
    /// Values per row.
    pub rank: usize,
    /// The ridge weight chosen.
    pub ridge: f32,
    /// Mean cosine between the table's and the model's vectors on the held-out texts.
    pub held_out_cosine: f32,
    /// The calibration's middle knot: the median of the table's ten best cosines per
    /// held-out text, and of the model's.
    pub median_cosines: Option<(f32, f32)>,
    /// Wall time of the whole fit, embedding its texts included (set by the build).
    pub seconds: f64,
}

/// Short texts to fit on, cut from chunk text and headings, each kept while it still covers
/// a term that few kept texts have ([`TEXTS_PER_TERM`]). Deterministic.
pub fn training_texts(engine: &Engine) -> Vec<String> {
    let candidates = candidate_texts(engine);
    // Analysed on all cores; chosen in order.
    let terms: Vec<WeightedTerms> = candidates
        .par_iter()
        .map(|t| engine.query_terms(&format!("{t} ")))
        .collect();
    let mut covered = vec![0usize; engine.num_terms()];
    candidates
        .into_iter()
        .zip(terms)
        .filter(|(_, terms)| {
            let keep = terms.iter().any(|&(id, _)| covered[id] < TEXTS_PER_TERM);
            if keep {
                for &(id, _) in terms {
                    covered[id] += 1;
                }
            }
            keep
        })
        .map(|(t, _)| t)
        .collect()
}

/// Every text [`training_texts`] chooses from, in chunk order.
fn candidate_texts(engine: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (ci, c) in engine.bundle().chunks().iter().enumerate() {
        let mut texts: Vec<String> = Vec::new();
        if let Some(h) = c.breadcrumb.last() {
            texts.push(h.clone());
        }
        if c.breadcrumb.len() >= 2 {
            texts.push(c.breadcrumb[c.breadcrumb.len() - 2..].join(" "));
        }
        for sentence in sentences(&c.text) {
            let words: Vec<&str> = sentence.split_whitespace().collect();
            if words.len() < MIN_WORDS {
                continue;
            }
            // The sentence (cut to a question's length) and a short window from it.
            texts.push(words[..words.len().min(MAX_WORDS)].join(" "));
            if words.len() >= 8 {
                let len = 3 + (ci + words.len()) % 4;
                let start = (ci * 7 + words.len() * 3) % (words.len() - len);
                texts.push(words[start..start + len].join(" "));
            }
        }
        for t in texts.into_iter().take(MAX_TEXTS_PER_CHUNK) {
            if seen.insert(t.clone()) {
                out.push(t);
            }
        }
    }
    if out.len() < MIN_TEXTS {
        // A small site: more, shorter windows, so every term is seen in several contexts.
        'more: for c in engine.bundle().chunks() {
            for sentence in sentences(&c.text) {
                let words: Vec<&str> = sentence.split_whitespace().collect();
                for len in [3, 5] {
                    for start in (0..words.len().saturating_sub(len)).step_by(2) {
                        let t = words[start..start + len].join(" ");
                        if seen.insert(t.clone()) {
                            out.push(t);
                            if out.len() >= MIN_TEXTS {
                                break 'more;
                            }
                        }
                    }
                }
            }
        }
    }
    if out.len() > MAX_TEXTS {
        // An even sample keeps every part of the site represented.
        let step = out.len() as f64 / MAX_TEXTS as f64;
        out = (0..MAX_TEXTS)
            .map(|i| out[(i as f64 * step) as usize].clone())
            .collect();
    }
    out
}

fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '.', '?', '!', ';', ':'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Fits the table for `engine`'s bundle from texts and the model's unit vectors of them, and
/// the model's vector of each term's word ([`Engine::term_words`]), which a term's row is
/// pulled towards where the texts say little about it.
pub fn fit(
    engine: &Engine,
    texts: &[String],
    vectors: &[Vec<f32>],
    term_vectors: &[Vec<f32>],
    rank: usize,
) -> Result<(QueryTable, FitReport)> {
    let dim = engine.bundle().header().model.dim as usize;
    let terms = engine.num_terms();
    let rank = rank.min(dim);
    // Rows of X: the weighted terms each text pools.
    let samples: Vec<(WeightedTerms, &[f32])> = texts
        .par_iter()
        .zip(vectors.par_iter())
        .filter_map(|(t, v)| {
            let x = engine.query_terms(&format!("{t} "));
            (!x.is_empty() && v.len() == dim).then_some((x, v.as_slice()))
        })
        .collect();
    if term_vectors.len() != terms || term_vectors.iter().any(|v| v.len() != dim) {
        bail!("one vector per term is needed");
    }
    if samples.len() < 10 || terms == 0 {
        bail!(
            "too little text to fit a query table ({} texts)",
            samples.len()
        );
    }

    // The basis: top principal directions of the targets (uncentred: cosines are taken from
    // the origin).
    // Summed a block of texts at a time as a matrix product (one rank-one update per text
    // took most of a warm rebuild), blocks in order.
    // Blocks on all cores, summed in block order: the same basis whatever the core count.
    let fitted: Vec<&[f32]> = samples.iter().map(|(_, y)| *y).collect();
    let blocks: Vec<DMatrix<f64>> = fitted
        .par_chunks(COVARIANCE_BLOCK)
        .map(|block| {
            let y = DMatrix::<f64>::from_fn(block.len(), dim, |r, c| block[r][c] as f64);
            y.tr_mul(&y)
        })
        .collect();
    let mut cov = DMatrix::<f64>::zeros(dim, dim);
    for b in &blocks {
        cov += b;
    }
    let eig = SymmetricEigen::new(cov);
    let mut order: Vec<usize> = (0..dim).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let mut basis = vec![0f32; rank * dim];
    for (r, &col) in order.iter().take(rank).enumerate() {
        for d in 0..dim {
            basis[r * dim + d] = eig.eigenvectors[(d, col)] as f32;
        }
    }
    let project = |y: &[f32]| -> Vec<f32> {
        basis
            .chunks_exact(dim)
            .map(|b| lantern_engine::dot_f32(b, y))
            .collect()
    };
    // Targets in the basis.
    let z: Vec<Vec<f32>> = samples.par_iter().map(|(_, y)| project(y)).collect();
    let prior: Vec<f32> = term_vectors
        .par_iter()
        .flat_map_iter(|v| project(v))
        .collect();

    // Held-out tenth for choosing the ridge weight.
    let is_held = |i: usize| i % 10 == 9;
    let train: Vec<usize> = (0..samples.len()).filter(|&i| !is_held(i)).collect();
    let held: Vec<usize> = (0..samples.len()).filter(|&i| is_held(i)).collect();
    let xs: Vec<&[(usize, f32)]> = samples.iter().map(|(x, _)| x.as_slice()).collect();

    // Weights in increasing order; the held-out fit rises to one best weight and then falls,
    // so the first fall ends the search (each weight tried is a solve).
    // Each solve starts from the previous weight's rows, the first from the prior.
    let mut best: Option<(f32, f32, Vec<f32>)> = None;
    let mut start = prior.clone();
    for &ridge in &RIDGES {
        let rows = solve(
            &xs,
            &z,
            &train,
            (&prior, &start),
            rank,
            ridge,
            CG_SWEEP_ITERATIONS,
        );
        let cos = mean_cosine(&xs, &samples, &held, &rows, &basis, rank, dim);
        if best.as_ref().is_some_and(|b| cos <= b.1) {
            break;
        }
        start.clone_from(&rows);
        best = Some((ridge, cos, rows));
    }
    let (ridge, held_out_cosine, chosen) = best.expect("at least one ridge weight");
    // Refit on every text with the chosen weight, from its rows.
    let all: Vec<usize> = (0..samples.len()).collect();
    let rows = solve(&xs, &z, &all, (&prior, &chosen), rank, ridge, CG_ITERATIONS);
    let mut table = QueryTable::new(engine.terms_fingerprint(), &rows, &basis, rank, dim)?;
    // The calibration: the best cosines the table's vectors find against the bundle, matched
    // to the model's on the same held-out texts.
    let step = (held.len() / CALIBRATION_TEXTS).max(1);
    let pairs: Vec<(Vec<f32>, Vec<f32>)> = held
        .par_iter()
        .step_by(step)
        .filter_map(|&i| {
            let v = table.encode(xs[i])?;
            Some((
                engine.best_cosines(&v, CALIBRATION_DEPTH),
                engine.best_cosines(samples[i].1, CALIBRATION_DEPTH),
            ))
        })
        .collect();
    let (table_cos, model_cos): (Vec<Vec<f32>>, Vec<Vec<f32>>) = pairs.into_iter().unzip();
    table.calibrate(&table_cos.concat(), &model_cos.concat());
    let knots = table.calibration();
    let median_cosines = knots.get(knots.len() / 2).copied();
    Ok((
        table,
        FitReport {
            texts: samples.len(),
            terms,
            rank,
            ridge,
            held_out_cosine,
            median_cosines,
            seconds: 0.0,
        },
    ))
}

/// Ridge regression towards a prior by conjugate gradients from `start` (at most `iterations`
/// steps), one system per basis direction run in step: `(XᵀX + λI) A = XᵀZ + λ·prior` over
/// the samples `use_`, with λ relative to XᵀX's mean diagonal. Each product with `XᵀX` runs
/// on all cores in two halves, `X·P` by sample and `Xᵀ(X·P)` by term over a transposed index,
/// each value summed in one fixed order: the same table whatever the core count.
fn solve(
    xs: &[&[(usize, f32)]],
    z: &[Vec<f32>],
    use_: &[usize],
    (prior, start): (&[f32], &[f32]),
    rank: usize,
    ridge: f32,
    iterations: usize,
) -> Vec<f32> {
    let terms = prior.len() / rank;
    // The transposed index: for each term, the (sample slot, weight) pairs that use it.
    let mut by_term: Vec<Vec<(u32, f32)>> = vec![Vec::new(); terms];
    for (slot, &i) in use_.iter().enumerate() {
        for &(t, w) in xs[i] {
            by_term[t].push((slot as u32, w));
        }
    }
    let diag: Vec<f32> = by_term
        .iter()
        .map(|col| col.iter().map(|(_, w)| w * w).sum())
        .collect();
    let used = diag.iter().filter(|&&d| d > 0.0).count().max(1);
    let lambda = ridge * diag.iter().sum::<f32>() / used as f32;
    // M·P = Xᵀ(X·P) + λP.
    // X·P is written into one buffer for the whole solve (a fresh one per step cost a
    // twelve-megabyte clear and its page faults each time).
    let mut xp = vec![0f32; use_.len() * rank];
    let mut apply = |p: &[f32]| -> Vec<f32> {
        xp.par_chunks_mut(rank)
            .zip(use_.par_iter())
            .for_each(|(row, &i)| {
                row.fill(0.0);
                for &(t, w) in xs[i] {
                    for (a, b) in row.iter_mut().zip(&p[t * rank..(t + 1) * rank]) {
                        *a += w * b;
                    }
                }
            });
        let mut out: Vec<f32> = p.iter().map(|v| v * lambda).collect();
        out.par_chunks_mut(rank)
            .zip(by_term.par_iter())
            .for_each(|(row, col)| {
                for &(slot, w) in col {
                    let s = slot as usize;
                    for (a, b) in row.iter_mut().zip(&xp[s * rank..(s + 1) * rank]) {
                        *a += w * b;
                    }
                }
            });
        out
    };
    let mut rhs: Vec<f32> = prior.iter().map(|p| p * lambda).collect();
    rhs.par_chunks_mut(rank)
        .zip(by_term.par_iter())
        .for_each(|(row, col)| {
            for &(slot, w) in col {
                for (a, b) in row.iter_mut().zip(&z[use_[slot as usize]]) {
                    *a += w * b;
                }
            }
        });
    let mut a = start.to_vec();
    let ma = apply(&a);
    let mut r: Vec<f32> = rhs.iter().zip(&ma).map(|(b, m)| b - m).collect();
    let mut p = r.clone();
    let col_dot = |u: &[f32], v: &[f32]| -> Vec<f64> {
        let mut s = vec![0f64; rank];
        for (cu, cv) in u.chunks(rank).zip(v.chunks(rank)) {
            for k in 0..rank {
                s[k] += (cu[k] * cv[k]) as f64;
            }
        }
        s
    };
    let mut rr = col_dot(&r, &r);
    // Relative to the right-hand side, not the first residual: a good start needs fewer steps.
    let bb: f64 = col_dot(&rhs, &rhs).iter().sum();
    for _ in 0..iterations {
        // Solved to float precision (a large ridge weight gets there in 20-30 steps): more
        // steps would change nothing the table keeps.
        if rr.iter().sum::<f64>() <= bb * CG_TOLERANCE * CG_TOLERANCE {
            break;
        }
        let mp = apply(&p);
        let pmp = col_dot(&p, &mp);
        let alpha: Vec<f32> = (0..rank)
            .map(|k| {
                if pmp[k] > 0.0 {
                    (rr[k] / pmp[k]) as f32
                } else {
                    0.0
                }
            })
            .collect();
        // Row by row, so each column's step is a lane (no index arithmetic per value).
        for (((ar, rr_), pr), mr) in a
            .chunks_exact_mut(rank)
            .zip(r.chunks_exact_mut(rank))
            .zip(p.chunks_exact(rank))
            .zip(mp.chunks_exact(rank))
        {
            for k in 0..rank {
                ar[k] += alpha[k] * pr[k];
                rr_[k] -= alpha[k] * mr[k];
            }
        }
        let rr_new = col_dot(&r, &r);
        let beta: Vec<f32> = (0..rank)
            .map(|k| {
                if rr[k] > 0.0 {
                    (rr_new[k] / rr[k]) as f32
                } else {
                    0.0
                }
            })
            .collect();
        for (pr, rr_) in p.chunks_exact_mut(rank).zip(r.chunks_exact(rank)) {
            for ((pv, rv), b) in pr.iter_mut().zip(rr_).zip(&beta) {
                *pv = rv + b * *pv;
            }
        }
        rr = rr_new;
    }
    a
}

fn mean_cosine(
    xs: &[&[(usize, f32)]],
    samples: &[(WeightedTerms, &[f32])],
    held: &[usize],
    rows: &[f32],
    basis: &[f32],
    rank: usize,
    dim: usize,
) -> f32 {
    let mut total = 0f64;
    for &i in held {
        let mut pooled = vec![0f32; rank];
        for &(t, w) in xs[i] {
            for (p, r) in pooled.iter_mut().zip(&rows[t * rank..(t + 1) * rank]) {
                *p += w * r;
            }
        }
        let mut v = vec![0f32; dim];
        for (p, b) in pooled.iter().zip(basis.chunks(dim)) {
            for (x, y) in v.iter_mut().zip(b) {
                *x += p * y;
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            let dot: f32 = v.iter().zip(samples[i].1).map(|(a, b)| a * b).sum();
            total += (dot / norm) as f64;
        }
    }
    (total / held.len().max(1) as f64) as f32
}
