//! Building the vector index (the writer's side): spherical k-means into balanced partitions,
//! and the principal directions queries are routed on.

use super::{dot_f32, l2_normalize, Centroids, Claimed, Partition, Quantization, VectorIndex};
use super::{DEFAULT_PROBE, PARTITION_ABOVE};

// Seeds the k-means start, so the same vectors give the same partitions.
const SEED: u64 = 0x004c_414e_5445_524e;
/// Vectors per partition on average, once partitioned: a partition is about 25 KB. On 64 noisy
/// copies of the Rust book's vectors (bench/scale.sh, 85,440 vectors), 64 per partition read
/// 563 KiB for recall@10 0.975 where 128 read 713 KiB for 0.953; 32 did slightly better still
/// but doubled the k-means time of a build (218 s against 94 s).
const PARTITION_SIZE: usize = 64;
/// k-means trains on about this many vectors per centroid (a strided sample).
const SAMPLE_PER_CENTROID: usize = 64;
const KMEANS_ROUNDS: usize = 12;
/// Above this many partitions, k-means runs in two levels (about sqrt(k) coarse groups, then
/// each group split on its own): one level compares every vector with every centroid, so its
/// time grows with the square of the site (100,000 tiny pages took 328 s); two levels compare
/// each with about 2 sqrt(k). Sites under ~16,000 sections keep the one-level partitions. On
/// 64 noisy copies of the Rust book's vectors (bench/scale.sh, 85,376 vectors, 1,351
/// partitions): 3.4 s instead of 94 s, recall@10 0.977 reading 555 KiB at probe 16 (one level:
/// 0.975, 563 KiB).
const TWO_LEVEL_ABOVE: usize = 256;
/// Directions a query is routed on: at most this many principal directions of the centroids.
/// Routing needs the centroids' order, not their exact cosines, and 384 int8 values each made
/// them a quarter of a megabyte at 85,000 vectors. On 64 noisy copies of the Rust book's
/// vectors (bench/scale.sh), 128 per partition, probe 12: rank 64 found 0.944 of the exact ten,
/// 96 0.953, all 384 0.960 for 290 KiB more; at 64 per partition, probe 16: 64 0.959, 96 0.975.
const ROUTE_RANK: usize = 96;
const POWER_ROUNDS: usize = 30;

impl Centroids {
    /// Routing data for unit `centroids`: their top principal directions (orthogonal
    /// iteration on the sum of their outer products, seeded) and their coordinates there.
    fn fit(centroids: &[Vec<f32>], dim: usize, rank: usize) -> Self {
        let rank = rank.clamp(1, dim.min(centroids.len()).max(1));
        let mut m = vec![0f32; dim * dim];
        for c in centroids {
            for (i, &ci) in c.iter().enumerate() {
                m[i * dim..(i + 1) * dim]
                    .iter_mut()
                    .zip(c)
                    .for_each(|(x, &cj)| *x += ci * cj);
            }
        }
        let mut rng = Rng(SEED ^ 0x5eed);
        let mut q: Vec<Vec<f32>> = (0..rank)
            .map(|_| (0..dim).map(|_| rng.unit() as f32 - 0.5).collect())
            .collect();
        orthonormalize(&mut q);
        for _ in 0..POWER_ROUNDS {
            q = q
                .iter()
                .map(|v| m.chunks_exact(dim).map(|row| dot_f32(row, v)).collect())
                .collect();
            orthonormalize(&mut q);
        }
        let basis = quantize_all(&q.concat());
        let dequant: Vec<Vec<f32>> = basis
            .chunks_exact(dim)
            .map(|r| r.iter().map(|&x| x as f32).collect())
            .collect();
        let coords: Vec<f32> = centroids
            .iter()
            .flat_map(|c| dequant.iter().map(move |r| dot_f32(r, c)))
            .collect();
        Centroids {
            basis,
            coords: quantize_all(&coords),
        }
    }
}

/// Gram-Schmidt, in place (a vector that vanishes stays zero: it then routes nothing).
fn orthonormalize(vs: &mut [Vec<f32>]) {
    for i in 0..vs.len() {
        let (done, rest) = vs.split_at_mut(i);
        let v = &mut rest[0];
        for u in done.iter() {
            let d = dot_f32(v, u);
            v.iter_mut().zip(u).for_each(|(x, &y)| *x -= d * y);
        }
        l2_normalize(v);
    }
}

/// int8 with one scale for all values (the largest magnitude maps to 127).
fn quantize_all(xs: &[f32]) -> Vec<i8> {
    let max = xs.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { 127.0 / max } else { 0.0 };
    xs.iter().map(|&x| (x * scale).round() as i8).collect()
}

/// A small xorshift generator: k-means needs reproducible choices, not good randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The nearest centroid (largest dot product) of a vector.
fn nearest(v: &[f32], centroids: &[Vec<f32>]) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (i, c) in centroids.iter().enumerate() {
        let d = dot_f32(v, c);
        if d > best.1 {
            best = (i, d);
        }
    }
    best.0
}

/// A partition holds at most this many times the mean: k-means alone leaves some clusters
/// several times the mean, and a query that probes one fetches all of it.
const BALANCE: f64 = 1.5;

/// Each vector to its nearest centroid with room, the most clearly placed first, so a full
/// partition turns away the vectors that sit nearest its border.
fn assign_balanced(vectors: &[Vec<f32>], centroids: &[Vec<f32>]) -> Vec<Vec<u32>> {
    let k = centroids.len();
    let cap = ((vectors.len() as f64 / k as f64) * BALANCE)
        .ceil()
        .max(1.0) as usize;
    let best: Vec<(usize, f32)> = vectors
        .iter()
        .map(|v| {
            let c = nearest(v, centroids);
            (c, dot_f32(v, &centroids[c]))
        })
        .collect();
    let mut order: Vec<usize> = (0..vectors.len()).collect();
    order.sort_by(|&a, &b| best[b].1.total_cmp(&best[a].1).then(a.cmp(&b)));
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); k];
    for i in order {
        let (c, _) = best[i];
        if members[c].len() < cap {
            members[c].push(i as u32);
            continue;
        }
        // Full: the nearest centroid with room (one exists, as cap * k >= vectors).
        let mut ranked: Vec<(usize, f32)> = centroids
            .iter()
            .enumerate()
            .map(|(j, c)| (j, dot_f32(&vectors[i], c)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if let Some(&(j, _)) = ranked.iter().find(|(j, _)| members[*j].len() < cap) {
            members[j].push(i as u32);
        }
    }
    members
}

/// Spherical k-means over unit vectors: k-means++ start on a strided sample, then rounds of
/// assignment and mean, centroids kept unit length. Single-threaded and seeded: the same input
/// gives the same centroids.
fn kmeans(vectors: &[Vec<f32>], k: usize) -> Vec<Vec<f32>> {
    let stride = (vectors.len() / (k * SAMPLE_PER_CENTROID)).max(1);
    let sample: Vec<&[f32]> = vectors.iter().step_by(stride).map(Vec::as_slice).collect();
    let k = k.min(sample.len()).max(1);
    let mut rng = Rng(SEED);
    let mut centroids: Vec<Vec<f32>> =
        vec![sample[(rng.next() % sample.len() as u64) as usize].to_vec()];
    // Distance to the nearest chosen centroid, 1 - cosine.
    let mut dist: Vec<f64> = sample
        .iter()
        .map(|v| (1.0 - dot_f32(v, &centroids[0]) as f64).max(0.0))
        .collect();
    while centroids.len() < k {
        let total: f64 = dist.iter().map(|d| d * d).sum();
        let pick = if total > 0.0 {
            let mut target = rng.unit() * total;
            let mut pick = sample.len() - 1;
            for (i, d) in dist.iter().enumerate() {
                target -= d * d;
                if target <= 0.0 {
                    pick = i;
                    break;
                }
            }
            pick
        } else {
            (rng.next() % sample.len() as u64) as usize
        };
        let c = sample[pick].to_vec();
        for (d, v) in dist.iter_mut().zip(&sample) {
            *d = d.min((1.0 - dot_f32(v, &c) as f64).max(0.0));
        }
        centroids.push(c);
    }
    let dim = centroids[0].len();
    for _ in 0..KMEANS_ROUNDS {
        let mut sums = vec![vec![0f32; dim]; k];
        let mut counts = vec![0usize; k];
        for v in &sample {
            let c = nearest(v, &centroids);
            counts[c] += 1;
            sums[c].iter_mut().zip(v.iter()).for_each(|(s, x)| *s += x);
        }
        for (c, (mut s, n)) in sums.into_iter().zip(counts).enumerate() {
            // An empty cluster keeps its centroid; it is dropped if nothing is assigned at the end.
            if n > 0 {
                l2_normalize(&mut s);
                centroids[c] = s;
            }
        }
    }
    centroids
}

/// k partitions in two levels: coarse groups by k-means on a sample, every vector to its
/// nearest group, then each group split into partitions in proportion to its size by the
/// one-level k-means and balanced assignment. Returns the centroids and their members.
fn partition_two_level(vectors: &[Vec<f32>], k: usize) -> (Vec<Vec<f32>>, Vec<Vec<u32>>) {
    let groups = (k as f64).sqrt().ceil() as usize;
    let coarse = kmeans(vectors, groups);
    let mut grouped: Vec<Vec<u32>> = vec![Vec::new(); coarse.len()];
    for (i, v) in vectors.iter().enumerate() {
        grouped[nearest(v, &coarse)].push(i as u32);
    }
    let mut centroids = Vec::with_capacity(k);
    let mut members = Vec::with_capacity(k);
    for ids in grouped.into_iter().filter(|g| !g.is_empty()) {
        let sub: Vec<Vec<f32>> = ids.iter().map(|&i| vectors[i as usize].clone()).collect();
        let sub_k = (k * sub.len()).div_ceil(vectors.len()).max(1);
        let sub_centroids = kmeans(&sub, sub_k);
        let sub_members = assign_balanced(&sub, &sub_centroids);
        for (c, m) in sub_centroids.into_iter().zip(sub_members) {
            centroids.push(c);
            members.push(m.into_iter().map(|j| ids[j as usize]).collect());
        }
    }
    (centroids, members)
}

impl VectorIndex {
    /// Builds the index for chunk vectors (`vectors[i]` is chunk `i`'s, unit length): one
    /// partition up to [`PARTITION_ABOVE`] chunks, k-means partitions of about
    /// [`PARTITION_SIZE`] beyond.
    pub fn build(vectors: &[Vec<f32>], dim: usize) -> Self {
        let k = if vectors.len() <= PARTITION_ABOVE {
            1
        } else {
            vectors.len().div_ceil(PARTITION_SIZE)
        };
        Self::with_partitions(vectors, dim, k)
    }

    /// Builds the index with about `k` partitions whatever the size (1: one flat list).
    pub fn with_partitions(vectors: &[Vec<f32>], dim: usize, k: usize) -> Self {
        Self::with_routing(vectors, dim, k, ROUTE_RANK)
    }

    /// As [`VectorIndex::with_partitions`], routing queries on `rank` principal directions
    /// of the centroids (what bench/scale.sh compares).
    pub fn with_routing(vectors: &[Vec<f32>], dim: usize, k: usize, rank: usize) -> Self {
        let quantization = Quantization::fit(vectors.iter().map(|v| v.as_slice()));
        let quantize = |v: &[f32]| quantization.quantize(v).0;
        if k <= 1 || vectors.len() <= 1 {
            return VectorIndex {
                quantization,
                dim: dim as u32,
                chunks: vectors.len() as u32,
                probe: 1,
                centroids: None,
                partitions: vec![Some(Partition {
                    chunks: (0..vectors.len() as u32).collect(),
                    vectors: vectors.iter().flat_map(|v| quantize(v)).collect(),
                })],
                claimed: Claimed::all(vectors.len() as u32),
            };
        }
        let (centroids, mut members) = if k > TWO_LEVEL_ABOVE {
            partition_two_level(vectors, k)
        } else {
            let centroids = kmeans(vectors, k);
            let members = assign_balanced(vectors, &centroids);
            (centroids, members)
        };
        members.iter_mut().for_each(|m| m.sort_unstable());
        let mut kept = Vec::new();
        let mut partitions = Vec::new();
        for (c, chunks) in centroids.iter().zip(members) {
            if chunks.is_empty() {
                continue;
            }
            kept.push(c.clone());
            partitions.push(Some(Partition {
                vectors: chunks
                    .iter()
                    .flat_map(|&i| quantize(&vectors[i as usize]))
                    .collect(),
                chunks,
            }));
        }
        VectorIndex {
            quantization,
            dim: dim as u32,
            chunks: vectors.len() as u32,
            probe: DEFAULT_PROBE.min(partitions.len() as u32),
            centroids: Some(Centroids::fit(&kept, dim, rank)),
            partitions,
            claimed: Claimed::all(vectors.len() as u32),
        }
    }
}
