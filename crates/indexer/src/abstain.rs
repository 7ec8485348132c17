//! "No good match" calibrated to the site at build time.
//!
//! The model's threshold (its manifest's `abstain_cosine`) was set on sites of 20 to 100 pages.
//! A larger or broader site has, for any question, some section that lands nearer, so the same
//! threshold declines fewer of the questions it cannot answer; a narrow site the reverse. The
//! build measures where this site's unrelated questions land: the best cosine of each of 64
//! generic questions no docs site answers in full ([`PROBES`]), embedded like any query. The
//! threshold is halfway between the model's and the probes' median, so it follows the site
//! half the way. Chosen by leave-one-site-out evaluation over five labelled sets (search.md,
//! `bench/abstain.sh`).

use lantern_engine::Engine;

/// The generic questions, one per line (`#` starts a comment).
pub const PROBES: &str = include_str!("abstain_probes.txt");

/// The probe questions' texts.
pub fn probe_questions() -> Vec<String> {
    PROBES
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Where a bundle's "no good match" threshold came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// `abstain_cosine` in the site's configuration, used as written.
    Configured(f32),
    /// The model's, as nothing could be measured (no probe found a section).
    Model(f32),
    /// Measured on this site.
    Calibrated {
        /// The threshold written to the bundle.
        cosine: f32,
        /// The model's threshold (its manifest's).
        model: f32,
        /// The probes' median best cosine on this site.
        probes_median: f32,
        /// How many probe questions were searched.
        probes: usize,
    },
}

impl Threshold {
    /// The cosine written to the bundle.
    pub fn cosine(&self) -> f32 {
        match *self {
            Threshold::Configured(c) | Threshold::Model(c) => c,
            Threshold::Calibrated { cosine, .. } => cosine,
        }
    }
}

impl std::fmt::Display for Threshold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Threshold::Configured(c) => {
                write!(f, "below cosine {c:.3} (abstain_cosine in the config)")
            }
            Threshold::Model(c) => write!(f, "below cosine {c:.3} (the model's)"),
            Threshold::Calibrated {
                cosine,
                model,
                probes_median,
                probes,
            } => write!(
                f,
                "below cosine {cosine:.3}: halfway between the model's {model:.3} and {probes_median:.3}, the median best match of {probes} questions docs sites do not answer"
            ),
        }
    }
}

/// The threshold for `engine`'s bundle from the probes' vectors (in [`probe_questions`]'s
/// order): halfway between `model` and the median of the probes' best cosines.
pub fn calibrate(engine: &Engine, probe_vectors: &[Vec<f32>], model: f32) -> Threshold {
    let mut best: Vec<f32> = probe_vectors
        .iter()
        .filter_map(|v| engine.best_cosines(v, 1).first().copied())
        .filter(|c| c.is_finite())
        .collect();
    if best.is_empty() {
        return Threshold::Model(model);
    }
    best.sort_by(f32::total_cmp);
    let probes_median = best[best.len() / 2];
    let cosine = ((model + probes_median) / 2.0).clamp(-1.0, 1.0);
    Threshold::Calibrated {
        cosine,
        model,
        probes_median,
        probes: best.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probes_are_many_distinct_questions_and_comments_are_not_probes() {
        let q = probe_questions();
        assert_eq!(q.len(), 64);
        assert!(q
            .iter()
            .all(|l| !l.starts_with('#') && l.split(' ').count() >= 3));
        let distinct: std::collections::HashSet<&String> = q.iter().collect();
        assert_eq!(distinct.len(), q.len());
    }
}
