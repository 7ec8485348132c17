//! A layer's weight times the tokens' activations, in integers: the weight as int8 with a
//! scale per output column (what the packed model decodes to), each token's activations
//! quantized to i16 with a scale of their own. Products are summed exactly in i32 (blocks short
//! enough never to overflow) and scaled once per block, so the order of the integer sums does
//! not matter: the wasm SIMD kernel (`i32x4.dot_i16x8_s`, eight products an instruction, about
//! twice f32's rate), the x86-64 one and the portable one give the same floats, bit for bit.

use crate::error::{Error, Result};

/// Output columns a panel holds (two SIMD vectors of four lanes).
const COLS: usize = 8;
/// Tokens computed together (their accumulators stay in registers).
const TOKENS: usize = 4;
/// Groups of [`TOKENS`] a wide kernel computes at once ([`kernel::block_sums_4_wide`]).
const WIDE: usize = 3;
/// Pairs of inputs summed in i32 before a block is scaled: 128 x 2 x 127 x 32767 < 2^31.
const BLOCK_PAIRS: usize = 128;
/// Largest magnitude of a quantized activation.
const ACT_MAX: f32 = 32767.0;

/// y = x W + b for one layer.
pub(crate) struct Linear {
    k: usize,
    n: usize,
    /// For each panel of 8 columns, for each pair of input rows (2j, 2j+1): the 16 weights
    /// `w[2j][c], w[2j+1][c]` for c in the panel, as the dot-product instruction pairs them.
    panels: Vec<i16>,
    /// The int8 weights' scale of each output column.
    scale: Vec<f32>,
    bias: Vec<f32>,
}

/// A token's activations in i16, in pairs packed as i32 (low half first), and their scale.
pub(crate) struct Quantized {
    k: usize,
    tokens: usize,
    pairs: Vec<i32>,
    scales: Vec<f32>,
}

impl Linear {
    /// From int8 weights `q` (k rows of n, row-major), their column scales and the bias.
    pub(crate) fn new(q: &[i8], scale: Vec<f32>, bias: Vec<f32>, k: usize) -> Result<Linear> {
        let n = scale.len();
        if k == 0
            || n == 0
            || !k.is_multiple_of(2)
            || !n.is_multiple_of(COLS)
            || q.len() != k * n
            || bias.len() != n
        {
            return Err(Error::Model(format!(
                "packed model: a layer of {k} x {n} with {} weights and {} biases cannot run",
                q.len(),
                bias.len()
            )));
        }
        let mut panels = Vec::with_capacity(k * n);
        for p in 0..n / COLS {
            for j in 0..k / 2 {
                for c in p * COLS..(p + 1) * COLS {
                    panels.push(q[2 * j * n + c] as i16);
                    panels.push(q[(2 * j + 1) * n + c] as i16);
                }
            }
        }
        Ok(Linear {
            k,
            n,
            panels,
            scale,
            bias,
        })
    }

    /// Inputs a token has.
    pub(crate) fn inputs(&self) -> usize {
        self.k
    }

    /// Outputs a token has.
    pub(crate) fn outputs(&self) -> usize {
        self.n
    }

    /// `x` (tokens x k, row-major) through the layer: tokens x n.
    pub(crate) fn forward(&self, x: &Quantized) -> Vec<f32> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { self.forward_avx2(x) };
        }
        self.forward_in_order(x)
    }

    /// The same arithmetic with the scaling of the integer sums in AVX2's eight lanes (it ran
    /// one value at a time, a tenth of a build); no multiply and add are fused, so the floats
    /// are SSE2's and wasm's.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn forward_avx2(&self, x: &Quantized) -> Vec<f32> {
        self.forward_in_order(x)
    }

    /// Panel `p`'s integer sums for the tokens from `t0`, scaled into `out`. A method, not a
    /// closure, so that it is compiled into [`Linear::forward_avx2`] with its lanes.
    #[inline(always)]
    fn write(
        &self,
        out: &mut [f32],
        x: &Quantized,
        p: usize,
        t0: usize,
        sums: &[[f32; COLS]; TOKENS],
    ) {
        // Fixed-length slices: no bounds check per value, and the compiler's lanes (each
        // value's arithmetic is the same, in the same order, as one at a time).
        let cols = p * COLS..(p + 1) * COLS;
        let scale: &[f32; COLS] = self.scale[cols.clone()].try_into().expect("a panel");
        let bias: &[f32; COLS] = self.bias[cols.clone()].try_into().expect("a panel");
        for (i, row) in sums.iter().enumerate().take(x.tokens - t0) {
            let tok = t0 + i;
            let s = x.scales[tok];
            let start = tok * self.n + p * COLS;
            let dst: &mut [f32; COLS] =
                (&mut out[start..start + COLS]).try_into().expect("a panel");
            *dst = std::array::from_fn(|c| row[c] * s * scale[c] + bias[c]);
        }
    }

    #[inline(always)]
    fn forward_in_order(&self, x: &Quantized) -> Vec<f32> {
        debug_assert_eq!(x.k, self.k);
        let t = x.tokens;
        let padded = x.scales.len();
        let mut out = vec![0f32; t * self.n];
        let panels = self.n / COLS;
        let panel = |p: usize| &self.panels[p * self.k * COLS..(p + 1) * self.k * COLS];
        // Four or two panels at a time where a kernel computes them together (AVX-512 VNNI:
        // more independent sums in flight).
        let mut p = 0;
        while p < panels {
            let step = if p + 3 < panels {
                4
            } else if p + 1 < panels {
                2
            } else {
                1
            };
            let mut t0 = 0;
            while t0 < t {
                match step {
                    4 => {
                        let four = [panel(p), panel(p + 1), panel(p + 2), panel(p + 3)];
                        // Whole groups only: the activations are padded to one group.
                        let wide = (t0 + WIDE * TOKENS <= padded)
                            .then(|| kernel::block_sums_4_wide(four, x, t0, self.k / 2))
                            .flatten();
                        if let Some(groups) = wide {
                            for (g, sums) in groups.iter().enumerate() {
                                for (i, s) in sums.iter().enumerate() {
                                    self.write(&mut out, x, p + i, t0 + g * TOKENS, s);
                                }
                            }
                            t0 += WIDE * TOKENS;
                            continue;
                        }
                        let sums = kernel::block_sums_4(four, x, t0, self.k / 2);
                        for (i, s) in sums.iter().enumerate() {
                            self.write(&mut out, x, p + i, t0, s);
                        }
                    }
                    2 => {
                        let [a, b] =
                            kernel::block_sums_2([panel(p), panel(p + 1)], x, t0, self.k / 2);
                        self.write(&mut out, x, p, t0, &a);
                        self.write(&mut out, x, p + 1, t0, &b);
                    }
                    _ => self.write(
                        &mut out,
                        x,
                        p,
                        t0,
                        &kernel::block_sums(panel(p), x, t0, self.k / 2),
                    ),
                }
                t0 += TOKENS;
            }
            p += step;
        }
        out
    }
}

impl Quantized {
    /// Quantizes `x` (tokens rows of k values) per token; the token count is padded to whole
    /// groups with zero rows, which the layer computes and drops.
    pub(crate) fn new(x: &[f32], k: usize) -> Quantized {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { Self::new_avx2(x, k) };
        }
        Self::new_in_order(x, k)
    }

    /// The same arithmetic compiled for AVX2's lanes (each value is computed alone, so the
    /// results are SSE2's and wasm's).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn new_avx2(x: &[f32], k: usize) -> Quantized {
        Self::new_in_order(x, k)
    }

    #[inline(always)]
    fn new_in_order(x: &[f32], k: usize) -> Quantized {
        let tokens = x.len() / k;
        let padded = tokens.div_ceil(TOKENS) * TOKENS;
        let mut pairs = vec![0i32; padded * k / 2];
        let mut scales = vec![0f32; padded];
        let mut q = vec![0i16; k];
        for (t, row) in x.chunks_exact(k).enumerate() {
            // The largest magnitude, NaN skipped, in eight lanes (a maximum is exact in any
            // order, so this is the one-at-a-time value; the lanes vectorize).
            let mut lanes = [0f32; 8];
            let chunks = row.chunks_exact(8);
            for &v in chunks.remainder() {
                if v.abs() > lanes[0] {
                    lanes[0] = v.abs();
                }
            }
            for c in chunks {
                for (m, &v) in lanes.iter_mut().zip(c) {
                    let a = v.abs();
                    *m = if a > *m { a } else { *m };
                }
            }
            let mut amax = 0f32;
            for m in lanes {
                if m > amax {
                    amax = m;
                }
            }
            let s = if amax > 0.0 && amax.is_finite() {
                amax / ACT_MAX
            } else {
                1.0
            };
            scales[t] = s;
            let inv = 1.0 / s;
            for (q, &v) in q.iter_mut().zip(row) {
                let x = (v * inv).clamp(-ACT_MAX, ACT_MAX);
                // NaN quantizes to 0, as a saturating cast would make it.
                let x = if x.is_nan() { 0.0 } else { x };
                // Rounds half away from zero; a cast, as round() is a library call in wasm.
                // SAFETY: |x| <= 32767 after the clamp, so x +- 0.5 truncates into i16's range.
                *q = unsafe { (x + 0.5f32.copysign(x)).to_int_unchecked::<i32>() } as i16;
            }
            for (pair, two) in pairs[t * k / 2..(t + 1) * k / 2]
                .iter_mut()
                .zip(q.chunks_exact(2))
            {
                *pair = (two[0] as u16 as u32 | ((two[1] as u16 as u32) << 16)) as i32;
            }
        }
        Quantized {
            k,
            tokens,
            pairs,
            scales,
        }
    }
}

/// A SIMD kernel from its instruction set's operations: the four tokens from `t0`, the panel's
/// eight columns summed over every input, each block's exact i32 sum converted to f32 and added
/// in block order. `load` and `store` are the module's own (unaligned) helpers.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
macro_rules! simd_kernel {
    ($zero_f:expr, $zero_i:expr, $splat:path, $dot:path, $add_i:path, $add_f:path, $cvt:path) => {
        pub(crate) fn block_sums(
            panel: &[i16],
            x: &Quantized,
            t0: usize,
            pairs: usize,
        ) -> [[f32; COLS]; TOKENS] {
            assert!(panel.len() >= pairs * 2 * COLS && x.pairs.len() >= (t0 + TOKENS) * pairs);
            let mut out = [[0f32; COLS]; TOKENS];
            // SAFETY: the loads read within the slices the assertion above bounds; the
            // stores write rows of eight.
            unsafe {
                let mut f = [$zero_f; 2 * TOKENS];
                let mut j0 = 0;
                while j0 < pairs {
                    let end = (j0 + BLOCK_PAIRS).min(pairs);
                    let mut acc = [$zero_i; 2 * TOKENS];
                    for j in j0..end {
                        let w = panel.as_ptr().add(j * 2 * COLS);
                        let (w0, w1) = (load(w), load(w.add(COLS)));
                        for (t, a) in acc.chunks_exact_mut(2).enumerate() {
                            let v = $splat(*x.pairs.get_unchecked((t0 + t) * pairs + j));
                            a[0] = $add_i(a[0], $dot(v, w0));
                            a[1] = $add_i(a[1], $dot(v, w1));
                        }
                    }
                    for (fv, a) in f.iter_mut().zip(acc) {
                        *fv = $add_f(*fv, $cvt(a));
                    }
                    j0 = end;
                }
                for (t, row) in out.iter_mut().enumerate() {
                    store(row.as_mut_ptr(), f[2 * t]);
                    store(row.as_mut_ptr().add(4), f[2 * t + 1]);
                }
            }
            out
        }
    };
}

/// `block_sums_2` and `block_sums_4` for a kernel that computes one panel at a time.
#[cfg(not(target_arch = "x86_64"))]
macro_rules! one_panel_at_a_time {
    () => {
        pub(crate) fn block_sums_2(
            panels: [&[i16]; 2],
            x: &Quantized,
            t0: usize,
            pairs: usize,
        ) -> [[[f32; COLS]; TOKENS]; 2] {
            panels.map(|p| block_sums(p, x, t0, pairs))
        }

        pub(crate) fn block_sums_4(
            panels: [&[i16]; 4],
            x: &Quantized,
            t0: usize,
            pairs: usize,
        ) -> [[[f32; COLS]; TOKENS]; 4] {
            panels.map(|p| block_sums(p, x, t0, pairs))
        }

        pub(crate) fn block_sums_4_wide(
            _: [&[i16]; 4],
            _: &Quantized,
            _: usize,
            _: usize,
        ) -> Option<[[[[f32; COLS]; TOKENS]; 4]; super::WIDE]> {
            None
        }
    };
}

/// `i32x4.dot_i16x8_s`: eight products an instruction.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod kernel {
    use super::{Quantized, BLOCK_PAIRS, COLS, TOKENS};
    use core::arch::wasm32::*;

    unsafe fn load(p: *const i16) -> v128 {
        v128_load(p as *const v128)
    }

    unsafe fn store(p: *mut f32, v: v128) {
        v128_store(p as *mut v128, v)
    }

    simd_kernel!(
        f32x4_splat(0.0),
        i32x4_splat(0),
        i32x4_splat,
        i32x4_dot_i16x8,
        i32x4_add,
        f32x4_add,
        f32x4_convert_i32x4
    );
    one_panel_at_a_time!();
}

/// x86-64: AVX2 where the processor has it (one `vpmaddwd` takes a pair of inputs for all
/// eight columns: twice SSE2's products an instruction), else SSE2, which every x86-64 has.
/// `pmaddwd` is the same pairwise product as `i32x4.dot_i16x8_s`, and each 128-bit half of the
/// AVX2 one is SSE2's, so every path gives the same exact block sums and the same floats.
/// With AVX-512 VNNI, two panels at a time: `vpdpwssd` adds the same pairwise products to
/// sixteen i32 sums in one instruction (exact integers again, so the same floats).
#[cfg(target_arch = "x86_64")]
mod kernel {
    use super::{Quantized, COLS, TOKENS, WIDE};

    pub(super) fn vnni() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }

    pub(super) fn block_sums_2(
        panels: [&[i16]; 2],
        x: &Quantized,
        t0: usize,
        pairs: usize,
    ) -> [[[f32; COLS]; TOKENS]; 2] {
        if vnni() {
            // SAFETY: the processor has AVX-512F and VNNI, checked above.
            unsafe { vnni::block_sums_2(panels, x, t0, pairs) }
        } else {
            panels.map(|p| block_sums(p, x, t0, pairs))
        }
    }

    pub(super) fn block_sums_4(
        panels: [&[i16]; 4],
        x: &Quantized,
        t0: usize,
        pairs: usize,
    ) -> [[[f32; COLS]; TOKENS]; 4] {
        if vnni() {
            // SAFETY: the processor has AVX-512F and VNNI, checked above.
            let [sums] = unsafe { vnni::block_sums_4::<1>(panels, x, t0, pairs) };
            sums
        } else {
            panels.map(|p| block_sums(p, x, t0, pairs))
        }
    }

    /// Three groups of four tokens from `t0` for four panels at once, where a kernel does
    /// that faster than a group at a time (AVX-512 VNNI); else `None`.
    pub(super) fn block_sums_4_wide(
        panels: [&[i16]; 4],
        x: &Quantized,
        t0: usize,
        pairs: usize,
    ) -> Option<[[[[f32; COLS]; TOKENS]; 4]; WIDE]> {
        // SAFETY: the processor has AVX-512F and VNNI, checked first.
        vnni().then(|| unsafe { vnni::block_sums_4::<WIDE>(panels, x, t0, pairs) })
    }

    pub(super) fn block_sums(
        panel: &[i16],
        x: &Quantized,
        t0: usize,
        pairs: usize,
    ) -> [[f32; COLS]; TOKENS] {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked above.
            unsafe { avx2::block_sums(panel, x, t0, pairs) }
        } else {
            sse2::block_sums(panel, x, t0, pairs)
        }
    }

    pub(super) mod sse2 {
        use super::super::{Quantized, BLOCK_PAIRS, COLS, TOKENS};
        use core::arch::x86_64::*;

        unsafe fn load(p: *const i16) -> __m128i {
            _mm_loadu_si128(p as *const __m128i)
        }

        unsafe fn store(p: *mut f32, v: __m128) {
            _mm_storeu_ps(p, v)
        }

        simd_kernel!(
            _mm_setzero_ps(),
            _mm_setzero_si128(),
            _mm_set1_epi32,
            _mm_madd_epi16,
            _mm_add_epi32,
            _mm_add_ps,
            _mm_cvtepi32_ps
        );
    }

    pub(super) mod avx2 {
        use super::super::{Quantized, BLOCK_PAIRS, COLS, TOKENS};
        use core::arch::x86_64::*;

        /// As the SSE2 kernel, the panel's eight columns in one 256-bit register.
        ///
        /// # Safety
        /// The processor must have AVX2.
        #[target_feature(enable = "avx2")]
        pub(crate) unsafe fn block_sums(
            panel: &[i16],
            x: &Quantized,
            t0: usize,
            pairs: usize,
        ) -> [[f32; COLS]; TOKENS] {
            assert!(panel.len() >= pairs * 2 * COLS && x.pairs.len() >= (t0 + TOKENS) * pairs);
            let mut out = [[0f32; COLS]; TOKENS];
            let mut f = [_mm256_setzero_ps(); TOKENS];
            let mut j0 = 0;
            while j0 < pairs {
                let end = (j0 + BLOCK_PAIRS).min(pairs);
                let mut acc = [_mm256_setzero_si256(); TOKENS];
                for j in j0..end {
                    // SAFETY: within the panel, as asserted above.
                    let w = unsafe {
                        _mm256_loadu_si256(panel.as_ptr().add(j * 2 * COLS) as *const __m256i)
                    };
                    for (t, a) in acc.iter_mut().enumerate() {
                        // SAFETY: within the activations, as asserted above.
                        let v = _mm256_set1_epi32(unsafe {
                            *x.pairs.get_unchecked((t0 + t) * pairs + j)
                        });
                        *a = _mm256_add_epi32(*a, _mm256_madd_epi16(v, w));
                    }
                }
                for (fv, a) in f.iter_mut().zip(acc) {
                    *fv = _mm256_add_ps(*fv, _mm256_cvtepi32_ps(a));
                }
                j0 = end;
            }
            for (row, v) in out.iter_mut().zip(f) {
                // SAFETY: a row holds eight floats.
                unsafe { _mm256_storeu_ps(row.as_mut_ptr(), v) };
            }
            out
        }
    }

    pub(super) mod vnni {
        use super::super::{Quantized, BLOCK_PAIRS, COLS, TOKENS};
        use core::arch::x86_64::*;

        /// As the AVX2 kernel for two panels, their sixteen columns in one 512-bit register
        /// (the first panel's in the low half).
        ///
        /// # Safety
        /// The processor must have AVX-512F and AVX-512 VNNI.
        #[target_feature(enable = "avx512f,avx512vnni")]
        pub(crate) unsafe fn block_sums_2(
            panels: [&[i16]; 2],
            x: &Quantized,
            t0: usize,
            pairs: usize,
        ) -> [[[f32; COLS]; TOKENS]; 2] {
            let [pa, pb] = panels;
            assert!(
                pa.len() >= pairs * 2 * COLS
                    && pb.len() >= pairs * 2 * COLS
                    && x.pairs.len() >= (t0 + TOKENS) * pairs
            );
            let mut f = [_mm512_setzero_ps(); TOKENS];
            let mut j0 = 0;
            while j0 < pairs {
                let end = (j0 + BLOCK_PAIRS).min(pairs);
                let mut acc = [_mm512_setzero_si512(); TOKENS];
                for j in j0..end {
                    // SAFETY: within both panels, as asserted above.
                    let w = unsafe {
                        let lo =
                            _mm256_loadu_si256(pa.as_ptr().add(j * 2 * COLS) as *const __m256i);
                        let hi =
                            _mm256_loadu_si256(pb.as_ptr().add(j * 2 * COLS) as *const __m256i);
                        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
                    };
                    for (t, a) in acc.iter_mut().enumerate() {
                        // SAFETY: within the activations, as asserted above.
                        let v = _mm512_set1_epi32(unsafe {
                            *x.pairs.get_unchecked((t0 + t) * pairs + j)
                        });
                        *a = _mm512_dpwssd_epi32(*a, v, w);
                    }
                }
                for (fv, a) in f.iter_mut().zip(acc) {
                    *fv = _mm512_add_ps(*fv, _mm512_cvtepi32_ps(a));
                }
                j0 = end;
            }
            let mut out = [[[0f32; COLS]; TOKENS]; 2];
            for (t, v) in f.iter().enumerate() {
                let mut row = [0f32; 2 * COLS];
                // SAFETY: the row holds sixteen floats.
                unsafe { _mm512_storeu_ps(row.as_mut_ptr(), *v) };
                out[0][t].copy_from_slice(&row[..COLS]);
                out[1][t].copy_from_slice(&row[COLS..]);
            }
            out
        }

        /// Four panels in two 512-bit registers, for `G` groups of four tokens from `t0` at
        /// once: each load of the weights serves 4G tokens, with 8G independent sums in
        /// flight. Eight sums hide the dot product's latency; Ice Lake runs two `vpdpwssd` a
        /// cycle when 24 are in flight (92 -> 146 GMAC/s in a microbenchmark, G = 1 -> 3).
        /// Each panel's and token's sums are its own, block by block, so the floats are those
        /// of one panel and one group at a time.
        ///
        /// # Safety
        /// The processor must have AVX-512F and AVX-512 VNNI.
        #[target_feature(enable = "avx512f,avx512vnni")]
        pub(crate) unsafe fn block_sums_4<const G: usize>(
            panels: [&[i16]; 4],
            x: &Quantized,
            t0: usize,
            pairs: usize,
        ) -> [[[[f32; COLS]; TOKENS]; 4]; G] {
            assert!(
                panels.iter().all(|p| p.len() >= pairs * 2 * COLS)
                    && x.pairs.len() >= (t0 + G * TOKENS) * pairs
            );
            let two = |a: &[i16], b: &[i16], j: usize| {
                // SAFETY: within both panels, as asserted above.
                unsafe {
                    let lo = _mm256_loadu_si256(a.as_ptr().add(j * 2 * COLS) as *const __m256i);
                    let hi = _mm256_loadu_si256(b.as_ptr().add(j * 2 * COLS) as *const __m256i);
                    _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
                }
            };
            let mut f = [[[_mm512_setzero_ps(); 2]; TOKENS]; G];
            let mut j0 = 0;
            while j0 < pairs {
                let end = (j0 + BLOCK_PAIRS).min(pairs);
                let mut acc = [[[_mm512_setzero_si512(); 2]; TOKENS]; G];
                for j in j0..end {
                    let w = [two(panels[0], panels[1], j), two(panels[2], panels[3], j)];
                    for (g, group) in acc.iter_mut().enumerate() {
                        for (t, a) in group.iter_mut().enumerate() {
                            // SAFETY: within the activations, as asserted above.
                            let v = _mm512_set1_epi32(unsafe {
                                *x.pairs.get_unchecked((t0 + g * TOKENS + t) * pairs + j)
                            });
                            a[0] = _mm512_dpwssd_epi32(a[0], v, w[0]);
                            a[1] = _mm512_dpwssd_epi32(a[1], v, w[1]);
                        }
                    }
                }
                for (fg, ag) in f.iter_mut().zip(acc) {
                    for (ft, at) in fg.iter_mut().zip(ag) {
                        for (fv, a) in ft.iter_mut().zip(at) {
                            *fv = _mm512_add_ps(*fv, _mm512_cvtepi32_ps(a));
                        }
                    }
                }
                j0 = end;
            }
            let mut out = [[[[0f32; COLS]; TOKENS]; 4]; G];
            for (og, fg) in out.iter_mut().zip(&f) {
                for (t, ft) in fg.iter().enumerate() {
                    for (h, v) in ft.iter().enumerate() {
                        let mut row = [0f32; 2 * COLS];
                        // SAFETY: the row holds sixteen floats.
                        unsafe { _mm512_storeu_ps(row.as_mut_ptr(), *v) };
                        og[2 * h][t].copy_from_slice(&row[..COLS]);
                        og[2 * h + 1][t].copy_from_slice(&row[COLS..]);
                    }
                }
            }
            out
        }
    }
}

/// The kernel in plain integers and floats: where no SIMD one is, and the tests' reference.
#[cfg_attr(
    any(
        all(target_arch = "wasm32", target_feature = "simd128"),
        target_arch = "x86_64"
    ),
    allow(dead_code)
)]
mod portable {
    use super::{Quantized, BLOCK_PAIRS, COLS, TOKENS};

    /// As the SIMD kernel, in plain integers and floats (the same results).
    pub(super) fn block_sums(
        panel: &[i16],
        x: &Quantized,
        t0: usize,
        pairs: usize,
    ) -> [[f32; COLS]; TOKENS] {
        let mut out = [[0f32; COLS]; TOKENS];
        let mut j0 = 0;
        while j0 < pairs {
            let end = (j0 + BLOCK_PAIRS).min(pairs);
            let mut acc = [[0i32; COLS]; TOKENS];
            for j in j0..end {
                let w = &panel[j * 2 * COLS..(j + 1) * 2 * COLS];
                for (t, a) in acc.iter_mut().enumerate() {
                    let v = x.pairs[(t0 + t) * pairs + j];
                    let (lo, hi) = (v as i16 as i32, (v >> 16) as i16 as i32);
                    for (c, s) in a.iter_mut().enumerate() {
                        *s += lo * w[2 * c] as i32 + hi * w[2 * c + 1] as i32;
                    }
                }
            }
            for (o, a) in out.iter_mut().zip(acc) {
                for (f, s) in o.iter_mut().zip(a) {
                    *f += s as f32;
                }
            }
            j0 = end;
        }
        out
    }
}

#[cfg(not(any(
    all(target_arch = "wasm32", target_feature = "simd128"),
    target_arch = "x86_64"
)))]
mod kernel {
    pub(super) use super::portable::block_sums;
    use super::{Quantized, COLS, TOKENS};
    one_panel_at_a_time!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `k x n` int8 weights spread over the whole range, `step` apart.
    fn weights(k: usize, n: usize, step: usize) -> Vec<i8> {
        (0..k * n)
            .map(|i| ((i * step % 255) as i32 - 127) as i8)
            .collect()
    }

    /// The layer against f32 arithmetic on the same weights: close, as i16 activations allow.
    #[test]
    fn a_layer_matches_float_arithmetic() {
        let (k, n, t) = (300, 16, 5);
        let q = weights(k, n, 37);
        let scale: Vec<f32> = (0..n).map(|c| 0.001 * (c + 1) as f32).collect();
        let bias: Vec<f32> = (0..n).map(|c| c as f32 * 0.1 - 0.5).collect();
        let x: Vec<f32> = (0..t * k)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) / 250.0)
            .collect();
        let layer = Linear::new(&q, scale.clone(), bias.clone(), k).unwrap();
        let y = layer.forward(&Quantized::new(&x, k));
        assert_eq!(y.len(), t * n);
        for tok in 0..t {
            for c in 0..n {
                let exact: f64 = (0..k)
                    .map(|i| x[tok * k + i] as f64 * q[i * n + c] as f64 * scale[c] as f64)
                    .sum::<f64>()
                    + bias[c] as f64;
                let got = y[tok * n + c] as f64;
                assert!(
                    (got - exact).abs() < 1e-3 * (1.0 + exact.abs()),
                    "{got} {exact}"
                );
            }
        }
    }

    /// The SIMD kernel (this target's) and the portable one agree bit for bit, over blocks
    /// and extreme values.
    #[test]
    fn the_kernel_equals_the_portable_one() {
        let pairs = 300;
        let panel: Vec<i16> = (0..pairs * 2 * COLS)
            .map(|i| [127, -127, 0, 5, -64][i % 5] as i16)
            .collect();
        let x: Vec<f32> = (0..TOKENS * pairs * 2)
            .map(|i| ((i * 7919 % 2001) as f32 - 1000.0) * if i % 11 == 0 { 1e3 } else { 1e-2 })
            .collect();
        let q = Quantized::new(&x, pairs * 2);
        let same = |a: [[f32; COLS]; TOKENS], b: [[f32; COLS]; TOKENS]| {
            for (ra, rb) in a.iter().zip(&b) {
                for (x, y) in ra.iter().zip(rb) {
                    assert_eq!(x.to_bits(), y.to_bits());
                }
            }
        };
        let reference = portable::block_sums(&panel, &q, 0, pairs);
        same(kernel::block_sums(&panel, &q, 0, pairs), reference);
        // Both x86-64 paths, whichever this processor takes.
        #[cfg(target_arch = "x86_64")]
        {
            same(kernel::sse2::block_sums(&panel, &q, 0, pairs), reference);
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2.
                same(
                    unsafe { kernel::avx2::block_sums(&panel, &q, 0, pairs) },
                    reference,
                );
            }
        }
        // Two panels together (AVX-512 VNNI where the processor has it): each as alone.
        let other: Vec<i16> = panel.iter().rev().copied().collect();
        let [a, b] = kernel::block_sums_2([&panel, &other], &q, 0, pairs);
        same(a, reference);
        same(b, portable::block_sums(&other, &q, 0, pairs));
        #[cfg(target_arch = "x86_64")]
        if kernel::vnni() {
            // SAFETY: the processor has AVX-512F and VNNI.
            let [a, b] = unsafe { kernel::vnni::block_sums_2([&panel, &other], &q, 0, pairs) };
            same(a, reference);
            same(b, portable::block_sums(&other, &q, 0, pairs));
        }
        // Four panels together: each as alone.
        let third: Vec<i16> = panel.iter().map(|w| w.saturating_neg()).collect();
        let fourth: Vec<i16> = other.iter().map(|w| w / 3).collect();
        let four = [&panel[..], &other[..], &third[..], &fourth[..]];
        let sums = kernel::block_sums_4(four, &q, 0, pairs);
        for (got, p) in sums.into_iter().zip(four) {
            same(got, portable::block_sums(p, &q, 0, pairs));
        }
    }

    /// Many tokens at once (the wide kernel, where the processor has one, and the rest a
    /// group at a time) give each token the same bits as alone.
    #[test]
    fn tokens_together_equal_tokens_alone() {
        let (k, n, t) = (384, 64, 29);
        let q = weights(k, n, 53);
        let layer = Linear::new(
            &q,
            (0..n).map(|c| 0.002 * (c + 1) as f32).collect(),
            (0..n).map(|c| c as f32 * 0.01).collect(),
            k,
        )
        .unwrap();
        let x: Vec<f32> = (0..t * k)
            .map(|i| ((i * 7919 % 2001) as f32 - 1000.0) * if i % 13 == 0 { 1e2 } else { 1e-3 })
            .collect();
        let together = layer.forward(&Quantized::new(&x, k));
        for (tok, row) in x.chunks_exact(k).enumerate() {
            let alone = layer.forward(&Quantized::new(row, k));
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&together[tok * n..(tok + 1) * n]),
                bits(&alone),
                "token {tok}"
            );
        }
        // The wide kernel against the portable one, group by group.
        let pairs = k / 2;
        let quantized = Quantized::new(&x, k);
        let four: [&[i16]; 4] =
            std::array::from_fn(|i| &layer.panels[i * k * COLS..(i + 1) * k * COLS]);
        if let Some(groups) = kernel::block_sums_4_wide(four, &quantized, 4, pairs) {
            for (g, sums) in groups.iter().enumerate() {
                for (s, p) in sums.iter().zip(four) {
                    let want = portable::block_sums(p, &quantized, 4 + g * TOKENS, pairs);
                    assert_eq!(s, &want);
                }
            }
        }
    }

    #[test]
    fn shapes_it_cannot_run_are_refused() {
        assert!(Linear::new(&[0; 3 * 8], vec![1.0; 8], vec![0.0; 8], 3).is_err());
        assert!(Linear::new(&[0; 2 * 7], vec![1.0; 7], vec![0.0; 7], 2).is_err());
        assert!(Linear::new(&[0; 2 * 8], vec![1.0; 8], vec![0.0; 7], 2).is_err());
    }

    #[test]
    fn zero_and_extreme_activations_stay_finite() {
        let layer = Linear::new(&[127; 4 * 8], vec![1.0; 8], vec![0.0; 8], 4).unwrap();
        let y = layer.forward(&Quantized::new(&[0.0; 4], 4));
        assert!(y.iter().all(|&v| v == 0.0));
        let y = layer.forward(&Quantized::new(&[1e30, -1e30, f32::NAN, f32::INFINITY], 4));
        assert!(y.iter().all(|v| v.is_finite()), "{y:?}");
    }
}
