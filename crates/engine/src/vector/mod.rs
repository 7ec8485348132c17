//! Dense retrieval: int8 chunk vectors in partitions (an inverted file over k-means centroids).
//!
//! Vectors are unit length, so cosine is a dot product. Components of MiniLM vectors rarely pass
//! +-0.25, so the scale is chosen from the data rather than mapping +-1 to +-127; that keeps far
//! more precision per byte.
//!
//! Small bundles keep every vector in one partition, scanned in full. Large ones cluster the
//! vectors (spherical k-means) and keep each cluster in its own partition, with the centroids
//! apart: a query reads the centroids, then only the partitions of the nearest few, so a browser
//! fetches a few hundred kilobytes of vectors whatever the site's size, and a search scans a few
//! thousand vectors. Each partition is a shard of a split bundle.
//!
//! `quant` holds the int8 quantisation; `build` the k-means, the routing directions and the
//! index's construction, which only the writer runs; this file the index as a search reads it.

mod build;
mod quant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use quant::{Quantization, Vector};

/// Up to this many chunks the vectors are one partition, scanned in full: measured on real
/// MiniLM vectors (BENCHMARKS.md), a scan costs about 1 ms at 4k chunks with perfect recall, and
/// the whole list (about 1.5 MB) is what a first meaning search fetches.
pub const PARTITION_ABOVE: usize = 4096;
/// Partitions a query reads by default: the nearest this many centroids (bench/scale.sh, at
/// 64 per partition and routing rank 96: 16 found 0.975 of the exact ten, 20 0.985 for a fifth
/// more bytes).
pub const DEFAULT_PROBE: u32 = 16;

/// One partition: chunk ids, ascending, and their vectors, `dim` bytes each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Partition {
    pub(crate) chunks: Vec<u32>,
    pub(crate) vectors: Vec<i8>,
}

/// How a query picks its partitions: the centroids' coordinates on a few principal directions
/// of the centroid set, both int8 (one scale each, which ranking does not need).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Centroids {
    /// `rank` unit directions of `dim` values each.
    pub(crate) basis: Vec<i8>,
    /// Each partition's centroid on those directions, `rank` values each.
    pub(crate) coords: Vec<i8>,
}

impl Centroids {
    fn rank(&self, dim: usize) -> usize {
        self.basis.len() / dim.max(1)
    }
}

/// Encoded centroids (when partitioned) and partitions.
pub(crate) type EncodedParts = (Option<Vec<u8>>, Vec<Vec<u8>>);

/// The vector index: int8 chunk vectors in one partition or, for large bundles, in many with
/// their centroids. Parts of a split bundle arrive one by one; a search names what it lacks.
pub struct VectorIndex {
    /// How the stored vectors were quantized.
    pub quantization: Quantization,
    /// Dimensions of every vector.
    pub dim: u32,
    chunks: u32,
    /// Partitions read per query.
    probe: u32,
    centroids: Option<Centroids>,
    partitions: Vec<Option<Partition>>,
    /// Chunks of the loaded partitions, one bit each: a partition naming a chunk another
    /// already holds is refused as it arrives, without checking the loaded ones again.
    claimed: Claimed,
}

/// A set of chunk ids as bits, with its size.
#[derive(Debug, Clone, Default)]
struct Claimed {
    bits: Vec<u64>,
    count: usize,
}

impl Claimed {
    fn new(chunks: u32) -> Self {
        Claimed {
            bits: vec![0; (chunks as usize).div_ceil(64)],
            count: 0,
        }
    }

    fn all(chunks: u32) -> Self {
        let mut c = Claimed::new(chunks);
        (0..chunks).for_each(|i| c.set(i, true));
        c
    }

    fn has(&self, c: u32) -> bool {
        self.bits
            .get(c as usize / 64)
            .is_some_and(|w| w & (1 << (c % 64)) != 0)
    }

    fn set(&mut self, c: u32, on: bool) {
        if let Some(w) = self.bits.get_mut(c as usize / 64) {
            let bit = 1 << (c % 64);
            if (*w & bit != 0) != on {
                *w ^= bit;
                self.count = if on { self.count + 1 } else { self.count - 1 };
            }
        }
    }
}

/// One dense hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorHit {
    /// Chunk id.
    pub chunk: u32,
    /// Cosine between the query and the chunk's (quantized) vector.
    pub cosine: f32,
}

/// Dot product in eight independent sums, which the compiler turns into SIMD (one running sum
/// cannot be reordered, so it would stay scalar): k-means spends its time here.
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    dot_lanes(a, b, |y| y)
}

/// [`dot_f32`] against int8 values: a query against stored vectors, centroids or a basis.
/// The eight sums are the same IEEE arithmetic natively and in wasm, so every surface ranks
/// alike; a query's vector search and a build's calibration spend their time here.
pub(crate) fn dot_f32_i8(a: &[f32], b: &[i8]) -> f32 {
    dot_lanes(a, b, f32::from)
}

/// The one order of a dot product's sums: value `i` goes to lane `i % 8` (the tail to its own
/// sum), then the lanes are added in order and the tail last.
#[inline(always)]
fn dot_lanes<T: Copy>(a: &[f32], b: &[T], value: impl Fn(T) -> f32) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, &y)| x * value(y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for ((s, x), &y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * value(y);
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Scales `v` to unit length (a zero vector stays zero): the one normalisation of the model's
/// vectors, for chunks, queries and centroids alike, natively and in the browser.
pub fn l2_normalize(v: &mut [f32]) {
    let n = dot_f32(v, v).sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

impl VectorIndex {
    /// An index of a split bundle with none of its parts loaded.
    pub(crate) fn unloaded(
        quantization: Quantization,
        dim: u32,
        chunks: u32,
        probe: u32,
        partitions: usize,
    ) -> Self {
        VectorIndex {
            quantization,
            dim,
            chunks,
            probe,
            centroids: None,
            partitions: vec![None; partitions],
            claimed: Claimed::new(chunks),
        }
    }

    /// Partitions a query reads.
    pub fn probe(&self) -> u32 {
        self.probe
    }

    /// Sets how many partitions a query reads (at least one, at most all).
    pub fn set_probe(&mut self, probe: u32) {
        self.probe = probe.clamp(1, self.partitions.len().max(1) as u32);
    }

    /// Number of partitions.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    pub(crate) fn is_partitioned(&self) -> bool {
        self.partitions.len() > 1
    }

    pub(crate) fn centroids_loaded(&self) -> bool {
        self.centroids.is_some() || !self.is_partitioned()
    }

    pub(crate) fn partition_loaded(&self, p: usize) -> bool {
        self.partitions.get(p).is_some_and(Option::is_some)
    }

    /// Whether every part is loaded.
    pub(crate) fn is_complete(&self) -> bool {
        self.centroids_loaded() && self.partitions.iter().all(Option::is_some)
    }

    /// The encoded parts: the centroids (when partitioned), then each partition.
    pub(crate) fn encode_parts(&self) -> Result<EncodedParts> {
        let centroids = match (&self.centroids, self.is_partitioned()) {
            (Some(c), true) => Some(encode(c)?),
            (None, true) => return Err(Error::Encode("the centroids are not loaded".into())),
            _ => None,
        };
        let parts = self
            .partitions
            .iter()
            .map(|p| match p {
                Some(p) => encode(p),
                None => Err(Error::Encode("a vector partition is not loaded".into())),
            })
            .collect::<Result<_>>()?;
        Ok((centroids, parts))
    }

    /// Checks and installs the centroids (decoded from a shard).
    pub(crate) fn install_centroids(&mut self, bytes: &[u8]) -> Result<()> {
        if self.centroids.is_some() {
            return Ok(());
        }
        let c: Centroids = postcard::from_bytes(bytes).map_err(|e| Error::Decode(e.to_string()))?;
        if !self.is_partitioned() || !self.centroids_fit(&c) {
            return Err(Error::Inconsistent(
                "the centroids do not match the partition table".into(),
            ));
        }
        self.centroids = Some(c);
        Ok(())
    }

    /// Checks and installs partition `p` (decoded from a shard): ids ascending and in range,
    /// one vector of the right size each.
    pub(crate) fn install_partition(&mut self, p: usize, bytes: &[u8]) -> Result<()> {
        if self.partition_loaded(p) {
            return Ok(());
        }
        let part: Partition =
            postcard::from_bytes(bytes).map_err(|e| Error::Decode(e.to_string()))?;
        self.check_partition(&part)?;
        if p >= self.partitions.len() {
            return Err(Error::Inconsistent("no such vector partition".into()));
        }
        if part.chunks.iter().any(|&c| self.claimed.has(c)) {
            return Err(Error::Inconsistent(
                "a chunk is in two vector partitions".into(),
            ));
        }
        part.chunks.iter().for_each(|&c| self.claimed.set(c, true));
        self.partitions[p] = Some(part);
        if self.is_complete() && self.claimed.count != self.chunks as usize {
            self.unload_partition(p);
            return Err(Error::Inconsistent("a chunk has no vector".into()));
        }
        Ok(())
    }

    fn check_partition(&self, part: &Partition) -> Result<()> {
        let bad = |m: &str| Err(Error::Inconsistent(m.into()));
        if !part.chunks.windows(2).all(|w| w[0] < w[1])
            || part.chunks.last().is_some_and(|&c| c >= self.chunks)
        {
            return bad("a vector partition names chunks out of order or out of range");
        }
        if part.vectors.len() != part.chunks.len() * self.dim as usize {
            return bad("a vector partition's vectors differ from its chunk list");
        }
        if self.is_partitioned() && part.chunks.is_empty() {
            return bad("an empty vector partition");
        }
        Ok(())
    }

    /// Routing data of a whole number of directions, at most `dim`, with one coordinate per
    /// direction for every partition.
    fn centroids_fit(&self, c: &Centroids) -> bool {
        let dim = self.dim as usize;
        let rank = c.rank(dim);
        dim > 0
            && c.basis.len().is_multiple_of(dim)
            && (1..=dim).contains(&rank)
            && c.coords.len() == self.partitions.len() * rank
    }

    /// Bytes of the routing data (the centroids shard's content), 0 when not partitioned.
    pub fn routing_bytes(&self) -> usize {
        self.centroids
            .as_ref()
            .map_or(0, |c| c.basis.len() + c.coords.len())
    }

    /// Forgets partition `p` (one refused after loading).
    pub(crate) fn unload_partition(&mut self, p: usize) {
        if let Some(part) = self.partitions.get_mut(p).and_then(Option::take) {
            part.chunks.iter().for_each(|&c| self.claimed.set(c, false));
        }
    }

    /// Checks what decoding cannot, on a complete index: every chunk in exactly one partition.
    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::Inconsistent(m.into()));
        if !(self.quantization.scale.is_finite() && self.quantization.scale > 0.0) {
            return bad("invalid quantization scale");
        }
        if self.partitions.is_empty() {
            return bad("no vector partition");
        }
        if let Some(c) = &self.centroids {
            if !self.centroids_fit(c) {
                return bad("the centroids do not match the partition table");
            }
        }
        let mut seen = vec![false; self.chunks as usize];
        for part in self.partitions.iter().flatten() {
            self.check_partition(part)?;
            for &c in &part.chunks {
                if std::mem::replace(&mut seen[c as usize], true) {
                    return bad("a chunk is in two vector partitions");
                }
            }
        }
        if self.is_complete() && seen.iter().any(|s| !s) {
            return bad("a chunk has no vector");
        }
        Ok(())
    }

    /// Number of chunks (every chunk has a vector).
    pub fn len(&self) -> usize {
        self.chunks as usize
    }

    /// True when the index holds no vector.
    pub fn is_empty(&self) -> bool {
        self.chunks == 0
    }

    /// The partitions a query reads: the nearest [`VectorIndex::probe`] centroids, or the one
    /// partition; `None` until the centroids are loaded.
    pub(crate) fn probes(&self, query: &[f32]) -> Option<Vec<usize>> {
        if !self.is_partitioned() {
            return Some(vec![0]);
        }
        let c = self.centroids.as_ref()?;
        let dim = self.dim as usize;
        if query.len() != dim {
            return Some(Vec::new());
        }
        let on_basis: Vec<f32> = c
            .basis
            .chunks_exact(dim)
            .map(|r| dot_f32_i8(query, r))
            .collect();
        let mut order: Vec<(u32, f32)> = c
            .coords
            .chunks_exact(c.rank(dim))
            .map(|v| dot_f32_i8(&on_basis, v))
            .enumerate()
            .map(|(i, s)| (i as u32, s))
            .collect();
        crate::order::rank(&mut order);
        Some(
            order
                .into_iter()
                .take(self.probe as usize)
                .map(|(i, _)| i as usize)
                .collect(),
        )
    }

    /// The partitions a query reads (none until the centroids are loaded).
    pub fn probed(&self, query: &[f32]) -> Vec<usize> {
        self.probes(query).unwrap_or_default()
    }

    /// The partitions of `probes` not loaded yet.
    pub(crate) fn lacking(&self, probes: &[usize]) -> Vec<usize> {
        probes
            .iter()
            .copied()
            .filter(|&p| !self.partition_loaded(p))
            .collect()
    }

    /// The nearest chunks among the partitions `probes` (loaded ones; the caller checks
    /// [`VectorIndex::lacking`] first), best first, ties by chunk id.
    pub(crate) fn search_in(
        &self,
        query: &[f32],
        probes: &[usize],
        keep: &dyn Fn(u32) -> bool,
        k: usize,
    ) -> Vec<VectorHit> {
        if query.len() != self.dim as usize {
            return Vec::new();
        }
        let dim = self.dim as usize;
        let mut hits: Vec<VectorHit> = probes
            .iter()
            .filter_map(|&p| self.partitions.get(p)?.as_ref())
            .flat_map(|part| part.chunks.iter().zip(part.vectors.chunks_exact(dim)))
            .filter(|(&c, _)| keep(c))
            .map(|(&chunk, v)| VectorHit {
                chunk,
                cosine: self.quantization.cosine_f32_raw(query, v),
            })
            .collect();
        crate::order::sort_by_key(&mut hits, |h| crate::order::best_first(h.cosine, h.chunk));
        hits.truncate(k);
        hits
    }

    /// Cosine between the query and one chunk's vector, if it is in one of `probes`.
    pub(crate) fn cosine_in(&self, query: &[f32], probes: &[usize], chunk: u32) -> Option<f32> {
        if query.len() != self.dim as usize {
            return None;
        }
        let dim = self.dim as usize;
        probes.iter().find_map(|&p| {
            let part = self.partitions.get(p)?.as_ref()?;
            let i = part.chunks.binary_search(&chunk).ok()?;
            let v = part.vectors.get(i * dim..(i + 1) * dim)?;
            Some(self.quantization.cosine_f32_raw(query, v))
        })
    }

    /// Every partition's index (what a scan of all chunks reads).
    pub(crate) fn all_partitions(&self) -> Vec<usize> {
        (0..self.partitions.len()).collect()
    }

    /// The nearest chunks as the engine finds them: the probed partitions of a complete index.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<VectorHit> {
        match self.probes(query) {
            Some(p) => self.search_in(query, &p, &|_| true, k),
            None => Vec::new(),
        }
    }

    /// Exact nearest chunks by scanning every loaded partition.
    pub fn search_exact(&self, query: &[f32], k: usize) -> Vec<VectorHit> {
        self.search_in(query, &self.all_partitions(), &|_| true, k)
    }

    /// Every stored vector with its chunk id, by chunk id.
    pub fn vectors(&self) -> Vec<(u32, Vector)> {
        let dim = self.dim as usize;
        let mut out: Vec<(u32, Vector)> = self
            .partitions
            .iter()
            .flatten()
            .flat_map(|p| {
                p.chunks
                    .iter()
                    .zip(p.vectors.chunks_exact(dim))
                    .map(|(&c, v)| (c, Vector(v.to_vec())))
            })
            .collect();
        crate::order::sort_by_key(&mut out, |(c, _)| u64::from(*c));
        out
    }

    /// Vectors in each partition (for reports).
    pub fn partition_sizes(&self) -> Vec<usize> {
        self.partitions
            .iter()
            .map(|p| p.as_ref().map_or(0, |p| p.chunks.len()))
            .collect()
    }

    #[cfg(test)]
    pub(crate) fn centroids_mut(&mut self) -> Option<&mut Centroids> {
        self.centroids.as_mut()
    }

    #[cfg(test)]
    pub(crate) fn partition_mut(&mut self, p: usize) -> Option<&mut Partition> {
        self.partitions.get_mut(p)?.as_mut()
    }
}

fn encode<T: Serialize>(v: &T) -> Result<Vec<u8>> {
    postcard::to_allocvec(v).map_err(|e| Error::Encode(e.to_string()))
}

/// A seeded unit vector for tests (a small xorshift, so tests need no rand dependency).
#[cfg(test)]
pub(crate) fn unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_cosine_tracks_float_cosine() {
        let a = unit(1, 384);
        let b = unit(2, 384);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let q = Quantization::fit([a.as_slice(), b.as_slice()]);
        let approx = q.cosine(&q.quantize(&a), &q.quantize(&b));
        assert!((exact - approx).abs() < 0.02, "{exact} vs {approx}");
        let self_cos = q.cosine_f32(&a, &q.quantize(&a));
        assert!((self_cos - 1.0).abs() < 0.02, "{self_cos}");
    }

    /// Clustered points: `groups` random centres, each with `per` noisy members.
    fn clustered(groups: u64, per: u64, dim: usize) -> Vec<Vec<f32>> {
        let mut out = Vec::new();
        for g in 0..groups {
            let centre = unit(g + 1000, dim);
            for i in 0..per {
                let noise = unit(g * 7919 + i, dim);
                let mut v: Vec<f32> = centre
                    .iter()
                    .zip(&noise)
                    .map(|(c, n)| c + 0.6 * n)
                    .collect();
                l2_normalize(&mut v);
                out.push(v);
            }
        }
        out
    }

    #[test]
    fn small_indexes_are_one_partition_and_exact() {
        let vs: Vec<Vec<f32>> = (0..300).map(|i| unit(i, 64)).collect();
        let index = VectorIndex::build(&vs, 64);
        assert_eq!(index.partition_count(), 1);
        index.validate().unwrap();
        for probe in [0usize, 17, 299] {
            assert_eq!(index.search(&vs[probe], 1)[0].chunk, probe as u32);
        }
        assert_eq!(index.search(&vs[5], 300), index.search_exact(&vs[5], 300));
    }

    #[test]
    fn partitions_cover_every_chunk_once_and_find_near_neighbours() {
        let vs = clustered(40, 50, 48);
        let index = VectorIndex::with_partitions(&vs, 48, 40);
        index.validate().unwrap();
        assert!(index.partition_count() > 10, "{}", index.partition_count());
        covers_each_once_and_recalls(&index, &vs, 37, 95);
    }

    /// Every vector in exactly one partition; every `step`th vector, searched for, finds
    /// itself first and at least `percent`% of its exact top 10 through the probed partitions.
    fn covers_each_once_and_recalls(
        index: &VectorIndex,
        vs: &[Vec<f32>],
        step: usize,
        percent: usize,
    ) {
        let mut all: Vec<u32> = index.vectors().iter().map(|(c, _)| *c).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), vs.len());
        let mut found = 0;
        for q in (0..vs.len()).step_by(step) {
            let got = index.search(&vs[q], 10);
            assert_eq!(got[0].chunk, q as u32);
            let exact = index.search_exact(&vs[q], 10);
            found += got.iter().filter(|h| exact.contains(h)).count();
        }
        let asked = vs.len().div_ceil(step) * 10;
        assert!(found * 100 >= asked * percent, "recall {found}/{asked}");
    }

    #[test]
    fn many_partitions_are_made_in_two_levels_and_still_find_neighbours() {
        // 300 partitions: above the one-level limit, so coarse groups are split on their own.
        let vs = clustered(300, 20, 32);
        let index = VectorIndex::with_partitions(&vs, 32, 300);
        index.validate().unwrap();
        let parts = index.partition_count();
        assert!((200..=400).contains(&parts), "{parts} partitions");
        covers_each_once_and_recalls(&index, &vs, 97, 90);
    }

    #[test]
    fn partitioning_is_reproducible() {
        let vs = clustered(12, 30, 32);
        let a = VectorIndex::with_partitions(&vs, 32, 12)
            .encode_parts()
            .unwrap();
        let b = VectorIndex::with_partitions(&vs, 32, 12)
            .encode_parts()
            .unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn a_partial_index_names_what_it_lacks() {
        let vs = clustered(10, 20, 16);
        let full = VectorIndex::with_partitions(&vs, 16, 10);
        let (centroids, parts) = full.encode_parts().unwrap();
        let mut idx = VectorIndex::unloaded(
            full.quantization,
            16,
            vs.len() as u32,
            full.probe(),
            parts.len(),
        );
        assert_eq!(idx.probes(&vs[3]), None);
        idx.install_centroids(&centroids.unwrap()).unwrap();
        let probes = idx.probes(&vs[3]).unwrap();
        assert_eq!(idx.lacking(&probes), probes);
        for &p in &probes {
            idx.install_partition(p, &parts[p]).unwrap();
        }
        assert!(idx.lacking(&probes).is_empty());
        assert_eq!(idx.search(&vs[3], 10), full.search(&vs[3], 10));
        assert_eq!(
            idx.cosine_in(&vs[3], &probes, 3),
            full.cosine_in(&vs[3], &probes, 3)
        );
    }

    #[test]
    fn damaged_partitions_are_refused() {
        let vs = clustered(6, 20, 16);
        let full = VectorIndex::with_partitions(&vs, 16, 6);
        let (_, parts) = full.encode_parts().unwrap();
        let fresh =
            || VectorIndex::unloaded(full.quantization, 16, vs.len() as u32, 2, parts.len());
        let mut part: Partition = postcard::from_bytes(&parts[0]).unwrap();
        part.chunks.reverse();
        let bytes = postcard::to_allocvec(&part).unwrap();
        assert!(
            fresh().install_partition(0, &bytes).is_err(),
            "out of order"
        );
        let mut part: Partition = postcard::from_bytes(&parts[0]).unwrap();
        part.vectors.pop();
        let bytes = postcard::to_allocvec(&part).unwrap();
        assert!(
            fresh().install_partition(0, &bytes).is_err(),
            "short vectors"
        );
        let mut part: Partition = postcard::from_bytes(&parts[0]).unwrap();
        *part.chunks.last_mut().unwrap() = vs.len() as u32;
        let bytes = postcard::to_allocvec(&part).unwrap();
        assert!(
            fresh().install_partition(0, &bytes).is_err(),
            "out of range"
        );
        assert!(
            fresh().install_centroids(&parts[0]).is_err(),
            "not centroids"
        );
        assert!(fresh().install_partition(0, &[0xff; 3]).is_err(), "garbage");
        // A partition claiming a chunk another one holds is refused as it arrives, and the
        // index is as before; once that one is unloaded, the chunk is free again.
        let mut idx = fresh();
        idx.install_partition(0, &parts[0]).unwrap();
        let mut other: Partition = postcard::from_bytes(&parts[1]).unwrap();
        other.chunks[0] = postcard::from_bytes::<Partition>(&parts[0]).unwrap().chunks[0];
        other.chunks.sort_unstable();
        assert!(other.chunks.windows(2).all(|w| w[0] < w[1]));
        let other = postcard::to_allocvec(&other).unwrap();
        assert!(
            idx.install_partition(1, &other).is_err(),
            "a chunk in two partitions"
        );
        assert!(!idx.partition_loaded(1));
        assert!(idx.validate().is_ok());
        idx.unload_partition(0);
        idx.install_partition(1, &other).unwrap();
    }

    #[test]
    fn empty_index_returns_nothing() {
        let index = VectorIndex::build(&[], 8);
        assert!(index.search_exact(&[0.0; 8], 5).is_empty());
        assert!(index.search(&[0.0; 8], 5).is_empty());
        index.validate().unwrap();
    }
}
