//! `lantern tune`: chooses the hybrid fusion by leave-one-corpus-out evaluation.
//!
//! Every fusion on a grid is scored on every labelled set; for each set in turn, the fusion
//! with the best mean MRR@10 on the *other* sets is reported on the held-out one. The figures
//! therefore say what a site the weights were never fitted to would get.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use lantern_engine::{Fusion, Mode, PageScore, VectorNorm};

use crate::eval::{
    auroc, auroc_by, embed_all, load_golden, metrics, one_question, outcome, Metrics, Outcome,
    Question,
};
use crate::searcher::{QueryEncoder, Searcher};

/// One labelled set: a name, its bundle and its questions.
#[derive(Debug, Clone)]
pub struct TuneSet {
    /// Short name used in the report.
    pub name: String,
    /// The bundle built from the set's corpus.
    pub bundle: PathBuf,
    /// The set's golden questions.
    pub golden: PathBuf,
}

impl std::str::FromStr for TuneSet {
    type Err = anyhow::Error;
    /// `NAME=BUNDLE:GOLDEN`; a NAME of the form `SITE/SET` groups sets of one site.
    fn from_str(s: &str) -> Result<Self> {
        let (name, rest) = s.split_once('=').context("a set is NAME=BUNDLE:GOLDEN")?;
        let (bundle, golden) = rest
            .split_once(':')
            .context("a set is NAME=BUNDLE:GOLDEN")?;
        if name.is_empty() || bundle.is_empty() || golden.is_empty() {
            bail!("a set is NAME=BUNDLE:GOLDEN, got {s:?}");
        }
        Ok(TuneSet {
            name: name.into(),
            bundle: bundle.into(),
            golden: golden.into(),
        })
    }
}

/// The fusions tried, each with three ways of pooling a page's sections: convex combinations
/// (vector weights 0.1 to 0.9, six keyword powers, both cosine normalizations), adaptive ones
/// (seven midpoints, three steepnesses, both normalizations) and RRF at three constants.
pub fn grid() -> Vec<(Fusion, PageScore)> {
    let mut out = Vec::new();
    let pages = [
        PageScore::Sections(0.0),
        PageScore::Sections(0.25),
        PageScore::Sections(0.5),
        PageScore::Fused,
    ];
    for page in pages {
        for keyword_power in [0.0, 0.5, 1.0, 1.5, 2.0, 3.0] {
            for vector in [VectorNorm::Raw, VectorNorm::MinMax] {
                for w in 1..=9 {
                    let fusion = Fusion::Convex {
                        vector_weight: w as f32 / 10.0,
                        keyword_power,
                        vector,
                    };
                    out.push((fusion, page));
                }
            }
        }
        for midpoint in [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5] {
            for steepness in [5.0, 10.0, 20.0] {
                for vector in [VectorNorm::Raw, VectorNorm::MinMax] {
                    let fusion = Fusion::Adaptive {
                        midpoint,
                        steepness,
                        vector,
                    };
                    out.push((fusion, page));
                }
            }
        }
        for k in [10.0, 30.0, 60.0] {
            out.push((Fusion::Rrf { k }, page));
        }
    }
    out
}

/// A fusion as one line of the report.
pub fn describe((fusion, page): (Fusion, PageScore)) -> String {
    let f = match fusion {
        Fusion::Convex {
            vector_weight,
            keyword_power,
            vector,
        } => format!("convex w={vector_weight:.1} p={keyword_power:.1} cos={vector:?}"),
        Fusion::Adaptive {
            midpoint,
            steepness,
            vector,
        } => format!("adaptive mid={midpoint:.2} steep={steepness:.0} cos={vector:?}"),
        Fusion::Rrf { k } => format!("rrf k={k:.0}"),
    };
    match page {
        PageScore::Sections(w) => format!("{f} page+{w:.2}"),
        PageScore::Fused => format!("{f} page-fused"),
    }
}

/// Pages ranked by their best section alone, as before page pooling.
const BEST_SECTION: PageScore = PageScore::BEST_SECTION;

struct Loaded {
    name: String,
    searcher: Searcher,
    questions: Vec<Question>,
    vectors: Vec<(Vec<f32>, f64)>,
}

impl Loaded {
    fn outcomes(&self, mode: Mode, fusion: (Fusion, PageScore)) -> Vec<Outcome> {
        self.questions
            .iter()
            .zip(&self.vectors)
            .map(|(q, (v, _))| {
                outcome(
                    self.searcher.engine(),
                    q,
                    (v, self.searcher.encoder()),
                    mode,
                    fusion,
                )
            })
            .collect()
    }
}

fn all(o: &[Outcome]) -> Metrics {
    metrics(&o.iter().collect::<Vec<_>>())
}

fn of_group(o: &[Outcome], g: &str) -> Metrics {
    metrics(&o.iter().filter(|o| o.group == g).collect::<Vec<_>>())
}

/// Metrics on all answerable questions (`"all"`) and on each question type.
type Summary = BTreeMap<String, Metrics>;

fn summary(o: &[Outcome]) -> Summary {
    let mut groups: Vec<&str> = o.iter().map(|o| o.group.as_str()).collect();
    groups.sort();
    groups.dedup();
    let mut s: Summary = groups
        .into_iter()
        .map(|g| (g.to_string(), of_group(o, g)))
        .filter(|(_, m)| m.n > 0)
        .collect();
    s.insert("all".into(), all(o));
    s
}

/// The CI gate's slack: on any question type hybrid may trail the better part by this much.
pub const TRAIL: f64 = 0.01;

/// How far a hybrid summary clears the bars against keyword and vector summaries (negative:
/// missed): the smaller of its MRR@10 lead over the better part and its paraphrase hit@1 lead
/// over vector.
fn bar_margin(hybrid: &Summary, keyword: &Summary, vector: &Summary) -> f64 {
    let mrr = |s: &Summary| s.get("all").map_or(0.0, |m| m.mrr10);
    let lead = mrr(hybrid) - mrr(keyword).max(mrr(vector));
    match (hybrid.get("paraphrase"), vector.get("paraphrase")) {
        (Some(h), Some(v)) => lead.min(h.hit1 - v.hit1),
        _ => lead,
    }
}

/// Does hybrid stay within [`TRAIL`] (or one question, if that is more) of the better part on
/// every question type (the CI gate)?
fn within_trail(hybrid: &Summary, keyword: &Summary, vector: &Summary) -> bool {
    let mrr = |s: &Summary, g: &str| s.get(g).map_or(0.0, |m| m.mrr10);
    hybrid.iter().all(|(g, m)| {
        let allowed = TRAIL.max(one_question(m.n));
        mrr(hybrid, g) + allowed >= mrr(keyword, g).max(mrr(vector, g))
    })
}

/// Runs the leave-one-corpus-out study and writes the report.
pub fn tune(
    sets: &[TuneSet],
    model: &lantern_embedder::Model,
    encoder: QueryEncoder,
    show_grid: bool,
    json: Option<&Path>,
    out: &mut dyn Write,
) -> Result<()> {
    if sets.len() < 2 {
        bail!("leave-one-out needs at least two sets");
    }
    let loaded = load_sets(sets, model, encoder)?;
    let grid = grid();
    // scores[g][s]: hybrid summary of grid point g on set s.
    let scores: Vec<Vec<Summary>> = grid
        .iter()
        .map(|&f| {
            loaded
                .iter()
                .map(|l| summary(&l.outcomes(Mode::Hybrid, f)))
                .collect()
        })
        .collect();
    let mrr: Vec<Vec<f64>> = scores
        .iter()
        .map(|row| row.iter().map(|m| m["all"].mrr10).collect())
        .collect();

    let default = (Fusion::default(), PageScore::default());
    // Keyword and vector alone on each set, under the same page pooling as the fusion they are
    // compared with (pooling is a ranking rule of every mode, not a property of fusion).
    let pools: Vec<PageScore> = {
        let mut v: Vec<PageScore> = grid.iter().map(|g| g.1).collect();
        v.dedup();
        v
    };
    // baselines[pool][set] = (keyword, vector)
    let baselines: Vec<Vec<(Summary, Summary)>> = pools
        .iter()
        .map(|&page| {
            loaded
                .iter()
                .map(|l| {
                    (
                        summary(&l.outcomes(Mode::Keyword, (Fusion::RRF, page))),
                        summary(&l.outcomes(Mode::Vector, (Fusion::RRF, page))),
                    )
                })
                .collect()
        })
        .collect();
    let pool_of = |g: usize| pools.iter().position(|p| *p == grid[g].1).unwrap_or(0);
    if let Some(path) = json {
        write_json(path, &loaded, &grid, &scores, (&pools, &baselines))?;
    }
    let meets = |g: usize, s: usize| {
        let (kw, vec) = &baselines[pool_of(g)][s];
        bar_margin(&scores[g][s], kw, vec) >= 0.0 && within_trail(&scores[g][s], kw, vec)
    };
    if show_grid {
        write_grid(&loaded, &grid, &scores, meets, out)?;
    }
    write_baselines(&loaded, (&pools, &baselines), out)?;
    writeln!(out, "engine default: {}", describe(default))?;
    // Sets named `SITE/...` share a site: held out together, so a site's navigational set
    // cannot tune the fusion reported on its labelled one.
    let site = |s: usize| site_of(&loaded[s].name);
    let tuning = |s: usize, held: Option<usize>| held.is_none_or(|h| site(s) != site(h));
    let mean = |g: usize, skip: Option<usize>| {
        let v: Vec<f64> = (0..loaded.len())
            .filter(|&s| tuning(s, skip))
            .map(|s| mrr[g][s])
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let margin = |g: usize, s: usize| {
        let (kw, vec) = &baselines[pool_of(g)][s];
        bar_margin(&scores[g][s], kw, vec)
    };
    // The rule: the fusion whose worst margin over the tuning sets is largest (the bars are
    // per site, so the worst site is what counts), ties broken by mean MRR@10.
    let best_on = |slice: &[usize], skip: Option<usize>| {
        let worst = |g: usize| {
            (0..loaded.len())
                .filter(|&s| tuning(s, skip))
                .map(|s| margin(g, s))
                .fold(f64::INFINITY, f64::min)
        };
        slice
            .iter()
            .copied()
            .max_by(|&a, &b| {
                worst(a)
                    .total_cmp(&worst(b))
                    .then(mean(a, skip).total_cmp(&mean(b, skip)))
            })
            .unwrap_or(0)
    };
    let whole: Vec<usize> = (0..grid.len()).collect();
    let family: Vec<usize> = (0..grid.len())
        .filter(|&g| {
            std::mem::discriminant(&grid[g].0) == std::mem::discriminant(&default.0)
                && grid[g].1 == default.1
        })
        .collect();
    let overall = best_on(&whole, None);
    writeln!(
        out,
        "best on all sets together: {} (worst margin {:.3}, mean MRR@10 {:.3})",
        describe(grid[overall]),
        (0..loaded.len())
            .map(|s| margin(overall, s))
            .fold(f64::INFINITY, f64::min),
        mean(overall, None)
    )?;
    writeln!(out)?;
    write_held_out_header(out)?;
    for (s, l) in loaded.iter().enumerate() {
        let picks = [
            ("tuned-grid", best_on(&whole, Some(s))),
            ("tuned-family", best_on(&family, Some(s))),
        ];
        for (name, pick) in picks {
            writeln!(
                out,
                "{:<10} {name}: {} (held-out margin {:+.3}: bars {})",
                l.name,
                describe(grid[pick]),
                margin(pick, s),
                if margin(pick, s) >= 0.0 {
                    "met"
                } else {
                    "missed"
                }
            )?;
        }
        write_arms(l, [grid[picks[0].1], grid[picks[1].1]], default, out)?;
    }
    calibrate_abstention(&loaded, model, out)
}

/// Each set's bundle opened with the model and its questions embedded.
fn load_sets(
    sets: &[TuneSet],
    model: &lantern_embedder::Model,
    encoder: QueryEncoder,
) -> Result<Vec<Loaded>> {
    let mut loaded = Vec::new();
    for s in sets {
        let mut searcher = Searcher::open(&s.bundle, Some(model))?;
        searcher.set_encoder(encoder)?;
        let questions = load_golden(&s.golden)?;
        let vectors = embed_all(&searcher, &questions)?;
        loaded.push(Loaded {
            name: s.name.clone(),
            searcher,
            questions,
            vectors,
        });
    }
    Ok(loaded)
}

/// Keyword and vector alone: per page pooling and set, `baselines[pool][set]`.
type Baselines<'a> = (&'a [PageScore], &'a [Vec<(Summary, Summary)>]);

/// Every fusion's and baseline's metrics per set, as JSON at `path`.
fn write_json(
    path: &Path,
    loaded: &[Loaded],
    grid: &[(Fusion, PageScore)],
    scores: &[Vec<Summary>],
    (pools, baselines): Baselines,
) -> Result<()> {
    let names: Vec<&str> = loaded.iter().map(|l| l.name.as_str()).collect();
    let doc = serde_json::json!({
        "sets": names,
        "grid": grid.iter().zip(scores).map(|(f, s)| serde_json::json!({
            "fusion": describe(*f), "pool": format!("{:?}", f.1), "sets": s,
        })).collect::<Vec<_>>(),
        "baselines": pools.iter().zip(baselines).map(|(p, b)| serde_json::json!({
            "pool": format!("{p:?}"),
            "sets": b.iter().map(|(k, v)| serde_json::json!({"keyword": k, "vector": v})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    std::fs::write(path, serde_json::to_string_pretty(&doc)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Every fusion's MRR@10 and paraphrase hit@1 on each set, starred where `meets` holds on
/// every set.
fn write_grid(
    loaded: &[Loaded],
    grid: &[(Fusion, PageScore)],
    scores: &[Vec<Summary>],
    meets: impl Fn(usize, usize) -> bool,
    out: &mut dyn Write,
) -> Result<()> {
    let names: Vec<&str> = loaded.iter().map(|l| l.name.as_str()).collect();
    writeln!(
        out,
        "grid: MRR@10 / paraphrase hit@1 per set ({}); * meets the bars and the gate on every set",
        names.join(", ")
    )?;
    for (g, f) in grid.iter().enumerate() {
        let cells: Vec<String> = scores[g]
            .iter()
            .map(|m| match m.get("paraphrase") {
                None => format!("{:.3} / -    ", m["all"].mrr10),
                Some(p) => format!("{:.3} / {:.3}", m["all"].mrr10, p.hit1),
            })
            .collect();
        let star = if (0..loaded.len()).all(|s| meets(g, s)) {
            "*"
        } else {
            " "
        };
        writeln!(out, "{star} {:<44} {}", describe(*f), cells.join(" "))?;
    }
    Ok(())
}

/// The head of the leave-one-site-out table.
fn write_held_out_header(out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "leave one site out: tuned on the other sites' sets, reported on the held-out set (page level);"
    )?;
    writeln!(
        out,
        "bars: MRR@10 >= the better single retriever's, paraphrase hit@1 >= vector's"
    )?;
    writeln!(
        out,
        "{:<10} {:<14} {:<14} {:>4} {:>6} {:>6} {:>7}",
        "held out", "arm", "questions", "n", "hit@1", "hit@5", "MRR@10"
    )?;
    Ok(())
}

/// Keyword's and vector's MRR@10 on each set under each page pooling.
fn write_baselines(
    loaded: &[Loaded],
    (pools, baselines): Baselines,
    out: &mut dyn Write,
) -> Result<()> {
    for (pool, row) in pools.iter().zip(baselines) {
        for (l, (kw, vec)) in loaded.iter().zip(row) {
            let para = vec
                .get("paraphrase")
                .map_or("-".into(), |m| format!("{:.3}", m.hit1));
            writeln!(
                out,
                "{:?} {}: keyword MRR@10 {:.3}, vector MRR@10 {:.3}, vector paraphrase hit@1 {para}",
                pool,
                l.name,
                kw["all"].mrr10,
                vec["all"].mrr10,
            )?;
        }
    }
    Ok(())
}

/// The held-out set's metrics for each arm: both retrievers, RRF, the two tuned fusions
/// (`tuned`: the grid's and the default family's) and the default, overall and per type.
fn write_arms(
    l: &Loaded,
    tuned: [(Fusion, PageScore); 2],
    default: (Fusion, PageScore),
    out: &mut dyn Write,
) -> Result<()> {
    let mut groups: Vec<String> = l.questions.iter().map(|q| q.group()).collect();
    groups.sort();
    groups.dedup();
    let arms: [(&str, Mode, (Fusion, PageScore)); 6] = [
        ("keyword", Mode::Keyword, (Fusion::RRF, BEST_SECTION)),
        ("vector", Mode::Vector, (Fusion::RRF, BEST_SECTION)),
        ("rrf", Mode::Hybrid, (Fusion::RRF, BEST_SECTION)),
        ("tuned-grid", Mode::Hybrid, tuned[0]),
        ("tuned-family", Mode::Hybrid, tuned[1]),
        ("default", Mode::Hybrid, default),
    ];
    for (name, mode, f) in arms {
        let o = l.outcomes(mode, f);
        let mut rows = vec![("all".to_string(), all(&o))];
        for g in &groups {
            if g != "unanswerable" {
                rows.push((g.clone(), of_group(&o, g)));
            }
        }
        for (label, m) in rows {
            writeln!(
                out,
                "{:<10} {:<14} {:<14} {:>4} {:>6.3} {:>6.3} {:>7.3}",
                l.name, name, label, m.n, m.hit1, m.hit5, m.mrr10
            )?;
        }
    }
    Ok(())
}

/// The site a set belongs to: `rust` for `rust/nav` and for `rust`.
fn site_of(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

/// Share of unanswerable questions that must get "no good match" on every set.
pub const ABSTAIN_TARGET: f64 = 0.8;

/// Reports how the best-cosine threshold would abstain on each set and chooses the model's
/// default: the lowest threshold at which every set with unanswerable questions abstains on at
/// least [`ABSTAIN_TARGET`] of them (lowest, so that answerable questions abstain least).
fn calibrate_abstention(
    loaded: &[Loaded],
    model: &lantern_embedder::Model,
    out: &mut dyn Write,
) -> Result<()> {
    let default = (Fusion::default(), PageScore::default());
    let outcomes: Vec<Vec<Outcome>> = loaded
        .iter()
        .map(|l| l.outcomes(Mode::Hybrid, default))
        .collect();
    writeln!(out)?;
    writeln!(
        out,
        "abstention: \"no good match\" when the best cosine is under t and no section holds every query word (a question the model cannot read: when no section holds any of its words)"
    )?;
    for (l, o) in loaded.iter().zip(&outcomes) {
        if let Some(auc) = auroc(o) {
            writeln!(out, "{}: AUROC of the best cosine {auc:.3}", l.name)?;
        }
    }
    // Abstains when `score` is under `t` and no section holds every word.
    let rate =
        |o: &[Outcome], score: &dyn Fn(&Outcome) -> Option<f32>, t: f32, answerable: bool| {
            let set: Vec<&Outcome> = o.iter().filter(|o| o.answerable == answerable).collect();
            // A question the model cannot read abstains on its words alone, whatever `t`.
            let abstains = |o: &&&Outcome| match o.unread_script {
                true => o.no_good_match,
                false => !o.all_words && score(o).is_some_and(|c| c < t),
            };
            (!set.is_empty()).then(|| set.iter().filter(abstains).count() as f64 / set.len() as f64)
        };
    let cosine = |o: &Outcome| o.best_cosine;
    let mut header = format!("{:>5}", "t");
    for l in loaded {
        header += &format!("  {:>24}", format!("{}: unans / answerable", l.name));
    }
    writeln!(out, "{header}")?;
    let mut chosen = None;
    for step in 30..=50 {
        let t = step as f32 / 100.0;
        let mut line = format!("{t:>5.2}");
        let mut all_meet = true;
        for o in &outcomes {
            let un = rate(o, &cosine, t, false);
            let an = rate(o, &cosine, t, true).unwrap_or(0.0);
            all_meet &= un.is_none_or(|u| u >= ABSTAIN_TARGET);
            let un = un.map_or("-".to_string(), |u| format!("{:.0}%", u * 100.0));
            line += &format!("  {:>24}", format!("{un} / {:.1}%", an * 100.0));
        }
        if all_meet && chosen.is_none() {
            chosen = Some(t);
            line += "  <- lowest meeting the target on every set";
        }
        writeln!(out, "{line}")?;
    }
    let manifest = &model.manifest;
    writeln!(
        out,
        "chosen threshold: {}; the model's manifest has {:.2}",
        chosen.map_or("none meets the target".into(), |t| format!("{t:.2}")),
        manifest.abstain_cosine
    )?;

    // A candidate signal, reported for comparison: the cosine plus a share of the keyword
    // strength (how much of the query, by rarity, the best section holds).
    writeln!(
        out,
        "cosine + w x keyword strength: AUROC per set, and the lowest t declining the target everywhere"
    )?;
    for w in [0.1f32, 0.2, 0.3, 0.5] {
        let score = |o: &Outcome| o.best_cosine.map(|c| c + w * o.keyword_strength);
        let mut line = format!("w={w:.1}");
        for (l, o) in loaded.iter().zip(&outcomes) {
            if let Some(auc) = auroc_by(o, score) {
                line += &format!("  {} AUROC {auc:.3}", l.name);
            }
        }
        let pick = (25..=80).map(|s| s as f32 / 100.0).find(|&t| {
            outcomes
                .iter()
                .all(|o| rate(o, &score, t, false).is_none_or(|u| u >= ABSTAIN_TARGET))
        });
        if let Some(t) = pick {
            line += &format!("; t={t:.2}:");
            for (l, o) in loaded.iter().zip(&outcomes) {
                let un =
                    rate(o, &score, t, false).map_or("-".into(), |u| format!("{:.0}%", u * 100.0));
                let an = rate(o, &score, t, true).unwrap_or(0.0);
                line += &format!(" {} {un} / {:.1}%", l.name, an * 100.0);
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sites_sets_are_held_out_together() {
        assert_eq!(site_of("rust/nav"), "rust");
        assert_eq!(site_of("rust"), "rust");
        assert_ne!(site_of("rust/nav"), site_of("fastapi/nav"));
        let set: TuneSet = "rust/nav=out/r.lantern:out/nav/r.jsonl".parse().unwrap();
        assert_eq!(site_of(&set.name), "rust");
    }
}
