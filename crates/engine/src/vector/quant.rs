//! int8 quantisation of unit vectors.

use serde::{Deserialize, Serialize};

/// How float components map to int8: `q = round(x * scale)`, clamped to +-127.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quantization {
    /// Multiplier from float component to int8 step.
    pub scale: f32,
}

impl Quantization {
    /// Picks the scale so the 99.9th percentile of |component| maps to 127.
    pub fn fit<'a>(vectors: impl IntoIterator<Item = &'a [f32]>) -> Self {
        let mut mags: Vec<f32> = vectors
            .into_iter()
            .flat_map(|v| v.iter().map(|x| x.abs()))
            .filter(|x| x.is_finite())
            .collect();
        if mags.is_empty() {
            return Quantization { scale: 127.0 };
        }
        let idx = ((mags.len() as f64) * 0.999) as usize;
        let idx = idx.min(mags.len() - 1);
        let (_, q, _) = mags.select_nth_unstable_by(idx, f32::total_cmp);
        let limit = q.max(1e-3);
        Quantization {
            scale: 127.0 / limit,
        }
    }

    /// The int8 form of a vector.
    pub fn quantize(&self, v: &[f32]) -> Vector {
        Vector(
            v.iter()
                .map(|x| (x * self.scale).round().clamp(-127.0, 127.0) as i8)
                .collect(),
        )
    }

    /// Cosine of two quantized unit vectors.
    pub fn cosine(&self, a: &Vector, b: &Vector) -> f32 {
        a.dot(b) as f32 / (self.scale * self.scale)
    }

    /// Cosine between a float query and a quantized vector (asymmetric: the query keeps its
    /// precision).
    pub fn cosine_f32(&self, query: &[f32], v: &Vector) -> f32 {
        self.cosine_f32_raw(query, &v.0)
    }

    /// [`Quantization::cosine_f32`] over a stored slice.
    pub(crate) fn cosine_f32_raw(&self, query: &[f32], v: &[i8]) -> f32 {
        super::dot_f32_i8(query, v) / self.scale
    }
}

/// One chunk's quantized vector.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Vector(pub Vec<i8>);

impl Vector {
    /// Integer dot product.
    pub fn dot(&self, other: &Vector) -> i32 {
        self.0
            .iter()
            .zip(&other.0)
            .map(|(&a, &b)| a as i32 * b as i32)
            .sum()
    }
}
