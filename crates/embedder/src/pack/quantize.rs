//! Quantization into the pack's groups (when packing): each int8 tensor, times its scales,
//! coded again in a few bits a value, groups running along the axis its scale does not cover,
//! with one f16 scale per group chosen to minimise the squared error.

use super::Weights;

/// Scale factors tried per group, as fractions of the group's largest magnitude.
const CLIP: [f32; 7] = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7];

/// The groups of a tensor in order: each a list of flat (row-major) indices' start and stride.
fn groups(rows: usize, cols: usize, per_column: bool, group: usize) -> Vec<(usize, usize, usize)> {
    let (lines, len, line_stride, step) = if per_column {
        (cols, rows, 1, cols)
    } else {
        (rows, cols, cols, 1)
    };
    let mut out = Vec::with_capacity(lines * len.div_ceil(group));
    for line in 0..lines {
        let mut at = 0;
        while at < len {
            let n = group.min(len - at);
            out.push((line * line_stride + at * step, step, n));
            at += n;
        }
    }
    out
}

struct Bits {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl Bits {
    fn push(&mut self, code: u32, bits: u32) {
        self.acc |= code << self.n;
        self.n += bits;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// Quantizes one int8 tensor (its values times its scales) into groups of `nbits` codes.
pub fn quantize(
    q: &[i8],
    scale: &[f32],
    rows: usize,
    cols: usize,
    per_column: bool,
    nbits: u8,
    group: usize,
) -> Weights {
    let qmax = (1i32 << (nbits - 1)) - 1;
    let value = |i: usize| {
        let line = if per_column { i % cols } else { i / cols };
        q[i] as f32 * scale[line]
    };
    let mut bits = Bits {
        out: Vec::new(),
        acc: 0,
        n: 0,
    };
    let mut scales = Vec::new();
    for (start, step, n) in groups(rows, cols, per_column, group) {
        let xs: Vec<f32> = (0..n).map(|k| value(start + k * step)).collect();
        let amax = xs.iter().fold(0f32, |m, x| m.max(x.abs()));
        let mut best = (f32::INFINITY, half::f16::ZERO);
        for f in CLIP {
            let s16 = half::f16::from_f32(amax * f / qmax as f32);
            let s = s16.to_f32();
            let err: f32 = xs
                .iter()
                .map(|&x| {
                    let c = if s > 0.0 {
                        (x / s).round().clamp(-(qmax + 1) as f32, qmax as f32)
                    } else {
                        0.0
                    };
                    (c * s - x).powi(2)
                })
                .sum();
            if err < best.0 {
                best = (err, s16);
            }
        }
        let s = best.1.to_f32();
        for &x in &xs {
            let c = if s > 0.0 {
                (x / s).round().clamp(-(qmax + 1) as f32, qmax as f32) as i32
            } else {
                0
            };
            bits.push((c + qmax + 1) as u32, nbits as u32);
        }
        scales.push(best.1.to_bits());
    }
    Weights {
        rows: rows as u32,
        cols: cols as u32,
        per_column,
        codes: bits.finish(),
        scales,
    }
}
