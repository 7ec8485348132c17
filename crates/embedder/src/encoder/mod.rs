//! The packed model run by Lantern's own code: a BERT encoder (embeddings, then layers of
//! self-attention and a feed-forward block, each followed by a residual sum and a layer norm).
//!
//! Why not tract, which runs the ONNX model at build time: in a browser a question's tokens
//! are few (about a dozen), and for so few rows tract's f32 kernels, and its work between the
//! kernels, took 26 ms a question in Chromium; the layers' products done here in integers
//! ([`linear`]) take a fraction of that. Start-up is only the weights' decoding (no graph to
//! analyse or optimise), and the browser's module leaves tract out. Every step is plain
//! arithmetic in a fixed order, with `libm`'s `expf` (softmax's values through a branch-free
//! copy of it, bit for bit) and a fixed `erf` on every target, so the browser's vectors equal
//! the native ones bit for bit. The packer checks this code against
//! tract's run of the same weights (`pack::write`).

mod linear;

pub(crate) use linear::{Linear, Quantized};

use crate::error::{Error, Result};

/// Gain and bias of a layer norm.
pub(crate) struct Norm {
    pub(crate) gamma: Vec<f32>,
    pub(crate) beta: Vec<f32>,
}

/// One encoder layer.
pub(crate) struct Layer {
    pub(crate) query: Linear,
    pub(crate) key: Linear,
    pub(crate) value: Linear,
    pub(crate) output: Linear,
    pub(crate) norm1: Norm,
    pub(crate) up: Linear,
    pub(crate) down: Linear,
    pub(crate) norm2: Norm,
}

/// The encoder: from the word-embedding rows of a sequence's tokens to its hidden states.
pub(crate) struct Encoder {
    pub(crate) hidden: usize,
    pub(crate) heads: usize,
    pub(crate) eps: f32,
    /// One row per position.
    pub(crate) positions: Vec<f32>,
    /// One row per token type.
    pub(crate) token_types: Vec<f32>,
    pub(crate) norm: Norm,
    pub(crate) layers: Vec<Layer>,
}

impl Encoder {
    /// Checks that the parts fit together (a damaged pack is an error, not a panic later).
    pub(crate) fn check(&self) -> Result<()> {
        let h = self.hidden;
        let bad = |m: &str| Err(Error::Model(format!("packed model: its encoder {m}")));
        if h == 0 || self.heads == 0 || !h.is_multiple_of(self.heads) {
            return bad("has heads that do not divide its width");
        }
        if self.positions.is_empty()
            || !self.positions.len().is_multiple_of(h)
            || self.token_types.is_empty()
            || !self.token_types.len().is_multiple_of(h)
        {
            return bad("has embedding tables of the wrong width");
        }
        let norm_ok = |n: &Norm| n.gamma.len() == h && n.beta.len() == h;
        if !norm_ok(&self.norm) || self.eps.is_nan() || self.eps < 0.0 || self.eps.is_infinite() {
            return bad("has a layer norm of the wrong width");
        }
        for l in &self.layers {
            let square = |x: &Linear| x.inputs() == h && x.outputs() == h;
            if !(square(&l.query) && square(&l.key) && square(&l.value) && square(&l.output))
                || l.up.inputs() != h
                || l.down.inputs() != l.up.outputs()
                || l.down.outputs() != h
                || !norm_ok(&l.norm1)
                || !norm_ok(&l.norm2)
            {
                return bad("has a layer whose shapes do not chain");
            }
        }
        if self.layers.is_empty() {
            return bad("has no layer");
        }
        Ok(())
    }

    /// Positions the model has rows for.
    pub(crate) fn max_positions(&self) -> usize {
        self.positions.len() / self.hidden
    }

    /// The hidden states (tokens x hidden) of a sequence given its tokens' word-embedding rows
    /// and their token types.
    pub(crate) fn run(&self, rows: &[f32], types: &[u32]) -> Result<Vec<f32>> {
        Ok(self.run_many(&[(rows, types)])?.remove(0))
    }

    /// [`Encoder::run`] for several sequences at once, each with its own positions and
    /// attention: the layers' products take every sequence's tokens in one pass over the
    /// weights, which is what short texts spend their time on. Every step but attention works
    /// token by token, so each sequence's states are the same bits as alone.
    pub(crate) fn run_many(&self, seqs: &[(&[f32], &[u32])]) -> Result<Vec<Vec<f32>>> {
        let h = self.hidden;
        let total: usize = seqs.iter().map(|(_, types)| types.len()).sum();
        let mut x = Vec::with_capacity(total * h);
        for (rows, types) in seqs {
            let n = types.len();
            if rows.len() != n * h {
                return Err(Error::Model("word rows do not match the tokens".into()));
            }
            if n > self.max_positions() {
                return Err(Error::Model(format!(
                    "{n} tokens, the model reads {}",
                    self.max_positions()
                )));
            }
            for (t, &ty) in types.iter().enumerate() {
                let Some(ty) = self.token_types.get(ty as usize * h..(ty as usize + 1) * h) else {
                    return Err(Error::Model(format!("token type {ty} is unknown")));
                };
                let pos = &self.positions[t * h..(t + 1) * h];
                let word = &rows[t * h..(t + 1) * h];
                x.extend((0..h).map(|d| (word[d] + ty[d]) + pos[d]));
            }
        }
        layer_norm(&mut x, &self.norm, self.eps);
        for layer in &self.layers {
            let input = Quantized::new(&x, h);
            let q = layer.query.forward(&input);
            let k = layer.key.forward(&input);
            let v = layer.value.forward(&input);
            let mut context = Vec::with_capacity(total * h);
            let mut start = 0;
            for (_, types) in seqs {
                let span = start * h..(start + types.len()) * h;
                context.extend(attention(
                    &q[span.clone()],
                    &k[span.clone()],
                    &v[span],
                    types.len(),
                    h,
                    self.heads,
                ));
                start += types.len();
            }
            let attended = layer.output.forward(&Quantized::new(&context, h));
            add(&mut x, &attended);
            layer_norm(&mut x, &layer.norm1, self.eps);
            let mut up = layer.up.forward(&Quantized::new(&x, h));
            gelu_all(&mut up);
            let down = layer.down.forward(&Quantized::new(&up, layer.up.outputs()));
            add(&mut x, &down);
            layer_norm(&mut x, &layer.norm2, self.eps);
        }
        let mut out = Vec::with_capacity(seqs.len());
        let mut rest = x.as_slice();
        for (_, types) in seqs {
            let (one, next) = rest.split_at(types.len() * h);
            out.push(one.to_vec());
            rest = next;
        }
        Ok(out)
    }
}

/// x += y (the residual sum; f32 addition commutes, so the graph's order gives the same bits).
fn add(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(a, &b)| *a += b);
}

/// Normalizes each row of `x` to zero mean and unit variance, then applies gain and bias;
/// rows [`SIDE_BY_SIDE`].
fn layer_norm(x: &mut [f32], norm: &Norm, eps: f32) {
    let h = norm.gamma.len();
    let mut blocks = x.chunks_exact_mut(h * SIDE_BY_SIDE);
    for block in &mut blocks {
        norm_rows::<SIDE_BY_SIDE>(block, norm, eps);
    }
    for row in blocks.into_remainder().chunks_exact_mut(h) {
        norm_rows::<1>(row, norm, eps);
    }
}

/// [`layer_norm`] of `R` rows, each row's sums in the order of its values from -0.0, as
/// `Iterator::sum` adds.
#[inline(always)]
fn norm_rows<const R: usize>(block: &mut [f32], norm: &Norm, eps: f32) {
    let h = norm.gamma.len();
    let mut sum = [-0.0f32; R];
    for d in 0..h {
        for (r, s) in sum.iter_mut().enumerate() {
            *s += block[r * h + d];
        }
    }
    let mean = sum.map(|s| s / h as f32);
    let mut squares = [-0.0f32; R];
    for d in 0..h {
        for (r, s) in squares.iter_mut().enumerate() {
            let v = block[r * h + d];
            *s += (v - mean[r]) * (v - mean[r]);
        }
    }
    for ((row, mean), squares) in block.chunks_exact_mut(h).zip(mean).zip(squares) {
        let inv = 1.0 / (squares / h as f32 + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// The exact GELU (with erf), as the model was trained.
#[inline(always)]
fn gelu(x: f32) -> f32 {
    x * (0.5 * (1.0 + erf(x / std::f32::consts::SQRT_2)))
}

/// erf as a rational function of x over [-4, 4] (1 beyond, to f32 precision): Eigen's and
/// XLA's `fast_erf` coefficients, within 1e-6 of libm's `erff` (tested). Plain arithmetic with
/// no branch or call, so the compiler vectorizes the activation loop (libm's `erff` took an
/// eighth of a question's time in wasm).
// The coefficients as published, though f32 keeps fewer digits.
#[allow(clippy::excessive_precision)]
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_2e-10_f32;
    for a in [
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_600_1e-3,
        -1.609_603_3e-2,
    ] {
        p = p * x2 + a;
    }
    let mut q = -1.456_607_2e-5_f32;
    for b in [-2.133_740_6e-4, -1.682_827e-3, -7.373_329e-3, -1.426_474e-2] {
        q = q * x2 + b;
    }
    x * p / q
}

/// GELU over every value, in AVX2's eight lanes where the processor has them (the same
/// arithmetic per value as SSE2's four and wasm's, so the same floats).
fn gelu_all(x: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { gelu_all_avx2(x) };
    }
    x.iter_mut().for_each(|u| *u = gelu(*u));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gelu_all_avx2(x: &mut [f32]) {
    x.iter_mut().for_each(|u| *u = gelu(*u));
}

/// Multi-head self-attention over one unpadded sequence: each head's softmax(q k^T / sqrt(d)) v.
///
/// A head's keys are transposed first, so that a query's scores against every key grow
/// together, one query value at a time: each score is still summed in the order of its
/// dimensions (the same floats as a dot product at a time), but the scores are independent
/// sums that the compiler runs side by side in SIMD lanes, instead of one chain of dependent
/// additions per score (that chain was half of a chunk's time at 177 tokens).
fn attention(q: &[f32], k: &[f32], v: &[f32], n: usize, h: usize, heads: usize) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { attention_avx2(q, k, v, n, h, heads) };
    }
    attention_in_order(q, k, v, n, h, heads)
}

/// The same arithmetic compiled for AVX2's eight lanes (Rust never fuses a multiply and an
/// add on its own, so the floats are the same as SSE2's and wasm's).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn attention_avx2(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    n: usize,
    h: usize,
    heads: usize,
) -> Vec<f32> {
    attention_in_order(q, k, v, n, h, heads)
}

#[inline(always)]
fn attention_in_order(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    n: usize,
    h: usize,
    heads: usize,
) -> Vec<f32> {
    let d = h / heads;
    let mut out = vec![0f32; n * h];
    let mut scores = vec![0f32; SIDE_BY_SIDE * n];
    let mut shifted = vec![0f32; SIDE_BY_SIDE * n];
    // One head's keys: dimension c of key j at c * n + j, and room for a block read past the
    // last (`Head::dot_block_rows`).
    let mut keys = vec![0f32; d * n + 32];
    // One head's values, value j at j * d: read in order, not a row of all heads' apart (the
    // strided reads waited on the cache).
    let mut values = vec![0f32; d * n];
    for head in 0..heads {
        let cols = head * d..(head + 1) * d;
        for (j, key) in k.chunks_exact(h).enumerate() {
            for (c, &x) in key[cols.clone()].iter().enumerate() {
                keys[c * n + j] = x;
            }
        }
        for (value, row) in values.chunks_exact_mut(d).zip(v.chunks_exact(h)) {
            value.copy_from_slice(&row[cols.clone()]);
        }
        let one = Head {
            keys: &keys,
            v: &values,
            n,
            h,
            cols,
            scale: 1.0 / (d as f32).sqrt(),
        };
        let mut i = 0;
        while i + SIDE_BY_SIDE <= n {
            one.attend::<SIDE_BY_SIDE, SCORE_ROWS>(q, i, &mut out, &mut scores, &mut shifted);
            i += SIDE_BY_SIDE;
        }
        for i in i..n {
            one.attend::<1, 1>(q, i, &mut out, &mut scores, &mut shifted);
        }
    }
    out
}

/// Rows (tokens) worked on side by side where a row's arithmetic is a chain of dependent
/// additions (softmax's maximum and total, a norm's sums): each row keeps its own order, so
/// the floats are those of one row at a time, but eight independent chains overlap instead of
/// each waiting on its own (the chains were most of attention's and the norms' time).
const SIDE_BY_SIDE: usize = 8;

/// Queries whose scores are summed together, sharing each load of the keys: two keep twice
/// the independent sums in flight (one query's were bound by the additions' latency; four
/// gained nothing more with AVX-512's registers). The same vectors; the gain, a few percent at
/// most, is within this machine's run-to-run spread (BENCHMARKS.md).
const SCORE_ROWS: usize = 2;

/// One attention head over one sequence.
struct Head<'a> {
    /// Transposed: dimension c of key j at c * n + j.
    keys: &'a [f32],
    /// This head's values only: dimension c of value j at j * d + c.
    v: &'a [f32],
    n: usize,
    h: usize,
    cols: std::ops::Range<usize>,
    scale: f32,
}

impl Head<'_> {
    /// softmax(q k^T / sqrt(d)) v for the `R` queries from row `i0`, into `out`, their scores
    /// `G` queries at a time.
    #[inline(always)]
    fn attend<const R: usize, const G: usize>(
        &self,
        q: &[f32],
        i0: usize,
        out: &mut [f32],
        scores: &mut [f32],
        shifted: &mut [f32],
    ) {
        let (n, h) = (self.n, self.h);
        let scores = &mut scores[..R * n];
        let shifted = &mut shifted[..R * n];
        // `G` rows' scores at a time ([`SCORE_ROWS`]).
        let mut groups = scores.chunks_exact_mut(G * n);
        for (k, group) in groups.by_ref().enumerate() {
            let r = i0 + G * k;
            let qs: [&[f32]; G] = std::array::from_fn(|g| &q[(r + g) * h..][self.cols.clone()]);
            self.dot_keys_rows::<G>(qs, group);
        }
        let rest = groups.into_remainder();
        let done = R - rest.len() / n;
        for (r, s) in rest.chunks_exact_mut(n).enumerate() {
            self.dot_keys_rows::<1>([&q[(i0 + done + r) * h..][self.cols.clone()]], s);
        }
        scores.iter_mut().for_each(|s| *s *= self.scale);
        let mut max = [f32::NEG_INFINITY; R];
        for j in 0..n {
            for (r, m) in max.iter_mut().enumerate() {
                let s = scores[r * n + j];
                if s > *m {
                    *m = s;
                }
            }
        }
        for ((s, x), m) in scores
            .chunks_exact_mut(n)
            .zip(shifted.chunks_exact_mut(n))
            .zip(max)
        {
            for (s, x) in s.iter_mut().zip(x.iter_mut()) {
                *x = *s - m;
                *s = exp_le0(*x);
            }
        }
        // What `exp_le0` does not cover (far below the best score, or NaN): libm itself. Looked
        // for first in lanes, with no branch per score (the branchy loop was a tenth of
        // attention), as such scores are rare.
        let outside = shifted
            .iter()
            .fold(false, |any, &x| any | !(-87.0..=0.0).contains(&x));
        if outside {
            for (s, &x) in scores.iter_mut().zip(shifted.iter()) {
                if !(-87.0..=0.0).contains(&x) {
                    *s = libm::expf(x);
                }
            }
        }
        let mut total = [0f32; R];
        for j in 0..n {
            for (r, t) in total.iter_mut().enumerate() {
                *t += scores[r * n + j];
            }
        }
        for (s, t) in scores.chunks_exact_mut(n).zip(total) {
            s.iter_mut().for_each(|p| *p /= t);
        }
        let mut first = 0;
        if self.cols.len() == HEAD_DIM {
            // Two rows' weighted sums at once, in registers.
            for (k, pair) in scores.chunks_exact(2 * n).enumerate() {
                let (o0, o1) = self.weigh_values::<HEAD_DIM>(&pair[..n], &pair[n..]);
                let r = i0 + 2 * k;
                out[r * h..][self.cols.clone()].copy_from_slice(&o0);
                out[(r + 1) * h..][self.cols.clone()].copy_from_slice(&o1);
                first = 2 * k + 2;
            }
        }
        let d = self.cols.len();
        for (r, p) in scores.chunks_exact(n).enumerate().skip(first) {
            let o = &mut out[(i0 + r) * h..][self.cols.clone()];
            for (j, p) in p.iter().enumerate() {
                let vj = &self.v[j * d..(j + 1) * d];
                o.iter_mut().zip(vj).for_each(|(a, b)| *a += p * b);
            }
        }
    }

    /// `G` queries' scores against every key, each summed in the order of its dimensions from
    /// -0.0 (`Iterator::sum`'s start), 32 keys at a time in registers; each load of the keys
    /// serves all `G` queries.
    #[inline(always)]
    fn dot_keys_rows<const G: usize>(&self, qs: [&[f32]; G], ss: &mut [f32]) {
        let n = self.n;
        let mut j = 0;
        while j + 32 <= n {
            self.dot_block_rows::<G, 32>(qs, j, 32, ss);
            j += 32;
        }
        while j < n {
            let len = (n - j).min(8);
            self.dot_block_rows::<G, 8>(qs, j, len, ss);
            j += len;
        }
    }

    /// Scores `j..j + len` (`len <= K`) of [`Head::dot_keys_rows`], side by side; `ss` holds
    /// the `G` rows of scores. Always `K` columns are read (past a row's end, the next row's or
    /// the padding: lanes that are dropped), so the loop is the same fixed width whatever
    /// `len` is.
    #[inline(always)]
    fn dot_block_rows<const G: usize, const K: usize>(
        &self,
        qs: [&[f32]; G],
        j: usize,
        len: usize,
        ss: &mut [f32],
    ) {
        let n = self.n;
        let mut acc = [[-0.0f32; K]; G];
        for c in 0..qs[0].len() {
            let row = &self.keys[c * n + j..][..K];
            for (a, q) in acc.iter_mut().zip(qs) {
                let x = q[c];
                for (a, &k) in a.iter_mut().zip(row) {
                    *a += x * k;
                }
            }
        }
        for (g, a) in acc.iter().enumerate() {
            ss[g * n + j..g * n + j + len].copy_from_slice(&a[..len]);
        }
    }

    /// Two rows' probability-weighted sums of the values, each value added in key order from
    /// 0.0 (as into the zeroed output).
    #[inline(always)]
    fn weigh_values<const D: usize>(&self, p0: &[f32], p1: &[f32]) -> ([f32; D], [f32; D]) {
        let (mut o0, mut o1) = ([0f32; D], [0f32; D]);
        for (j, (&a, &b)) in p0.iter().zip(p1).enumerate() {
            let vj = &self.v[j * D..][..D];
            for x in 0..D {
                o0[x] += a * vj[x];
                o1[x] += b * vj[x];
            }
        }
        (o0, o1)
    }
}

/// The width of a head in the models Lantern packs (MiniLM: 384 / 12), worked on in registers.
const HEAD_DIM: usize = 32;

/// libm's `expf` (FreeBSD's e_expf.c) for x in [-87, 0], bit for bit, as selects instead of
/// branches so that softmax's loop vectorizes (the call took 9% of a build). Outside that range
/// the caller uses libm itself.
#[inline(always)]
fn exp_le0(x: f32) -> f32 {
    const LN2_HI: f32 = 6.931_457_5e-1;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const INV_LN2: f32 = std::f32::consts::LOG2_E;
    const P1: f32 = 1.666_662_5e-1;
    const P2: f32 = -2.766_733_3e-3;
    let hx = x.to_bits() & 0x7fff_ffff;
    // libm's argument reduction for x <= 0: k = round(x / ln 2) past 1.5 ln 2, -1 past
    // 0.5 ln 2, else none (then hi = x and lo = 0 give its unreduced formula exactly).
    let k = if hx > 0x3f85_1592 {
        // Within [-126, -0.5] for x in [-87, 0]; beyond (the caller then takes libm's value)
        // kept in i32's range, so a plain conversion serves: `as`, which saturates, ran eight
        // scalar conversions for each eight values (half of softmax's instructions).
        let t = (INV_LN2 * x - 0.5).clamp(-256.0, 0.0);
        let t = if t.is_nan() { 0.0 } else { t };
        // SAFETY: t is finite and within i32's range.
        unsafe { t.to_int_unchecked::<i32>() }
    } else if hx > 0x3eb1_7218 {
        -1
    } else {
        0
    };
    let kf = k as f32;
    let hi = x - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let rr = r * r;
    let c = r - rr * (P1 + rr * P2);
    let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
    // scalbnf(y, k) for k in [-126, 0]: one exact multiply.
    let scaled = y * f32::from_bits(((127 + k) as u32) << 23);
    if hx > 0x3900_0000 {
        scaled
    } else {
        1.0 + x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_le0_is_libms_expf_bit_for_bit() {
        // Every 7th float from -87 to 0 (about 160 million), and the edges of each branch.
        let (lo, hi) = ((-87.0f32).to_bits(), (-0.0f32).to_bits());
        let mut checked = 0u64;
        let mut bits = hi;
        while bits <= lo {
            let x = f32::from_bits(bits);
            assert_eq!(exp_le0(x).to_bits(), libm::expf(x).to_bits(), "{x:e}");
            checked += 1;
            bits += 7;
        }
        for edge in [0x3f85_1592u32, 0x3eb1_7218, 0x3900_0000] {
            for b in edge - 2..=edge + 2 {
                let x = -f32::from_bits(b);
                assert_eq!(exp_le0(x).to_bits(), libm::expf(x).to_bits(), "{x:e}");
            }
        }
        assert_eq!(exp_le0(0.0), 1.0);
        assert!(checked > 100_000_000);
    }

    #[test]
    fn attention_over_one_token_is_its_value() {
        let v: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let out = attention(&[1.0; 8], &[2.0; 8], &v, 1, 8, 2);
        assert_eq!(out, v);
    }

    #[test]
    fn attention_weighs_by_similarity() {
        // Two tokens, one head of 2: the query matches the second key far better.
        let q = [0.0, 0.0, 10.0, 0.0];
        let k = [0.0, 0.0, 10.0, 0.0];
        let v = [1.0, 1.0, 5.0, 5.0];
        let out = attention(&q, &k, &v, 2, 2, 1);
        assert!((out[2] - 5.0).abs() < 1e-3, "{out:?}");
        assert!((out[0] - 3.0).abs() < 1e-6, "equal scores average: {out:?}");
    }

    /// Attention and the norms one row at a time, each sum a plain chain in order: what the
    /// rows worked side by side must equal bit for bit.
    fn attention_row_by_row(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        n: usize,
        h: usize,
        heads: usize,
    ) -> Vec<f32> {
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut out = vec![0f32; n * h];
        for head in 0..heads {
            let cols = head * d..(head + 1) * d;
            for i in 0..n {
                let qi = &q[i * h..][cols.clone()];
                let scores: Vec<f32> = (0..n)
                    .map(|j| {
                        let kj = &k[j * h..][cols.clone()];
                        qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale
                    })
                    .collect();
                let max = scores
                    .iter()
                    .fold(f32::NEG_INFINITY, |m, &s| if s > m { s } else { m });
                let e: Vec<f32> = scores.iter().map(|s| libm::expf(s - max)).collect();
                let total = e.iter().fold(0f32, |t, x| t + x);
                for (j, e) in e.iter().enumerate() {
                    let p = e / total;
                    for (o, x) in out[i * h..][cols.clone()]
                        .iter_mut()
                        .zip(&v[j * h..][cols.clone()])
                    {
                        *o += p * x;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn rows_side_by_side_give_the_floats_of_one_row_at_a_time() {
        // A fixed pseudo-random stream, so a failure repeats.
        let mut seed = 0x9e37_79b9u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed as f32 / u32::MAX as f32 - 0.5) * 6.0
        };
        // Lengths on every side of the blocks (8 rows, 8 and 32 keys); heads of 32 (the
        // registers' path) and of 8 (the general one).
        for (h, heads) in [(64, 2), (16, 2)] {
            for n in [1, 2, 7, 8, 9, 16, 31, 32, 33, 41, 70] {
                let (q, k, v): (Vec<f32>, Vec<f32>, Vec<f32>) = (
                    (0..n * h).map(|_| next()).collect(),
                    (0..n * h).map(|_| next()).collect(),
                    (0..n * h).map(|_| next()).collect(),
                );
                let got = attention(&q, &k, &v, n, h, heads);
                let want = attention_row_by_row(&q, &k, &v, n, h, heads);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "n {n}, h {h}");
            }
            let norm = Norm {
                gamma: (0..h).map(|_| next()).collect(),
                beta: (0..h).map(|_| next()).collect(),
            };
            for rows in [1, 7, 8, 9, 17] {
                let mut x: Vec<f32> = (0..rows * h).map(|_| next()).collect();
                let mut want = x.clone();
                for row in want.chunks_exact_mut(h) {
                    let mean = row.iter().sum::<f32>() / h as f32;
                    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
                    let inv = 1.0 / (var + 1e-12).sqrt();
                    for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
                        *v = (*v - mean) * inv * g + b;
                    }
                }
                layer_norm(&mut x, &norm, 1e-12);
                assert!(
                    x.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{rows} rows"
                );
            }
        }
    }

    #[test]
    fn erf_is_libms_to_float_precision() {
        let mut worst = 0f32;
        for i in -60_000..=60_000 {
            let x = i as f32 / 10_000.0;
            worst = worst.max((erf(x) - libm::erff(x)).abs());
        }
        assert!(worst < 1e-6, "{worst}");
        assert_eq!(erf(f32::INFINITY), erf(4.0));
    }

    #[test]
    fn layer_norm_and_gelu_behave() {
        let norm = Norm {
            gamma: vec![1.0; 4],
            beta: vec![0.5; 4],
        };
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        layer_norm(&mut x, &norm, 1e-12);
        let mean = x.iter().sum::<f32>() / 4.0;
        assert!((mean - 0.5).abs() < 1e-6);
        assert!((gelu(0.0)).abs() < 1e-9 && (gelu(3.0) - 2.99595).abs() < 1e-4);
        assert!(gelu(-3.0).abs() < 5e-3);
    }
}
