//! The query table: a static query encoder fitted to one bundle.
//!
//! Chunks are embedded by the full model at build time; a query can instead be embedded
//! without any transformer, as the weighted mean of one learned vector per index term of the
//! bundle (its words as keyword search analyses them), mapped into the model's space by a
//! small basis and normalized. The indexer fits the rows so that this approximates the full
//! model's embedding of short texts from the site itself (`lantern_indexer::fit_query_table`).
//! Rows are 4-bit with one scale each (two values a byte), the basis int8: a low rank and few
//! bits keep the file small, as every reader who searches fetches it.
//!
//! A table's cosines run lower than the model's (its vectors are approximations), so each table
//! carries a calibration fitted at build time: the quantiles of the table's best cosines
//! against the bundle's vectors, matched to the model's on the same texts. Search maps every
//! cosine the table gives through it, so fusion and "no good match" see the model's scale.
//!
//! File layout (integers little-endian):
//!
//! ```text
//! magic "LANTERNQ" | format version u32 | payload length u64 | crc32 of payload u32 | payload
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

const MAGIC: [u8; 8] = *b"LANTERNQ";
/// The query-table format this build reads and writes.
pub const QUERY_TABLE_VERSION: u32 = 3;
const PREFIX_LEN: usize = 8 + 4 + 8 + 4;
/// Appended to a bundle's file name to name its query table: `site.lantern.query`.
pub const QUERY_TABLE_SUFFIX: &str = ".query";
/// Largest rank accepted from a file: a damaged one cannot ask for absurd allocations.
const MAX_RANK: u32 = 1024;
/// Knots of the cosine calibration at most (the fit writes [`CALIBRATION_KNOTS`]).
const MAX_KNOTS: usize = 256;
/// Knots the fit writes: quantiles 0, 1/16, ..., 1.
pub const CALIBRATION_KNOTS: usize = 17;

/// A static query encoder for one bundle (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryTable {
    /// Fingerprint of the bundle's term list: rows are indexed by its term ids.
    terms_fingerprint: u32,
    terms: u32,
    dim: u32,
    rank: u32,
    /// `rank` x `dim`, row-major: maps a pooled row into the model's space; int8 with one
    /// scale per basis row.
    basis: Vec<i8>,
    basis_scales: Vec<f32>,
    /// One scale per term: row `t` is `rows[t] * scales[t]`.
    scales: Vec<f32>,
    /// `terms` rows of `rank` 4-bit values from -7 to 7, stored plus 8, two a byte (the first
    /// in the low half); each row starts on a byte.
    rows: Vec<u8>,
    /// `(table cosine, model cosine)` knots, both increasing: the piecewise-linear map from
    /// the table's cosines to the model's scale. Empty: cosines are taken as they are.
    calibration: Vec<(f32, f32)>,
}

impl QueryTable {
    /// Quantizes fitted rows (`terms` x `rank`, row-major) and a basis (`rank` x `dim`) for the
    /// bundle whose terms have `terms_fingerprint`.
    pub fn new(
        terms_fingerprint: u32,
        rows: &[f32],
        basis: &[f32],
        rank: usize,
        dim: usize,
    ) -> Result<Self> {
        if rank == 0 || basis.len() != rank * dim || !rows.len().is_multiple_of(rank) {
            return Err(Error::Inconsistent(
                "query table shapes do not agree".into(),
            ));
        }
        if rows.iter().chain(basis).any(|x| !x.is_finite()) {
            return Err(Error::Inconsistent(
                "query table has non-finite values".into(),
            ));
        }
        let terms = rows.len() / rank;
        let (scales, q) = quantize_rows4(rows, rank);
        let (basis_scales, basis) = quantize_rows(basis, dim);
        Ok(QueryTable {
            terms_fingerprint,
            terms: terms as u32,
            dim: dim as u32,
            rank: rank as u32,
            basis,
            basis_scales,
            scales,
            rows: q,
            calibration: Vec::new(),
        })
    }

    /// Sets the calibration from paired samples of cosines, the table's and the model's on
    /// the same texts (see the module docs): their quantiles are matched, so the map is
    /// increasing whatever the samples. Fewer than two samples leave cosines as they are.
    pub fn calibrate(&mut self, table: &[f32], model: &[f32]) {
        let finite = |v: &[f32]| {
            let mut v: Vec<f32> = v.iter().copied().filter(|x| x.is_finite()).collect();
            v.sort_by(f32::total_cmp);
            v
        };
        let (t, m) = (finite(table), finite(model));
        if t.len() < 2 || m.len() < 2 {
            self.calibration.clear();
            return;
        }
        let at = |v: &[f32], q: f32| v[((v.len() - 1) as f32 * q).round() as usize];
        let mut knots: Vec<(f32, f32)> = Vec::with_capacity(CALIBRATION_KNOTS);
        for i in 0..CALIBRATION_KNOTS {
            let q = i as f32 / (CALIBRATION_KNOTS - 1) as f32;
            let knot = (at(&t, q), at(&m, q));
            // Equal table cosines would make a step: keep the first.
            if knots.last().is_none_or(|k| knot.0 > k.0) {
                knots.push((knot.0, knot.1.max(knots.last().map_or(f32::MIN, |k| k.1))));
            }
        }
        self.calibration = if knots.len() >= 2 { knots } else { Vec::new() };
    }

    /// The calibration's `(table cosine, model cosine)` knots, increasing (empty without one).
    pub fn calibration(&self) -> &[(f32, f32)] {
        &self.calibration
    }

    /// Whether [`QueryTable::calibrate`] gave the table a map to the model's scale.
    pub fn is_calibrated(&self) -> bool {
        self.calibration.len() >= 2
    }

    /// A cosine from this table's vectors on the model's scale (see the module docs). Beyond
    /// the knots, the nearest segment's slope carries on.
    pub fn calibrated(&self, cosine: f32) -> f32 {
        let k = &self.calibration;
        if k.len() < 2 || !cosine.is_finite() {
            return cosine;
        }
        let i = k
            .partition_point(|&(t, _)| t < cosine)
            .clamp(1, k.len() - 1);
        let ((t0, m0), (t1, m1)) = (k[i - 1], k[i]);
        let slope = if t1 > t0 { (m1 - m0) / (t1 - t0) } else { 0.0 };
        (m0 + (cosine - t0) * slope).clamp(-1.0, 1.0)
    }

    /// Rank of the table (values per term).
    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Number of terms it has rows for.
    pub fn terms(&self) -> usize {
        self.terms as usize
    }

    /// The unit-length query vector for weighted term ids; `None` when no term has a row or
    /// the rows cancel out.
    pub fn encode(&self, weighted_terms: &[(usize, f32)]) -> Option<Vec<f32>> {
        let rank = self.rank as usize;
        let stride = rank.div_ceil(2);
        let mut pooled = vec![0f32; rank];
        let mut any = false;
        for &(t, w) in weighted_terms {
            let Some(row) = self.rows.get(t * stride..(t + 1) * stride) else {
                continue;
            };
            let s = self.scales[t] * w;
            for (pair, &b) in pooled.chunks_mut(2).zip(row) {
                pair[0] += s * ((b & 15) as f32 - 8.0);
                if let Some(p) = pair.get_mut(1) {
                    *p += s * ((b >> 4) as f32 - 8.0);
                }
            }
            any = true;
        }
        if !any {
            return None;
        }
        let dim = self.dim as usize;
        let mut v = vec![0f32; dim];
        for ((p, b), s) in pooled
            .iter()
            .zip(self.basis.chunks(dim))
            .zip(&self.basis_scales)
        {
            let ps = p * s;
            for (x, &y) in v.iter_mut().zip(b) {
                *x += ps * y as f32;
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm.is_nan() || norm <= 1e-6 {
            return None;
        }
        v.iter_mut().for_each(|x| *x /= norm);
        Some(v)
    }

    /// Refuses a table fitted to another bundle's terms or another model's dimensions.
    pub(crate) fn check_fits(&self, fingerprint: u32, terms: usize, dim: u32) -> Result<()> {
        if self.terms_fingerprint != fingerprint || self.terms as usize != terms {
            return Err(Error::QueryTable(
                "was fitted to another bundle: build both with the same `lantern build`".into(),
            ));
        }
        if self.dim != dim {
            return Err(Error::QueryTable(format!(
                "has {} dimensions, the bundle's vectors {dim}",
                self.dim
            )));
        }
        Ok(())
    }

    /// Encodes the table as a file.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let payload = postcard::to_allocvec(self).map_err(|e| Error::Encode(e.to_string()))?;
        let mut out = Vec::with_capacity(PREFIX_LEN + payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&QUERY_TABLE_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crate::checksum::crc32(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        Ok(out)
    }

    /// Decodes and checks a table file; never panics on bad input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let bad = |m: String| Err(Error::QueryTable(m));
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            return bad("file is not a Lantern query table (bad magic bytes)".into());
        }
        if bytes.len() < PREFIX_LEN {
            return bad(format!(
                "is truncated: expected at least {PREFIX_LEN} bytes, found {}",
                bytes.len()
            ));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or([0; 4]));
        if version != QUERY_TABLE_VERSION {
            return bad(format!(
                "format version {version} is not supported (this build reads version \
                 {QUERY_TABLE_VERSION}); rebuild it with a matching `lantern`"
            ));
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().unwrap_or([0; 8]));
        let crc = u32::from_le_bytes(bytes[20..24].try_into().unwrap_or([0; 4]));
        let expected = (PREFIX_LEN as u64).saturating_add(len);
        if (bytes.len() as u64) != expected {
            return bad(format!(
                "is truncated or overlong: expected {expected} bytes, found {}",
                bytes.len()
            ));
        }
        let payload = &bytes[PREFIX_LEN..];
        if crate::checksum::crc32(payload) != crc {
            return bad("checksum mismatch: the file is corrupt".into());
        }
        let t: QueryTable = postcard::from_bytes(payload)
            .map_err(|e| Error::QueryTable(format!("could not be decoded: {e}")))?;
        t.validate()?;
        Ok(t)
    }

    fn validate(&self) -> Result<()> {
        let (terms, rank, dim) = (self.terms as usize, self.rank as usize, self.dim as usize);
        let ok = self.rank > 0
            && self.rank <= MAX_RANK
            && self.basis.len() == rank.saturating_mul(dim)
            && self.basis_scales.len() == rank
            && self.scales.len() == terms
            && self.rows.len() == terms.saturating_mul(rank.div_ceil(2))
            && self
                .basis_scales
                .iter()
                .chain(&self.scales)
                .all(|x| x.is_finite())
            && self.calibration.len() <= MAX_KNOTS
            && self
                .calibration
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
            && self
                .calibration
                .iter()
                .all(|(t, m)| t.is_finite() && m.is_finite());
        if ok {
            Ok(())
        } else {
            Err(Error::QueryTable(
                "is inconsistent: sizes do not agree or values are not finite".into(),
            ))
        }
    }
}

/// int8 rows of `width` values, one scale per row.
fn quantize_rows(values: &[f32], width: usize) -> (Vec<f32>, Vec<i8>) {
    let mut scales = Vec::with_capacity(values.len() / width.max(1));
    let mut q = Vec::with_capacity(values.len());
    for row in values.chunks(width.max(1)) {
        let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        scales.push(scale);
        q.extend(
            row.iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
        );
    }
    (scales, q)
}

/// 4-bit rows of `width` values (see [`QueryTable`]), one scale per row, chosen among a few
/// clippings of the row's largest magnitude for the least squared error: outliers are rare in
/// fitted rows, and rounding the many small values well matters more.
fn quantize_rows4(values: &[f32], width: usize) -> (Vec<f32>, Vec<u8>) {
    const CLIP: [f32; 6] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5];
    let width = width.max(1);
    let code = |x: f32, scale: f32| (x / scale).round().clamp(-7.0, 7.0);
    let mut scales = Vec::with_capacity(values.len() / width);
    let mut q = Vec::with_capacity(values.len().div_ceil(2));
    for row in values.chunks(width) {
        let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
        let mut best = (f32::INFINITY, 1.0);
        if max > 0.0 {
            for c in CLIP {
                let scale = c * max / 7.0;
                let err: f32 = row
                    .iter()
                    .map(|&x| (x - code(x, scale) * scale).powi(2))
                    .sum();
                if err < best.0 {
                    best = (err, scale);
                }
            }
        }
        let scale = best.1;
        scales.push(scale);
        for pair in row.chunks(2) {
            let lo = (code(pair[0], scale) + 8.0) as u8;
            let hi = pair.get(1).map_or(8, |&x| (code(x, scale) + 8.0) as u8);
            q.push(lo | (hi << 4));
        }
    }
    (scales, q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> QueryTable {
        // Three terms, rank 2, dimension 3.
        let rows = [1.0, 0.0, 0.0, 1.0, 0.5, 0.5];
        let basis = [1.0, 0.0, 0.0, 0.0, 0.6, 0.8];
        QueryTable::new(7, &rows, &basis, 2, 3).unwrap()
    }

    #[test]
    fn encodes_pooled_rows_through_the_basis() {
        let t = table();
        let v = t.encode(&[(0, 1.0)]).unwrap();
        assert!((v[0] - 1.0).abs() < 0.01 && v[1].abs() < 0.01, "{v:?}");
        let v = t.encode(&[(1, 0.5), (2, 0.5)]).unwrap();
        let n: f32 = v.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-4);
        assert!(v[1] > 0.0 && v[2] > v[1], "{v:?}");
        // Unknown ids are skipped; nothing known is no vector.
        assert!(t.encode(&[(99, 1.0)]).is_none());
        assert!(t.encode(&[]).is_none());
    }

    #[test]
    fn four_bit_rows_keep_their_direction() {
        // Rank 3 (odd: a row's last value has a byte's half to itself), identity basis.
        let rows = [0.9, -0.3, 0.05, -0.2, 0.7, 0.4];
        let basis = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let t = QueryTable::new(1, &rows, &basis, 3, 3).unwrap();
        for (i, row) in rows.chunks(3).enumerate() {
            let v = t.encode(&[(i, 1.0)]).unwrap();
            let n = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            let cos: f32 = v.iter().zip(row).map(|(a, b)| a * b / n).sum();
            assert!(cos > 0.99, "row {i}: cosine {cos}");
        }
        let back = QueryTable::from_bytes(&t.to_bytes().unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn calibration_matches_quantiles_and_stays_increasing() {
        let mut t = table();
        // Uncalibrated: cosines as they are.
        assert_eq!(t.calibrated(0.3), 0.3);
        // The table's cosines are the model's halved: the map doubles them.
        let model: Vec<f32> = (0..100).map(|i| i as f32 / 100.0).collect();
        let table: Vec<f32> = model.iter().map(|m| m / 2.0).collect();
        t.calibrate(&table, &model);
        for x in [0.05f32, 0.2, 0.45] {
            assert!((t.calibrated(x) - 2.0 * x).abs() < 0.02, "{x}");
        }
        // Beyond the samples the slope carries on, clamped to a cosine's range.
        assert!((t.calibrated(-0.1) + 0.2).abs() < 0.02);
        assert_eq!(t.calibrated(0.9), 1.0);
        // Unpaired, unordered, constant samples still give an increasing map.
        t.calibrate(&[0.5, 0.1, 0.5, 0.5, f32::NAN], &[0.9, 0.2, 0.1, 0.4, 0.3]);
        let ys: Vec<f32> = (0..20).map(|i| t.calibrated(i as f32 / 20.0)).collect();
        assert!(ys.windows(2).all(|w| w[0] <= w[1]), "{ys:?}");
        let back = QueryTable::from_bytes(&t.to_bytes().unwrap()).unwrap();
        assert_eq!(back, t);
        // A damaged calibration (knots out of order) is refused.
        t.calibration = vec![(0.5, 0.1), (0.2, 0.3)];
        let err = QueryTable::from_bytes(&t.to_bytes().unwrap()).unwrap_err();
        assert!(err.to_string().contains("inconsistent"), "{err}");
    }

    #[test]
    fn round_trips_and_refuses_bad_files() {
        let t = table();
        let bytes = t.to_bytes().unwrap();
        assert_eq!(QueryTable::from_bytes(&bytes).unwrap(), t);
        for cut in [0, 5, PREFIX_LEN, bytes.len() - 1] {
            assert!(
                QueryTable::from_bytes(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut newer = bytes.clone();
        newer[8] = 99;
        let err = QueryTable::from_bytes(&newer).unwrap_err().to_string();
        assert!(err.contains("version 99 is not supported"), "{err}");
        assert!(QueryTable::new(1, &[1.0, f32::NAN], &[1.0, 0.0], 1, 2).is_err());
        assert!(QueryTable::new(1, &[1.0, 2.0, 3.0], &[1.0, 0.0], 2, 1).is_err());
    }
}
